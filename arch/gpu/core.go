package gpu

import (
	"fmt"
	"math"
	"strings"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/mem"
	"github.com/davinci-sim/davinci-sim/sim"
)

// smPriority orders SM wake-ups after channel completions at the same
// instant (as DaVinci cores).
const smPriority = 0

// queueDepth is the per-CTA queue of each lane: how far the CTA's issue
// runs ahead of a lane (warps' instruction buffers; at CTA granularity one
// entry stands for a run of hardware instructions).
const queueDepth = 16

// A lane's queue is a ring of queueDepth entries indexed by a mask (no
// division per instruction): a power of two.
var _ = [1]struct{}{}[queueDepth&(queueDepth-1)]

// slot is the ring index of the entry j places behind the front.
func (l *ctaLane) slot(j int) int { return (l.head + j) & (queueDepth - 1) }

// flagIDs is the number of event ids per (src, dst) lane pair of a CTA:
// cp.async groups, mbarriers and the buffer-free tokens of a multistage
// pipeline.
const flagIDs = 32

// Work units of the SM's shared execution channels: one cycle of a unit's
// full throughput is unitScale units, so an instruction's work is exact to
// 1/unitScale cycle.
const unitScale = 1 << 12

// inflight is an instruction whose effect lands at done.
type inflight struct {
	done sim.Time
	in   isa.Instr
}

// ctaLane is one lane of one resident CTA: an in-order queue.
type ctaLane struct {
	q     []isa.Instr // ring
	ready []sim.Time  // issue time of each entry
	head  int
	n     int
	busy  sim.Time // can start its next instruction at
	last  sim.Time // every started instruction has landed by
	xfer  int      // channel flows of the current instruction still running
	state arch.Cause
	cur   isa.Instr // the instruction executing (busy label, flows)
	// members is the number of instructions cur started with (a group,
	// isa.Instr.WithNext; 1 alone): while it starts, they are the queue's
	// first; group keeps copies of the others for a functional landing.
	members  int
	group    []isa.Instr
	curGroup arch.Group // cur's group for observers (N = 0: cur alone)
	seq      uint64     // counts the instructions started (busy intervals)
	start    sim.Time   // cur's start
	ideal    sim.Time   // cur's duration at its own rate (flows)
	lat      sim.Time   // cur's latency after its last unit of work (flows)
	fly      []inflight
}

func (l *ctaLane) full() bool        { return l.n == queueDepth }
func (l *ctaLane) empty() bool       { return l.n == 0 }
func (l *ctaLane) front() *isa.Instr { return &l.q[l.head] }

func (l *ctaLane) push(in isa.Instr, ready sim.Time) {
	i := l.slot(l.n)
	l.q[i], l.ready[i] = in, ready
	l.n++
}

func (l *ctaLane) pop() {
	l.head = l.slot(1)
	l.n--
}

// at is the queued instruction j places behind the front.
func (l *ctaLane) at(j int) *isa.Instr { return &l.q[l.slot(j)] }

// groupLen returns the number of queued instructions of the group at the
// front (isa.Instr.WithNext; 1 for an instruction on its own) and whether
// the group is complete in the queue.
func (l *ctaLane) groupLen() (n int, complete bool) {
	for n = 1; l.at(n - 1).WithNext; n++ {
		if n == l.n {
			return n, false
		}
	}
	return n, true
}

// run returns the number of instructions at the front, issued by now,
// that run back to back as one flow: the front and those after it that
// run with it (runsWith). Each of them would start the instant the one
// before it finished (nothing stands between them in the lane, and they
// are issued), on the same unit at the same share, so running them as one
// flow of their summed work ends them at the same time (but for the
// picosecond a flow's end rounds up to: once a run, not once an
// instruction), with one event instead of one per instruction; their
// results land together, when the last one's would. An emulated GEMM's
// k-step is a run of MMAs (its products); a fused split's a run of a
// dozen element-wise instructions (Ootomo's: scale, convert, subtract… for
// A's tile, then B's).
func (l *ctaLane) run(now sim.Time) int {
	in := l.front()
	n := 1
	for ; n < l.n; n++ {
		if !runsWith(in, l.at(n)) || l.ready[l.slot(n)] > now {
			break
		}
	}
	return n
}

// runsWith reports whether m, queued right behind a run that in starts,
// joins it: matrix instructions of in's operation and formats (the same
// unit and pace), element-wise instructions of any kind (each adds its own
// cycles on the vector units).
func runsWith(in, m *isa.Instr) bool {
	switch in.Op {
	case isa.OpMmad:
		return m.Op == isa.OpMmad && m.In == in.In && m.Out == in.Out
	case isa.OpVector:
		return m.Op == isa.OpVector
	}
	return false
}

// startReady is when the instruction (or group) at the front can start as
// far as its issue goes: the issue time of its last queued member.
func (l *ctaLane) startReady() sim.Time {
	if !l.q[l.head].WithNext {
		return l.ready[l.head]
	}
	n, _ := l.groupLen()
	return l.ready[l.slot(n-1)]
}

// cta is one resident thread block: an in-order issue stream feeding its
// lanes, its flags and (functional mode) its shared memory and registers.
type cta struct {
	active  bool
	idx     int // index in the grid
	slot    int // index in SM.ctas
	res     isa.Resources
	funct   bool // its instructions are computed (a functional run, not a TimingOnly grid)
	stream  arch.StreamReader
	pending *isa.Instr
	// signals are set_flags waiting for their lane's earlier instructions
	// to land, in the order they fire (at, then issue order).
	signals []signal
	fetched bool
	drained bool
	free    sim.Time // the issue unit is busy until then
	// full: the next instruction's lane queue was full at its issue slot
	// free: unless that lane takes an instruction first, the issue stalls
	// (queue full) from free on — without a wake-up there (catchUp).
	full  bool
	lanes [numLanes]ctaLane
	flags []int32
	mem   [numBuffers][]byte // functional: SMEM, RF, TMEM of this CTA
	// store is the slot's storage for mem, reused by its next block; its
	// length is how far into it its blocks reached (local) since it was
	// last cleared: past it, to its capacity, it is zero.
	store [numBuffers][]byte
	cl    *clusterState // its thread block cluster, nil outside one
	rank  int           // its rank in cl
	work  arch.CTAWork  // what it did (reported when it finishes)
	// Step skips (isa.Grid.Steps, arch.FastForward.Steps): skipTo is the
	// step whose marker the issue unit drops instructions up to (0: none);
	// body is the work of the instructions issued since the last marker,
	// last that of the step before it (what a skipped step stands for).
	skipTo     int
	body, last arch.CTAWork
	steps      bool // its stream marks steps (it passed one)
}

