package traces

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// The Recorder keeps the engine's cost small: its Observer methods only
// filter the event (window, cores, idle time) and append a fixed-size
// pointer-free record to a batch owned by the engine goroutine — no lock,
// no map, no allocation per event. Full batches (and the partial one when a
// reader asked for fresh data) are handed to a consumer goroutine, which
// builds the Timeline under the lock: slices, packed instructions, flag
// matching, counters. With two cores the engine runs on one and the
// consumer and the visualizer on the other. The engine never wakes the
// consumer: it appends to the queue, and the consumer polls it (every
// pollMin, backing off to pollMax while there is nothing to do). Waking a
// parked goroutine costs the waker a futex call and an inter-processor
// interrupt: with 1024-event batches and a consumer that did nothing else,
// waking it per hand-off cost the engine 1.18–1.26× its bare time, polling
// 1.11× (hgemm 4096³, engine thread locked, median of 16 runs).
//
// Per recorded slice the Timeline holds about 4 bytes of a sealed lane
// block (Lane); an instruction adds its packed copy (typically 15–30 bytes;
// slices of an instruction packed recently share it: the scalar unit's
// issue slot and the pipe's execution, cores running the same tile code), a
// matched flag pair a 40-byte Flow and a 16-byte entry per flag mark, a
// counter change a 16-byte Sample. None of it contains pointers, so the
// garbage collector does not scan it.

// batchSize is the number of events per hand-off: small enough that a
// batch (with its instructions ~100 KB) is still in a cache when the
// consumer reads it and when the engine refills it.
const batchSize = 1024

// maxQueued bounds the batches waiting for the consumer: the engine waits
// when the consumer falls this far behind (memory stays bounded). It covers
// several polling periods of the fastest engine (~10 batches per ms).
const maxQueued = 64

// pollMin and pollMax bound the consumer's polling period.
const (
	pollMin = time.Millisecond
	pollMax = 16 * time.Millisecond
)

type evKind uint8

const (
	evStall evKind = iota // a stall interval (cause)
	evBusy                // an instruction interval (its cinstr is next in batch.ins)
	evSet                 // set_flag
	evWait                // wait_flag consumed
	evOcc                 // buffer occupancy
	evBW                  // GM bandwidth
)

// obsEvent is one observed event as the engine hands it over.
type obsEvent struct {
	t0 sim.Time // interval start; the time of point events
	// t1 is the interval end; point events keep their value here instead
	// (flag id, occupancy bytes, bandwidth as float64 bits: see x).
	t1     sim.Time
	core   int32
	kind   evKind
	p0, p1 uint8 // pipe (interval, flag source); flag destination pipe or buffer
	cause  arch.Cause
}

// x returns the value of a point event.
func (e *obsEvent) x() int64 { return int64(e.t1) }

// batch is one hand-off: fixed arrays and counts, so that recording an
// event is a few stores.
type batch struct {
	n, ni int // events in ev, instructions in ins
	ev    [batchSize]obsEvent
	ins   [batchSize]cinstr // the instructions of the evBusy events, in order
}

func (r *Recorder) newBatch() *batch {
	r.batches.Add(1)
	return new(batch)
}

// events returns the recorded events.
func (b *batch) events() []obsEvent { return b.ev[:b.n] }

// reset empties b for reuse.
func (b *batch) reset() { b.n, b.ni = 0, 0 }

type flagKey struct {
	core     int32
	src, dst uint8
	id       int64
}

// pendingSet is a raised flag not yet consumed.
type pendingSet struct {
	t    sim.Time
	bind uint64 // non-zero when the set lies in the window (its arrow may be drawn)
}

// flagQueue is the raised, unconsumed sets of one flag, oldest first: up
// to two in place (one cache line with the rest), then the overflow.
type flagQueue struct {
	ring    [2]pendingSet
	head, n int32 // ring[head] is the oldest; n in the ring
	more    []pendingSet
}

// push queues a raised flag.
func (q *flagQueue) push(ps pendingSet) {
	if q.n < 2 && len(q.more) == 0 {
		q.ring[(q.head+q.n)&1] = ps
		q.n++
		return
	}
	q.more = append(q.more, ps)
}

