package arch

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// GridCore is a core model that runs CTAs of kernel launches (isa.Grid):
// GPU SMs and CUs. The chip's grid scheduler starts a CTA on a core when
// the core says it fits, and the core calls Chip.CTADone when a CTA has
// finished.
type GridCore interface {
	CoreModel
	// Admit reports why a CTA holding r could never be resident on this
	// core (nil: it can, on an otherwise empty core).
	Admit(r isa.Resources) error
	// Fits reports whether one more CTA holding r can be resident now.
	Fits(r isa.Resources) bool
	// StartCTA makes CTA cta of the current grid resident with stream s
	// and starts it at the current time; with timingOnly its instructions
	// are timed but not computed (isa.Grid.TimingOnly). cl is the CTA's
	// thread block cluster (nil outside one), rank its index there.
	StartCTA(cta int, s isa.Stream, r isa.Resources, timingOnly bool, cl *Cluster, rank int)
	// Counters returns the core's statistics as Finalize would at now,
	// without closing its intervals; a buffer's Mean is its occupancy
	// integral over [0, now] (byte·ps). Fast-forward measures waves with it.
	Counters(now sim.Time) CoreStats
	// Resident returns how many CTAs holding r the core holds at once at
	// most (r admitted) and the host bytes each takes in a functional run
	// beyond the core's own (Kind.CoreBytes): its data storage. The grid
	// scheduler adds them to the chip's estimate when it admits a grid.
	Resident(r isa.Resources) (ctas int, bytes int64)
}

// CounterAppender is a core that appends to ints and floats what
// Counters(now) would report, in the layout of fast-forward's snapshots —
// each lane's time by cause and instructions, the path bytes, the vector
// repeats; each buffer's Mean — without building a CoreStats: step skips
// read every core's counters at each interval (a step of every CTA).
type CounterAppender interface {
	AppendCounters(ints []int64, floats []float64, now sim.Time) ([]int64, []float64)
}

// Cluster is one thread block cluster of a grid (isa.Grid.Cluster): CTAs
// started together on neighbouring cores, which share what the core kind
// keeps in Shared.
type Cluster struct {
	// Size is the number of its CTAs (ranks 0 … Size−1).
	Size int
	// Shared is the core kind's state of the cluster (its flags, its CTAs'
	// shared memories), made by the first CTA started.
	Shared any
}

// gridPriority orders the grid scheduler's wake-ups after the cores' at the
// same instant (a finished CTA's core is settled before it gets the next).
const gridPriority = 4

// GridTimes are the times of one kernel launch of a run.
type GridTimes struct {
	Name     string
	CTAs     int
	Launched sim.Time // the launch began (the previous kernel finished)
	Started  sim.Time // the first CTA started (after the launch latency)
	Finished sim.Time // the last CTA finished
	// Events is the engine events executed from its launch to its end:
	// what simulating it cost (the waves, steps and kernels fast-forward
	// skipped execute none).
	Events   uint64
	atLaunch uint64 // the engine's events at its launch
}

// gridRunner schedules the CTAs of a program's grids onto GridCores: the
// hardware block scheduler. CTAs go out in index order, breadth first over
// the cores (core 0, 1, …, then a second CTA on core 0 …) as long as they
// fit; when CTAs finish, the waiting ones go to the lowest-numbered cores
// with room. On a chip of several XCDs (private L2 partitions: core k is
// on XCD k mod X, Chip.StartGM) each XCD dispatches its own workgroups,
// i ≡ x (mod X), in index order, breadth first over its CUs: workgroup i
// always runs on XCD i mod X (AMD's round-robin over the XCDs), waiting
// for a CU of its XCD when they are full while other XCDs go on with theirs
// (dispatchXCDs).
type gridRunner struct {
	chip    *Chip
	waker   *sim.Waker
	cores   []GridCore
	grids   []isa.Grid
	times   []GridTimes
	done    []func(sim.Time) // per grid: called when it finishes (host-launched grids), or nil
	launch  sim.Time         // launch latency of a kernel
	cur     int              // grid running (len(grids): done)
	next    int              // next CTA of grid cur to start
	running int              // CTAs of grid cur resident
	started bool             // grid cur's launch latency has passed
	// slots are, per CTA slot of a core, the most host bytes the
	// functional grids admitted so far keep there (GridCore.Resident) and
	// on how many cores they make it (SlotCores): a slot's storage is
	// reused by the CTAs it holds in turn.
	slots []gridSlot
	// xnext is, on a chip of several XCDs (xcds), the next CTA of grid
	// cur each XCD starts (nil: not yet set for grid cur; next is then the
	// lowest of them), and xat the value next had after dispatchXCDs last
	// set it (a fast-forward skip that moves next moves every XCD's).
	xnext []int
	xat   int

	ff      *fastForward // nil: every CTA is simulated
	wave    int          // CTAs of grid cur placed by its first dispatch (0: not yet known)
	snaps   []ffSnap     // counters at the dispatch of each wave's first CTA (grid cur)
	start   ffSnap       // counters when grid cur started
	skipped int          // CTAs of grid cur skipped
	win     []float64    // the increments its skips scaled (ffAdd)
	check   int          // the skip whose tail waves are being checked (-1: none)
	checkAt sim.Time     // the dispatch of its second tail wave (its check starts there)
	checkL2 [2]int64     // the L2s' hit and miss bytes then
	checkC  waveCentre   // that wave's centre (known at the next wave's start)
	// The wave being dispatched (fast-forward): its index, the dispatch
	// of its first CTA, and the sum and number of its CTAs' (clusters')
	// dispatch times after that, for its centre.
	waveIdx int
	waveAt  sim.Time
	// runFrom is the wave whose first CTA began the run of alike blocks
	// (isa.Grid.Class) that grid cur's dispatch is in, and runClass its
	// class (FastForward.WarmUp).
	runFrom, runClass int
	waveSum           float64
	waveN             int
	// doneBy counts each grid's CTAs finished or skipped by fast-forward
	// (waves, steps' blocks finish; a kernel skip's rest): progress.
	doneBy []int64
	// recent holds the work of grid cur's recently finished CTAs (by
	// index) until they are too old to be measured; measures, per skip of
	// grid cur, the work of its measured CTAs (ffWork).
	recent   map[int]*CTAWork
	measures []ffMeasure
	steps    stepRunner // step skips in grid cur (FastForward.Steps)
	// kernels holds the counters of the last three grids run (the
	// earlier first), and skippedGrid reports that grid cur was skipped
	// whole (FastForward.Kernels).
	kernels     [3]*kernelRun
	skippedGrid bool
	// prefix is grid cur's counters at the dispatch of its wave
	// prefixWave (nil before), tail the grid run its rest stands for
	// (a tail skip: nil without), from its block tailFrom.
	prefix   *ffSnap
	tail     *kernelRun
	tailFrom int
	// tailWork measures the blocks whose work the tail skip's rest
	// stands for where the grids differ after their main loops (nil:
	// the rest's work is the grid before's).
	tailWork *tailMeasure
	// undo is what the skip being checked added, taken back if its check
	// fails (takeBack); ahead then holds, per dispatch line (each XCD's,
	// or the one), the blocks its check ran ahead of the skipped ones,
	// which the dispatch passes over when it reaches them; failures
	// counts grid cur's failed checks.
	undo     skipUndo
	ahead    []blockSpan
	failures int
}

// skipUndo is what a wave skip added to the run (waveStart): the counters
// (ffAdd's, in ff.ints and ff.floats; the increments it scaled, in win),
// the index of its measure in measures, and each XCD's next block before
// it (nil on a chip of one dispatch line, whose was the skip's FromCTA).
type skipUndo struct {
	ints    []int64
	floats  []float64
	win     []float64
	measure int
	before  []int
}

// blockSpan is the blocks [from, to) of a dispatch line (blocks from,
// from+x, … on an XCD of x).
type blockSpan struct{ from, to int }

// ffMeasure is the work of a skip's measured CTAs [from, to), summed as
// they finish, and the number of CTAs the skip stands for.
type ffMeasure struct {
	from, to, skipped int
	n                 int // measured CTAs finished
	sum               ffWorkSum
}

// ffWorkSum is a sum of CTAWork.
type ffWorkSum struct {
	instrs, pathBytes []float64
	repeats, flops    float64
	gmRead, gmWrite   float64
}

func (s *ffWorkSum) add(w *CTAWork) {
	if s.instrs == nil {
		s.instrs, s.pathBytes = make([]float64, len(w.Instrs)), make([]float64, len(w.PathBytes))
	}
	for i, v := range w.Instrs {
		s.instrs[i] += float64(v)
	}
	for i, v := range w.PathBytes {
		s.pathBytes[i] += float64(v)
	}
	s.repeats += float64(w.VectorRepeats)
	s.flops += w.Flops
	s.gmRead += float64(w.GMRead)
	s.gmWrite += float64(w.GMWrite)
}

// addScaled adds f times o to s.
func (s *ffWorkSum) addScaled(o *ffWorkSum, f float64) {
	if s.instrs == nil {
		s.instrs, s.pathBytes = make([]float64, len(o.instrs)), make([]float64, len(o.pathBytes))
	}
	for i, v := range o.instrs {
		s.instrs[i] += float64(v * f)
	}
	for i, v := range o.pathBytes {
		s.pathBytes[i] += float64(v * f)
	}
	s.repeats += float64(o.repeats * f)
	s.flops += float64(o.flops * f)
	s.gmRead += float64(o.gmRead * f)
	s.gmWrite += float64(o.gmWrite * f)
}