// ClusterFlag marks a flag id (isa.Instr.FlagID) as one of the CTA's
// thread block cluster (isa.Grid.Cluster): an mbarrier in distributed
// shared memory that the cluster's CTAs, on their own SMs, set and wait
// on. Ids ClusterFlag+0 … ClusterFlag+flagIDs−1 per lane pair.
const ClusterFlag = 1 << 8

// ClusterFlagIDs is the number of cluster flag ids per lane pair.
const ClusterFlagIDs = flagIDs

// clusterState is what the CTAs of one thread block cluster share: their
// cluster flags, and (functional) each other's shared memory.
type clusterState struct {
	flags []int32
	ctas  []*cta  // by rank
	cores []*Core // by rank
}

// signal is a set_flag that fires at a time: the completion of an
// asynchronous copy group, an mbarrier's transaction count, an MMA's
// results — the lane that set it goes on issuing meanwhile.
type signal struct {
	at       sim.Time
	src, dst isa.Pipe
	id       int
}

// smLane is the SM-level accounting of a lane: the merge of its resident
// CTAs' lanes.
type smLane struct {
	state arch.Cause
	since sim.Time
	label isa.Instr  // the busy CTA's instruction (observers)
	group arch.Group // the group it started with (N = 0: alone)
	key   uint64     // identifies the busy instruction: CTA slot and sequence number
	stats arch.LaneStats
}

// Core is one streaming multiprocessor or compute unit: up to the occupancy limit of CTAs
// resident at once, each issuing its stream in order into its own lanes;
// the CTAs share the SM's tensor, CUDA-core and shared-memory throughput
// (fair-share channels) and its shared memory, registers and warp slots.
type Core struct {
	chip  *arch.Chip
	p     *Params
	id    int
	waker *sim.Waker

	ctas  []*cta
	smem  int64 // bytes held by resident CTAs
	regs  int64
	acc   int64 // accumulator (tensor) memory held by resident CTAs
	warps int
	count int // resident CTAs
	ran   int // CTAs run
	fin   sim.Time

	units [numLanes]*mem.Channel // shared execution throughput (tensor, fma, ldsm)
	lanes [numLanes]smLane
	// merged is the time of the last merge: the SM lanes' states are
	// accounted up to it; the lane changes after it that happen without
	// an event (passing) are accounted lazily (catchUp).
	merged sim.Time
	occ    []*mem.Occupancy // per geometry buffer (nil for GM)
	obs    arch.Observer
	flobs  arch.Observer
	funct  bool
	// flushing: the engine ran dry with signals or landings held back
	// (Flush); every signal and landing wakes the SM from then on.
	flushing bool

	scratchA, scratchB []byte   // functional: shared-memory MMA operands gathered into fractal tiles
	scratchPair        []byte   // functional: a pair operand's two halves gathered row-major
	scratchGM          []byte   // functional: a tile's rows gathered from global memory (LoadFromGlobal)
	scratchW8A         []uint32 // functional: FP8 operands widened to the model's 32-bit patterns
	scratchW8B         []uint32
	int8               cube.Int8Scratch // functional: the INT8 MMA's working memory

	spans         []arch.GMSpan // a copy group's global-memory spans (scratch)
	pathBytes     []int64       // bytes moved per geometry path (statistics, energy)
	vectorRepeats int64
}

func newCore(c *arch.Chip, p *Params, id int) *Core {
	core := &Core{chip: c, p: p, id: id, obs: c.Observer(), flobs: c.FlagObserver(), funct: c.Mode() == arch.Functional}
	core.waker = sim.NewWaker(c.Engine(), smPriority, core)
	core.pathBytes = make([]int64, len(p.geom.Paths))
	for _, u := range []int{LaneMatrix, LaneVector, LaneLoad} {
		core.units[u] = mem.NewChannel(c.Engine(), p.clock.Hz()*unitScale)
	}
	for i := range core.lanes {
		core.lanes[i].state = arch.QueueEmpty
	}
	core.occ = make([]*mem.Occupancy, len(p.geom.Buffers))
	for b, spec := range p.geom.Buffers {
		if !spec.Global {
			core.occ[b] = mem.NewOccupancy(spec.Capacity)
		}
	}
	c.RegisterWaiter(core)
	return core
}

// Load implements arch.CoreModel: SMs run kernel grids, not per-core
// streams.
func (core *Core) Load(s isa.Stream) {
	core.chip.Fail(fmt.Errorf("%s %d: %s machines run kernel grids (isa.Program.Grids), not per-core streams", core.p.Terms.Core, core.id, core.chip.M.Kind))
}

// Wake implements arch.CoreModel.
func (core *Core) Wake(t sim.Time) { core.waker.Wake(t) }

// Close implements arch.CoreModel.
func (core *Core) Close() {
	for _, t := range core.ctas {
		t.stream.Close()
	}
}

// Finish implements arch.CoreModel: when the SM's last CTA finished.
func (core *Core) Finish() sim.Time { return core.fin }

// Admit implements arch.GridCore: the per-CTA limits of the machine.
func (core *Core) Admit(r isa.Resources) error {
	p := core.p
	w := &p.Terms
	switch {
	case r.Warps < 1:
		return fmt.Errorf("a %s needs at least one %s (got %d)", w.Block, w.Warp, r.Warps)
	case r.Warps > p.MaxWarps:
		return fmt.Errorf("%d %ss per %s exceed the %s's %d", r.Warps, w.Warp, w.Block, w.Core, p.MaxWarps)
	case r.SharedBytes < 0 || r.SharedBytes > p.SharedPerBlock:
		return fmt.Errorf("%d bytes of shared memory per %s exceed %s = %d", r.SharedBytes, w.Block, w.SharedPerBlockKey, p.SharedPerBlock)
	case r.Registers < 0 || r.Registers > p.Registers:
		return fmt.Errorf("%d registers per %s exceed the %s's %d", r.Registers, w.Block, w.Core, p.Registers)
	case r.Registers > int64(r.Warps)*int64(p.WarpSize)*int64(p.MaxRegsPerThread):
		return fmt.Errorf("%d registers over %d threads exceed %d per thread", r.Registers, r.Warps*p.WarpSize, p.MaxRegsPerThread)
	case r.AccBytes < 0 || r.AccBytes > core.accCapacity():
		return fmt.Errorf("%d bytes of accumulator memory per %s exceed the %s's %d", r.AccBytes, w.Block, w.Core, core.accCapacity())
	}
	return nil
}

// Fits implements arch.GridCore.
func (core *Core) Fits(r isa.Resources) bool {
	p := core.p
	return core.count < p.MaxBlocks && core.warps+r.Warps <= p.MaxWarps &&
		core.smem+r.SharedBytes <= p.Shared && core.regs+r.Registers <= p.Registers && core.acc+r.AccBytes <= core.accCapacity()
}

