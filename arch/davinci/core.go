package davinci

import (
	"github.com/davinci-sim/davinci-sim/arch"

	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/mem"
	"github.com/davinci-sim/davinci-sim/sim"
)

// corePriority orders core wake-ups after channel completions at the same
// instant.
const corePriority = 0

// inflight is an instruction whose effect lands at done.
type inflight struct {
	done sim.Time
	in   isa.Instr
}

// pipe is the state of one execution pipe. The fields every wake-up reads
// come first (one or two cache lines); the instruction being executed and
// the statistics last.
type pipe struct {
	xfer  int      // parts of a GM transfer still streaming through channels
	busy  sim.Time // the pipe can start its next instruction at this time
	head  int
	n     int
	depth int         // the queue's capacity (machine.core.queue_depth)
	q     []isa.Instr // ring buffer of depth entries, allocated at the first push
	ready []sim.Time  // issue time of each queue entry (the pipe may not start it earlier)
	last  sim.Time    // when every started instruction will have completed
	state arch.Cause
	id    isa.Pipe
	ndef  int
	since sim.Time
	// def are the state changes the pipe goes through on its own before
	// the core's next wake-up (e.g. arch.Busy → arch.WaitFlag when its instruction
	// ends in front of a flag that is not set): the core is not woken for
	// them; settle replays them, so the accounting is the same as if it
	// had been.
	def   [2]transition
	fly   []inflight // started, effect not yet applied (FIFO, done nondecreasing; functional mode)
	start sim.Time   // start of cur
	ideal sim.Time   // cur's duration at the path's own bandwidth (xfer)
	lat   sim.Time   // cur's latency after its last byte (xfer)
	stats arch.LaneStats
	cur   isa.Instr  // the instruction being executed (for xfer and busy intervals)
	label *isa.Instr // S only: the last instruction of the issue run (for observers), else nil
}

// transition is a deferred state change of a pipe: state s from time at.
type transition struct {
	at sim.Time
	s  arch.Cause
}

// settle applies the pipe's deferred state changes up to now and drops the
// later ones (the caller's schedule recomputes them).
func (c *Core) settle(p *pipe, now sim.Time) {
	for i := 0; i < p.ndef; i++ {
		d := p.def[i]
		if d.at > now {
			break
		}
		c.closeState(p, d.at)
		p.state = d.s
	}
	p.ndef = 0
}

// defer records that pipe p enters state s at a future time at.
func (p *pipe) deferState(at sim.Time, s arch.Cause) {
	p.def[p.ndef] = transition{at, s}
	p.ndef++
}

func (p *pipe) full() bool  { return p.n == p.depth }
func (p *pipe) empty() bool { return p.n == 0 }
func (p *pipe) front() *isa.Instr {
	return &p.q[p.head]
}

// push queues in with its issue time and returns its queue slot (valid
// until the ring wraps around to it).
func (p *pipe) push(in isa.Instr, ready sim.Time) *isa.Instr {
	if p.q == nil {
		p.q, p.ready = takeQueue(p.depth)
	}
	i := p.head + p.n
	if i >= len(p.q) {
		i -= len(p.q)
	}
	p.q[i] = in
	p.ready[i] = ready
	p.n++
	return &p.q[i]
}

// queueStore is a pipe queue's storage, handed from a finished core's
// pipes to the next core's (queuePool): a run that simulates kernels one
// chip each (an LU's kernels timed apart, --fidelity isolated or sampled)
// built a queue of 8 KiB for each of its 32 cores' 7 pipes (224 a chip), 1.26
// GB allocated at n = 32768 and 16 % of its CPU time in their zeroing and
// collection. A pipe takes its storage at its first push (a pipe given no
// instruction takes none) and its core gives it back when it finalizes
// (releaseQueues). The entries a queue held are never read again: a ring
// reads only entries written since it was empty.
type queueStore struct {
	q     []isa.Instr
	ready []sim.Time
}

// queuePool holds *queueStore (shared by the chips simulated on other
// goroutines at once).
var queuePool sync.Pool

// takeQueue returns a queue's storage of depth entries: one given back,
// or new.
func takeQueue(depth int) ([]isa.Instr, []sim.Time) {
	if v, ok := queuePool.Get().(*queueStore); ok && len(v.q) == depth {
		return v.q, v.ready
	}
	return make([]isa.Instr, depth), make([]sim.Time, depth)
}