// pop returns the oldest raised flag (zero when none).
func (q *flagQueue) pop() (ps pendingSet) {
	if q.n == 0 {
		return ps
	}
	ps = q.ring[q.head]
	q.head ^= 1
	q.n--
	if m := len(q.more); m > 0 {
		q.ring[(q.head+q.n)&1] = q.more[0]
		q.n++
		copy(q.more, q.more[1:])
		q.more = q.more[:m-1]
	}
	return ps
}

// Recorder is an arch.Observer that builds a Timeline of the events inside
// a Window; memory is proportional to the events kept (see above; plus one
// pending entry per raised, unconsumed flag). One goroutine (the engine)
// calls the Observer methods, Flush and Finish; any goroutine may call
// Read, and Timeline after Finish.
type Recorder struct {
	win Window

	// Writer side: only the goroutine calling the Observer methods.
	cur     *batch
	noFlags bool      // SetFlagMarks(false): Flag returns at once
	power   powerBins // the dynamic energy by time bin (power.go)
	// flushReq asks the writer to hand over its partial batch (set by Read).
	flushReq atomic.Bool
	_        [64]byte // keeps the consumer's writes off the writer's cache line

	// Hand-off to the consumer goroutine (which polls the queue from the
	// first hand-off until a Flush finds it empty).
	qmu     sync.Mutex
	qcond   sync.Cond
	queue   []*batch
	free    []*batch
	running bool
	waiting bool // the engine waits for room in the queue
	stop    bool // Flush: the consumer exits once the queue is empty

	// The timeline and the consumer's state, under mu.
	mu        sync.Mutex
	tl        Timeline
	sets      map[flagKey]*flagQueue // flags outside the dense tables
	dense     []*denseFlags          // by core ID
	opNames   []uint16               // 1 + name index by op<<10 | pipe<<6 | vop
	causeName [arch.NumCauses]int32  // 1 + name index
	binds     uint64
	byID      []*CoreTimeline // cores by ID (dense)
	limit     int64           // memory limit in bytes (0 = none)
	// maxBytes bounds the memory the recording holds (SetCap; 0: none);
	// capErr is set, and nothing more recorded, once it is passed.
	maxBytes int64
	capRoom  string
	onCap    func(error)
	capErr   *CapError
	capped   atomic.Bool  // capErr is set (read by the writer)
	batches  atomic.Int64 // batches allocated and not left to the collector
	// packed remembers recently packed instructions by content hash: most
	// busy slices repeat an instruction already packed (the scalar unit's
	// issue slot and the pipe's execution of the same instruction; cores
	// running the same tile code), and share its copy.
	packed *[packedSlots]packedEntry

	// sink, when set (tests only), receives the full batches instead of
	// the consumer.
	sink func(*batch)
}

// DefaultLiveLimit is the memory limit the command line sets for a live
// view that writes no trace (run --view without --trace), or what
// --max-memory leaves where less: about 40 million slices, a few times
// more than the largest examples record.
const DefaultLiveLimit = 1 << 30

// SetLimit bounds the memory the timeline holds to about bytes (0 = no
// limit, the default): when it is exceeded, the older half of the recorded
// time span is dropped (Timeline.Dropped), in whole chunks. Meant for live
// viewing of long runs; a timeline to be written as a trace needs all its
// events. Call it before the run.
func (r *Recorder) SetLimit(bytes int64) {
	r.mu.Lock()
	r.limit = max(bytes, 0)
	r.mu.Unlock()
}

// SetCap bounds the memory the recording holds — the timeline
// (Timeline.Footprint) and the batches of events handed over — to about
// bytes (0: no bound, the default), for a timeline that must be kept
// whole, a trace to write: when passed, the recorder records nothing more
// (it keeps what it has, under the bound), calls the function given to
// OnCap and returns a *CapError from Err from then on. The caller stops
// the run (a trace of part of it is not the trace asked for). room says
// where the bound comes from, for the error's words ("": nothing said).
// SetLimit, instead, drops the oldest events (a live view). Call it
// before the run.
func (r *Recorder) SetCap(bytes int64, room string) {
	r.mu.Lock()
	r.maxBytes, r.capRoom = max(bytes, 0), room
	r.mu.Unlock()
}

// OnCap sets the function a recording that passes its cap (SetCap) calls,
// once, on its consumer goroutine, with its *CapError (nil: none). Call
// it before the run.
func (r *Recorder) OnCap(fn func(error)) {
	r.mu.Lock()
	r.onCap = fn
	r.mu.Unlock()
}