// Resident implements arch.GridCore: Fits' limits on an empty core
// (Params.resident), and the data a functional block keeps
// (Params.slotData). (The slots' own objects are not counted here: a
// run's estimate holds them for its kernels, BlockBytes.)
func (core *Core) Resident(r isa.Resources) (int, int64) {
	p := core.p
	return p.resident(r), p.slotData(p.geom, r)
}

// accCapacity is the core's tensor memory blocks allocate, 0 without one.
func (core *Core) accCapacity() int64 { return core.p.TensorMemory }

// StartCTA implements arch.GridCore.
func (core *Core) StartCTA(idx int, s isa.Stream, r isa.Resources, timingOnly bool, cl *arch.Cluster, rank int) {
	now := core.chip.Engine().Now()
	var t *cta
	slot := -1
	for i, c := range core.ctas {
		if !c.active {
			t, slot = c, i
			break
		}
	}
	if t == nil {
		t = &cta{flags: make([]int32, numLanes*numLanes*flagIDs)}
		for i := range t.lanes {
			t.lanes[i] = ctaLane{q: make([]isa.Instr, queueDepth), ready: make([]sim.Time, queueDepth)} // (slot: a ring of queueDepth)
		}
		core.ctas = append(core.ctas, t)
		slot = len(core.ctas) - 1
	}
	t.active, t.idx, t.slot, t.res = true, idx, slot, r
	t.cl, t.rank = nil, rank
	if cl != nil {
		if cl.Shared == nil {
			cl.Shared = &clusterState{flags: make([]int32, numLanes*numLanes*flagIDs), ctas: make([]*cta, cl.Size), cores: make([]*Core, cl.Size)}
		}
		t.cl = cl.Shared.(*clusterState)
		t.cl.ctas[rank], t.cl.cores[rank] = t, core
	}
	t.funct = core.funct && !timingOnly
	t.stream.StartAhead(s, core.chip.Ahead())
	t.pending = nil
	t.signals = t.signals[:0]
	t.fetched, t.drained, t.full = false, false, false
	t.free = now
	clear(t.flags)
	resetWork(&t.work, len(core.pathBytes))
	resetWork(&t.body, len(core.pathBytes))
	resetWork(&t.last, len(core.pathBytes))
	t.skipTo, t.steps = 0, false
	for i := range t.lanes {
		l := &t.lanes[i]
		l.head, l.n, l.busy, l.last, l.xfer, l.state = 0, 0, now, now, 0, arch.QueueEmpty
		l.fly = l.fly[:0]
	}
	clear(t.mem[:])
	if t.funct {
		// A slot's storage is reused by the blocks it holds in turn
		// (cleared: a block starts with zeroed memory). CTA-level
		// fragments span a whole k-step, more than the per-slice
		// fragments the registers claimed for occupancy hold: the model's
		// register storage is the SM's register file.
		t.mem[BufShared] = zeroed(t.store[BufShared], r.SharedBytes)
		t.mem[BufRegs] = zeroed(t.store[BufRegs], core.p.geom.Buffers[BufRegs].Capacity)
		if int(BufAcc) < len(core.p.geom.Buffers) {
			t.mem[BufAcc] = zeroed(t.store[BufAcc], core.p.geom.Buffers[BufAcc].Capacity)
		}
		for b := range t.store {
			t.store[b] = t.mem[b][:0] // (nothing reached yet)
		}
	}
	core.count++
	core.ran++
	core.smem += r.SharedBytes
	core.regs += r.Registers
	core.acc += r.AccBytes
	core.warps += r.Warps
	name := fmt.Sprintf("cta%d", slot)
	core.alloc(t, BufShared, now, name, r.SharedBytes)
	// CDNA1: the block's accumulators (AccRegisters, of its count) in the
	// accumulation registers as far as they hold them; its other
	// registers fill the register file, then the accumulation registers
	// left.
	regBytes := 4 * r.Registers
	if int(BufAcc) < len(core.occ) && core.occ[BufAcc] != nil {
		acc := min(4*max(r.AccRegisters, 0), regBytes, core.occ[BufAcc].Capacity-core.occ[BufAcc].Bytes())
		rest := regBytes - acc
		rf := min(rest, core.occ[BufRegs].Capacity-core.occ[BufRegs].Bytes())
		core.alloc(t, BufAcc, now, name, acc+rest-rf)
		regBytes = rf
	}
	core.alloc(t, BufRegs, now, name, regBytes)
	if r.AccBytes > 0 {
		core.alloc(t, BufAcc, now, name, r.AccBytes)
	}
	core.waker.Wake(now)
}

// zeroed returns n zero bytes, in b's storage when it is large enough:
// a slot's store, of which only the length the blocks before reached is
// cleared (the rest, to its capacity, is zero still). A slot's whole
// register file and tensor memory (512 KiB on b200) cleared for every
// block took 20 % of a run of 57 344 blocks that each touch a few KiB
// (ozaki, m = 2^20, n = 1).
func zeroed(b []byte, n int64) []byte {
	if int64(cap(b)) < n {
		return make([]byte, n)
	}
	clear(b)
	return b[:n]
}

// alloc records a resident CTA's share of buffer b (occupancy).
func (core *Core) alloc(t *cta, b isa.Buffer, now sim.Time, name string, size int64) {
	if size <= 0 {
		return
	}
	o := core.occ[b]
	if _, err := o.AllocAny(now, name, size); err != nil {
		core.chip.Fail(fmt.Errorf("%s %d %s %d: %w", core.p.Terms.Core, core.id, core.p.Terms.Block, t.idx, err))
		return
	}
	if core.obs != nil {
		core.obs.Occupancy(core.id, int(b), o.Bytes(), now)
	}
}

func (t *cta) flag(src, dst isa.Pipe, id int) *int32 {
	if id >= ClusterFlag {
		return &t.cl.flags[(int(src)*numLanes+int(dst))*flagIDs+id-ClusterFlag]
	}
	return &t.flags[(int(src)*numLanes+int(dst))*flagIDs+id]
}

// setFlag raises a flag of t at now: a cluster flag wakes the SM of a
// cluster CTA whose lane is stopped at a wait for it (a lane that gets
// there later finds it set).
func (core *Core) setFlag(t *cta, src, dst isa.Pipe, id int, at sim.Time) {
	*t.flag(src, dst, id)++
	core.observeFlag(t, src, dst, id, true, at)
	if id < ClusterFlag {
		return
	}
	for r, p := range t.cl.ctas {
		if p == nil || p == t || t.cl.cores[r] == core {
			continue // on this SM: the wake-up firing it runs its lanes next
		}
		if l := &p.lanes[dst]; !l.empty() {
			if in := l.front(); in.Op == isa.OpWaitFlag && in.SrcPipe == src && in.FlagID == id {
				t.cl.cores[r].waker.Wake(core.chip.Engine().Now())
			}
		}
	}
}