// releaseQueues gives the core's empty pipe queues' storage back
// (queuePool), once the core has finalized: nothing reads it after that.
// A queue still holding instructions (a deadlocked or stopped run) keeps
// its storage.
func (c *Core) releaseQueues() {
	for i := range c.pipes {
		p := &c.pipes[i]
		p.label = nil // (it pointed into a queue slot)
		if p.q == nil || p.n != 0 {
			continue
		}
		queuePool.Put(&queueStore{q: p.q, ready: p.ready})
		p.q, p.ready, p.head = nil, nil, 0
	}
}

func (p *pipe) pop() {
	p.head++
	if p.head == len(p.q) {
		p.head = 0
	}
	p.n--
}

// Core is one AI core.
type Core struct {
	chip  *arch.Chip
	id    int
	waker *sim.Waker

	stream  arch.StreamReader // the loaded stream
	loaded  bool
	running bool       // a loaded stream has not finished yet
	fetched bool       // pending holds an instruction not yet issued
	pending *isa.Instr // points into chunk, valid until the next pull
	drained bool       // the stream has no more instructions
	finish  sim.Time
	instrs  uint64

	pathBytes     []int64 // bytes moved per geometry path
	vectorRepeats int64
	scalFree      sim.Time // the scalar unit is busy until then

	pipes   [isa.NumPipes]pipe
	flags   []int32 // [src][dst][id]
	flagIDs int     // flag ids per (src, dst) pair

	bufs [isa.NumBuffers][]byte
	occ  [isa.NumBuffers]*mem.Occupancy

	issueCycles sim.Time
	horizon     sim.Time // how far ahead of now the scalar issues (issueHorizon issue costs)

	inSync   bool // arrived at a sync_all, waiting for the other cores
	syncWait int  // the generation being waited for

	functional bool          // the run moves real data
	obs        arch.Observer // nil: no observer
	mc         *machines.DaVinciCore
	clock      sim.Clock
	flagObs    arch.Observer                         // nil: no observer of flags
	paths      [isa.NumBuffers][isa.NumBuffers]uint8 // 1 + index into geom.Paths of the path src→dst, 0: none
	geom       *machines.Geometry
}

// syncAll handles a sync_all at the head of the scalar unit: it reports
// whether the core may pass.
func (c *Core) syncAll(now sim.Time) bool {
	if c.chip.InHostKernel(c.id) {
		c.fault(c.pending, fmt.Errorf("sync_all inside a host-launched kernel: end the kernel and launch the next one instead"))
		return false
	}
	if !c.inSync {
		if !c.idle(now) {
			return false
		}
		c.inSync = true
		c.syncWait = c.chip.SyncArrive(c.id, now)
	}
	if c.chip.SyncReleased(c.syncWait) {
		c.inSync = false
		return true
	}
	return false
}

func newCore(c *arch.Chip, id int) *Core {
	mc := c.M.DaVinci()
	core := &Core{chip: c, mc: mc, id: id, clock: c.Clock(), functional: c.Mode() == arch.Functional,
		obs: c.Observer(), flagObs: c.FlagObserver()}
	geom := c.Geometry()
	core.geom = geom
	core.pathBytes = make([]int64, len(geom.Paths))
	for i, p := range geom.Paths {
		core.paths[p.Src][p.Dst] = uint8(i + 1)
	}
	core.waker = sim.NewWaker(c.Engine(), corePriority, core)
	depth := mc.QueueDepth
	for i := range core.pipes {
		core.pipes[i] = pipe{id: isa.Pipe(i), depth: depth, state: arch.QueueEmpty}
	}
	core.flags = make([]int32, int(isa.NumPipes)*int(isa.NumPipes)*mc.FlagIDs)
	core.flagIDs = mc.FlagIDs
	for i := isa.L1; i < isa.NumBuffers; i++ {
		capacity := geom.Buffers[i].Capacity
		core.occ[i] = mem.NewOccupancy(capacity)
		if core.functional {
			core.bufs[i] = make([]byte, capacity)
		}
	}
	core.issueCycles = core.clock.Cycles(int64(mc.Scalar.IssueCycles))
	core.horizon = sim.MaxTime // issueHorizon issue costs (of at least 1 ps), saturated
	if step := max(core.issueCycles, 1); step <= sim.MaxTime/issueHorizon {
		core.horizon = issueHorizon * step
	}
	c.RegisterWaiter(core)
	return core
}