// ctaWork records CTA cta's work (fast-forward): in the measure of the
// skips that measured it, else kept while it may still be measured.
func (gr *gridRunner) ctaWork(cta int, w *CTAWork) {
	if m := gr.tailWork; m != nil && cta >= m.from && cta < m.to {
		m.add(gr.grids[gr.cur].Class(cta), w)
		return
	}
	for i := range gr.measures {
		if m := &gr.measures[i]; cta >= m.from && cta < m.to {
			m.sum.add(w)
			m.n++
			return
		}
	}
	if gr.recent == nil {
		gr.recent = map[int]*CTAWork{}
	}
	cp := *w
	cp.Instrs, cp.PathBytes = slices.Clone(w.Instrs), slices.Clone(w.PathBytes)
	gr.recent[cta] = &cp
}

// startGrids checks that every grid's CTAs fit the machine's cores and
// starts the grid scheduler.
func (c *Chip) startGrids(grids []isa.Grid) error {
	gr := &gridRunner{chip: c, grids: grids, times: make([]GridTimes, len(grids)), doneBy: make([]int64, len(grids))}
	for _, core := range c.cores {
		g, ok := core.(GridCore)
		if !ok {
			return fmt.Errorf("machine %s (kind %s) does not run kernel grids; give per-core streams", c.M.Name, c.M.Kind)
		}
		gr.cores = append(gr.cores, g)
	}
	for i, g := range grids {
		if err := gr.admit(g); err != nil {
			return err
		}
		gr.times[i] = GridTimes{Name: g.Name, CTAs: g.CTAs}
	}
	if c.kind.LaunchLatency != nil {
		gr.launch = c.kind.LaunchLatency(c)
	}
	if c.opts.FastForward != nil {
		gr.ff = &fastForward{FastForward: *c.opts.FastForward}
		gr.check = -1
	}
	gr.waker = sim.NewWaker(c.eng, gridPriority, gr)
	c.RegisterWaiter(gr)
	c.grids = gr
	if len(grids) > 0 {
		gr.launched(0, c.eng.Now())
		gr.waker.Wake(sim.Add(c.eng.Now(), gr.launch))
	}
	return nil
}

// CTAWork is the work one CTA did: its instructions by lane and bytes by
// path (in the order of CoreStats.Lanes and PathBytes), its vector
// repeats, matrix flops and global-memory bytes. Fast-forward stands each
// skipped CTA for the mean of the measured CTAs like it.
type CTAWork struct {
	Instrs          []uint64
	PathBytes       []int64
	VectorRepeats   int64
	Flops           float64
	GMRead, GMWrite int64
}

// CTADone tells the grid scheduler that core id finished CTA cta (of the
// running grid) at now, having done w.
func (c *Chip) CTADone(id, cta int, now sim.Time, w *CTAWork) {
	gr := c.grids
	if gr == nil {
		c.Fail(errors.New("a core reported a finished CTA, but no grid is running"))
		return
	}
	gr.running--
	gr.doneBy[gr.cur]++
	if gr.ff != nil {
		gr.ctaWork(cta, w)
		if gr.steps.on {
			gr.stepDone(cta)
		}
	}
	gr.waker.Wake(now)
}

// launched records that grid i's launch began at now.
func (gr *gridRunner) launched(i int, now sim.Time) {
	gr.times[i].Launched, gr.times[i].atLaunch = now, gr.chip.eng.Events()
}

// GridTimes returns the times of the run's kernel launches (with
// fast-forward: on the time line of the full run, see Stats.FastForward).
func (c *Chip) GridTimes() []GridTimes {
	if c.grids == nil {
		return nil
	}
	out := append([]GridTimes(nil), c.grids.times...)
	for i := range out {
		g := &out[i]
		g.Launched, g.Started, g.Finished = c.reportedInGrid(g.Launched), c.reportedInGrid(g.Started), c.reportedInGrid(g.Finished)
		if ff := c.grids.ff; ff != nil {
			// A kernel skip's shift by grid, not by time: without a
			// launch latency the grid before it finished, it started
			// and finished, and the grid after it launched at one time.
			for _, k := range ff.kernels {
				switch {
				case i > k.Index:
					g.Launched, g.Started, g.Finished = g.Launched+k.Shift, g.Started+k.Shift, g.Finished+k.Shift
				case i == k.Index:
					g.Finished += k.Shift
				}
			}
		}
	}
	return out
}

// launchedGrids returns GridTimes of the grids launched so far: those
// finished and the one running (its Finished 0) — a deadlocked run's
// kernels, for its KernelObserver.
func (c *Chip) launchedGrids() []GridTimes {
	gt := c.GridTimes()
	if cur := c.grids.cur; cur < len(gt) {
		gt = gt[:cur+1]
		gt[cur].Finished = 0 // (GridTimes may have shifted the zero)
	}
	return gt
}

// Handle implements sim.Handler: start what can start, move to the next
// grid when one has finished.
func (gr *gridRunner) Handle(now sim.Time, _ int64) {
	for gr.cur < len(gr.grids) {
		g := &gr.grids[gr.cur]
		t := &gr.times[gr.cur]
		if !gr.started {
			if now < sim.Add(t.Launched, gr.launch) {
				gr.waker.Wake(sim.Add(t.Launched, gr.launch))
				return
			}
			gr.started, t.Started = true, now
			gr.xnext = nil
			if gr.ff != nil {
				gr.start = gr.chip.ffSnapshot(now)
				gr.steps.reset(gr.stepsOn(g))
				gr.carryPace(g)
				gr.ff.waits = append(gr.ff.waits, FastForwardWait{Grid: g.Name, FirstSkip: -1})
				if gr.steps.on {
					gr.ff.stepWaits = append(gr.ff.stepWaits, StepWait{Grid: g.Name})
				}
				if gr.skippedGrid = gr.kernelSkip(g, now); gr.skippedGrid {
					gr.next = g.CTAs // none runs: the grid stands for the one before it
				}
			}
		}
		gr.dispatch(g, now)
		if gr.wave == 0 {
			gr.wave = gr.next // the first dispatch fills every core: one wave
		}
		if gr.next < g.CTAs || gr.running > 0 {
			return // cores wake the scheduler as CTAs finish
		}
		t.Finished, t.Events = now, gr.chip.eng.Events()-t.atLaunch
		fin := gr.cur
		if gr.skipped > 0 {
			if err := gr.chip.ffWork(gr.ff, &gr.start, now, gr.measures, gr.win); err != nil {
				gr.chip.Fail(fmt.Errorf("fast-forward: kernel %s: %w", g.Name, err))
				return
			}
			gr.skipped, gr.win = 0, nil
		}
		if gr.tail != nil {
			if err := gr.tailEnd(g, now); err != nil {
				gr.chip.Fail(fmt.Errorf("fast-forward: kernel %s: %w", g.Name, err))
				return
			}
		}
		if gr.ff != nil && gr.ff.Kernels && !gr.skippedGrid { // (with its skipped waves' work)
			gr.kernelDone(fin, &gr.start, now)
		}
		gr.prefix = nil
		gr.measures, gr.recent = gr.measures[:0], nil
		gr.check = -1 // (a check cut off by the grid's end stays unmade: its skip unchecked)
		gr.ahead, gr.failures = nil, 0
		gr.cur++
		gr.next, gr.started = 0, false
		gr.wave, gr.snaps, gr.waveN, gr.runFrom = 0, gr.snaps[:0], 0, 0
		if gr.cur < len(gr.grids) {
			gr.launched(gr.cur, now)
		}
		if fin < len(gr.done) && gr.done[fin] != nil {
			gr.done[fin](now) // may append the host's next grid
		}
	}
}

// hostGrid appends grid g, launched by the host at now, to the grid
// scheduler (created on first use); done is called when its last CTA has
// finished. Grids run in launch order, one after the other.
func (c *Chip) hostGrid(g isa.Grid, now sim.Time, done func(sim.Time)) error {
	if c.grids == nil {
		if err := c.startGrids(nil); err != nil {
			return err
		}
	}
	gr := c.grids
	if err := gr.admit(g); err != nil {
		return err
	}
	gr.grids = append(gr.grids, g)
	gr.times = append(gr.times, GridTimes{Name: g.Name, CTAs: g.CTAs})
	gr.doneBy = append(gr.doneBy, 0)
	for len(gr.done) < len(gr.grids)-1 {
		gr.done = append(gr.done, nil)
	}
	gr.done = append(gr.done, done)
	if gr.cur == len(gr.grids)-1 {
		gr.launched(gr.cur, now)
		gr.next, gr.started = 0, false
		gr.waker.Wake(sim.Add(now, gr.launch))
	}
	return nil
}

// admit checks that grid g can run on the chip's cores.
func (gr *gridRunner) admit(g isa.Grid) error {
	if g.CTAs < 1 || g.CTA == nil {
		return fmt.Errorf("grid %q: needs at least one CTA and a CTA stream", g.Name)
	}
	if size := max(g.Cluster, 1); g.CTAs%size != 0 {
		return fmt.Errorf("grid %q: clusters of %d CTAs need a multiple of %d CTAs (got %d)", g.Name, size, size, g.CTAs)
	} else if len(gr.cores)%size != 0 {
		return fmt.Errorf("grid %q: clusters of %d CTAs need a multiple of %d cores (machine %s has %d)", g.Name, size, size, gr.chip.M.Name, len(gr.cores))
	}
	if len(gr.cores) > 0 {
		if err := gr.cores[0].Admit(g.Resources); err != nil {
			return fmt.Errorf("grid %q: a CTA does not fit a core of machine %s: %w", g.Name, gr.chip.M.Name, err)
		}
		if gr.chip.opts.Mode == Functional && !g.TimingOnly {
			return gr.admitStorage(g)
		}
	}
	return nil
}