// CapError is the error of a recording stopped at its cap (SetCap).
type CapError struct {
	Bytes int64    // the cap
	Held  int64    // the bytes the recording held when it passed it
	At    sim.Time // the simulated time recorded up to
	Room  string   // where the cap comes from (SetCap's room)
}

func (e *CapError) Error() string {
	room := ""
	if e.Room != "" {
		room = " (" + e.Room + ")"
	}
	return fmt.Sprintf("the trace's events took %.1f MiB of host memory by %v of simulated time, more than the %.1f MiB they may hold%s", float64(e.Held)/(1<<20), e.At, float64(e.Bytes)/(1<<20), room)
}

// Err returns the *CapError of a recording stopped at its cap (SetCap),
// nil while it records.
func (r *Recorder) Err() error {
	if !r.capped.Load() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.capErr
}

// footprint returns the memory the recording holds: the timeline's and
// its batches' (r.mu held).
func (r *Recorder) footprint() int64 {
	return r.tl.Footprint() + r.batches.Load()*int64(unsafe.Sizeof(batch{}))
}

// checkCap stops the recording when it holds more than its cap, returning
// the error to report (r.mu held; nil: within it, or stopped before).
func (r *Recorder) checkCap() error {
	if r.maxBytes == 0 || r.capErr != nil {
		return nil
	}
	if held := r.footprint(); held > r.maxBytes {
		r.capErr = &CapError{Bytes: r.maxBytes, Held: held, At: r.tl.To, Room: r.capRoom}
		r.capped.Store(true)
		return r.capErr
	}
	return nil
}

// SetFlagMarks turns the recording of flag events on or off (on by
// default): with marks off, set_flag and wait_flag leave nothing in the
// timeline — no marks on the pipes, no arrows — and a chip built after the
// call does not report them at all (IgnoresFlags). The terminal view draws
// neither (its search then finds no flag instructions); a live view that
// writes no trace records this way, as flag events are about a third of a
// run's observer calls. The stalls a wait causes are recorded as usual.
// Call it before the run, from the goroutine that then feeds the recorder
// (or before starting it).
func (r *Recorder) SetFlagMarks(on bool) { r.noFlags = !on }

// IgnoresFlags implements arch.FlagFilter: with flag marks off, a chip
// built afterwards does not call Flag at all.
func (r *Recorder) IgnoresFlags() bool { return r.noFlags }

// enforceLimit drops old events while the timeline is over the limit (r.mu
// held).
func (r *Recorder) enforceLimit() {
	for i := 0; i < 8 && r.limit > 0 && r.tl.footprint() > r.limit; i++ {
		from := max(r.tl.From, r.tl.Dropped)
		if r.tl.To-from < 2 {
			return
		}
		r.tl.dropBefore(from + (r.tl.To-from)/2)
	}
}

// NewRecorder returns a recorder for the given window.
func NewRecorder(w Window) *Recorder {
	r := &Recorder{win: w, sets: map[flagKey]*flagQueue{}, opNames: make([]uint16, 32<<10)}
	r.qcond.L = &r.qmu
	r.tl.From = w.From
	r.tl.To = w.From
	r.tl.AskedFrom, r.tl.AskedTo = w.From, w.To
	return r
}

// SetInfo records the machine and program names and the machine's lane
// and buffer names, per-core buffer capacities (global buffers get 0) and
// GM bandwidth (what the GM bandwidth samples are a share of).
func (r *Recorder) SetInfo(machine, program string, g *machines.Geometry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &r.tl
	t.Machine, t.Program, t.GMBandwidth = machine, program, g.GMBandwidth
	t.Lanes = append([]string(nil), g.Lanes...)
	t.VectorRepeatBytes = g.VectorRepeatBytes
	t.Buffers, t.Capacity = nil, nil
	for _, b := range g.Buffers {
		capacity := b.Capacity
		if b.Global {
			capacity = 0
		}
		t.Buffers = append(t.Buffers, b.Name)
		t.Capacity = append(t.Capacity, capacity)
	}
	for _, c := range t.Cores {
		c.grow(len(t.Lanes)-1, len(t.Buffers)-1)
	}
	t.names = &isa.Names{Lanes: t.Lanes, Buffers: t.Buffers}
}