// Buffer returns the bytes of one of the core's buffers (functional mode).
func (c *Core) Buffer(b isa.Buffer) []byte { return c.bufs[b] }

// Load implements arch.CoreModel: it starts stream s on the core; a core
// that finished a stream can be loaded again (host kernel launches).
func (c *Core) Load(s isa.Stream) {
	c.Close()
	c.stream.StartAhead(s, c.chip.Ahead())
	c.loaded, c.running = true, true
	c.drained, c.fetched = false, false
	c.waker.Wake(c.chip.Engine().Now())
}

// next returns the next instruction of the core's stream; the pointer is
// valid until the following call.
func (c *Core) next() (*isa.Instr, bool) {
	in := c.stream.Next()
	return in, in != nil
}

// Close implements arch.CoreModel.
func (c *Core) Close() { c.stream.Close() }

func (c *Core) flag(src, dst isa.Pipe, id int) *int32 {
	n := int(isa.NumPipes)
	return &c.flags[(int(src)*n+int(dst))*c.flagIDs+id]
}

// setState closes the current interval of pipe p and opens one in state s.
func (c *Core) setState(p *pipe, now sim.Time, s arch.Cause) {
	if p.state == s && s != arch.Busy {
		return
	}
	c.closeState(p, now)
	p.state = s
}

// closeState accounts the open interval of pipe p up to now.
func (c *Core) closeState(p *pipe, now sim.Time) {
	if now > p.since {
		p.stats.Time[p.state] += now - p.since
		if obs := c.obs; obs != nil {
			var in *isa.Instr
			if p.state == arch.Busy {
				in = &p.cur
				if p.label != nil {
					in = p.label
				}
			}
			obs.Interval(c.id, int(p.id), p.state, p.since, now, in, nil)
		}
		p.since = now
	}
}

// Handle implements sim.Handler: the core's wake-up.
func (c *Core) Handle(now sim.Time, _ int64) {
	c.step(now)
}

// FlowDone implements mem.FlowDone: a GM transfer of pipe tag has streamed
// its last byte.
func (c *Core) FlowDone(now sim.Time, tag int64) {
	p := &c.pipes[tag]
	p.xfer--
	if p.xfer > 0 {
		return
	}
	// The transfer was busy for the time it would take at the path's own
	// bandwidth; the rest it lost to its share of GM bandwidth.
	if mid := p.start + p.ideal; mid < now {
		c.closeState(p, mid) // the busy interval
		p.state = arch.Bandwidth
	}
	c.setState(p, now, arch.QueueEmpty) // closes the busy or bandwidth interval
	p.busy = now
	done := sim.Add(now, p.lat)
	if sim.Saturated(done) {
		c.fault(&p.cur, sim.ErrTimeOverflow)
		return
	}
	if done > p.last {
		p.last = done
	}
	if c.functional {
		p.fly = append(p.fly, inflight{done: done, in: p.cur})
	}
	c.waker.Wake(now)
}

// step makes every possible progress at time now, then schedules the next
// wake-up.
func (c *Core) step(now sim.Time) {
	for i := range c.pipes {
		if c.pipes[i].ndef > 0 {
			c.settle(&c.pipes[i], now)
		}
	}
	if c.functional { // timing only: nothing lands
		c.land(now)
	}
	for progress := true; progress && !c.chip.Failed(); {
		progress = false
		for i := isa.Pipe(1); i < isa.NumPipes; i++ {
			p := &c.pipes[i]
			// Pipes runPipe would leave as they are: streaming, busy, or
			// idle with nothing queued.
			if p.xfer > 0 || p.busy > now || (p.n == 0 && p.state == arch.QueueEmpty) {
				continue
			}
			if c.runPipe(p, now) {
				progress = true
			}
		}
		if c.runScalar(now) {
			progress = true
		}
	}
	c.checkDone(now)
	c.schedule(now)
}

// land applies the effects of instructions that completed by now.
func (c *Core) land(now sim.Time) {
	for i := range c.pipes {
		p := &c.pipes[i]
		k := 0
		for k < len(p.fly) && p.fly[k].done <= now {
			c.apply(&p.fly[k].in)
			k++
		}
		if k > 0 {
			p.fly = append(p.fly[:0], p.fly[k:]...)
		}
	}
}