// Handle implements sim.Handler: the SM's wake-up.
func (core *Core) Handle(now sim.Time, _ int64) {
	core.catchUp(now)
	if core.funct {
		core.land(now)
	}
	core.fireDue(now)
	for progress := true; progress && !core.chip.Failed(); {
		progress = false
		for _, t := range core.ctas {
			if !t.active {
				continue
			}
			for i := LaneIssue + 1; i < numLanes; i++ {
				if core.runLane(t, isa.Pipe(i), now) {
					progress = true
				}
			}
			if core.runIssue(t, now) {
				progress = true
			}
		}
	}
	for _, t := range core.ctas {
		if t.active {
			core.checkDone(t, now)
		}
	}
	core.merge(now)
	core.schedule(now)
}

// addSignal queues a set_flag firing at s.at, after the ones queued before
// it at the same time.
func (t *cta) addSignal(s signal) {
	i := len(t.signals)
	for i > 0 && t.signals[i-1].at > s.at {
		i--
	}
	t.signals = append(t.signals, signal{})
	copy(t.signals[i+1:], t.signals[i:])
	t.signals[i] = s
}

// validFlag reports whether id names a flag of t: its own, or its
// cluster's.
func (t *cta) validFlag(id int) bool {
	return id >= 0 && id < flagIDs || t.cl != nil && id >= ClusterFlag && id < ClusterFlag+flagIDs
}

// fireDue sets the flags of every CTA's signals due by now, in time order
// over the CTAs — a lazy one (schedule) reports its flag at its own time,
// before what the lanes do at now — and the cluster flags of their
// cluster mates' due signals (fireMates). Called first in a wake-up: no
// signal falls due later in it (a set_flag's signal is queued only for a
// landing after now).
func (core *Core) fireDue(now sim.Time) {
	for _, t := range core.ctas {
		if t.active && t.cl != nil {
			core.fireMates(t, now)
		}
	}
	for {
		var first *cta
		for _, t := range core.ctas {
			if t.active && len(t.signals) > 0 && t.signals[0].at <= now && (first == nil || t.signals[0].at < first.signals[0].at) {
				first = t
			}
		}
		if first == nil {
			return
		}
		sg := first.signals[0]
		first.signals = append(first.signals[:0], first.signals[1:]...)
		core.setFlag(first, sg.src, sg.dst, sg.id, sg.at)
	}
}

// fireMates sets the cluster flags of the signals of t's cluster mates
// due by now: a mate's SM need not wake up for a flag only t's lanes wait
// for (lazy signals, schedule), so t's wake-up raises it.
func (core *Core) fireMates(t *cta, now sim.Time) {
	for _, p := range t.cl.ctas {
		if p == nil || p == t || len(p.signals) == 0 || p.signals[0].at > now {
			continue
		}
		k := 0
		for _, sg := range p.signals {
			if sg.at <= now && sg.id >= ClusterFlag {
				core.setFlag(p, sg.src, sg.dst, sg.id, sg.at)
				continue
			}
			p.signals[k] = sg
			k++
		}
		p.signals = p.signals[:k]
	}
}

// land applies the effects of instructions that completed by now.
func (core *Core) land(now sim.Time) {
	for _, t := range core.ctas {
		if !t.active {
			continue
		}
		for i := range t.lanes {
			l := &t.lanes[i]
			k := 0
			for k < len(l.fly) && l.fly[k].done <= now {
				if t.funct {
					core.apply(t, &l.fly[k].in)
				}
				k++
			}
			if k > 0 {
				l.fly = append(l.fly[:0], l.fly[k:]...)
			}
		}
	}
}

// runLane starts what lane p of t can start at now; it reports progress.
func (core *Core) runLane(t *cta, p isa.Pipe, now sim.Time) bool {
	l := &t.lanes[p]
	progress := false
	for l.xfer == 0 && l.busy <= now {
		if l.empty() || l.ready[l.head] > now {
			l.state = arch.QueueEmpty
			return progress
		}
		in := l.front()
		members := 1
		switch in.Op {
		case isa.OpWaitFlag:
			f := t.flag(in.SrcPipe, in.DstPipe, in.FlagID)
			if *f == 0 {
				l.state = arch.WaitFlag
				return progress
			}
			*f--
			core.observeFlag(t, in.SrcPipe, in.DstPipe, in.FlagID, false, now)
		case isa.OpSetFlag:
			if l.last > now {
				// The flag fires when what the lane started has landed;
				// the lane goes on (asynchronous completion, unlike
				// DaVinci's set_flag, which holds its pipe).
				t.addSignal(signal{at: l.last, src: in.SrcPipe, dst: in.DstPipe, id: in.FlagID})
				break
			}
			core.setFlag(t, in.SrcPipe, in.DstPipe, in.FlagID, now)
		case isa.OpBarrier:
			if l.last > now {
				l.state = arch.Barrier
				return progress
			}
		case isa.OpAlloc, isa.OpFree, isa.OpNop:
		default:
			if in.WithNext {
				n, complete := l.groupLen()
				if !complete && l.full() {
					core.fault(t, in, fmt.Errorf("a group of instructions started together (WithNext) longer than the lane queue (%d)", queueDepth))
					return progress
				}
				if !complete || l.ready[l.slot(n-1)] > now {
					l.state = arch.QueueEmpty // the rest of the group is not issued yet
					return progress
				}
				for j := 1; j < n; j++ {
					m := l.at(j)
					if m.Op != in.Op || in.Op != isa.OpCopy && in.Op != isa.OpLoad {
						core.fault(t, m, fmt.Errorf("only copies or loads start together (WithNext), not %s after %s", m.Op, in.Op))
						return progress
					}
					if pr := core.p; m.Src.Buf != in.Src.Buf || m.Dst.Buf != in.Dst.Buf {
						core.fault(t, m, fmt.Errorf("a %s %s→%s started together (WithNext) with one %s→%s: one path per group", m.Op,
							pr.bufName(m.Src.Buf), pr.bufName(m.Dst.Buf), pr.bufName(in.Src.Buf), pr.bufName(in.Dst.Buf)))
						return progress
					}
				}
				members = n
			} else if runs(in) {
				members = l.run(now)
			}
			l.cur = *in
			l.members = members
			if core.obs != nil {
				l.curGroup = groupOf(l, members)
			}
			if core.funct {
				l.group = l.group[:0]
				for j := 1; j < members; j++ {
					l.group = append(l.group, *l.at(j))
				}
			}
			l.seq++
			l.start = now
			l.state = arch.Busy
			core.lanes[p].stats.Instrs += uint64(members)
			t.work.Instrs[p] += uint64(members)
			core.execute(t, p, l, now)
		}
		for range members {
			l.pop()
		}
		progress = true
	}
	if l.xfer == 0 && l.busy > now {
		l.state = arch.Busy
	}
	return progress
}