// Flush hands the events observed so far to the timeline and waits until
// they are in it. Call it from the goroutine that feeds the recorder.
func (r *Recorder) Flush() {
	if r.cur != nil && r.cur.n > 0 {
		r.handoff(r.cur)
		r.cur = nil
	}
	r.qmu.Lock()
	r.stop = true
	for r.running {
		r.qcond.Wait()
	}
	r.stop = false
	r.qmu.Unlock()
}

// SetEnding records how the run ended when it did not complete
// (Timeline.Ending): call it before Finish, so that a reader sees the
// timeline Done with its ending.
func (r *Recorder) SetEnding(ending string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tl.Ending = ending
}

// Finish flushes the events and marks the timeline complete at time end
// (the end of the run). Calling it again only moves the end. A window
// that starts at or after end holds nothing of the run (emptyWindow).
func (r *Recorder) Finish(end sim.Time) {
	r.Flush()
	r.mu.Lock()
	if r.win.To > 0 && end > r.win.To {
		end = r.win.To
	}
	if end > r.tl.To {
		r.tl.To = end
	}
	r.endKernels()
	r.tl.Power = r.power.samples(r.tl.To)
	if r.win.From >= end && r.win.From > 0 {
		r.emptyWindow(end)
	}
	r.tl.Done = true
	r.mu.Unlock()
}

// emptyWindow empties a recording whose window starts at or after the
// run's end (r.mu held): nothing of the run is in it, so it keeps no
// counter samples (each buffer's and the GM bandwidth's last value would
// otherwise stand at the window's start, a time the run never reached),
// no kernel launches (a deadlocked run's last launch, cut to the window,
// would otherwise run from the window's start: a trace stated [end, end]
// with a kernel after it, and read back spanned the kernel instead) and
// no cores left with nothing, and it spans [end, end] — the window cut to
// the run, as a cluster trace states it.
func (r *Recorder) emptyWindow(end sim.Time) {
	t := &r.tl
	t.From, t.To = end, end
	t.Bandwidth, t.peakBW, t.Power, t.Kernels = nil, 0, nil, nil
	cores := t.Cores[:0]
	for _, c := range t.Cores {
		for b := range c.Occ {
			c.Occ[b] = nil
		}
		for p := range c.Lanes {
			if c.Lanes[p].Len() > 0 {
				cores = append(cores, c)
				break
			}
		}
	}
	clear(t.Cores[len(cores):])
	t.Cores = cores
	r.byID = nil
}

// Read calls fn with the timeline while holding the recorder's lock: fn must
// not keep references to the slices beyond the call. While a run is live the
// timeline lags the engine by at most one batch; Read asks the engine to
// hand over its partial batch, so the next Read sees the events up to now.
func (r *Recorder) Read(fn func(*Timeline)) {
	r.flushReq.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(&r.tl)
}

// Timeline returns the recorded timeline; call it after Finish (or after
// the last event, from the goroutine that fed the recorder: it flushes).
func (r *Recorder) Timeline() *Timeline {
	r.Flush()
	return &r.tl
}

// ---- writer side ----

func (r *Recorder) wantCore(c int) bool { return r.win.Cores == nil || r.win.Cores[c] }

// clip clips [from, to) to the window; ok is false when nothing is left.
func (r *Recorder) clip(from, to sim.Time) (sim.Time, sim.Time, bool) {
	if from < r.win.From {
		from = r.win.From
	}
	if r.win.To > 0 && to > r.win.To {
		to = r.win.To
	}
	return from, to, to > from
}

// add returns the next event slot of the current batch.
func (r *Recorder) add() *obsEvent {
	b := r.cur
	if b == nil || b.n >= batchSize || r.flushReq.Load() {
		b = r.rotate()
	}
	e := &b.ev[b.n&(batchSize-1)]
	b.n++
	return e
}

// rotate hands the current batch over (if not empty) and starts another.
func (r *Recorder) rotate() *batch {
	if r.flushReq.Load() {
		r.flushReq.Store(false)
	}
	if r.cur != nil && r.cur.n > 0 {
		r.handoff(r.cur)
		r.cur = nil
	}
	if r.cur == nil {
		r.qmu.Lock()
		if n := len(r.free); n > 0 {
			r.cur = r.free[n-1]
			r.free = r.free[:n-1]
		}
		r.qmu.Unlock()
		if r.cur == nil {
			r.cur = r.newBatch()
		}
	}
	return r.cur
}