// admitStorage adds what grid g's CTAs keep in host memory in a
// functional run (in the slots its CTAs make: SlotCores) to the chip's
// estimate, and refuses the grid when that passes the chip's bound.
func (gr *gridRunner) admitStorage(g isa.Grid) error {
	c := gr.chip
	n, b := gr.cores[0].Resident(g.Resources)
	for len(gr.slots) < n {
		gr.slots = append(gr.slots, gridSlot{})
	}
	data, slots := 0.0, 0
	for i := range gr.slots {
		s := &gr.slots[i]
		if k := SlotCores(g.CTAs, len(gr.cores), i); i < n && k > 0 {
			s.bytes, s.cores = max(s.bytes, b), max(s.cores, k)
		}
		data += float64(float64(s.cores) * float64(s.bytes))
		slots += s.cores
	}
	total := c.footprint + data
	if bound, above := c.dataBound(); total > float64(bound) {
		return hostRefusal(&FootprintError{fmt.Sprintf("grid %q: its CTAs' data would take the simulation of machine %s to about %s of host memory (%d CTA slots, %s of CTAs' shared memory, registers and accumulators — this grid's %d %s, %d resident a core × %s, with what earlier grids keep in their slots; the model %s), above %s: use numerics off or sampled, or check keys %s",
			g.Name, c.M.Name, roughBytes(total), slots, roughBytes(data), g.CTAs, plural(g.CTAs, "CTA", "CTAs"), n, roughBytes(float64(b)), roughBytes(c.footprint), above, c.kind.footprintKeys())}, bound, c.opts)
	}
	return nil
}

// gridSlot is a CTA slot of the chip's cores as admitStorage counts it:
// the most bytes a CTA keeps there, on as many cores.
type gridSlot struct {
	bytes int64
	cores int
}

// SlotCores returns on how many of cores cores a grid of ctas CTAs makes
// CTA slot slot (0, 1, …), where a core holds its resident CTAs: a core
// makes a slot when a CTA starts and finds every slot it has in use, and
// the grid scheduler starts CTAs breadth first over the cores (over each
// XCD's, CTAs dealt to the XCDs in turn), the cores empty when a grid
// starts, so its first dispatch puts CTA i on core i mod cores while they
// fit — slot s on cores−(s+1)·cores+ctas cores, at most cores — and later
// CTAs start in slots the finished ones left. (Slots past what a core
// holds of the grid are the caller's to leave out: Resident.) Before
// 2026-12-05 every core counted every slot a core holds: an MI300X HGEMM
// 1024³ of 256 CTAs, 8 resident a CU, 2432 slots for 256 made.
func SlotCores(ctas, cores, slot int) int {
	if cores <= 0 || slot < 0 {
		return 0
	}
	return int(min(int64(cores), max(0, int64(ctas)-int64(slot)*int64(cores))))
}

// plural returns one where n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// FootprintError is a program refused because simulating it would take
// more host memory than the chip's bound (MaxModelBytes, Options.RunBound:
// the room the run's bound leaves the model; past the latter it is marked
// badinput.HostMemory too: find it with errors.As).
type FootprintError struct{ msg string }

func (e *FootprintError) Error() string { return e.msg }

// dispatch starts waiting CTAs of g, breadth first over the cores, while
// they fit; a cluster of size s starts on cores k … k+s−1 (k a multiple
// of s) when all of them have room.
func (gr *gridRunner) dispatch(g *isa.Grid, now sim.Time) {
	n := len(gr.cores)
	size := max(g.Cluster, 1)
	if x := gr.xcds(); x > 1 && size == 1 {
		gr.dispatchXCDs(g, now, x)
		return
	}
	for gr.next < g.CTAs {
		placed := false
	cores:
		for k := 0; k+size <= n && gr.next < g.CTAs; k += size {
			for j := k; j < k+size; j++ {
				if !gr.cores[j].Fits(g.Resources) {
					continue cores
				}
			}
			if len(gr.ahead) == 1 && gr.next == gr.ahead[0].from {
				gr.next, gr.ahead = gr.ahead[0].to, nil // run ahead by a failed check
			}
			if gr.ff != nil && gr.wave > 0 {
				if gr.next%gr.wave == 0 {
					if gr.ff.Kernels && gr.prefix == nil && gr.next == gr.prefixWave(g)*gr.wave {
						snap := gr.chip.ffSnapshot(now)
						if gr.prefix = &snap; gr.tailSkip(g) {
							return // the rest stands for the grid before's
						}
					}
					gr.waveStart(g, now)
					gr.waveIdx, gr.waveAt, gr.waveSum, gr.waveN = gr.next/gr.wave, sim.Add(now, gr.ff.shift), 0, 0
				}
				gr.waveSum += float64(sim.Add(now, gr.ff.shift) - gr.waveAt)
				gr.waveN++
			}
			var cl *Cluster
			if size > 1 {
				cl = &Cluster{Size: size}
			}
			for j := k; j < k+size; j++ {
				gr.cores[j].StartCTA(gr.next, gr.stepStream(g, gr.next), g.Resources, g.TimingOnly, cl, j-k)
				gr.next++
				gr.running++
			}
			placed = true
		}
		if !placed {
			return
		}
	}
}

// xcds returns the number of XCDs of the chip: its private L2 partitions
// (Chip.StartGM puts core k on partition k mod their number), else 1.
func (gr *gridRunner) xcds() int {
	if m := gr.chip.M; m.L2.Private && m.L2.Partitions > 1 && len(gr.chip.l2s) > 1 && len(gr.cores)%len(gr.chip.l2s) == 0 {
		return len(gr.chip.l2s)
	}
	return 1
}

// dispatchXCDs is dispatch on a chip of x XCDs (CTAs of one core each):
// XCD j starts its CTAs j, j+x, j+2x, … in order, breadth first over its
// cores j, j+x, … (the lowest-numbered with room first in each call, as
// dispatch), while they fit; an XCD whose cores are full waits for one of
// them, the others go on. The XCDs take a CTA each in turn, so a first
// dispatch onto empty cores places CTA i on core i mod len(cores), as
// dispatch does. gr.next is the lowest CTA not started; fast-forward's
// wave hooks run at the dispatch of CTAs that are multiples of a wave
// (XCD 0's), with next that CTA, and a skip there moves every XCD's next
// CTA by what it moved next (all of them to the end: the grid's rest
// skipped).
func (gr *gridRunner) dispatchXCDs(g *isa.Grid, now sim.Time, x int) {
	if gr.xnext == nil {
		gr.xnext = make([]int, x)
		for j := range gr.xnext {
			gr.xnext[j] = j
		}
		gr.xat = 0
	}
	gr.xsync(g)
	per := len(gr.cores) / x
	var scan [8]xcdScan
	st := scan[:0]
	if x <= len(scan) {
		st = scan[:x]
	} else {
		st = make([]xcdScan, x)
	}
	for {
		placed := false
		for j := 0; j < x; j++ {
			s := &st[j]
			if s.no {
				continue
			}
			c := gr.xnext[j]
			if gr.ahead != nil {
				if a := &gr.ahead[j]; c == a.from && a.to > a.from {
					c, a.from = a.to, a.to // run ahead by a failed check
					gr.xnext[j] = c
				}
			}
			if c >= g.CTAs {
				s.no = true
				continue
			}
			core := -1
			for core < 0 {
				for ; s.m < per; s.m++ {
					if k := j + s.m*x; gr.cores[k].Fits(g.Resources) {
						core = k
						s.m++
						break
					}
				}
				if core >= 0 {
					break
				}
				if !s.placed { // a whole pass without room: full
					break
				}
				s.m, s.placed = 0, false
			}
			if core < 0 {
				s.no = true
				continue
			}
			if gr.ff != nil && gr.wave > 0 {
				if c%gr.wave == 0 {
					gr.next = c
					if gr.ff.Kernels && gr.prefix == nil && c == gr.prefixWave(g)*gr.wave {
						snap := gr.chip.ffSnapshot(now)
						if gr.prefix = &snap; gr.tailSkip(g) {
							gr.xsyncFrom(g, c)
							return // the rest stands for the grid before's
						}
					}
					if gr.waveStart(g, now); gr.next < c {
						// A failed check took its skip back: every
						// XCD went back to its first skipped block.
						gr.xsetNext(g)
						c = gr.xnext[j]
					} else if gr.next != c {
						// A skip: this XCD starts its first CTA
						// after the skipped ones.
						gr.xsyncFrom(g, c)
						if c = gr.xnext[j]; c >= g.CTAs {
							s.no = true
							continue
						}
					}
					gr.waveIdx, gr.waveAt, gr.waveSum, gr.waveN = c/gr.wave, sim.Add(now, gr.ff.shift), 0, 0
				}
				gr.waveSum += float64(sim.Add(now, gr.ff.shift) - gr.waveAt)
				gr.waveN++
			}
			gr.cores[core].StartCTA(c, gr.stepStream(g, c), g.Resources, g.TimingOnly, nil, 0)
			gr.xnext[j] = c + x
			gr.running++
			s.placed, placed = true, true
			gr.xsetNext(g)
		}
		if !placed {
			break
		}
	}
	gr.xsetNext(g)
}

// xcdScan is an XCD's scan of its cores in a call of dispatchXCDs: the
// next to try (m: core j+m·x of XCD j), whether it placed a CTA in its
// current pass over them, and whether it is full (or done) for the call.
type xcdScan struct {
	m          int
	placed, no bool
}

// xsetNext sets gr.next to the lowest CTA of the grid not started.
func (gr *gridRunner) xsetNext(g *isa.Grid) {
	lo := g.CTAs
	for _, c := range gr.xnext {
		lo = min(lo, c)
	}
	gr.next, gr.xat = lo, lo
}