// runPipe starts what pipe p can start at now; it reports progress.
func (c *Core) runPipe(p *pipe, now sim.Time) bool {
	progress := false
	for p.xfer == 0 && p.busy <= now {
		if p.empty() || p.ready[p.head] > now {
			c.setState(p, now, arch.QueueEmpty)
			return progress
		}
		in := p.front()
		switch in.Op {
		case isa.OpWaitFlag:
			f := c.flag(in.SrcPipe, in.DstPipe, in.FlagID)
			if *f == 0 {
				c.setState(p, now, arch.WaitFlag)
				return progress
			}
			*f--
			c.observeFlag(in, false, now)
		case isa.OpSetFlag:
			if p.last > now {
				c.setState(p, now, arch.Latency)
				return progress
			}
			*c.flag(in.SrcPipe, in.DstPipe, in.FlagID)++
			c.observeFlag(in, true, now)
		case isa.OpBarrier:
			if p.last > now {
				c.setState(p, now, arch.Barrier)
				return progress
			}
		default:
			c.setState(p, now, arch.Busy) // closes the previous interval with the previous cur
			p.cur = *in
			p.start = now
			c.execute(p, now)
		}
		p.stats.Instrs++
		p.pop()
		progress = true
	}
	return progress
}

func (c *Core) observeFlag(in *isa.Instr, set bool, now sim.Time) {
	if obs := c.flagObs; obs != nil {
		obs.Flag(c.id, int(in.SrcPipe), int(in.DstPipe), in.FlagID, set, now)
	}
}

// issueHorizon bounds how far ahead of the current time the scalar unit
// issues in one wake-up, in issue slots. Issuing a batch at once (each
// instruction stamped with its own issue time, which the pipes respect)
// gives the same timing as one wake-up per instruction with far fewer events.
const issueHorizon = 64

// runScalar issues instructions in program order; it reports progress.
// runScalar is kept out of line so that step stays small enough for the
// profile-guided build to inline it into Handle, as before the core moved
// here (cachegrind, SGEMM-cube 4096³ timing-only: 3.08 G instructions with
// runScalar inlined into step, 3.04 G without; 39a14d9: 3.00 G).
//
//go:noinline
func (c *Core) runScalar(now sim.Time) bool {
	s := &c.pipes[isa.S]
	progress := false
	stall := arch.QueueEmpty // the scalar's state if it ends this wake-up idle
	horizon := sim.Add(now, c.horizon)
	for c.loaded && !c.chip.Failed() {
		t := max(now, c.scalFree) // issue time of the next instruction
		if t >= horizon {
			break
		}
		if !c.fetched {
			if c.drained {
				break
			}
			in, ok := c.next()
			if !ok {
				c.drained = true
				break
			}
			if (in.Op == isa.OpSetFlag || in.Op == isa.OpWaitFlag) && uint(in.FlagID) >= uint(c.flagIDs) {
				// A generated stream is not checked before the run
				// (isa.Check); its programs check the machine's flag ids
				// (programs.generatorNeeds). Past them, the id would land
				// on another pipe pair's counter.
				c.fault(in, fmt.Errorf("flag id %d is past the machine's %d per pipe pair (core.flag_ids)", in.FlagID, c.flagIDs))
				break
			}
			c.pending, c.fetched = in, true
		}
		in := c.pending
		target := in.Queue()
		if target == isa.S || in.Op == isa.OpSyncAll || (in.Op == isa.OpBarrier && in.Pipe == isa.ALL) {
			// Work of the scalar unit itself happens at its issue time:
			// wait until then.
			if t > now {
				break
			}
		}
		if in.Op == isa.OpSyncAll {
			if !c.syncAll(now) {
				c.setState(s, now, arch.Barrier)
				return progress
			}
		} else if in.Op == isa.OpBarrier && in.Pipe == isa.ALL {
			if !c.idle(now) {
				c.setState(s, now, arch.Barrier)
				return progress
			}
		} else if target == isa.S {
			if !c.scalarExec(in, now) {
				return progress
			}
		} else {
			p := &c.pipes[target]
			if p.full() {
				if t == now {
					stall = arch.QueueFull
				}
				break
			}
			// Back-to-back issue slots form one busy interval; a new one
			// starts at its own time t (a batch issues ahead of now), so
			// what observers see does not depend on when the core happened
			// to wake up. The previous interval closes before the push.
			if c.issueCycles > 0 && (s.state != arch.Busy || t != c.scalFree) {
				c.closeState(s, t)
				s.state = arch.Busy
			}
			slot := p.push(*in, t)
			if c.issueCycles > 0 {
				if c.obs != nil {
					// Only observers look at what S was doing: the last
					// instruction of the issue run, still in its queue slot
					// when the run's interval closes (any later push first
					// moves the label or closes the interval).
					s.label = slot
				}
				c.scalFree = sim.Add(t, c.issueCycles)
				if sim.Saturated(c.scalFree) {
					c.fault(in, sim.ErrTimeOverflow)
					return progress
				}
			}
		}
		c.fetched = false
		c.instrs++
		s.stats.Instrs++
		progress = true
	}
	if c.scalFree <= now {
		c.setState(s, now, stall)
	}
	return progress
}