// handoff queues b for the consumer, starting it when it is not running;
// it waits while the consumer is maxQueued batches behind.
func (r *Recorder) handoff(b *batch) {
	if r.sink != nil {
		r.sink(b)
		return
	}
	if r.capped.Load() { // stopped at its cap: dropped, the batch reused
		b.reset()
		r.qmu.Lock()
		r.free = append(r.free, b)
		r.qmu.Unlock()
		return
	}
	r.qmu.Lock()
	for len(r.queue) >= maxQueued {
		r.waiting = true
		r.qcond.Wait()
	}
	r.queue = append(r.queue, b)
	if !r.running {
		r.running = true
		go r.consume()
	}
	r.qmu.Unlock()
}

// Interval implements arch.Observer. Idle time (QueueEmpty) is not stored.
func (r *Recorder) Interval(core, lane int, cause arch.Cause, from, to sim.Time, in *isa.Instr, g *arch.Group) {
	if cause == arch.QueueEmpty || !r.wantCore(core) {
		return
	}
	from, to, ok := r.clip(from, to)
	if !ok {
		return
	}
	// add, inlined by hand; fields stored one by one (a composite
	// literal is built on the stack and copied).
	b := r.cur
	if b == nil || b.n >= batchSize || r.flushReq.Load() {
		b = r.rotate()
	}
	e := &b.ev[b.n&(batchSize-1)]
	b.n++
	e.t0, e.t1, e.core, e.p0, e.p1, e.cause = from, to, int32(core), uint8(lane), 0, cause
	e.kind = evStall
	if cause == arch.Busy && in != nil {
		e.kind = evBusy
		c := &b.ins[b.ni&(batchSize-1)]
		c.pack(in)
		c.setGroup(g)
		b.ni++
	}
}

// Flag implements arch.Observer: consumes are matched with the oldest
// outstanding set of the same (core, src, dst, id).
func (r *Recorder) Flag(core, src, dst, id int, set bool, t sim.Time) {
	if r.noFlags || !r.wantCore(core) {
		return
	}
	e := r.add()
	*e = obsEvent{t0: t, t1: sim.Time(id), core: int32(core), kind: evWait, p0: uint8(src), p1: uint8(dst)}
	if set {
		e.kind = evSet
	}
}

// Occupancy implements arch.Observer. A change before the window becomes
// the value at the window's start.
func (r *Recorder) Occupancy(core, buf int, bytes int64, t sim.Time) {
	if !r.wantCore(core) || buf < 0 || buf > math.MaxUint8 || (r.win.To > 0 && t >= r.win.To) {
		return
	}
	e := r.add()
	*e = obsEvent{t0: t, t1: sim.Time(bytes), core: int32(core), kind: evOcc, p1: uint8(buf)}
}

// Bandwidth implements arch.Observer.
func (r *Recorder) Bandwidth(t sim.Time, bps float64) {
	if r.win.To > 0 && t >= r.win.To {
		return
	}
	e := r.add()
	*e = obsEvent{t0: t, t1: sim.Time(math.Float64bits(bps)), kind: evBW}
}

// HostTask implements arch.HostObserver: host tasks are few (a kernel
// launch at the most often), so they go to the timeline at once.
func (r *Recorder) HostTask(kind, name string, from, to sim.Time) {
	from, to, ok := r.clip(from, to)
	if !ok || r.capped.Load() {
		return
	}
	r.mu.Lock()
	r.tl.Host = append(r.tl.Host, HostTask{Kind: kind, Name: name, From: from, To: to})
	r.advance(to)
	r.mu.Unlock()
}

// The recorder is given the run's kernel launches (arch.KernelObserver).
var _ arch.KernelObserver = (*Recorder)(nil)