// runIssue issues t's instructions in program order into its lanes; it
// reports progress.
func (core *Core) runIssue(t *cta, now sim.Time) bool {
	progress := false
	s := &t.lanes[LaneIssue]
	t.full = false
	stall := arch.QueueEmpty
	horizon := now + issueHorizon*max(core.p.issue, 1)
issue:
	for !core.chip.Failed() {
		at := max(now, t.free) // issue time of the next instruction
		if at >= horizon {
			break
		}
		if !t.fetched {
			if t.drained {
				break
			}
			in := t.stream.Next()
			for in != nil && t.skipTo > 0 && (in.Op != isa.OpStep || in.M < t.skipTo) {
				in = t.stream.Next() // generated before the skip: dropped
			}
			if in == nil {
				t.drained = true
				break
			}
			t.pending, t.fetched = in, true
		}
		in := t.pending
		if in.Op == isa.OpStep { // no time, not an instruction
			t.fetched = false
			core.step(t, in, now)
			continue
		}
		target := in.Queue()
		if at > now && (target == LaneIssue || in.Op == isa.OpScalar || in.Op == isa.OpBarrier && in.Pipe == isa.ALL) {
			break issue // the issue unit's own work happens at its issue time
		}
		switch {
		case in.Op == isa.OpBarrier && in.Pipe == isa.ALL:
			if !core.idle(t, now) {
				s.state = arch.Barrier
				return progress
			}
		case in.Op == isa.OpScalar:
			t.free = sim.Add(now, core.p.clock.Cycles(in.Cycles))
			if core.obs != nil { // the issue lane's busy label
				s.cur = *in
			}
			s.seq++
		case in.Op == isa.OpSyncAll:
			core.fault(t, in, fmt.Errorf("sync_all: the %ss of a grid cannot wait for each other; end the kernel (grid) instead", core.p.Terms.Block))
			return progress
		case (in.Op == isa.OpSetFlag || in.Op == isa.OpWaitFlag) &&
			(int(in.SrcPipe) >= numLanes || int(in.DstPipe) >= numLanes || !t.validFlag(in.FlagID)):
			core.fault(t, in, fmt.Errorf("flag %d between lanes %d and %d: a %s has lanes 0..%d and flag ids 0..%d (in a cluster also %d..%d)",
				in.FlagID, in.SrcPipe, in.DstPipe, core.p.Terms.Core, numLanes-1, flagIDs-1, ClusterFlag, ClusterFlag+flagIDs-1))
			return progress
		case int(target) >= numLanes:
			core.fault(t, in, fmt.Errorf("no lane %d on a %s (lanes %s)", target, core.p.Terms.Core, strings.Join(core.p.geom.Lanes, ", ")))
			return progress
		case in.WithNext && in.Op != isa.OpCopy && in.Op != isa.OpLoad:
			core.fault(t, in, fmt.Errorf("only copies or loads start together (WithNext), not %s", in.Op))
			return progress
		case target == LaneIssue:
			if in.Op != isa.OpNop && in.Op != isa.OpAlloc && in.Op != isa.OpFree {
				core.fault(t, in, fmt.Errorf("%s cannot run on the issue lane", in.Op))
				return progress
			}
		default:
			l := &t.lanes[target]
			if l.full() {
				if at > now {
					// Full when this slot comes: the issue stalls then,
					// unless the lane takes an instruction first (its
					// wake-up runs the issue again).
					t.full = true
					break issue
				}
				stall = arch.QueueFull
				s.state = stall
				return progress
			}
			l.push(*in, at)
			if core.p.issue > 0 {
				t.free = at + core.p.issue
				if core.obs != nil { // the issue lane's busy label
					s.cur = *in
				}
				s.seq++
			}
		}
		t.fetched = false
		core.lanes[LaneIssue].stats.Instrs++
		t.work.Instrs[LaneIssue]++
		if t.steps {
			core.p.addWork(&t.body, in, target)
		}
		progress = true
	}
	s.state = stall
	if t.free > now {
		s.state = arch.Busy
	}
	return progress
}

// issueHorizon bounds how far ahead of now a CTA issues in one wake-up, in
// issue slots: each instruction is stamped with its own issue time (its
// lane does not start it earlier), which times the run as one wake-up per
// slot would, with far fewer events (as DaVinci's scalar unit).
const issueHorizon = 64

// idle reports whether every lane of t has drained and landed.
func (core *Core) idle(t *cta, now sim.Time) bool {
	if len(t.signals) > 0 {
		return false
	}
	for i := LaneIssue + 1; i < numLanes; i++ {
		l := &t.lanes[i]
		if !l.empty() || l.xfer > 0 || l.busy > now || l.last > now {
			return false
		}
	}
	return true
}

// checkDone retires t when its stream is drained and everything landed.
func (core *Core) checkDone(t *cta, now sim.Time) {
	if !t.drained || t.fetched || t.free > now || !core.idle(t, now) {
		return
	}
	t.active = false
	if t.cl != nil {
		t.cl.ctas[t.rank] = nil // its slot may take another CTA: the peer must not read it
		t.cl = nil
	}
	t.stream.Close()
	for b := range t.mem {
		t.mem[b] = nil
	}
	name := fmt.Sprintf("cta%d", t.slot)
	for _, b := range []isa.Buffer{BufShared, BufRegs, BufAcc} {
		if int(b) >= len(core.occ) || core.occ[b] == nil {
			continue
		}
		if core.occ[b].Has(name) {
			_ = core.occ[b].Free(now, name, 0)
			if core.obs != nil {
				core.obs.Occupancy(core.id, int(b), core.occ[b].Bytes(), now)
			}
		}
	}
	core.count--
	core.smem -= t.res.SharedBytes
	core.regs -= t.res.Registers
	core.acc -= t.res.AccBytes
	core.warps -= t.res.Warps
	core.fin = max(now, 1)
	core.chip.CTADone(core.id, t.idx, now, &t.work)
}

// FlowDone implements mem.FlowDone: a flow of lane tag%numLanes of CTA
// slot tag/numLanes has finished.
func (core *Core) FlowDone(now sim.Time, tag int64) {
	if tag == coexecTag {
		return
	}
	core.catchUp(now)
	t := core.ctas[tag/numLanes]
	l := &t.lanes[tag%numLanes]
	l.xfer--
	if l.xfer > 0 {
		return
	}
	// Busy for the time it would take at its own rate; the rest it lost
	// to the units it shares (other CTAs, the chip's memory).
	l.state = arch.QueueEmpty
	l.busy = now
	core.landAt(l, sim.Add(now, l.lat))
	if core.quietDone(t, int(tag%numLanes), now) {
		return
	}
	core.waker.Wake(now)
}