// xsync applies a move of gr.next since dispatchXCDs last set it (a grid
// skipped whole by fast-forward) to every XCD's next CTA.
func (gr *gridRunner) xsync(g *isa.Grid) {
	if gr.next != gr.xat {
		gr.xsyncFrom(g, gr.xat)
	}
	gr.xsetNext(g)
}

// xsyncFrom moves every XCD's next CTA by what fast-forward moved gr.next
// from was: past the grid's end when it skipped the rest of the grid, else
// by as many CTAs (each XCD skips its share of the skipped waves).
func (gr *gridRunner) xsyncFrom(g *isa.Grid, was int) {
	d := gr.next - was
	for j := range gr.xnext {
		if gr.next >= g.CTAs {
			gr.xnext[j] = max(gr.xnext[j], g.CTAs)
		} else {
			gr.xnext[j] += d
		}
	}
	gr.xsetNext(g)
}

// Blocked implements sim.Waiter: a grid with CTAs left is waiting.
func (gr *gridRunner) Blocked() (bool, string) {
	if gr.cur >= len(gr.grids) {
		return false, ""
	}
	g := gr.grids[gr.cur]
	return true, fmt.Sprintf("grid %q: %d of %d CTAs not started, %d running", g.Name, g.CTAs-gr.next, g.CTAs, gr.running)
}

// FastForward configures the skipping of a grid's repeated waves
// (Options.FastForward): once Measure consecutive waves of a grid — a wave
// is as many CTAs as the grid's first dispatch placed, counted from the
// dispatch of its first CTA to the next wave's — took durations within
// Tolerance of each other (max − min ≤ Tolerance · mean), or, where those
// durations jitter (a wave's first dispatch is the earliest finish among
// many blocks), the last 2·Measure waves did between their centres (the
// mean of each wave's CTAs' dispatch times: FastForwardSkip.Centres), the scheduler
// skips the grid's next full waves but Tail: the CTAs of the skipped waves
// are never started, the run goes on with the CTAs after them, and the
// statistics get the skipped waves' share — per wave the mean of the
// measured waves' increments of the time-like counters (lane time by
// cause, channel and buffer integrals), per CTA the mean work of the
// measured CTAs (CTAWork: instructions, bytes, flops; the L2 and LLC hits
// at the measured hit rates) — with every later time moved by the skipped
// waves' duration.
//
// The result is exact when the run is periodic there (the measured waves
// identical in duration and in every counter, and the skipped ones too);
// GEMM grids in this engine are not exactly periodic (CTAs of a wave meet
// different L2 hits and memory contention, and drift over the cores), so
// in general it is an approximation. What it checks: the measured waves'
// durations, stall mix and cache hit fractions within the tolerances
// before a skip, the skipped and the Tail waves' blocks running the
// measured ones' instructions (isa.Grid.Class, or their streams), and the
// Tail waves simulated after it (but the first) within the measured spread
// and a fifth of the tolerance (or twice the spread, up to the tolerance)
// of the measured period (FastForwardSkip.Checked) — which catches a grid whose later
// CTAs differ (ozaki's scan: A's rows, then B's columns) but not one
// whose CTAs differ only inside the skipped range.
// Timing-only runs without an observer or a host.
type FastForward struct {
	// Measure is the number of consecutive waves measured before a skip
	// (at least 2).
	Measure int
	// Tolerance is the largest relative spread of their durations that
	// allows a skip (0: only identical durations).
	Tolerance float64
	// Tail is the number of full waves simulated after the skipped ones,
	// before the grid's last, partial wave (at least 2): the first runs
	// beside the measured blocks still resident, which share no tiles with
	// it (more L2 misses than in a steady wave), the others are the check.
	// Waves timed between their centres (FastForwardSkip.Centres) need a
	// check of at least one duration between centres: a tail of 3.
	Tail int
	// Exclude lists ranges of blocks of a grid where no skip may start or
	// reach (nor a kernel or tail skip of that grid happen). The run
	// adds to its own copy where a check failed (gridRunner.takeBack):
	// after a grid's first failure the blocks the check ran ahead of the
	// skipped ones and, for starts, the 2·Measure waves after the failed
	// skip's measured ones; after its second the failed skip's blocks
	// with its check's; after its third the rest of the grid.
	Exclude []BlockRange
	// Mix is the largest spread over the measured waves of a lane's
	// fraction of time in a cause (busy, each stall; the mean over the
	// cores) that allows a skip: durations can repeat while the stall mix
	// still drifts (a tensor-bound GEMM's copy lane moves from bandwidth
	// stalls to waiting for free stages over many waves).
	Mix float64
	// Hits is the largest spread over the measured waves of the L2's and
	// the LLC's hit fractions (bytes) that allows a skip: a GEMM sliding
	// into thrashing its L2 keeps its waves' durations while its hits fall
	// (see ffSteady). Many GEMMs' hits swing from wave to wave with the
	// wave's place in the tile order at flat durations: a swing that
	// repeats with the measured waves counts as steady when each of them
	// is within Hits of the wave Measure before it (steadyHits); a larger
	// Hits lets other swings skip, at the risk of missing such a slide.
	Hits float64
	// WarmUp is the smallest share of a run of alike blocks (a kernel, or
	// one GEMM of a grouped launch: isa.Grid.Class) simulated before the
	// waves a skip measures: a kernel's first waves can hold a plateau
	// that repeats within the tolerance before its blocks drift to their
	// steady pace, and a check cannot tell it (the waves after a skip go
	// on from the measured waves' state) — T4 ootomo 8192³'s products ran
	// ~700 µs a wave for their first 10 of 204 waves, 790 µs after, and a
	// skip measured on waves 3–6 came out 10 % short, its check passing.
	// The measured waves start no earlier than this share of the run's
	// waves from its start (0: the first wave after the launch's).
	WarmUp float64
	// MinGain is the smallest share of the events simulated so far that a
	// skip must stand for: a step skip whose check fails makes the caller
	// simulate the whole run again (programs.Execute), a wave skip's the
	// skipped waves after its check's, so a short kernel late in a long
	// run is not worth that risk (0: any skip).
	MinGain float64
	// Stationary also skips waves that vary from one to the next without
	// a pattern but whose means agree over two windows of Measure waves:
	// the mean durations within Tolerance, the hit fractions within Hits,
	// the lanes' fractions of time in each cause within Mix (GB200 ozaki's
	// shallowest GEMM: its waves' L2 hits and durations swing by ±15 %
	// at random). The skip stands for the two windows' mean, and its
	// check allows for their noise (FastForwardSkip.Noise). Off by
	// default: measured against full runs on few kernels so far
	// (docs/design-notes.md, "Fast-forward").
	Stationary bool
	// Steps also skips steps of the resident CTAs' main loops inside a
	// wave (grids with isa.Grid.Steps: GEMM k-steps), together, where
	// their intervals repeat as waves must (steps.go): kernels of too few
	// waves to skip (MI300X's 304 CUs) and each simulated wave of the
	// others.
	Steps bool
	// Kernels also skips whole grids like the two before them where those
	// took the same time (kernels.go): ape-int16's four INT8 GEMMs; and
	// the rest of a grid like the one before it (or like it through its
	// main loop, with its own blocks' work) whose first waves took that
	// one's time: ape-fp32f's third GEMM, sgemm-cube's last.
	Kernels bool
	// NoSteps lists blocks whose steps are not skipped, set by
	// programs.Execute when it runs again after a failed step check
	// (StepCheckError.Again). While such a block is resident no step skip
	// starts.
	NoSteps []BlockRange
	// StepFloors lists grids whose step skips are decided only where every
	// resident CTA has passed a step, set by programs.Execute when it runs
	// again after a step check that found slower steps than its skip's
	// measured ones, the first in its grid (StepCheckError.Again).
	StepFloors []StepFloor
}

// StepFloor says that grid Grid (its index in the program) decides step
// skips only where every resident CTA has passed step Step
// (FastForward.StepFloors).
type StepFloor struct {
	Grid, Step int
}

// BlockRange is the blocks [From, To) of grid Grid (its index in the
// program).
type BlockRange struct {
	Grid, From, To int
}

// WholeGrid is every block of grid g.
func WholeGrid(g int) BlockRange { return BlockRange{Grid: g, To: math.MaxInt} }

// checkSteadiness divides FastForward.Tolerance for the slack a plain
// (not stationary) wave skip's check allows besides the measured spread,
// where twice that spread is less (gridRunner.waveStart): as the step
// skips' windows (stepSteadiness) and the kernel skips' times
// (kernelSteadiness) agree within a fifth of it.
const checkSteadiness = 5

// DefaultFastForward measures 4 waves, allows 5 % spread of their
// durations and 5 percentage points of their lanes' stall mix and of
// their cache hit fractions, never measures a kernel's first sixteenth of
// waves, simulates the last 3 full waves (the check's 2 after the first)
// and skips only where the skip stands for 2 % of the events simulated so
// far. GEMM waves vary by a few percent from wave to wave (which CTAs
// share which panels in the L2); measured against full runs
// (docs/design-notes.md, "Fast-forward"), these settings kept the time
// within 1 % in 117 of 123 emulated GEMMs at 8192³ on every GPU machine,
// the worst +2.3 % (GB200 ozaki 16384³: −0.99 %), where 0.5 % and 1 point
// skipped little on GEMM grids; with the check allowing a fifth of the
// tolerance (2026-12-05, the simulation of that day), 121 of 123, the
// worst +1.2 %, where the whole tolerance had left 113 and +4.1 % (the
// same with failed checks taken back, 2026-12-06: 12 runs took one back,
// none was made again). Step skips (Steps) are off.
var DefaultFastForward = FastForward{Measure: 4, Tolerance: 0.05, Mix: 0.05, Hits: 0.05, Tail: 3, WarmUp: 1.0 / 16, MinGain: 0.02}