// scalarExec executes an instruction of the S pipe; false means blocked.
func (c *Core) scalarExec(in *isa.Instr, now sim.Time) bool {
	s := &c.pipes[isa.S]
	switch in.Op {
	case isa.OpAlloc:
		r := in.Region
		if err := c.occ[r.Buf].Alloc(now, r.Name.String(), r.Offset, r.Size); err != nil {
			c.fault(in, err)
			return false
		}
		c.observeOcc(r.Buf, now)
	case isa.OpFree:
		r := in.Region
		buf, err := c.free(now, r)
		if err != nil {
			c.fault(in, err)
			return false
		}
		c.observeOcc(buf, now)
	case isa.OpScalar:
		if in.Cycles > 0 {
			c.setState(s, now, arch.Busy)
			s.cur, s.label = *in, nil
			c.scalFree = sim.Add(now, c.clock.Cycles(in.Cycles))
			if sim.Saturated(c.scalFree) {
				c.fault(in, sim.ErrTimeOverflow)
				return false
			}
		}
	case isa.OpSetFlag:
		*c.flag(in.SrcPipe, in.DstPipe, in.FlagID)++
		c.observeFlag(in, true, now)
	case isa.OpWaitFlag:
		f := c.flag(in.SrcPipe, in.DstPipe, in.FlagID)
		if *f == 0 {
			c.setState(s, now, arch.WaitFlag)
			return false
		}
		*f--
		c.observeFlag(in, false, now)
	case isa.OpBarrier, isa.OpNop:
	default:
		c.fault(in, fmt.Errorf("%s cannot run on the S pipe", in.Op))
		return false
	}
	return true
}

// free releases a region: by name in whichever buffer holds it, or by
// buffer and offset.
func (c *Core) free(now sim.Time, r isa.Region) (isa.Buffer, error) {
	if r.Name == 0 {
		if r.Buf <= isa.GM || r.Buf >= isa.NumBuffers {
			return 0, fmt.Errorf("free: no buffer given")
		}
		return r.Buf, c.occ[r.Buf].Free(now, "", r.Offset)
	}
	for b := isa.L1; b < isa.NumBuffers; b++ {
		if name := r.Name.String(); c.occ[b].Has(name) {
			return b, c.occ[b].Free(now, name, 0)
		}
	}
	return 0, fmt.Errorf("free of %q: no such live region", r.Name)
}

func (c *Core) observeOcc(b isa.Buffer, now sim.Time) {
	if obs := c.obs; obs != nil {
		obs.Occupancy(c.id, int(b), c.occ[b].Bytes(), now)
	}
}

// idle reports whether every pipe has drained and all effects have landed
// (the scalar's own work included: a program ending in scalar cycles=50
// finished at 0).
func (c *Core) idle(now sim.Time) bool {
	if c.scalFree > now {
		return false
	}
	for i := isa.Pipe(1); i < isa.NumPipes; i++ {
		p := &c.pipes[i]
		if !p.empty() || p.xfer > 0 || p.busy > now || p.last > now {
			return false
		}
	}
	return true
}

func (c *Core) checkDone(now sim.Time) {
	if c.running && c.drained && !c.fetched && c.idle(now) {
		c.running = false
		c.finish = now // 0 for a stream of instructions that take no time (nops)
		c.chip.CoreDone(c.id, now)
	}
}