// SetKernels records the run's kernel launches (chip.GridTimes(), known
// once the run is over; programs.Execute passes them to an observer that
// is an arch.KernelObserver, and arch.Chip.Run those launched before a
// deadlock): those that overlap the window, their times clipped to it. A
// launch that did not finish (Finished 0: the one a deadlocked run
// deadlocked in) is Deadlocked and lasts to the end of the recording,
// which Finish sets (its Finished, and its Started if it had not started).
// A launch the window cuts keeps its real latency (Kernel.Latency).
// Call it after the run, before Finish.
func (r *Recorder) SetKernels(gs []arch.GridTimes) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tl.Kernels = r.tl.Kernels[:0]
	for _, g := range gs {
		if g.Finished <= 0 {
			// Running at a deadlock: to the end, known at Finish.
			if r.win.To > 0 && g.Launched >= r.win.To {
				continue
			}
			from, started := max(g.Launched, r.win.From), sim.MaxTime // (not started: launching to the end)
			latency := from - g.Launched                              // (not started: the cut, to which endKernels adds the rest)
			if g.Started >= g.Launched {
				started = max(g.Started, from)
				latency = g.Started - g.Launched
			}
			r.tl.Kernels = append(r.tl.Kernels, Kernel{Name: g.Name, Blocks: g.CTAs, Launched: from, Started: started, Finished: max(r.tl.To, from), Deadlocked: true, Latency: latency})
			continue
		}
		if g.Finished < g.Started || g.Started < g.Launched {
			continue // (not a launch's times)
		}
		from, to, ok := r.clip(g.Launched, g.Finished)
		if !ok && !(g.Launched == g.Finished && r.inWindow(g.Launched)) {
			continue
		}
		started := min(max(g.Started, from), to)
		k := Kernel{Name: g.Name, Blocks: g.CTAs, Launched: from, Started: started, Finished: to}
		k.setLatency(g.Started - g.Launched)
		r.tl.Kernels = append(r.tl.Kernels, k)
		r.advance(to)
	}
	sort.SliceStable(r.tl.Kernels, func(i, j int) bool { return r.tl.Kernels[i].Launched < r.tl.Kernels[j].Launched })
}

// setLatency sets k's Latency to latency, the launch's real one, if the
// window cut Started − Launched below it (else 0).
func (k *Kernel) setLatency(latency sim.Time) {
	k.Latency = 0
	if latency > k.Started-k.Launched {
		k.Latency = latency
	}
}

// endKernels ends the deadlocked kernels at the end of the recording
// (r.mu held), leaving out those that launched after it.
func (r *Recorder) endKernels() {
	ks := r.tl.Kernels[:0]
	for _, k := range r.tl.Kernels {
		if k.Deadlocked {
			if k.Launched > r.tl.To {
				continue
			}
			k.Finished = r.tl.To
			latency := k.Latency
			if k.Started == sim.MaxTime { // not started: launching to the end
				latency += k.Finished - k.Launched
			}
			k.Started = min(k.Started, k.Finished)
			k.setLatency(latency)
		}
		ks = append(ks, k)
	}
	r.tl.Kernels = ks
}

// ---- consumer side ----

// consume polls the queue and applies the batches it finds, until a Flush
// finds the queue empty.
func (r *Recorder) consume() {
	var mine []*batch
	wait := pollMin
	for {
		r.qmu.Lock()
		if len(r.queue) == 0 {
			if r.stop {
				r.running = false
				r.qcond.Broadcast()
				r.qmu.Unlock()
				return
			}
			r.qmu.Unlock()
			time.Sleep(wait)
			wait = min(2*wait, pollMax)
			continue
		}
		wait = pollMin
		mine, r.queue = r.queue, mine[:0]
		if r.waiting {
			r.waiting = false
			r.qcond.Broadcast()
		}
		r.qmu.Unlock()
		for i, b := range mine {
			mine[i] = nil
			var over error
			r.mu.Lock()
			if r.capErr == nil {
				r.apply(b)
				r.enforceLimit()
				over = r.checkCap()
			}
			onCap := r.onCap
			r.mu.Unlock()
			if over != nil && onCap != nil {
				onCap(over)
			}
			b.reset()
			r.qmu.Lock()
			if len(r.free) < maxQueued {
				r.free = append(r.free, b)
			} else {
				r.batches.Add(-1) // (left to the collector)
			}
			r.qmu.Unlock()
		}
	}
}

// apply adds the events of b to the timeline (r.mu held).
func (r *Recorder) apply(b *batch) {
	ins := b.ins[:b.ni]
	for i := range b.events() {
		e := &b.ev[i]
		switch e.kind {
		case evBusy:
			r.busy(e, &ins[0])
			ins = ins[1:]
		case evStall:
			s := Slice{From: e.t0, To: e.t1, Cause: e.cause, name: r.causeIdx(e.cause)}
			r.coreOf(e.core).addSlice(&r.tl, int(e.p0), s)
			r.advance(e.t1)
		case evSet, evWait:
			r.flag(e)
		case evOcc:
			c := r.coreOf(e.core)
			c.grow(-1, int(e.p1))
			c.Occ[e.p1] = addSample(c.Occ[e.p1], e.t0, float64(e.x()), r.win.From)
			if e.t0 >= r.win.From {
				r.advance(e.t0)
			}
		case evBW:
			r.tl.addBandwidth(e.t0, math.Float64frombits(uint64(e.x())), r.win.From)
		}
	}
}