// FastForwardSkip is one skip of a fast-forwarded run.
type FastForwardSkip struct {
	Grid     string
	At       sim.Time // simulated time of the skip: the dispatch of the first CTA skipped
	FromCTA  int      // the first CTA skipped
	Waves    int      // waves skipped
	WaveCTAs int      // CTAs per wave
	Period   sim.Time // the measured waves' mean duration
	// Spread is max − min of their durations; for a stationary skip, the
	// distance between the two windows' means plus the standard error of
	// their mean.
	Spread sim.Time
	// Centres marks a skip whose measured waves' durations were taken
	// between their centres (the mean of their CTAs' dispatch times;
	// Measured is 2·Measure, their durations one fewer, the counters
	// those of the last Measure) because those between their first CTAs'
	// dispatches jittered by more than the tolerance; its check then
	// measures the checked waves so too (its Tail−2 durations after the
	// first).
	Centres bool
	// Stationary marks a skip taken by FastForward.Stationary: Measured
	// (Measure, or 2·Measure for it) waves were measured, Noise is the
	// standard deviation of their durations (0 otherwise), and Tail waves
	// (FastForward.Tail, or Measure+1 for it) run after the skip.
	Stationary bool
	Measured   int
	Noise      sim.Time
	Tail       int
	Shift      sim.Time // time the skipped waves stand for (Waves·Period)
	// Exact reports that the measured waves were identical: the same
	// duration and the same increment of every counter.
	Exact bool
	// Events is the engine events the skipped waves stand for (not in
	// Stats.Events, which counts the events simulated).
	Events uint64
	// TailPeriod is the mean duration of the Tail waves simulated after
	// the skip but the first (0 until they ran), and Checked reports that
	// it is within the
	// tolerance (and the measured spread) of Period: the grid's later
	// waves are still like the measured ones. A skip whose check failed
	// would make the result unreliable: the run takes it back
	// (gridRunner.takeBack; Stats.FastForwardTakenBack).
	TailPeriod sim.Time
	Checked    bool
	// AheadTo, for a skip whose check failed, is the end of the blocks
	// its check ran ahead of the skipped ones, [FromCTA + Waves·WaveCTAs,
	// AheadTo): the skip was taken back (its time, counters and blocks),
	// the skipped blocks simulated after them (Stats.FastForwardTakenBack).
	// Failure is which failed check of its grid it was (1, 2, …), and
	// KeptOut the blocks where no later skip of the grid starts or
	// reaches besides those the check ran ahead (gridRunner.takeBack;
	// To math.MaxInt: the rest of the grid).
	AheadTo, Failure int
	KeptOut          BlockRange
	// Hits and TailHits are the L2 hit fractions (bytes; −1: no traffic)
	// of the measured waves and of the check's: the skipped waves' bytes
	// stand for the measured waves' hits, so far apart (more than
	// FastForward.Hits: HitsMoved) they say the bytes may be off where the
	// time is not (a GEMM bound by its computation whose hits drift under
	// it).
	Hits, TailHits float64
	HitsMoved      bool
}

// hitFraction returns hit / (hit + miss), or −1 without traffic.
func hitFraction(hit, miss int64) float64 {
	if hit+miss <= 0 {
		return -1
	}
	return float64(hit) / float64(hit+miss)
}

// FastForwardDecline records a kernel whose waves repeated but whose skip
// would have stood for fewer events than FastForward.MinGain of those
// simulated before it: not taken (the first such point of each kernel).
type FastForwardDecline struct {
	Grid   string
	At     sim.Time // when the skip was declined
	Events uint64   // the events the skip would have stood for
	SoFar  uint64   // the events simulated before it
}

// FastForwardWait records why a kernel's waves were simulated where a
// wave skip could have measured them: at each wave start with enough
// waves measured before it and enough left after it, the reason no skip
// was taken, counted (the first reason that applied), with the last
// value measured of each kind — what a user reads to see what kept a run
// long, and which setting (--fast-forward-tolerance, -mix, -hits,
// -warm-up, --fast-forward-stationary) would let it skip sooner.
type FastForwardWait struct {
	Grid string
	// Waves is the grid's waves (0: no wave start was weighed — a grid
	// skipped whole, or too short); FirstSkip the wave its first skip
	// came at (−1: none).
	Waves, FirstSkip int
	// Spread counts the starts whose measured waves' durations spread
	// beyond the tolerance (LastSpread: max − min over the mean, at the
	// last of them); Moved those whose cache hit fractions or lanes'
	// stall mix moved beyond their settings; Apart those whose two
	// windows' mean durations (a stationary skip's) were apart by more
	// than the tolerance (LastGap: their difference over their mean);
	// WarmUp those inside the kernel's warm-up; Unlike those whose
	// measured or next blocks run other instructions.
	Spread, Moved, Apart, WarmUp, Unlike int
	LastSpread, LastGap                  float64
}

// wait returns the running grid's FastForwardWait (the last: one is
// recorded as each grid starts), its waves known.
func (gr *gridRunner) wait(g *isa.Grid) *FastForwardWait {
	w := &gr.ff.waits[len(gr.ff.waits)-1]
	w.Waves = (g.CTAs + gr.wave - 1) / gr.wave
	return w
}

// addShift adds a skip's time, ps picoseconds (rounded), to the run's
// (ff.shift) at now and returns it; false — the chip failed with
// sim.ErrTimeOverflow, naming what was skipped — where the run's time, now
// and every skip, would pass the simulated range (a skipped float beyond it
// had converted to a negative time, reported with exit 0).
func (c *Chip) addShift(ff *fastForward, now sim.Time, ps float64, what string) (sim.Time, bool) {
	r := math.Round(ps)
	if !(r < float64(sim.MaxTime)) || sim.Saturated(sim.Add(sim.Add(now, ff.shift), sim.Time(r))) {
		c.Fail(fmt.Errorf("fast-forward: %s (%.4g s) would take the run past the simulated time: %w", what, ps/1e12, sim.ErrTimeOverflow))
		return 0, false
	}
	ff.shift += sim.Time(r)
	return sim.Time(r), true
}

// fastForward is the grid runner's fast-forward state.
type fastForward struct {
	FastForward
	skips []FastForwardSkip
	// takenBack holds the skips whose check failed (gridRunner.takeBack).
	takenBack []FastForwardSkip
	steps     []StepSkip
	kernels   []KernelSkip
	declined  []FastForwardDecline
	// waits has an entry for each grid started, the running one's last;
	// stepWaits one for each grid whose steps may be skipped, the running
	// one's last (while steps.on).
	waits     []FastForwardWait
	stepWaits []StepWait
	lanes     []struct{} // a core's lanes and paths (the ffSnap layout)
	paths     int
	shift     sim.Time  // sum of the skips' shifts
	ints      []int64   // counters the skips add (ffSnap layout)
	floats    []float64 // float counters and integrals they add
}

// ffSnap is a snapshot of the run's counters (Chip.ffSnapshot).
type ffSnap struct {
	t      sim.Time
	ints   []int64
	floats []float64
	wave   int     // the wave whose first CTA's dispatch it was taken at
	off    float64 // that wave's centre − t (set at the next wave's start; −1 until then)
}

// waveCentre is the mean of a wave's CTAs' dispatch times, at + off (off
// apart, so that the waves of an exactly periodic grid have exactly equal
// distances).
type waveCentre struct {
	at  sim.Time
	off float64
}

// since returns c − b in picoseconds.
func (c waveCentre) since(b waveCentre) float64 {
	return float64(c.at-b.at) + (c.off - b.off)
}

// centre returns the centre of the wave whose first CTA's dispatch s was
// taken at (valid when s.off ≥ 0).
func (s *ffSnap) centre() waveCentre { return waveCentre{s.t, s.off} }

// centreDurations returns the distances between the centres of the
// consecutive waves of s (nil when one is not known yet): the waves'
// durations where those between their first dispatches jitter (waveStart).
func centreDurations(s []ffSnap) []float64 {
	d := make([]float64, 0, len(s))
	for i := 1; i < len(s); i++ {
		if s[i-1].off < 0 || s[i].off < 0 || s[i].wave != s[i-1].wave+1 {
			return nil
		}
		d = append(d, s[i].centre().since(s[i-1].centre()))
	}
	return d
}