// quietDone finishes the end of lane p's instruction at now without
// waking the SM when all the lane can do then is queue the signals of the
// set_flags behind it (they fire when it lands, after now), take the waits
// whose flags are up and stop — at a wait for a flag not raised, at an
// instruction issued later or at an empty queue: nothing else on the SM
// changes at now, so the wake-up would only run every lane to find that.
// (A pipelined GEMM's copies, stores and fragment loads mostly end so:
// each with its set_flags, then a wait for the next stage's turn.) It
// reports whether it did.
func (core *Core) quietDone(t *cta, p int, now sim.Time) bool {
	l := &t.lanes[p]
	if noQuiet || core.funct || l.last <= now {
		// A functional run applies landings at wake-ups; set_flags after
		// a landing raise their flags now.
		return false
	}
	for _, u := range core.ctas {
		if u.active && len(u.signals) > 0 && u.signals[0].at <= now {
			return false // flags to raise first (Core.fireDue), in time order
		}
	}
	if (t.full || t.lanes[LaneIssue].state == arch.QueueFull) && t.fetched && int(t.pending.Queue()) == p {
		return false // the issue unit, stopped at this lane's full queue, goes on when the set_flags leave it
	}
	var taken [4]*int32 // flags of the waits passed so far (a flag taken twice counts twice)
	nt := 0
scan:
	for j := 0; j < l.n; j++ {
		if l.ready[l.slot(j)] > now {
			break // issued later: the lane wakes up then
		}
		switch in := l.at(j); in.Op {
		case isa.OpSetFlag:
			if d := int(in.DstPipe); d < numLanes && t.lanes[d].state == arch.QueueEmpty && core.awaits(t, in.SrcPipe, in.DstPipe, in.FlagID) {
				if _, ahead := core.waitAhead(t, d); ahead {
					// That lane's wait ahead ends with this signal: a
					// wake-up must book its issue time again.
					return false
				}
			}
		case isa.OpWaitFlag:
			if in.FlagID >= ClusterFlag {
				return false // a mate's signals for it are booked by schedule
			}
			f := t.flag(in.SrcPipe, in.DstPipe, in.FlagID)
			up := *f
			for _, g := range taken[:nt] {
				if g == f {
					up--
				}
			}
			if up <= 0 {
				break scan
			}
			if nt == len(taken) {
				return false
			}
			taken[nt] = f
			nt++
		default:
			return false // it would start now
		}
	}
	core.runLane(t, isa.Pipe(p), now)
	core.mergeLane(p, now)
	if core.eagerLandings(t) {
		core.waker.Wake(l.last) // the signals, the landing (a CTA may be done then)
	} else {
		if at, ok := core.awaitedSignal(t); ok {
			core.waker.Wake(at)
		}
		if t.cl != nil {
			core.wakeMates(t) // its cluster signals, for the mates that wait
		}
	}
	if !l.empty() && l.state == arch.QueueEmpty {
		if _, ahead := core.waitAhead(t, p); !ahead {
			core.waker.Wake(l.startReady())
		}
	}
	return true
}

// merge recomputes the SM lanes' states from the CTAs' lanes and closes
// the intervals that changed at now.
func (core *Core) merge(now sim.Time) {
	for i := range core.lanes {
		core.mergeLane(i, now)
	}
	core.merged = now
}

// mergeLane sets SM lane i to the merge of the CTAs' lane i at now.
func (core *Core) mergeLane(i int, now sim.Time) {
	state, label, key := arch.QueueEmpty, (*ctaLane)(nil), uint64(0)
	for _, t := range core.ctas {
		if !t.active {
			continue
		}
		l := &t.lanes[i]
		s := l.state
		if x, then := core.passing(t, i); x >= 0 && now >= x {
			s = then
		}
		if rank(s) > rank(state) {
			state = s
			if s == arch.Busy {
				label, key = l, uint64(t.slot)<<48|l.seq
			}
		}
	}
	core.setLane(i, state, label, key, now)
}

// passing returns the time x at which lane i of t, busy, turns to state
// then without an event (−1: none): a transfer on a memory lane past the
// time it would take at its own rate is slowed by the chip's memory
// (bandwidth); an issue unit whose next instruction's lane is full at its
// issue slot stalls there (queue full).
func (core *Core) passing(t *cta, i int) (x sim.Time, then arch.Cause) {
	l := &t.lanes[i]
	switch {
	case l.state == arch.QueueEmpty:
		if at, ok := core.waitAhead(t, i); ok {
			return at, arch.WaitFlag
		}
	case l.state != arch.Busy:
	case i == LaneIssue && t.full:
		return t.free, arch.QueueFull
	case l.xfer > 0 && memoryLane(i):
		return l.start + l.ideal, arch.Bandwidth
	}
	return -1, 0
}

// waitAhead reports whether the front of memory lane i of t, issued for a
// later time, is a wait that will find its flag down then, and when:
// nothing raises a flag without waking the SM but a signal (none is
// pending for it), so the lane turns from an empty queue to waiting then
// without an event (a passing, accounted by catchUp: memory lanes only). A
// pipelined GEMM's copy lane, done with a stage, waits so for the stage
// after next to be free.
func (core *Core) waitAhead(t *cta, i int) (sim.Time, bool) {
	l := &t.lanes[i]
	if noQuiet || !memoryLane(i) || l.empty() {
		return 0, false
	}
	in := l.front()
	if in.Op != isa.OpWaitFlag || in.FlagID >= ClusterFlag || *t.flag(in.SrcPipe, in.DstPipe, in.FlagID) != 0 {
		return 0, false // a cluster's flags are raised by other SMs too
	}
	for _, sg := range t.signals {
		if sg.src == in.SrcPipe && sg.dst == in.DstPipe && sg.id == in.FlagID {
			return 0, false
		}
	}
	return l.ready[l.head], true
}

// eagerWake (tests only, the conformance suite's eager check) makes the
// core wake up at every passing as well: the accounting must not depend on
// it.
var eagerWake bool

// catchUp accounts the lanes' state changes that happened without an event
// since the last merge, up to now (passing): nothing else changed in
// between, so each SM lane is merged again at those times. Called before
// anything changes a lane at now.
func (core *Core) catchUp(now sim.Time) {
	if now == core.merged {
		return // nothing can have passed (a FlowDone's, then the wake-up's)
	}
	for _, i := range passingLanes {
		for from := core.merged; ; {
			// The earliest passing after from (a few CTAs: a scan each).
			at := sim.Time(math.MaxInt64)
			for _, t := range core.ctas {
				if !t.active {
					continue
				}
				if x, _ := core.passing(t, i); x > from && x <= now && x < at {
					at = x
				}
			}
			if at > now {
				break
			}
			core.mergeLane(i, at)
			from = at
		}
	}
	core.merged = now
}