func (r *Recorder) busy(e *obsEvent, c *cinstr) {
	s := Slice{From: e.t0, To: e.t1, Cause: arch.Busy, Class: classOfOp(c.op)}
	// An instruction shown on a lane other than its own is the issue slot
	// that queued it there (DaVinci: the scalar unit).
	if uint8(c.pipe) != e.p0 {
		s.Class = ClassIssue
	}
	s.name = r.opName(c.op, c.pipe, c.vop)
	s.ref = r.keep(c, e.t1)
	r.coreOf(e.core).addSlice(&r.tl, int(e.p0), s)
	r.advance(e.t1)
}

// packedSlots is the size of the recorder's packed-instruction cache: 256
// entries (22 KB, within a core's L1) hit 93 % of an hgemm 4096³ live
// recording's busy slices, 1024 (90 KB) 94 %.
const (
	packedBits  = 8
	packedSlots = 1 << packedBits
)

type packedEntry struct {
	c   cinstr
	ref uint32 // 0 = empty
}

// keep returns the ref of instruction c of a slice ending at end: a copy
// packed earlier into the current code chunk when the cache has one, else a
// new one (Timeline.keep).
func (r *Recorder) keep(c *cinstr, end sim.Time) uint32 {
	if r.packed == nil {
		r.packed = new([packedSlots]packedEntry)
	}
	t := &r.tl
	pe := &r.packed[c.hash()>>(64-packedBits)]
	if n := len(t.code); pe.ref != 0 && n > 0 && (pe.ref-1)>>codeShift == uint32(t.codeBase+n-1) && pe.c == *c {
		t.codeEnd[n-1] = max(t.codeEnd[n-1], end)
		return pe.ref
	}
	ref := t.keep(c, end)
	pe.c, pe.ref = *c, ref
	return ref
}

func (r *Recorder) causeIdx(c arch.Cause) uint16 {
	if int(c) >= len(r.causeName) {
		n, _ := r.tl.intern(c.String())
		return n
	}
	if r.causeName[c] == 0 {
		n, _ := r.tl.intern(c.String())
		r.causeName[c] = int32(n) + 1
	}
	return uint16(r.causeName[c] - 1)
}

// coreOf returns the timeline of core id, creating it.
func (r *Recorder) coreOf(id int32) *CoreTimeline {
	if id >= 0 && int(id) < len(r.byID) && r.byID[id] != nil {
		return r.byID[id]
	}
	c := r.tl.core(int(id))
	if id >= 0 && id < 1<<16 {
		for int(id) >= len(r.byID) {
			r.byID = append(r.byID, nil)
		}
		r.byID[id] = c
	}
	return c
}

func (r *Recorder) inWindow(t sim.Time) bool {
	return t >= r.win.From && (r.win.To == 0 || t < r.win.To)
}

func (r *Recorder) advance(t sim.Time) {
	if r.win.To > 0 && t > r.win.To {
		t = r.win.To
	}
	if t > r.tl.To {
		r.tl.To = t
	}
}

// flag matches a consume with the oldest outstanding set and records the
// flag marks and arrows inside the window.
func (r *Recorder) flag(e *obsEvent) {
	t := e.t0
	in := r.inWindow(t)
	src, dst := int(e.p0), int(e.p1)
	fq := r.flagQueue(e)
	if e.kind == evSet {
		ps := pendingSet{t: t}
		if in {
			r.binds++
			ps.bind = r.binds
		}
		fq.push(ps)
		if !in {
			return
		}
		ss := r.flagSlice(isa.OpSetFlag, src, dst, e.x(), t)
		ss.ref = r.tl.bindRef(ss.ref, r.binds)
		r.coreOf(e.core).addSlice(&r.tl, src, ss)
		r.advance(t)
		return
	}
	ps := fq.pop()
	if !in {
		return
	}
	c := r.coreOf(e.core)
	ws := r.flagSlice(isa.OpWaitFlag, src, dst, e.x(), t)
	if ps.bind != 0 {
		fs := append(c.Flows, Flow{Src: src, Dst: dst, ID: int(e.x()), Set: ps.t, Wait: t, Bind: ps.bind})
		for i := len(fs) - 1; i > 0 && fs[i-1].Wait == t && fs[i-1].Bind > ps.bind; i-- {
			fs[i], fs[i-1] = fs[i-1], fs[i]
		}
		c.Flows = fs
		r.tl.nflows++
		ws.ref = r.tl.bindRef(ws.ref, ps.bind)
	}
	c.addSlice(&r.tl, dst, ws)
	r.advance(t)
}