// waveStart is called before the dispatch of the first CTA of a wave of
// g (gr.next is a multiple of gr.wave): it measures and, when the last
// waves repeat within the tolerance, skips.
func (gr *gridRunner) waveStart(g *isa.Grid, now sim.Time) {
	ff := gr.ff
	// The wave before this one is wholly dispatched: its centre.
	var prev waveCentre
	if gr.waveN > 0 {
		prev = waveCentre{gr.waveAt, gr.waveSum / float64(gr.waveN)}
		if n := len(gr.snaps); n > 0 && gr.snaps[n-1].wave == gr.waveIdx {
			gr.snaps[n-1].off = prev.off
		}
	}
	if c := gr.check; c >= 0 {
		sk := &ff.skips[c]
		if gr.next == sk.FromCTA+(sk.Waves+1)*sk.WaveCTAs {
			gr.checkAt = sim.Add(now, ff.shift)
			gr.checkL2 = gr.chip.l2Bytes()
		}
		if gr.next == sk.FromCTA+(sk.Waves+2)*sk.WaveCTAs {
			gr.checkC = prev // the centre of the check's first wave
		}
		// (At or past its last: the dispatch may have passed over blocks
		// a failed check ran ahead, right after the check's waves.)
		if gr.next >= sk.FromCTA+(sk.Waves+sk.Tail)*sk.WaveCTAs {
			sk.TailPeriod = (sim.Add(now, ff.shift) - gr.checkAt) / sim.Time(sk.Tail-1)
			if sk.Centres { // between the centres of the check's first and last waves
				sk.TailPeriod = sim.Time(math.Round(prev.since(gr.checkC) / float64(sk.Tail-2)))
			}
			b := gr.chip.l2Bytes()
			sk.TailHits = hitFraction(b[0]-gr.checkL2[0], b[1]-gr.checkL2[1])
			sk.HitsMoved = !fractionsAgree(sk.Hits, sk.TailHits, ff.Hits)
			dev := math.Abs(float64(sk.TailPeriod - sk.Period))
			// A stationary skip's check allows three standard errors
			// of the mean of the Tail−1 waves it averages besides (its
			// waves vary by Noise each: GB200 ozaki's shallowest GEMM,
			// ±12 %, allows ~30 % — a guard against gross change only;
			// the estimate in the report is the measure of its error).
			// A plain skip's check allows, besides the measured
			// spread, a fifth of the tolerance or twice the spread,
			// whichever is more, up to the tolerance: waves measured
			// alike to 0.03 % whose check runs 2–4 % faster have
			// changed (H100 HGEMM and ape-int16 8192³: lockstep
			// waves that fall apart inside the skipped range, 15 %
			// faster; with the whole tolerance allowed their checks
			// passed and the runs came out +2.4 and +4.1 %, outside
			// their estimates).
			slack := ff.Tolerance * float64(sk.Period)
			if !sk.Stationary {
				slack = min(slack, max(slack/checkSteadiness, 2*float64(sk.Spread)))
			}
			allow := slack + float64(sk.Spread) + 3*float64(sk.Noise)/math.Sqrt(float64(sk.Tail-1))
			sk.Checked = dev <= allow
			gr.check = -1
			if !sk.Checked {
				// The skipped waves were not like the measured ones:
				// simulate them now, after the check's.
				gr.takeBack(c)
			}
		}
	}
	if g.Class != nil {
		if gr.next == gr.wave { // the first wave began a run
			gr.runFrom, gr.runClass = 0, g.Class(0)
		}
		if c := g.Class(gr.next); c != gr.runClass {
			gr.runFrom, gr.runClass = gr.next/gr.wave, c
		}
	}
	snap := gr.chip.ffSnapshot(now)
	snap.wave, snap.off = gr.next/gr.wave, -1
	gr.snaps = append(gr.snaps, snap)
	// The waves a skip measures: Measure, or as many as cover the grid's
	// period (isa.Grid.Period).
	measure := ff.Measure
	if g.Period > 0 {
		measure = max(measure, (g.Period+gr.wave-1)/gr.wave)
	}
	for c := range gr.recent { // too old to be measured by a later skip
		if c < gr.next-measure*gr.wave {
			delete(gr.recent, c)
		}
	}
	if len(gr.snaps) > 2*measure+1 { // the measured waves and Measure before them (steadyHits)
		gr.snaps = append(gr.snaps[:0], gr.snaps[1:]...)
	}
	if len(gr.snaps) < measure+1 || slices.ContainsFunc(ff.Exclude, func(x BlockRange) bool {
		return x.Grid == gr.cur && gr.next >= x.From && gr.next < x.To
	}) {
		return // too few waves measured, or a skip may not start here
	}
	if gr.check >= 0 {
		return // a skip's check waits for waves after it
	}
	// Leave Tail full waves after the skipped ones and the dispatch of
	// one more CTA (when the check is made).
	j := (g.CTAs-gr.next-1)/gr.wave - ff.Tail
	if j < 1 {
		return
	}
	// The measured waves: their counters and durations between the
	// snapshots s, taken at the dispatch of each wave's first CTA.
	s := gr.snaps[len(gr.snaps)-measure-1:]
	first, last := &s[0], &s[len(s)-1]
	d := make([]float64, measure)
	for i := range d {
		d[i] = float64(s[i+1].t - s[i].t)
	}
	lo, hi, total := slices.Min(d), slices.Max(d), fsum(d)
	m := float64(measure)
	measured, noise, tail, centres := measure, sim.Time(0), ff.Tail, false
	steady := gr.chip.ffSteady(gr.snaps, measure, ff.Mix, ff.Hits)
	if ns := len(gr.snaps); steady && hi-lo > ff.Tolerance*total/m && ns >= 2*measure+1 && ff.Tail >= 3 {
		// A wave's first dispatch is the earliest finish among the
		// blocks before it, an extreme of many, which can jitter from
		// wave to wave where the blocks' mean pace does not: the
		// durations between the measured waves' centres then (GB200
		// ozaki 16384³'s products: first dispatches 2.5–6 % apart in
		// relative standard deviation, centres 0.9–1.9 %, in each of
		// its GEMMs). Not first: while a kernel's blocks drift apart
		// after its start, its waves' dispatches spread and their
		// centres move later each wave (H100 HGEMM 8192³: first
		// dispatches 75.8 µs apart for waves on end, centres 2–4 %
		// more for its first ten).
		//
		// Measured so, noisier kernels pass than between first
		// dispatches, and a kernel's first waves can be such a noise
		// about a trend (its L2 hits settling): the centres of twice
		// the measured waves must agree.
		if c := centreDurations(gr.snaps[ns-2*measure-1 : ns-1]); len(c) == 2*measure-1 {
			if cl, ch, ct := slices.Min(c), slices.Max(c), fsum(c); ch-cl <= ff.Tolerance*ct/float64(len(c)) {
				d, lo, hi, total, m, centres, measured = c, cl, ch, ct, float64(len(c)), true, 2*measure
			}
		}
	}
	spread := sim.Time(math.Round(hi - lo))
	if !steady || hi-lo > ff.Tolerance*total/m {
		if !ff.Stationary || len(gr.snaps) < 2*measure+1 {
			if w := gr.wait(g); steady {
				w.Spread++
				w.LastSpread = (hi - lo) / (total / m)
			} else {
				w.Moved++
			}
			return
		}
		w := gr.snaps[len(gr.snaps)-2*measure-1:]
		ok, apart, gap, mean, sd := stationary(w, measure, len(gr.chip.grids.cores), len(ff.lanes), ff.paths, ff.Tolerance, ff.Mix, ff.Hits)
		if !ok {
			if wt := gr.wait(g); apart {
				wt.Apart++
				wt.LastGap = gap / mean
			} else {
				wt.Moved++
			}
			return
		}
		s, measured = w, 2*measure
		first, last = &s[0], &s[len(s)-1]
		total, m = float64(last.t-first.t), float64(measured)
		lo, hi = math.Inf(1), math.Inf(-1)
		for i := 1; i < len(s); i++ {
			d := float64(s[i].t - s[i-1].t)
			lo, hi = min(lo, d), max(hi, d)
		}
		noise = sim.Time(math.Round(sd))
		spread = sim.Time(math.Round(gap + sd/math.Sqrt(m)))
		// Its check averages Measure waves, not Tail−1: noisy waves.
		tail = max(ff.Tail, measure+1)
		if j = (g.CTAs-gr.next-1)/gr.wave - tail; j < 1 {
			return
		}
	}
	// The measured and the skipped CTAs must run the same instructions,
	// addresses aside, as the CTA of their rank in a cluster (waves hold
	// whole clusters): skip only the waves up to the first that differs.
	// The check's Tail waves must be like them too (a grouped GEMM's next
	// GEMM, whose blocks are deeper, would fail it).
	like := gr.likeRefs(g, gr.next-measured*gr.wave)
	for c := gr.next - measured*gr.wave + max(g.Cluster, 1); c < gr.next; c++ { // after the references
		if !like(c) {
			gr.wait(g).Unlike++
			return
		}
	}
	n := j + tail
	for w := 0; w < n; w++ {
		for c := gr.next + w*gr.wave; c < gr.next+(w+1)*gr.wave; c++ {
			if !like(c) {
				n = w
				break
			}
		}
	}
	// The measured waves come after the run's warm-up (n: the waves
	// alike ahead, up to the grid's last full wave).
	if from := gr.next/gr.wave - measured; float64(from-gr.runFrom) < ff.WarmUp*float64(gr.next/gr.wave-gr.runFrom+n) {
		gr.wait(g).WarmUp++
		return
	}
	// Nor reaches into an excluded range (a failed check's).
	for _, x := range ff.Exclude {
		if x.Grid == gr.cur && gr.next < x.From {
			n = min(n, (x.From-gr.next)/gr.wave)
		}
	}
	if j = n - tail; j < 1 {
		return
	}
	if g.Class != nil {
		// Spot-check the grid's declaration: the first skipped and the
		// last checked CTA of each rank against the measured ones.
		size := max(g.Cluster, 1)
		for r := 0; r < size; r++ {
			ref := gr.next - measure*gr.wave + r
			for _, c := range []int{gr.next + r, gr.next + (j+tail)*gr.wave - size + r} {
				if !sameCTA(g, c, g, ref) {
					gr.chip.Fail(fmt.Errorf("kernel %s: its Class declares blocks %d and %d alike, but their instructions differ", g.Name, ref, c))
					return
				}
			}
		}
	}
	exact := lo == hi
	for i := 2; i < len(s) && exact; i++ {
		for k := ffEvents + 1; k < len(s[i].ints); k++ { // not the events (superseded wake-ups vary)
			if s[i].ints[k]-s[i-1].ints[k] != s[1].ints[k]-s[0].ints[k] {
				exact = false
				break
			}
		}
		for k := range s[i].floats {
			// float increments of sums at another magnitude round apart
			d, d0 := s[i].floats[k]-s[i-1].floats[k], s[1].floats[k]-s[0].floats[k]
			if math.Abs(d-d0) > 1e-9*math.Max(math.Abs(d), math.Abs(d0)) {
				exact = false
				break
			}
		}
	}
	scale := float64(j) / float64(len(s)-1) // skipped waves per wave of the counters' window
	if gain, sofar := float64(last.ints[ffEvents]-first.ints[ffEvents])*scale, float64(gr.chip.eng.Events()); gain < ff.MinGain*sofar {
		if !slices.ContainsFunc(ff.declined, func(d FastForwardDecline) bool { return d.Grid == g.Name }) {
			ff.declined = append(ff.declined, FastForwardDecline{Grid: g.Name, At: now, Events: uint64(math.Round(gain)), SoFar: uint64(sofar)})
		}
		return
	}
	shift, ok := gr.chip.addShift(ff, now, total*(float64(j)/m), "kernel "+g.Name+"'s skipped waves")
	if !ok {
		return
	}
	if ff.ints == nil {
		ff.ints = make([]int64, len(last.ints))
		ff.floats = make([]float64, len(last.floats))
	}
	tscale := scale // the time-like counters: per picosecond, the shift's
	if centres {
		tscale = float64(shift) / float64(max(last.t-first.t, 1))
	}
	u := skipUndo{ints: slices.Clone(ff.ints), floats: slices.Clone(ff.floats), before: slices.Clone(gr.xnext)}
	win := gr.chip.ffAdd(ff, first, last, scale, tscale, shift)
	for k := range u.ints {
		u.ints[k] = ff.ints[k] - u.ints[k]
	}
	for k := range u.floats {
		u.floats[k] = ff.floats[k] - u.floats[k]
	}
	u.win = win
	if gr.win == nil {
		gr.win = win
	} else {
		for k := range win {
			gr.win[k] += win[k]
		}
	}
	gr.skipped += j * gr.wave
	meas := ffMeasure{from: gr.next - measure*gr.wave, to: gr.next, skipped: j * gr.wave}
	for c := meas.from; c < meas.to; c++ {
		if w, ok := gr.recent[c]; ok {
			meas.sum.add(w)
			meas.n++
			delete(gr.recent, c)
		}
	}
	gr.measures = append(gr.measures, meas)
	u.measure = len(gr.measures) - 1
	gr.undo = u
	ff.skips = append(ff.skips, FastForwardSkip{Grid: g.Name, At: now, FromCTA: gr.next, Waves: j, WaveCTAs: gr.wave,
		Period: sim.Time(math.Round(total / m)), Spread: spread, Centres: centres, Stationary: measured > measure && !centres, Measured: measured, Noise: noise, Tail: tail,
		Shift: shift, Exact: exact,
		Hits:   hitFraction(last.ints[ffL2Hit]-first.ints[ffL2Hit], last.ints[ffL2Miss]-first.ints[ffL2Miss]),
		Events: uint64(math.Round(float64(last.ints[ffEvents]-first.ints[ffEvents]) * scale))})
	gr.check = len(ff.skips) - 1
	if w := gr.wait(g); w.FirstSkip < 0 {
		w.FirstSkip = gr.next / gr.wave
	}
	gr.next += j * gr.wave
	gr.doneBy[gr.cur] += int64(j * gr.wave)
	gr.snaps = gr.snaps[:0]
}