// eagerWake (tests only) also wakes a core at every time its state may
// change — the schedule before deferred transitions — to check that
// deferring them changes nothing.
var eagerWake bool

// schedule wakes the core at the earliest future time it can make progress
// by its own clock (transfers through the channel wake it themselves; flags
// are only set during the core's own wake-ups). Pure state changes on the
// way (an instruction ending in front of an unset flag, say) are deferred
// transitions instead of wake-ups.
// schedule is kept out of line too (with planPipe inlined into it), as the
// profile-guided build laid the core out before it moved here (cachegrind
// with GOGC=off, SGEMM-cube 4096³ timing-only: 3.043 G instructions with
// schedule inlined into step, 2.978 G without; 39a14d9: 2.994 G).
//
//go:noinline
func (c *Core) schedule(now sim.Time) {
	next := sim.Time(math.MaxInt64)
	consider := func(t sim.Time) {
		if t > now && t < next {
			next = t
		}
	}
	// Waiting for the core to drain (end of stream, sync_all, barrier on
	// every pipe) needs to see each pipe's end.
	waitIdle := c.running && c.drained && !c.fetched
	if c.loaded && (c.fetched || !c.drained) {
		s := &c.pipes[isa.S]
		in := c.pending
		switch {
		case c.fetched && (in.Op == isa.OpSyncAll || (in.Op == isa.OpBarrier && in.Pipe == isa.ALL)):
			waitIdle = true
			consider(c.scalFree)
		case c.fetched && c.scalFree > now && c.queueFull(in):
			// Issue resumes when that pipe pops (in a wake-up of its own);
			// until then the scalar stalls on the full queue.
			if s.state != arch.QueueFull {
				s.deferState(c.scalFree, arch.QueueFull)
			}
		default:
			consider(c.scalFree)
		}
	} else if c.scalFree > now && c.pipes[isa.S].state == arch.Busy {
		// The stream is drained: the scalar is idle once its last issue ends.
		c.pipes[isa.S].deferState(c.scalFree, arch.QueueEmpty)
		if waitIdle {
			consider(c.scalFree) // the core finishes then at the earliest
		}
	}
	functional := c.functional
	for i := isa.Pipe(1); i < isa.NumPipes; i++ {
		p := &c.pipes[i]
		if waitIdle {
			consider(p.busy)
			consider(p.last)
		}
		if functional && len(p.fly) > 0 {
			consider(p.fly[0].done)
		}
		if p.xfer > 0 {
			continue // FlowDone wakes the core
		}
		c.planPipe(p, now, consider)
	}
	if eagerWake {
		if c.loaded && (c.fetched || !c.drained) {
			consider(c.scalFree)
		}
		for i := isa.Pipe(1); i < isa.NumPipes; i++ {
			p := &c.pipes[i]
			consider(p.busy)
			consider(p.last)
			if !p.empty() {
				consider(p.ready[p.head])
			}
		}
	}
	if next != sim.Time(math.MaxInt64) {
		c.waker.Wake(next)
	}
}

// queueFull reports whether in goes to a pipe queue that is full.
func (c *Core) queueFull(in *isa.Instr) bool {
	target := in.Queue()
	return target != isa.S && target < isa.NumPipes && c.pipes[target].full()
}

// planPipe finds when pipe p (not streaming a transfer) can next start or
// pass an instruction and passes it to consider; the state changes before
// then become deferred transitions. It mirrors runPipe.
func (c *Core) planPipe(p *pipe, now sim.Time, consider func(sim.Time)) {
	st := p.state
	enter := func(at sim.Time, s arch.Cause) {
		if at > now && s != st {
			p.deferState(at, s)
			st = s
		}
	}
	t := max(p.busy, now)
	if p.empty() {
		enter(p.busy, arch.QueueEmpty)
		return
	}
	if r := p.ready[p.head]; r > t {
		enter(p.busy, arch.QueueEmpty)
		t = r
	}
	in := p.front()
	switch in.Op {
	case isa.OpWaitFlag:
		if *c.flag(in.SrcPipe, in.DstPipe, in.FlagID) == 0 {
			enter(t, arch.WaitFlag) // set by a later wake-up of this core
			return
		}
	case isa.OpSetFlag, isa.OpBarrier:
		if p.last > t {
			if in.Op == isa.OpSetFlag {
				enter(t, arch.Latency)
			} else {
				enter(t, arch.Barrier)
			}
			t = p.last
		}
	}
	consider(t)
}