// denseFlags is the flag queues of one core for lanes below denseLanes and
// ids below denseFlagIDs, by lane pair (allocated on first use).
type denseFlags [denseLanes * denseLanes]*[denseFlagIDs]flagQueue

const denseLanes = 8

const denseFlagIDs = 16

// flagQueue returns the queue of the flag of event e.
func (r *Recorder) flagQueue(e *obsEvent) *flagQueue {
	src, dst, id, core := int(e.p0), int(e.p1), e.x(), int(e.core)
	if src < denseLanes && dst < denseLanes && id >= 0 && id < denseFlagIDs && core >= 0 && core < 1<<16 {
		for core >= len(r.dense) {
			r.dense = append(r.dense, nil)
		}
		d := r.dense[core]
		if d == nil {
			d = new(denseFlags)
			r.dense[core] = d
		}
		qs := d[src*denseLanes+dst]
		if qs == nil {
			qs = new([denseFlagIDs]flagQueue)
			d[src*denseLanes+dst] = qs
		}
		return &qs[id]
	}
	k := flagKey{e.core, e.p0, e.p1, e.x()}
	fq := r.sets[k]
	if fq == nil {
		fq = &flagQueue{}
		r.sets[k] = fq
	}
	return fq
}

// flagSlice returns the zero-length mark of a flag event.
func (r *Recorder) flagSlice(op isa.Op, src, dst int, id int64, t sim.Time) Slice {
	n := r.opName(op, isa.S, 0)
	ref := flagMarkRef(op == isa.OpSetFlag, src, dst, id)
	if ref == 0 {
		c := cinstr{op: op, pipe: isa.S}
		c.v[0], c.v[1], c.v[2] = int64(src), int64(dst), id
		ref = r.tl.keep(&c, t)
	}
	return Slice{From: t, To: t, Cause: arch.Busy, Class: ClassFlag, name: n, ref: ref}
}

// opName returns the name index of an instruction's mnemonic.
func (r *Recorder) opName(op isa.Op, pipe isa.Pipe, vop isa.VecOp) uint16 {
	k := int(op)<<10 | int(pipe)<<6 | int(vop)
	if op < 32 && pipe < 16 && vop < 64 && r.opNames[k] > 0 {
		return r.opNames[k] - 1
	}
	n, _ := r.tl.intern(r.tl.instrNames().Mnemonic(isa.Instr{Op: op, Pipe: pipe, VOp: vop}))
	if op < 32 && pipe < 16 && vop < 64 {
		r.opNames[k] = n + 1
	}
	return n
}

// addSample appends a step-counter value at t (clamped to from), replacing a
// value at the same time; a value equal to the last one adds nothing (a
// third of an hgemm run's GM bandwidth changes).
func addSample(ss []Sample, t sim.Time, v float64, from sim.Time) []Sample {
	t = max(t, from)
	n := len(ss)
	switch {
	case n > 0 && ss[n-1].T == t:
		ss[n-1].Value = v
	case n == 0 || ss[n-1].Value != v:
		ss = append(ss, Sample{T: t, Value: v})
	}
	return ss
}

// addBandwidth adds a GM bandwidth sample. The peak is kept over the
// samples before the last, which a sample at the same time replaces
// (PeakBandwidth adds the last): O(1) a sample — rescanning every sample
// when the replaced one had been the peak cost an LU 32k live view ~0.5 s.
func (t *Timeline) addBandwidth(at sim.Time, v float64, from sim.Time) {
	if n := len(t.Bandwidth); n > 0 && t.Bandwidth[n-1].T != max(at, from) {
		t.peakBW = max(t.peakBW, t.Bandwidth[n-1].Value) // no longer the last (or equal to v)
	}
	t.Bandwidth = addSample(t.Bandwidth, at, v, from)
}

var (
	_ arch.Observer     = (*Recorder)(nil)
	_ arch.HostObserver = (*Recorder)(nil)
)