// memoryLane reports whether lane i moves data through the chip's memory:
// a transfer slower than its path is a bandwidth stall there. A unit the
// SM's CTAs share (tensor, CUDA cores, shared memory) is busy for as long
// as any CTA's work runs on it, however the CTAs split it.
func memoryLane(i int) bool { return i == LaneCopy || i == LaneStore }

// passingLanes are the lanes whose state can change without an event
// (Core.passing): the issue unit (queue full at a future issue slot) and
// the memory lanes (memoryLane: bandwidth past a transfer's own rate).
var passingLanes = [...]int{LaneIssue, LaneCopy, LaneStore}

// rank orders causes for the merge: a lane is busy if any CTA keeps it
// busy, else it shows the most telling stall.
func rank(c arch.Cause) int {
	switch c {
	case arch.Busy:
		return 6
	case arch.Bandwidth:
		return 5
	case arch.Latency:
		return 4
	case arch.WaitFlag:
		return 3
	case arch.Barrier:
		return 2
	case arch.QueueFull:
		return 1
	}
	return 0
}

// setLane moves SM lane i to state from now on; busy, with the
// instruction (and group) the CTA lane label started.
func (core *Core) setLane(i int, state arch.Cause, label *ctaLane, key uint64, now sim.Time) {
	l := &core.lanes[i]
	if l.state == state && (state != arch.Busy || l.key == key) {
		return
	}
	core.closeLane(i, now)
	l.state, l.key = state, key
	if label != nil && core.obs != nil { // only observers see the label
		l.label, l.group = label.cur, label.curGroup
	}
}

// groupOf returns the group of the members instructions at the front of
// l's queue (N = 0 for one): their count and summed bytes and flops.
func groupOf(l *ctaLane, members int) arch.Group {
	if members < 2 {
		return arch.Group{}
	}
	g := arch.Group{N: members}
	for j := range members {
		b, f := l.at(j).Amount(0)
		g.Bytes += b
		g.Flops += f
	}
	return g
}

// closeLane accounts SM lane i's open interval up to now.
func (core *Core) closeLane(i int, now sim.Time) {
	l := &core.lanes[i]
	if now <= l.since {
		return
	}
	l.stats.Time[l.state] += now - l.since
	if core.obs != nil {
		var in *isa.Instr
		var g *arch.Group
		if l.state == arch.Busy {
			in = &l.label
			if l.group.N > 1 {
				g = &l.group
			}
		}
		core.obs.Interval(core.id, i, l.state, l.since, now, in, g)
	}
	l.since = now
}

// schedule wakes the SM at the earliest future time one of its CTAs can
// make progress or change state by its own clock (flows wake it
// themselves).
func (core *Core) schedule(now sim.Time) {
	next := sim.Time(math.MaxInt64)
	consider := func(t sim.Time) {
		if t > now && t < next {
			next = t
		}
	}
	for _, t := range core.ctas {
		if !t.active {
			continue
		}
		if !t.full || eagerWake {
			consider(t.free)
		}
		eager := core.eagerLandings(t)
		if len(t.signals) > 0 {
			if eager {
				consider(t.signals[0].at)
			} else if at, ok := core.awaitedSignal(t); ok {
				consider(at)
			}
			if t.cl != nil && !eager {
				core.wakeMates(t)
			}
		}
		if t.cl != nil {
			if at, ok := core.awaitedMateSignal(t); ok {
				consider(at)
			}
		}
		for i := range t.lanes {
			l := &t.lanes[i]
			consider(l.busy)
			if eager || !l.empty() && l.front().Op == isa.OpBarrier {
				consider(l.last)
			}
			if !l.empty() {
				if _, ahead := core.waitAhead(t, i); !ahead {
					consider(l.startReady())
				}
			}
			if len(l.fly) > 0 {
				consider(l.fly[0].done)
			}
			if eagerWake {
				if x, _ := core.passing(t, i); x >= 0 {
					consider(x)
				}
			}
		}
	}
	if next != sim.Time(math.MaxInt64) {
		core.waker.Wake(next)
	}
}

// Lazy signals and landings: a set_flag's signal (and the landing it
// waits for) need not wake the SM when no lane is stopped at a wait for
// that flag — the flag is raised, at its own time, by the first wake-up
// after it (Core.fireDue), before any lane looks at it; a lane that gets to
// the wait first books the wake-up then (schedule, quietDone). A landing
// still wakes the SM where something waits for it: a lane's barrier, an
// issue unit at a barrier, a drained CTA (it may be done then), a
// functional run (its landings apply data). A cluster flag's signal wakes
// the SM of a mate whose lane waits for it (wakeMates), whose wake-up
// raises it (fireMates); when the engine runs dry, whatever is held back
// wakes the SM at its time (Flush).

// eagerLandings reports whether t's landings and signals must wake the SM
// at their time (see above).
func (core *Core) eagerLandings(t *cta) bool {
	return eagerWake || noQuiet || core.flushing || core.funct || t.drained ||
		t.lanes[LaneIssue].state == arch.Barrier
}

// awaitedSignal returns the time of t's first signal that a lane is
// stopped at a wait for (or may be: the wait at the front of a busy lane).
func (core *Core) awaitedSignal(t *cta) (sim.Time, bool) {
	for _, sg := range t.signals {
		if core.awaits(t, sg.src, sg.dst, sg.id) {
			return sg.at, true
		}
	}
	return 0, false
}

// wakeMates books a wake-up at the time of each of t's cluster signals on
// the SM of a cluster mate whose lane waits for it at its front (lazy
// signals: that SM's wake-up raises it, fireMates).
func (core *Core) wakeMates(t *cta) {
	for _, sg := range t.signals {
		if sg.id < ClusterFlag {
			continue
		}
		for r, p := range t.cl.ctas {
			if p != nil && p != t && t.cl.cores[r] != core && core.awaits(p, sg.src, sg.dst, sg.id) {
				t.cl.cores[r].waker.Wake(sg.at)
			}
		}
	}
}

// awaitedMateSignal returns the time of the first cluster signal of t's
// cluster mates that a lane of t waits for at its front.
func (core *Core) awaitedMateSignal(t *cta) (sim.Time, bool) {
	at, ok := sim.Time(0), false
	for _, p := range t.cl.ctas {
		if p == nil || p == t {
			continue
		}
		for _, sg := range p.signals {
			if sg.id >= ClusterFlag && (!ok || sg.at < at) && core.awaits(t, sg.src, sg.dst, sg.id) {
				at, ok = sg.at, true
			}
		}
	}
	return at, ok
}