// fault stops the run with an execution error naming core, line and instruction.
func (c *Core) fault(in *isa.Instr, err error) {
	where := fmt.Sprintf("core %d", c.id)
	if in.Line > 0 {
		where += fmt.Sprintf(" line %d", in.Line)
	}
	c.chip.Fail(fmt.Errorf("%s: %s: %w", where, isa.Format(*in), err))
}

// Blocked implements sim.Waiter for deadlock reports.
func (c *Core) Blocked() (bool, string) {
	if !c.loaded || (c.drained && !c.fetched && c.allQueuesEmpty()) {
		return false, ""
	}
	var why []string
	if c.fetched {
		in := c.pending
		switch {
		case in.Op == isa.OpWaitFlag && in.DstPipe == isa.S:
			why = append(why, fmt.Sprintf("pipe S: wait_flag %s->%s id %d%s", in.SrcPipe, in.DstPipe, in.FlagID, lineOf(in)))
		case in.Op == isa.OpSyncAll:
			arrived, participants := c.chip.SyncStatus()
			why = append(why, fmt.Sprintf("pipe S: sync_all (%d of %d cores arrived)%s", arrived, participants, lineOf(in)))
		case in.Op == isa.OpBarrier && in.Pipe == isa.ALL:
			why = append(why, "pipe S: pipe_barrier ALL"+lineOf(in))
		default:
			why = append(why, fmt.Sprintf("pipe S: cannot issue %s%s", isa.Format(*in), lineOf(in)))
		}
	}
	for i := isa.Pipe(1); i < isa.NumPipes; i++ {
		p := &c.pipes[i]
		if p.empty() {
			continue
		}
		in := p.front()
		if in.Op == isa.OpWaitFlag {
			why = append(why, fmt.Sprintf("pipe %s: wait_flag %s->%s id %d%s", p.id, in.SrcPipe, in.DstPipe, in.FlagID, lineOf(in)))
		} else {
			why = append(why, fmt.Sprintf("pipe %s: %d instructions queued behind %s%s", p.id, p.n, isa.Format(*in), lineOf(in)))
		}
	}
	return true, fmt.Sprintf("core %d: %s", c.id, strings.Join(why, "; "))
}

func lineOf(in *isa.Instr) string {
	if in.Line > 0 {
		return fmt.Sprintf(" (line %d)", in.Line)
	}
	return ""
}

func (c *Core) allQueuesEmpty() bool {
	for i := isa.Pipe(1); i < isa.NumPipes; i++ {
		if !c.pipes[i].empty() {
			return false
		}
	}
	return true
}

// Wake implements arch.CoreModel.
func (c *Core) Wake(t sim.Time) { c.waker.Wake(t) }

// Finish implements arch.CoreModel.
func (c *Core) Finish() sim.Time { return c.finish }

// Ahead returns the time up to which the scalar has issued (its issue
// slots are stamped ahead of the wake-up that issues them): arch's
// aheadOfEngine, the time a deadlocked run reached.
func (c *Core) Ahead() sim.Time { return c.scalFree }

// Finalize implements arch.CoreModel: it closes every pipe's last interval
// at end and returns the stats.
func (c *Core) Finalize(end sim.Time) arch.CoreStats {
	st := arch.CoreStats{Lanes: make([]arch.LaneStats, len(c.pipes)), Buffers: make([]arch.BufferStats, isa.NumBuffers)}
	for i := range c.pipes {
		p := &c.pipes[i]
		c.settle(p, end)
		c.closeState(p, end)
		st.Lanes[i] = p.stats
	}
	for b := isa.L1; b < isa.NumBuffers; b++ {
		o := c.occ[b]
		st.Buffers[b] = arch.BufferStats{Capacity: o.Capacity, Peak: o.Peak(), Mean: o.Mean(end)}
	}
	st.Finish, st.Running = c.finish, c.running
	st.Instrs = c.instrs
	st.PathBytes = c.pathBytes
	st.VectorRepeats = c.vectorRepeats
	c.releaseQueues()
	if !c.fetched {
		// (A core stopped holding an instruction it fetched — a
		// deadlock — keeps its stream's buffer: pending points into it.)
		c.stream.Release()
	}
	return st
}