// takeBack takes back skip i of the run (ff.skips), the one the grid's
// dispatch has just checked at block gr.next, whose check failed: its
// shift, the counters it added (gr.undo), its skipped blocks' share of
// the grid's progress and its measure go; the dispatch goes back to its
// first skipped block, simulates the skipped blocks after those its check
// ran (they stay as run: gr.ahead, which the dispatch passes over) and
// measures again, and no later skip may reach into the check's blocks
// — nor, after the grid's first failure, start in the 2·Measure waves
// after the failed skip's measured ones; after its second in or reach
// into the failed skip's blocks; after its third in the rest of the
// grid. So the run is not made again: every block of the
// grid is simulated or skipped once, the skipped blocks of a failed check
// in another order than the hardware dispatches them (the check's waves
// before them).
func (gr *gridRunner) takeBack(i int) {
	ff, u := gr.ff, &gr.undo
	sk := ff.skips[i]
	n := sk.Waves * sk.WaveCTAs
	ff.shift -= sk.Shift
	for k, d := range u.ints {
		ff.ints[k] -= d
	}
	for k, d := range u.floats {
		ff.floats[k] -= d
	}
	for k, d := range u.win {
		gr.win[k] -= d
	}
	if gr.skipped -= n; gr.skipped == 0 {
		gr.win = nil
	}
	gr.doneBy[gr.cur] -= int64(n)
	gr.measures = slices.Delete(gr.measures, u.measure, u.measure+1)
	ff.skips = slices.Delete(ff.skips, i, i+1)
	if w := gr.wait(&gr.grids[gr.cur]); w.FirstSkip == sk.FromCTA/gr.wave && !slices.ContainsFunc(ff.skips, func(x FastForwardSkip) bool { return x.Grid == sk.Grid }) {
		w.FirstSkip = -1 // (its first skip was this one)
	}
	if gr.xnext != nil {
		gr.ahead = make([]blockSpan, len(gr.xnext))
		for j := range gr.xnext {
			gr.ahead[j] = blockSpan{u.before[j] + n, gr.xnext[j]}
			gr.xnext[j] = u.before[j]
		}
	} else {
		gr.ahead = []blockSpan{{sk.FromCTA + n, gr.next}}
	}
	gr.failures++
	ahead := BlockRange{Grid: gr.cur, From: sk.FromCTA + n, To: gr.next}
	kept := BlockRange{Grid: gr.cur, From: sk.FromCTA}
	switch {
	case gr.failures == 1:
		// No skip starts in the 2·Measure waves after the failed one's
		// measured waves (at most the skip and its check): the most a
		// skip looks back (a skip timed between centres, a stationary
		// one, the hits' comparison with the waves Measure before), so
		// the next is measured on waves after them. A first skip that
		// measured a passing dip (V100 Ootomo 8192³: 4 waves of 503–522
		// µs among waves of 570–584 µs; T4 Ootomo 8192×1536×4096's
		// waves 3–6 at 341 µs, the kernel's later ones ~520 µs) then
		// skips the rest of the kernel measured on the waves after
		// them.
		kept.To = sk.FromCTA + min(sk.Waves+sk.Tail, max(sk.Measured, 2*ff.Measure))*sk.WaveCTAs
	case gr.failures == 2:
		kept.To = ahead.To // the failed skip's blocks with its check's
	default:
		kept.To = math.MaxInt // the rest of the grid
	}
	ff.Exclude = append(slices.Clip(ff.Exclude), ahead, kept)
	sk.AheadTo, sk.Failure, sk.KeptOut = gr.next, gr.failures, kept
	ff.takenBack = append(ff.takenBack, sk)
	gr.next = sk.FromCTA
	gr.snaps = gr.snaps[:0]
	gr.undo = skipUndo{}
}

// GridBlocksDone appends to dst, for each of the program's kernel grids
// in launch order, the blocks (CTAs) finished so far, counting those
// fast-forward skipped (a progress measure; dst as given without grids).
func (c *Chip) GridBlocksDone(dst []int64) []int64 {
	if c.grids == nil {
		return dst
	}
	return append(dst, c.grids.doneBy...)
}

// reported maps a simulated time to the time line of the run the
// fast-forwarded one stands for: later than a skip, by its shift.
func (c *Chip) reported(t sim.Time) sim.Time {
	if c.grids == nil || c.grids.ff == nil {
		return t
	}
	return c.reportedInGrid(t) + c.kernelShift(t)
}

// reportedInGrid is reported without the kernel skips' shifts (GridTimes
// takes them by grid).
func (c *Chip) reportedInGrid(t sim.Time) sim.Time {
	if c.grids == nil || c.grids.ff == nil {
		return t
	}
	r := t
	for _, s := range c.grids.ff.skips {
		if t >= s.At {
			r += s.Shift
		}
	}
	for _, s := range c.grids.ff.steps {
		if t > s.At {
			r += s.Shift
		}
	}
	return r
}

// kernelShift is the time the kernel skips at or before simulated time t
// stand for.
func (c *Chip) kernelShift(t sim.Time) (r sim.Time) {
	for _, s := range c.grids.ff.kernels {
		if t >= s.At {
			r += s.Shift
		}
	}
	return r
}

// ffSteady reports whether, over the last measure waves between the
// snapshots s (which may hold up to measure waves before them), every
// lane's mean fraction of time in each cause varied by at most mix, and
// the L2's and LLC's hit fractions by at most hits (steadyHits). (A GEMM
// sliding into thrashing its L2 keeps the durations of its waves for a
// while, hiding the misses behind its computation, as its hits fall:
// MI210 HGEMM 8192³ from 0.9 to 0.65 in four waves, then its waves took
// 1.5 times as long.)
func (c *Chip) ffSteady(s []ffSnap, measure int, mix, hits float64) bool {
	for _, k := range []int{ffL2Hit, ffLLCHit} { // hit bytes; the misses follow them
		h, m := make([]int64, len(s)-1), make([]int64, len(s)-1)
		for w := 1; w < len(s); w++ {
			h[w-1], m[w-1] = s[w].ints[k]-s[w-1].ints[k], s[w].ints[k+1]-s[w-1].ints[k+1]
		}
		if !steadyHits(h, m, measure, hits) {
			return false
		}
	}
	s = s[len(s)-measure-1:]
	for l := range c.grids.ff.lanes {
		for x := 0; x < int(NumCauses); x++ {
			lo, hi := math.Inf(1), math.Inf(-1)
			for w := 1; w < len(s); w++ {
				f := c.causeFraction(&s[w-1], &s[w], l, Cause(x))
				lo, hi = min(lo, f), max(hi, f)
			}
			if hi-lo > mix {
				return false
			}
		}
	}
	return true
}