// awaits reports whether lane dst of t has a wait for flag (src, dst, id)
// at its front.
func (core *Core) awaits(t *cta, src, dst isa.Pipe, id int) bool {
	if int(dst) >= numLanes {
		return true
	}
	l := &t.lanes[dst]
	if l.empty() {
		return false
	}
	in := l.front()
	return in.Op == isa.OpWaitFlag && in.SrcPipe == src && in.DstPipe == dst && in.FlagID == id
}

// observeFlag tells the observer of a flag event. Flags are per CTA: the
// id it sees is slot·flagIDs + id, so that traces pair each set with its
// own CTA's wait when several CTAs share the SM.
func (core *Core) observeFlag(t *cta, src, dst isa.Pipe, id int, set bool, now sim.Time) {
	if core.flobs != nil && id < ClusterFlag { // cluster flags pair across SMs: not drawn
		core.flobs.Flag(core.id, int(src), int(dst), t.slot*flagIDs+id, set, now)
	}
}

// fault stops the run with an error naming SM, CTA and instruction.
func (core *Core) fault(t *cta, in *isa.Instr, err error) {
	names := isa.Names{Lanes: core.p.geom.Lanes, Buffers: bufferNames(core.p)}
	core.chip.Fail(fmt.Errorf("%s %d %s %d: %s: %w", core.p.Terms.Core, core.id, core.p.Terms.Block, t.idx, names.Format(*in), err))
}

func bufferNames(p *Params) []string {
	out := make([]string, len(p.geom.Buffers))
	for i, b := range p.geom.Buffers {
		out[i] = b.Name
	}
	return out
}

// Flush implements sim.Flusher: when nothing else is left to happen (a
// deadlock), the signals and landings no lane waited for (lazy signals)
// wake the SM at their times as they would have had every landing woken it
// — the run ends then, and every flag event is observed — and every later
// one wakes it.
func (core *Core) Flush() bool {
	now := core.chip.Engine().Now()
	next := sim.Time(math.MaxInt64)
	for _, t := range core.ctas {
		if !t.active {
			continue
		}
		if len(t.signals) > 0 {
			next = min(next, t.signals[0].at)
		}
		for i := range t.lanes {
			if l := &t.lanes[i]; l.last > now {
				next = min(next, l.last)
			}
		}
	}
	if next == sim.Time(math.MaxInt64) {
		return false
	}
	core.flushing = true
	core.waker.Wake(max(next, now))
	return true
}

// Blocked implements sim.Waiter for deadlock reports.
func (core *Core) Blocked() (bool, string) {
	var why []string
	names := isa.Names{Lanes: core.p.geom.Lanes, Buffers: bufferNames(core.p)}
	for _, t := range core.ctas {
		if !t.active {
			continue
		}
		if t.fetched {
			why = append(why, fmt.Sprintf("%s %d issue: cannot issue %s", core.p.Terms.Block, t.idx, names.Format(*t.pending)))
		}
		for i := LaneIssue + 1; i < numLanes; i++ {
			l := &t.lanes[i]
			if l.empty() {
				continue
			}
			in := l.front()
			if _, complete := l.groupLen(); in.WithNext && !complete {
				why = append(why, fmt.Sprintf("%s %d lane %s: %s waits for the rest of its group (WithNext), never issued", core.p.Terms.Block, t.idx, core.p.geom.Lanes[i], names.Format(*in)))
			} else if in.Op == isa.OpWaitFlag {
				why = append(why, fmt.Sprintf("%s %d lane %s: %s", core.p.Terms.Block, t.idx, core.p.geom.Lanes[i], names.Format(*in)))
			} else {
				why = append(why, fmt.Sprintf("%s %d lane %s: %d queued behind %s", core.p.Terms.Block, t.idx, core.p.geom.Lanes[i], l.n, names.Format(*in)))
			}
		}
	}
	if len(why) == 0 {
		return false, ""
	}
	return true, fmt.Sprintf("%s %d: %s", core.p.Terms.Core, core.id, strings.Join(why, "; "))
}

// Finalize implements arch.CoreModel.
func (core *Core) Finalize(end sim.Time) arch.CoreStats {
	core.catchUp(end)
	st := arch.CoreStats{Lanes: make([]arch.LaneStats, numLanes), Buffers: make([]arch.BufferStats, len(core.occ)), Finish: core.fin, Running: core.count > 0}
	for i := range core.lanes {
		core.closeLane(i, end)
		st.Lanes[i] = core.lanes[i].stats
		st.Instrs += core.lanes[i].stats.Instrs
	}
	for b, o := range core.occ {
		if o == nil {
			continue
		}
		st.Buffers[b] = arch.BufferStats{Capacity: o.Capacity, Peak: o.Peak(), Mean: o.Mean(end)}
	}
	st.PathBytes = core.pathBytes
	st.VectorRepeats = core.vectorRepeats
	return st
}

// Counters implements arch.GridCore: the core's statistics as Finalize
// would give them at now, without closing the open intervals (each lane's
// counts up to now; the bandwidth stalls begun before now are accounted
// first, see catchUp); a buffer's Mean holds its occupancy integral over
// [0, now] in byte·ps, not a mean.
func (core *Core) Counters(now sim.Time) arch.CoreStats {
	core.catchUp(now)
	st := arch.CoreStats{Lanes: make([]arch.LaneStats, numLanes), Buffers: make([]arch.BufferStats, len(core.occ)), Finish: core.fin}
	for i := range core.lanes {
		l := &core.lanes[i]
		st.Lanes[i] = l.stats
		if now > l.since {
			st.Lanes[i].Time[l.state] += now - l.since
		}
		st.Instrs += l.stats.Instrs
	}
	for b, o := range core.occ {
		if o != nil {
			st.Buffers[b] = arch.BufferStats{Capacity: o.Capacity, Peak: o.Peak(), Mean: o.Mean(now) * float64(now)}
		}
	}
	st.PathBytes = append([]int64(nil), core.pathBytes...)
	st.VectorRepeats = core.vectorRepeats
	return st
}

// AppendCounters implements arch.CounterAppender: Counters(now)'s lanes,
// path bytes, vector repeats and buffer means, appended.
func (core *Core) AppendCounters(ints []int64, floats []float64, now sim.Time) ([]int64, []float64) {
	core.catchUp(now)
	for i := range core.lanes {
		l := &core.lanes[i]
		for c, t := range l.stats.Time {
			if arch.Cause(c) == l.state && now > l.since {
				t += now - l.since
			}
			ints = append(ints, int64(t))
		}
		ints = append(ints, int64(l.stats.Instrs))
	}
	ints = append(ints, core.pathBytes...)
	ints = append(ints, core.vectorRepeats)
	for _, o := range core.occ {
		var mean float64
		if o != nil {
			mean = o.Mean(now) * float64(now)
		}
		floats = append(floats, mean)
	}
	return ints, floats
}