// causeFraction returns lane l's fraction of the time from snapshot a to
// b in cause x, the mean over the cores.
func (c *Chip) causeFraction(a, b *ffSnap, l int, x Cause) float64 {
	ff := c.grids.ff
	cores := len(c.grids.cores)
	block := coreInts(len(ff.lanes), ff.paths)
	var t int64
	for i := range cores {
		k := ffGlobal + i*block + l*laneInts + int(x)
		t += b.ints[k] - a.ints[k]
	}
	return float64(t) / float64(max(b.t-a.t, 1)) / float64(cores)
}

// laneInts is the number of ints a lane takes in a core's block of an
// ffSnap (its time in each cause, then its instructions), and coreInts
// the number a core's block takes: its lanes', its paths' bytes, its
// vector repeats (Chip.ffSnapshotInto).
const laneInts = int(NumCauses) + 1

func coreInts(lanes, paths int) int { return lanes*laneInts + paths + 1 }

// hitsAgree reports whether the spans of the run from a0 to a1 and from
// b0 to b1 agree in their L2's and LLC's hit fractions (bytes) within hits
// (or neither had traffic).
func hitsAgree(a0, a1, b0, b1 *ffSnap, hits float64) bool {
	for _, k := range []int{ffL2Hit, ffLLCHit} { // hit bytes; the misses follow them
		if !fractionsAgree(spanHits(a0, a1, k), spanHits(b0, b1, k), hits) {
			return false
		}
	}
	return true
}

// spanHits returns the hit fraction (bytes; −1: no traffic) from snapshot
// a to b of the L2 (k ffL2Hit) or the LLC (ffLLCHit).
func spanHits(a, b *ffSnap, k int) float64 {
	return hitFraction(b.ints[k]-a.ints[k], b.ints[k+1]-a.ints[k+1])
}

// mixAgree reports whether every lane's fraction of time in each cause,
// the mean over the cores, agrees within mix over the spans from a0 to a1
// and from b0 to b1 of snapshots of cores cores of lanes lanes and paths
// paths each: both spans summed in one walk of the snapshots (a core's
// counters lie together; a walk per lane and cause, as causeFraction's,
// took four times as long: 0.10 s of RTX PRO 6000 sgemm-cube 8192³ with
// step skips, 0.07 s so), compared in causeFraction's arithmetic.
func mixAgree(a0, a1, b0, b1 *ffSnap, cores, lanes, paths int, mix float64) bool {
	nc := int(NumCauses)
	block := coreInts(lanes, paths)
	sum := make([]int64, 2*lanes*nc)
	da, db := sum[:lanes*nc], sum[lanes*nc:]
	for i := range cores {
		for l := range lanes {
			k := ffGlobal + i*block + l*laneInts
			for x := range nc {
				da[l*nc+x] += a1.ints[k+x] - a0.ints[k+x]
				db[l*nc+x] += b1.ints[k+x] - b0.ints[k+x]
			}
		}
	}
	ta, tb := float64(max(a1.t-a0.t, 1)), float64(max(b1.t-b0.t, 1))
	for j := range da {
		if math.Abs(float64(da[j])/ta/float64(cores)-float64(db[j])/tb/float64(cores)) > mix {
			return false
		}
	}
	return true
}

// steadyHits reports whether the hit fraction of the last measure waves
// (hit and miss bytes of each wave in h and m, oldest first) is steady
// within spread: the fractions of those waves vary by at most spread (the
// rule before 2026-11-25), or each is within spread of the wave measure
// waves before it — a pattern that repeats with the measured waves, as
// hits that swing with the wave's place in the tiles' order do (H100
// bf16x9 8192³: 0.84, 0.85, 0.85, 0.56, 0.83, 0.83, 0.83, 0.55 at flat
// durations). The second needs 2·measure waves; it rejects a one-time step
// and a trend of more than spread/measure a wave (a slide into thrashing),
// and, the measured waves being whole periods of the pattern, their sums
// stand for the skipped waves' (a period of 3 within 4 waves would not:
// A100 native SGEMM's hits looked so and were not). A wave without L2
// traffic matches only another without.
func steadyHits(h, m []int64, measure int, spread float64) bool {
	n := len(h)
	lo, hi := math.Inf(1), math.Inf(-1)
	for w := n - measure; w < n; w++ {
		if f := hitFraction(h[w], m[w]); f >= 0 {
			lo, hi = min(lo, f), max(hi, f)
		}
	}
	if hi-lo <= spread || hi < lo { // hi < lo: no traffic
		// ...and settled, where waves before them are known: their
		// mean within spread of those waves' (hits that paused in a
		// slide: MI210 sgemm-cube 8192³'s third kernel, 0.84, 0.72, 0.50,
		// then four waves at 0.46–0.53 at a flat 324 µs, then thrashing
		// at 450–500 µs; the skip there came out 5.6 % short and passed
		// its check, the waves after it paused in the slide too).
		return windowsAgree(h, m, n, measure, spread)
	}
	if n < 2*measure {
		return false
	}
	for w := n - measure; w < n; w++ {
		if !fractionsAgree(hitFraction(h[w-measure], m[w-measure]), hitFraction(h[w], m[w]), spread) {
			return false
		}
	}
	return true
}

// windowsAgree reports whether the hit fraction (bytes) of the last
// measure of the n waves (hit and miss bytes in h and m) is within spread
// of the up to measure waves' before them (or neither had traffic; true
// when no wave came before them).
func windowsAgree(h, m []int64, n, measure int, spread float64) bool {
	if n <= measure {
		return true
	}
	var h0, m0, h1, m1 int64
	for w := max(0, n-2*measure); w < n-measure; w++ {
		h0, m0 = h0+h[w], m0+m[w]
	}
	for w := n - measure; w < n; w++ {
		h1, m1 = h1+h[w], m1+m[w]
	}
	return fractionsAgree(hitFraction(h0, m0), hitFraction(h1, m1), spread)
}

// fractionsAgree reports whether hit fractions f0 and f1 (hitFraction:
// −1 without traffic) are within spread of each other, or neither had
// traffic.
func fractionsAgree(f0, f1, spread float64) bool {
	return (f0 < 0) == (f1 < 0) && math.Abs(f1-f0) <= spread
}

// stationary reports whether the 2·measure waves between the snapshots w
// (oldest first) are steady in their means over two windows of measure
// waves: the windows' mean durations within tol of each other (relative),
// their L2 and LLC hit fractions (bytes) within hits, and every lane's
// fraction of time in each cause (the mean over the cores; the ffSnap
// layout of cores, lanes and paths) within mix. It also returns whether
// it refused them for the windows' means (apart), the distance between
// those means and the mean wave's duration, and the standard deviation
// of the waves' durations (picoseconds).
func stationary(w []ffSnap, measure, cores, lanes, paths int, tol, mix, hits float64) (ok, apart bool, gap, mean, sd float64) {
	if len(w) != 2*measure+1 || cores == 0 {
		return false, false, 0, 0, 0
	}
	mid := &w[measure]
	t0, t1 := float64(mid.t-w[0].t), float64(w[2*measure].t-mid.t)
	if t0 <= 0 || t1 <= 0 {
		return false, false, 0, 0, 0
	}
	n := float64(measure)
	gap = math.Abs(t1-t0) / n
	mean = (t0 + t1) / (2 * n)
	if gap > tol*(t0+t1)/(2*n) {
		return false, true, gap, mean, 0
	}
	if !hitsAgree(&w[0], mid, mid, &w[2*measure], hits) || !mixAgree(&w[0], mid, mid, &w[2*measure], cores, lanes, paths, mix) {
		return false, false, gap, mean, 0
	}
	var ss float64
	for i := 1; i < len(w); i++ {
		d := float64(w[i].t-w[i-1].t) - mean
		ss += float64(d * d)
	}
	return true, false, gap, mean, math.Sqrt(ss / float64(len(w)-2))
}

// likeRefs returns a test of whether a CTA runs the instructions of the
// CTA of its rank among from, from+1, … (one per rank of a cluster),
// addresses aside: by the grid's Class when it declares one, else by
// comparing their streams.
func (gr *gridRunner) likeRefs(g *isa.Grid, from int) func(c int) bool {
	size := max(g.Cluster, 1)
	if g.Class != nil {
		refs := make([]int, size)
		for r := range refs {
			refs[r] = g.Class(from + r)
		}
		return func(c int) bool { return g.Class(c) == refs[c%size] }
	}
	refs := make([][]isa.Instr, size)
	for r := range refs {
		refs[r] = ctaShape(g, from+r)
	}
	return func(c int) bool { return sameShape(g, c, refs[c%size]) }
}

// ctaShape returns CTA c's instructions without their addresses.
func ctaShape(g *isa.Grid, c int) []isa.Instr {
	var out []isa.Instr
	for in := range g.CTA(c) {
		out = append(out, in.Shape())
	}
	return out
}

// sameShape reports whether CTA c runs the instructions of ref, addresses
// aside.
func sameShape(g *isa.Grid, c int, ref []isa.Instr) bool {
	i := 0
	same := true
	for in := range g.CTA(c) {
		if i >= len(ref) || in.Shape() != ref[i] {
			same = false
			break
		}
		i++
	}
	return same && i == len(ref)
}

// sameCTA reports whether CTA c of grid g runs the instructions of CTA r
// of grid ref, addresses aside (isa.Instr.Shape), reading the two streams
// side by side: neither is held (a CTA of a long k-loop runs millions of
// instructions).
func sameCTA(g *isa.Grid, c int, ref *isa.Grid, r int) bool {
	next, stop := iter.Pull(ref.CTA(r))
	defer stop()
	for in := range g.CTA(c) {
		if x, ok := next(); !ok || in.Shape() != x.Shape() {
			return false
		}
	}
	_, more := next()
	return !more
}

// fsum returns the sum of x.
func fsum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}
