package arch

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// Step skips (FastForward.Steps): inside a wave, skip steps of the resident
// CTAs' main loops (a GEMM's k-steps) together.
//
// A grid with isa.Grid.Steps marks each step of its CTAs' main loops. While
// every resident CTA is in its loop and none starts or finishes, the chip
// snapshots its counters each time the CTAs have passed as many markers as
// there are of them (a step each, in the mean): an interval. When the last
// two windows of Measure intervals each spread within the tolerance, their
// mean durations agree within a fifth of it, and their cache hits and
// lanes' stall mix agree within those settings (a skip freezes the state
// it measured, so a slow trend must be over: stepInterval), and every CTA
// is past its warm-up with steps left that repeat (isa.Step), every CTA
// skips the same steps, from the leading CTA's next marker on (those
// behind when they reach it) — as many as leave the leader room for those
// behind to reach it and for the check at the pace the CTAs kept
// (stepsToSkip) — and the run stands the skipped time for that many
// measured periods: the
// simulated time goes on where the CTAs resume, the skipped time is added
// to the run's (a shift, as a wave skip's). Each CTA's skipped steps count
// the work of its step before the marker (exact where the steps repeat, as
// a GEMM's full k-steps); the time-like counters and the events are the
// measured intervals' times the skipped steps; the cache counters follow
// the skipped global-memory bytes at the measured rates, and the caches
// are aged by the sectors the measured intervals allocated, times the
// skipped steps (mem.L2.Age: the skipped steps' lines would have pushed
// older ones out; without it, MI300X markidis 8192³'s HBM reads came out
// 30 % short, with it 11–16 %), but for the most recent ones, which those
// behind read on their way to the skip. The Measure intervals after the
// last CTA resumed (and settled) are the check.
//
// Where CTAs start and finish all the time (a kernel whose blocks drifted
// apart) no window forms and nothing is skipped: wave skips serve those.
//
// Once a skip's check has passed, the kernel's loop has a checked pace
// (stepRunner.paced, kept for its later waves and for later kernels whose
// loops are alike). A skip measured at that pace, its blocks of the classes
// the checked skip's blocks had, takes that check for its own
// (StepSkip.Paced): it may be decided on one window of Measure intervals
// (pacedStepSkip) and leaves no room for a check or the loop's last steps,
// only for the blocks behind to reach it (stepsToSkip with check 0); no
// intervals after it are measured.

// stepSteadiness divides FastForward.Tolerance for the difference of the
// means of the two windows of intervals a step skip measures
// (stepInterval).
const stepSteadiness = 5

// StepSkip is one step skip of a fast-forwarded run.
type StepSkip struct {
	Grid   string
	At     sim.Time // simulated time of the decision (the CTAs skip at step From's marker)
	Steps  int      // steps each resident CTA skipped
	From   int      // the step they skipped from (the leading CTA's next when decided)
	CTAs   int      // the resident CTAs
	First  int      // the lowest of their block indices
	Period sim.Time // the measured intervals' mean duration: one step of every CTA
	Spread sim.Time // max − min of their durations
	Shift  sim.Time // the time the skipped steps stand for (Steps·Period)
	Events uint64   // engine events they stand for
	// CheckPeriod is the mean duration of the Measure intervals after the
	// CTAs resumed (0: not measured: a CTA started or finished first), and
	// Checked reports that it was within the tolerance (and the measured
	// spread) of Period. A failed check stops the run (StepCheckError).
	CheckPeriod sim.Time
	Checked     bool
	// Paced reports a skip measured at the pace an earlier skip's check
	// kept in this kernel's loop or an alike one's, with as many blocks a
	// wave (stepRunner.paced: within that check's tolerance and spread):
	// that check stands for its own (CheckPeriod is that check's, Checked
	// true; its hits after it are not measured: CheckHits −1, HitsMoved
	// false — another wave's check hits are not this wave's), and it skips as far as leaves room for the blocks behind to
	// reach it, not for a check or the loop's last steps. Only blocks
	// of the classes the checked skip's blocks had (stepRunner.pacedBlocks).
	// (MI300X HGEMM 8192³: 304 blocks a wave in lockstep; each of its 7
	// waves skipped steps 22–111 of 128 at the same 0.9748 µs and each
	// check passed. Paced, the waves after the first skip steps 17–121.)
	Paced bool
	// Hits and CheckHits are the L2 hit fractions (bytes; −1: no
	// traffic, or no check measured: Paced) of the measured intervals and
	// of the check's: the skipped steps' bytes are divided at the measured
	// ones' rates, so far apart
	// (more than FastForward.Hits: HitsMoved) they say the bytes may be
	// off where the time is not (H100 ape-fp32b 8192³: 0.58–0.93 before a
	// skip, 0.38–0.56 after, in steps of the same pace).
	Hits, CheckHits float64
	HitsMoved       bool
}

// StepWait records how a grid's steps went where they could be skipped
// (FastForward.Steps): the steps its blocks simulated, the interval ends
// at which two windows of intervals had been measured (every resident
// block in its loop, none starting or finishing for 2·Measure intervals),
// and why no skip was taken at those: the intervals spread or the two
// windows' means apart beyond the tolerance (Unsteady), their cache hits
// or lanes' stall mix moved (Moved), a block still in its warm-up
// (WarmUp), too few steps left for a skip and its check (Short), or
// windows that would have skipped but for a pace unlike the kernel's
// checked one before the step that was measured past (Unpaced:
// stepRunner.paced); and the skips decided on one window at the kernel's
// checked pace (Paced: pacedStepSkip, which forms no two windows).
type StepWait struct {
	Grid                                    string
	Steps                                   int64
	Windows                                 int
	Unsteady, Moved, WarmUp, Short, Unpaced int
	Paced                                   int
	// Spread and Gap are the spread (the larger window's max − min) and
	// the gap (the difference of the windows' means), over their mean, of
	// the unsteady windows that came closest to the tolerance (the least
	// of the larger of spread/tolerance and gap/(tolerance/5)).
	Spread, Gap float64
}

// stepWait returns the running grid's StepWait (steps on).
func (gr *gridRunner) stepWait() *StepWait { return &gr.ff.stepWaits[len(gr.ff.stepWaits)-1] }

// StepCheckError stops a run whose step skip's check failed: the caller
// runs again, set up by Again.
type StepCheckError struct {
	Grid int // the grid's index in the program
	Skip StepSkip
	// Ahead marks a check made by the steps of block Block alone, which
	// finished before the check's intervals were in (stepDone).
	Ahead bool
	Block int
}

// Again sets ff up for the run made again after e, in a program of grids
// grids, and says what it changed (for the run's notes). The run is the
// same up to the start of the failed skip's lowest block (blocks start in
// order; a step marker takes no time), so the skips decided before it —
// checked, or left unchecked by a block's start as in any run — could
// stand; what the failure says about them depends on its direction.
//
// Slower steps than the skip stood for, the grid's first such failure:
// the failed grid and the grids after it decide their step skips only
// past twice the failed skip's step (at least two windows past it:
// FastForward.StepFloors). The steps it measured may have been the loop's
// start — MI300X Ape FP32-F 8192³'s waves run their first ~12 of 128
// steps at 0.84 µs, the rest at 0.97, and a skip measured on steps 3–11
// failed; without the floor the run made again simulated every step of
// its three product kernels (10 s; with it 6 s).
//
// Slower steps again: every block of the failed grid and of the grids
// after it simulates its steps. The kernel has slow stretches (V100's
// episodes, tens of steps 5–60 % slower) that skips taken on flat steps
// stand flat steps for, and its earlier skips' checks may simply not have
// met one (V100 HGEMM 8192³ came out 1.9 % short keeping them, against
// ±0.2 % stated).
//
// Faster steps: the kernel's pace fell (MI100 Markidis 8192³: 4.09 µs
// steps for eight waves, 5.0 µs from the ninth on as its waves fall
// apart, a skip on those failing at 4.35 µs) — the grid's blocks from the
// failed skip's lowest on, and the same blocks of the later grids (a
// program's kernels are often alike), simulate their steps; the skips
// decided before that block started stand (a skip whose blocks included
// it is not taken again). Each failure excludes blocks below the earlier
// exclusions of its grid (a skip needs every resident block's markers), so
// the runs made again are bounded, if by more than one a grid. Where the
// failed skip's blocks include the grid's first, that is every block (T4's
// kernels start each wave with ~30 steps at 2048 ns, then run at
// ~1150 ns: a run made again that took no skip at the failed one's pace
// moved other runs' wave skips, B200 ootomo 8192³ from −0.73 to −1.07 % of
// the full run; docs/design-notes.md, "What a failed check keeps").
func (e *StepCheckError) Again(ff *FastForward, grids int) string {
	later := max(grids, e.Grid+1)
	if e.Skip.CheckPeriod > e.Skip.Period && !slices.ContainsFunc(ff.StepFloors, func(x StepFloor) bool { return x.Grid == e.Grid }) {
		floor := max(2*e.Skip.From, e.Skip.From+2*ff.Measure)
		ff.StepFloors = slices.Clip(ff.StepFloors)
		for g := e.Grid; g < later; g++ {
			ff.StepFloors = append(ff.StepFloors, StepFloor{Grid: g, Step: floor})
		}
		what := "this kernel's"
		if later > e.Grid+1 {
			what = "this kernel's and the later kernels'"
		}
		return fmt.Sprintf("%s step skips measured past step %d (its steps had turned slower after the measured ones, at step %d: those may have been its loop's start)", what, floor, e.Skip.From)
	}
	from := 0
	if e.Skip.CheckPeriod < e.Skip.Period {
		from = e.Skip.First
	}
	ff.NoSteps = slices.Clip(ff.NoSteps)
	for g := e.Grid; g < later; g++ {
		ff.NoSteps = append(ff.NoSteps, BlockRange{Grid: g, From: from, To: math.MaxInt})
	}
	what, after := "the steps of this kernel", ", and of the kernels after it,"
	if from > 0 {
		what, after = fmt.Sprintf("the steps of this kernel's blocks from %d on", from), ", and of the same blocks of the kernels after it,"
	}
	if later > e.Grid+1 {
		what += after
	}
	if from > 0 {
		return fmt.Sprintf("%s simulated (its steps had turned faster: the skips decided before block %d started stand)", what, from)
	}
	return what + " simulated"
}

func (e *StepCheckError) Error() string {
	by := ""
	if e.Ahead {
		by = fmt.Sprintf(" (block %d's, which finished before the other blocks' steps were in)", e.Block)
	}
	return fmt.Sprintf("fast-forward: kernel %s: the steps after a step skip at %v took %v each%s, the skip stood for %v", e.Skip.Grid, e.Skip.At, e.Skip.CheckPeriod, by, e.Skip.Period)
}

// stepCTA is a resident CTA of a grid with step markers.
type stepCTA struct {
	cur  *isa.StepCursor
	seen bool // passed a marker
	// its last marker: step k of n, steps [from, to) repeating with period
	k, n, period, from, to int
	// the decided skip: drop steps at the marker of step at (the leader's
	// next: an aligned step skip), 0: none
	drop, at int
	slot     int // its index in the snapshots' steps (stepSnap.ks)
	// rate is the steps it took an interval in the last skip's measured
	// intervals; resumed the time it resumed after that skip, at step
	// resumedK (0: not yet); mark the time it passed the marker of step
	// markK since, the last before its loop's last two steps (stepDone).
	rate            float64
	resumed, mark   sim.Time
	resumedK, markK int
}

// stepRunner is the step-skip state of the running grid.
type stepRunner struct {
	on      bool // the running grid has step markers and may skip steps
	ctas    map[int]*stepCTA
	bySlot  []*stepCTA // ctas by slot (nil: a free slot)
	seen    int        // CTAs in ctas that passed a marker
	marks   int        // markers since the last snapshot
	snaps   []stepSnap
	free    []stepSnap // snapshots whose storage the next ones reuse
	pending int        // CTAs yet to take the decided skip
	settle  int        // intervals after a skip not measured (the CTAs settling)
	period  int        // the skip's period (lcm of the CTAs' periods)
	check   int        // the skip being checked (index in fastForward.steps), −1: none
	// paced is the last skip whose check passed, in this grid or in an
	// earlier one whose loop is alike (stepsAlike), pacedGrid that grid's
	// index and pacedWave its blocks a wave (paced nil: none): the pace
	// the loop was checked to keep and the step it was measured past
	// (stepInterval), where a core holds as many blocks
	paced                *StepSkip
	pacedGrid, pacedWave int
	// pacedClasses are the classes (isa.Grid.Class) of the blocks
	// resident at paced's check, sorted (pacedBlocks)
	pacedClasses []int
	// the skip being taken: the measured increments per skipped byte of
	// global memory of the cache counters (at ffTrafficHBMRead HBM's
	// reads beyond those no cache served: overFetched), and the bytes
	// skipped so far
	rates           [ffGlobal]float64
	gmRead, gmWrite int64
}

// stepSnap is a snapshot at the end of an interval: the counters, and the
// caches' sector allocations (Chip.appendCacheAllocs).
type stepSnap struct {
	ffSnap
	allocs []int64
	ks     []int // each resident CTA's last marker's step, by slot
}

// clear drops the snapshots from i on, keeping their storage.
func (sr *stepRunner) clear(i int) {
	sr.free = append(sr.free, sr.snaps[i:]...)
	sr.snaps = sr.snaps[:i]
}

// reset starts grid g's step state.
func (sr *stepRunner) reset(on bool) {
	sr.on, sr.seen, sr.marks, sr.pending, sr.check, sr.settle = on, 0, 0, 0, -1, 0
	sr.clear(0)
	sr.bySlot = sr.bySlot[:0]
	if on {
		sr.ctas = map[int]*stepCTA{}
	} else {
		sr.ctas = nil
	}
}

// carryPace keeps the checked pace of an earlier grid for grid g (index
// cur) where their loops are alike (a program's product GEMMs: SGEMM-cube
// 8192³'s hh on the MI300X ran its first wave's steps 4–12 at 0.835 µs
// where hl and lh had checked 0.9748, and a skip measured there failed;
// Ape FP32-F's lh likewise after its hh), and forgets it otherwise.
func (gr *gridRunner) carryPace(g *isa.Grid) {
	sr := &gr.steps
	if sr.paced != nil && (!sr.on || !stepsAlike(&gr.grids[sr.pacedGrid], g)) {
		sr.paced = nil
	}
}

// stepFloor returns the step every resident CTA of the running grid must
// have passed for a step skip (FastForward.StepFloors; 0: none).
func (gr *gridRunner) stepFloor() int {
	floor := 0
	for _, x := range gr.ff.StepFloors {
		if x.Grid == gr.cur {
			floor = max(floor, x.Step)
		}
	}
	return floor
}

// stepsOn reports whether grid g (index cur) may skip steps: not when its
// first block is excluded (an exclusion runs to the grid's end, so that is
// every block: StepCheckError.Again).
func (gr *gridRunner) stepsOn(g *isa.Grid) bool {
	return gr.ff != nil && gr.ff.Steps && g.Steps != nil && !gr.noSteps(0)
}

// noSteps reports whether block c of the running grid is excluded from
// step skips (FastForward.NoSteps).
func (gr *gridRunner) noSteps(c int) bool {
	return slices.ContainsFunc(gr.ff.NoSteps, func(x BlockRange) bool { return x.Grid == gr.cur && c >= x.From && c < x.To })
}

// stepStream returns the stream CTA c of g starts with: with step skips,
// its Steps stream, read through a cursor the chip keeps; a block
// excluded from them (FastForward.NoSteps) runs its plain stream, and no
// step skip starts while it is resident.
func (gr *gridRunner) stepStream(g *isa.Grid, c int) isa.Stream {
	sr := &gr.steps
	if !sr.on {
		return g.CTA(c)
	}
	if gr.noSteps(c) {
		sr.changed() // (intervals need every resident CTA's markers)
		return g.CTA(c)
	}
	s := &stepCTA{cur: &isa.StepCursor{}, slot: slices.Index(sr.bySlot, nil)} // (a free slot, else a new one)
	if s.slot < 0 {
		s.slot, sr.bySlot = len(sr.bySlot), append(sr.bySlot, nil)
	}
	sr.bySlot[s.slot] = s
	sr.ctas[c] = s
	sr.changed()
	return g.Steps(c, s.cur)
}

// changed restarts the intervals when the resident CTAs change; a check
// in progress is dropped (its skip stays unchecked: the intervals after
// would measure other CTAs' steps, a new wave's first ones).
func (sr *stepRunner) changed() {
	sr.clear(0)
	sr.marks, sr.check, sr.settle = 0, -1, 0
}

// stepDone forgets finished CTA c. A check in progress is dropped (the
// skip stays unchecked) — unless the CTA finishing first ran its steps
// after the skip at a pace the skip does not keep: the skip left room for
// its check at the pace measured, so a CTA finishing before the check's
// intervals are in may have run ahead of it, and its own steps are then
// the check, failed (a grid's third wave whose steps turn four times
// lighter inside the skip, its blocks started apart: those ahead resumed
// and ran light steps while those behind ran heavy ones to reach the
// skip, and finished before the check; its skip had stood unchecked and
// the run came out 4.8 % long: arch/gpu TestStepSkipCheckFailsAhead).
func (gr *gridRunner) stepDone(c int) {
	sr := &gr.steps
	s, ok := sr.ctas[c]
	if !ok {
		return // a block excluded from step skips (none was measured while it ran: Step)
	}
	if sr.check >= 0 && s.resumedK > 0 && s.markK-s.resumedK >= 2 && s.rate > 0 {
		// Its pace, in the intervals of the measured steps (an interval
		// was rate steps of it; rounded, not fused into keeps's
		// subtraction: .ci/fused-float).
		sk := &gr.ff.steps[sr.check]
		pace := float64(float64(s.mark-s.resumed) / float64(s.markK-s.resumedK) * s.rate)
		if !sk.keeps(pace, gr.ff.Tolerance) {
			sk.CheckPeriod, sk.CheckHits = sim.Time(math.Round(pace)), -1
			sr.check = -1
			gr.chip.Fail(&StepCheckError{Grid: gr.cur, Skip: *sk, Ahead: true, Block: c})
			return
		}
	}
	if s.seen {
		sr.seen--
	}
	if s.drop > 0 { // cannot happen: a skip leaves every CTA steps after it
		gr.chip.Fail(fmt.Errorf("fast-forward: CTA %d finished before taking its step skip", c))
	}
	delete(sr.ctas, c)
	sr.bySlot[s.slot] = nil
	sr.changed()
}

// Step tells the chip that CTA cta of the running grid passed step marker
// in (isa.OpStep) at now; it returns the step the CTA resumes at when
// fast-forward skips steps here (the CTA's generator is told through its
// cursor; the core drops what was generated before and counts the skipped
// steps' work, StepWork), else 0.
func (c *Chip) Step(cta int, in *isa.Instr, now sim.Time) int {
	gr := c.grids
	if gr == nil || !gr.steps.on {
		return 0
	}
	sr := &gr.steps
	s := sr.ctas[cta]
	if s == nil {
		return 0
	}
	if !s.seen {
		s.seen = true
		sr.seen++
		sr.changed() // (the CTAs in their loops)
	}
	s.k, s.n, s.period, s.from, s.to = in.M, in.N, in.K, in.Rows, in.Cols
	if s.k <= s.to-2 && s.resumedK > 0 {
		s.mark, s.markK = now, s.k // (not the loop's last steps, which fetch nothing)
	}
	to := 0
	if s.drop > 0 && s.k >= s.at {
		to = s.k + s.drop
		if s.k != s.at || s.k < s.from || to > s.to || s.drop%s.period != 0 {
			c.Fail(fmt.Errorf("fast-forward: CTA %d at step %d cannot skip %d steps (steps %d–%d repeat with period %d)", cta, s.k, s.drop, s.from, s.to, s.period))
			return 0
		}
		// The CTA resumes at once, with step to (whose marker the core
		// takes without telling: the step starts now, as this one would
		// have). Intervals count again when every CTA has resumed.
		s.cur.Ask(to)
		s.drop = 0
		s.k = to
		s.resumed, s.resumedK, s.mark, s.markK = now, to, now, to
		gr.stepWait().Steps++              // (step to runs; its marker is not told)
		if sr.pending--; sr.pending == 0 { // (its work comes next: StepWork flushes)
			sr.clear(0)
			sr.marks, sr.settle = 0, sr.period+1
		}
		return to
	}
	gr.stepWait().Steps++
	if sr.pending > 0 || sr.seen < gr.running || len(sr.ctas) != gr.running {
		return 0
	}
	if sr.marks++; sr.marks < sr.seen {
		return 0
	}
	sr.marks = 0
	c.stepInterval(now)
	return 0
}

// stepInterval snapshots the counters at the end of an interval and
// checks the last skip or decides the next.
func (c *Chip) stepInterval(now sim.Time) {
	gr, ff := c.grids, c.grids.ff
	sr := &gr.steps
	// Into the storage of a dropped snapshot (every core's counters at
	// each interval, allocated anew, took a tenth of a step-skipping run:
	// RTX PRO 6000 sgemm-cube 8192³, 188 SMs).
	var x stepSnap
	if n := len(sr.free); n > 0 {
		x = sr.free[n-1]
		sr.free = sr.free[:n-1]
	}
	ks := slices.Grow(x.ks[:0], len(sr.bySlot))[:len(sr.bySlot)]
	for i, s := range sr.bySlot {
		if s != nil {
			ks[i] = s.k
		}
	}
	sr.snaps = append(sr.snaps, stepSnap{c.ffSnapshotInto(now, x.ints, x.floats), c.appendCacheAllocs(x.allocs[:0]), ks})
	if sr.settle > 0 {
		// The CTAs' first steps after a skip run unevenly (H100
		// sgemm-cube 8192³: a step of 672 ns and one of 480 among steps of
		// 579, four to six steps after; with a check of the next four
		// intervals, one in three failed): measure from the snapshot
		// after them.
		sr.settle--
		last := len(sr.snaps) - 1
		sr.snaps[0], sr.snaps[last] = sr.snaps[last], sr.snaps[0]
		sr.clear(1)
		return
	}
	if len(sr.snaps) > 2*ff.Measure+1 {
		sr.free = append(sr.free, sr.snaps[0])
		sr.snaps = append(sr.snaps[:0], sr.snaps[1:]...)
	}
	n := len(sr.snaps)
	if sr.check >= 0 {
		if n < ff.Measure+1 {
			return
		}
		sk := &ff.steps[sr.check]
		sr.check = -1
		a, b := &sr.snaps[n-1-ff.Measure], &sr.snaps[n-1]
		sk.CheckPeriod = (b.t - a.t) / sim.Time(ff.Measure)
		sk.CheckHits = spanHits(&a.ffSnap, &b.ffSnap, ffL2Hit)
		sk.HitsMoved = !fractionsAgree(sk.Hits, sk.CheckHits, ff.Hits)
		sk.Checked = sk.keeps(float64(sk.CheckPeriod), ff.Tolerance)
		if !sk.Checked {
			c.Fail(&StepCheckError{Grid: gr.cur, Skip: *sk})
			return
		}
		p := *sk
		sr.paced, sr.pacedGrid, sr.pacedWave = &p, gr.cur, gr.wave
		sr.pacedClasses = gr.residentClasses(sr.pacedClasses[:0])
		// The check's intervals may measure the next skip (the CTAs'
		// steps left after the first rarely allow one).
	}
	if c.pacedStepSkip(now) {
		return // (one window at the kernel's checked pace)
	}
	// Measured: the last 2·Measure intervals, as two windows of Measure
	// whose durations each spread within the tolerance and whose means
	// agree within a fifth of it. A skip freezes the CTAs' state (their
	// phases, the caches' contents) where it was measured, and the check
	// after it goes on from there: a slow trend — a wave's CTAs, started
	// together, drifting apart from contending for memory for a third of
	// their steps (A100 HGEMM with register staging, 2048×2048×4096:
	// intervals from ~900 down to 726 ns, ±10 % noise; measured on one
	// window within the 5 % of wave skips, its first skip stood for
	// 819 ns and the kernel came out 4 % long) — must be over; intervals
	// that swing in a pattern about a steady mean (B200: 362, 368, 370 ns
	// on end) are steady.
	w := 2 * ff.Measure
	if n < w+1 {
		return
	}
	s := sr.snaps[n-w-1:]
	d := durations(s)
	total := fsum(d)
	wait := gr.stepWait()
	wait.Windows++
	if ok, spread, gap := stepWindowsSteady(d, ff.Measure, ff.Tolerance); !ok {
		excess := func(s, g float64) float64 { return max(s, stepSteadiness*g) }
		if wait.Unsteady == 0 || excess(spread, gap) < excess(wait.Spread, wait.Gap) {
			wait.Spread, wait.Gap = spread, gap
		}
		wait.Unsteady++
		return
	}
	if !c.windowsSteady(&s[0].ffSnap, &s[ff.Measure].ffSnap, &s[w].ffSnap, ff.Mix, ff.Hits) {
		wait.Moved++
		return
	}
	floor, unpaced, paced := gr.stepFloor(), false, (*StepSkip)(nil)
	if p := sr.checkedPace(gr.wave); p != nil && p.keeps(total/float64(w), ff.Tolerance) {
		if gr.pacedBlocks() {
			paced = p
		}
	} else if p != nil && p.From > floor {
		// Windows at another pace than the one the kernel's loop was
		// checked to keep are measured past the step that skip was
		// (a wave's first steps may run at a pace of their own: MI300X
		// HGEMM 8192³'s first wave skipped at step 22, checked at
		// 0.9748 µs; its second wave's steps 4–12 ran at 0.8425 µs and
		// a skip measured there failed its check at 0.9748 — a run made
		// again, 1.3 s of its 3.9).
		floor, unpaced = p.From, true
	}
	rate := stepRate(s[0].ks, s[w].ks, sr.bySlot, w)
	check := ff.Measure
	if paced != nil {
		check = 0
	}
	steps, at, period, warming := stepsToSkip(sr.ctas, ff.Measure, check, ff.WarmUp, floor, rate)
	if steps == 0 {
		if unpaced {
			// Passed over for its pace where it would have skipped
			// (Unpaced), else for the reason it would have had anyway.
			var would int
			if would, _, _, warming = stepsToSkip(sr.ctas, ff.Measure, check, ff.WarmUp, gr.stepFloor(), rate); would > 0 {
				wait.Unpaced++
				return
			}
		}
		if warming {
			wait.WarmUp++
		} else {
			wait.Short++
		}
		return
	}
	c.takeStepSkip(now, s, d, steps, at, period, paced)
}

// durations returns the durations of the intervals between the
// snapshots s.
func durations(s []stepSnap) []float64 {
	d := make([]float64, len(s)-1)
	for i := range d {
		d[i] = float64(s[i+1].t - s[i].t)
	}
	return d
}

// pacedStepSkip decides a step skip on one window of Measure intervals
// (stepInterval wants two) where the running grid's loop has a checked
// pace (stepRunner.paced): the window's intervals spread within the
// tolerance, their mean keeps that pace, their two halves agree in cache
// hits and lanes' stall mix, and every block is past its warm-up with
// room left for a skip. The two windows guard against a trend the
// measured state would freeze; the checked pace is the steady state such
// a trend would end in, and the checked skip's check stands for this
// one's (StepSkip.Paced). Passed-over windows are not counted
// (StepWait): the two windows judge them.
func (c *Chip) pacedStepSkip(now sim.Time) bool {
	gr, ff := c.grids, c.grids.ff
	sr := &gr.steps
	p, n := sr.checkedPace(gr.wave), len(sr.snaps)
	if p == nil || n < ff.Measure+1 {
		return false
	}
	s := sr.snaps[n-ff.Measure-1:]
	d := durations(s)
	mean := fsum(d) / float64(len(d))
	if slices.Max(d)-slices.Min(d) > ff.Tolerance*mean || !p.keeps(mean, ff.Tolerance) || !gr.pacedBlocks() ||
		!c.windowsSteady(&s[0].ffSnap, &s[ff.Measure/2].ffSnap, &s[ff.Measure].ffSnap, ff.Mix, ff.Hits) {
		return false
	}
	rate := stepRate(s[0].ks, s[ff.Measure].ks, sr.bySlot, ff.Measure)
	steps, at, period, _ := stepsToSkip(sr.ctas, ff.Measure, 0, ff.WarmUp, gr.stepFloor(), rate)
	if steps == 0 {
		return false
	}
	gr.stepWait().Paced++
	c.takeStepSkip(now, s, d, steps, at, period, p)
	return true
}

// residentClasses appends to x the classes (isa.Grid.Class) of the
// running grid's resident blocks, sorted, each once (nil without classes).
func (gr *gridRunner) residentClasses(x []int) []int {
	g := &gr.grids[gr.cur]
	if g.Class == nil {
		return nil
	}
	for c := range gr.steps.ctas {
		x = append(x, g.Class(c))
	}
	slices.Sort(x)
	return slices.Compact(x)
}

// pacedBlocks reports whether the running grid's resident blocks run the
// steps the checked pace's blocks ran: of the classes (isa.Grid.Class)
// those had (stepRunner.pacedClasses; a grid without classes: no). A
// skip an earlier check stands for takes that check's word for steps it
// did not measure after itself, which holds for the same instructions
// only (a grid's third wave whose steps after the 120th do four products
// where the first waves' did one: arch/gpu TestStepSkipCheckFailsSlowerLate).
func (gr *gridRunner) pacedBlocks() bool {
	sr := &gr.steps
	g := &gr.grids[gr.cur]
	if g.Class == nil || len(sr.pacedClasses) == 0 {
		return false
	}
	for c := range sr.ctas {
		if _, ok := slices.BinarySearch(sr.pacedClasses, g.Class(c)); !ok {
			return false
		}
	}
	return true
}

// checkedPace returns the running grid's checked pace (stepRunner.paced)
// where it was kept with as many blocks a wave as now run, else nil.
func (sr *stepRunner) checkedPace(wave int) *StepSkip {
	if sr.paced != nil && sr.pacedWave == wave {
		return sr.paced
	}
	return nil
}

// takeStepSkip takes a step skip of steps steps from step at (period: the
// CTAs' periods' lcm), measured over the intervals between the snapshots
// s (their durations d), checked after it or, for paced (not nil), by that
// earlier skip's check (StepSkip.Paced).
func (c *Chip) takeStepSkip(now sim.Time, s []stepSnap, d []float64, steps, at, period int, paced *StepSkip) {
	gr, ff := c.grids, c.grids.ff
	sr := &gr.steps
	w := len(d)
	lo, hi, total := slices.Min(d), slices.Max(d), fsum(d)
	first, last := &s[0], &s[len(s)-1]
	scale := float64(steps) / float64(w)
	shift, ok := c.addShift(ff, now, total*scale, "the skipped k-steps of kernel "+gr.grids[gr.cur].Name)
	if !ok {
		return
	}
	if ff.ints == nil {
		ff.ints = make([]int64, len(last.ints))
		ff.floats = make([]float64, len(last.floats))
	}
	win := c.ffAdd(ff, &first.ffSnap, &last.ffSnap, scale, scale, shift)
	sr.rates = [ffGlobal]float64{}
	if gm := win[ffGMRead] + win[ffGMWrite]; gm > 0 {
		for _, k := range []int{ffL2Hit, ffL2Miss, ffLLCHit, ffLLCMiss, ffTrafficL2Read, ffTrafficLLCRead} {
			sr.rates[k] = win[k] / gm
		}
		sr.rates[ffTrafficHBMRead] = overFetched(win) / gm // (the bytes beyond the reads no cache served)
	}
	// The skipped steps' accesses would have pushed older lines out of
	// the caches: age them by the sectors allocated in the measured
	// intervals, times the skipped steps per measured one — but for the
	// sectors of the last intervals, as many as the CTAs are apart and a
	// period and an interval more: those behind the leader read them on
	// their way to the skip (an aligned skip: as in the full run they find
	// what the leader fetched, before the skip and after it).
	a, b := first.allocs, last.allocs
	age, keep := make([]int64, len(b)), make([]int64, len(b))
	spread := at - 1 - stepsBehind(sr.ctas)
	for i := range b {
		age[i] = int64(math.Round(float64(b[i]-a[i]) * scale))
		keep[i] = int64(math.Round(float64(b[i]-a[i]) / float64(w) * float64(spread+period+1)))
	}
	if g := &gr.grids[gr.cur]; c.llc != nil && c.kind.GMRead != nil && g.Steps != nil {
		// The LLC gets the lines the skipped steps read, not an ageing
		// that evicts as many and installs none.
		age[len(c.l2s)] = 0
		c.installSkipped(g, slices.Sorted(maps.Keys(sr.ctas)), at, steps, period)
	}
	c.ageCaches(age, keep)
	for _, x := range sr.ctas {
		x.drop, x.at = steps, at
		x.rate, x.resumedK = ctaRate(first.ks, last.ks, x.slot, w), 0
	}
	sr.pending, sr.period = len(sr.ctas), period
	lowest := math.MaxInt
	for i := range sr.ctas {
		lowest = min(lowest, i)
	}
	ff.steps = append(ff.steps, StepSkip{Grid: gr.grids[gr.cur].Name, At: now, Steps: steps, From: at, CTAs: len(sr.ctas), First: lowest,
		Period: sim.Time(math.Round(total / float64(w))), Spread: sim.Time(math.Round(hi - lo)), Shift: shift,
		Events: uint64(math.Round(win[ffEvents])), Hits: spanHits(&first.ffSnap, &last.ffSnap, ffL2Hit), CheckHits: -1})
	if sk := &ff.steps[len(ff.steps)-1]; paced != nil {
		sk.CheckPeriod, sk.Checked, sk.Paced = paced.CheckPeriod, true, true
	} else {
		sr.check = len(ff.steps) - 1
	}
	sr.clear(0)
}

// installSkipped installs in the LLC the lines that CTAs ctas of grid g
// read in their steps [at, at+steps) of period period (stepReads), step
// by step across the CTAs in block order, each tile the blocks sharing it
// read in a step once, counting nothing (mem.L2.Install2D): what the
// skipped steps leave in it. Where that is more than installReach times
// its capacity, only the last periods' that many bytes go in (an LRU cache
// holds the same lines after them but in a few sets). Ageing, which
// evicts as many lines as they would have fetched and installs none, left
// the next kernel other hits where its data nearly fits (MI300X Ape FP32-F
// 6144×8192×4096: its second GEMM 12.6 % short; docs/design-notes.md, "A
// second shape, held out"). (The L2s are aged: installing in them too was
// tried twice, and not kept, there.)
func (c *Chip) installSkipped(g *isa.Grid, ctas []int, at, steps, period int) {
	reads := make([]stepReads, len(ctas))
	gen := func(from, to int) {
		for i := from; i < to; i++ {
			reads[i] = c.stepReads(g, ctas[i], at, steps, period)
		}
	}
	if c.Ahead() != nil && len(ctas) > 1 {
		// Half the streams on the second processor, as the chip's
		// streams are read ahead (each CTA's own slot: the same reads).
		var wg sync.WaitGroup
		wg.Go(func() { gen(len(ctas)/2, len(ctas)) })
		gen(0, len(ctas)/2)
		wg.Wait()
	} else {
		gen(0, len(ctas))
	}
	seen := map[int64]GMSpan{} // by address: a tile's span
	// step calls f with each tile the CTAs read in step k, once.
	step := func(k int, f func(GMSpan)) {
		clear(seen)
		for i := range reads {
			reads[i].each(k, func(sp GMSpan) {
				if x, ok := seen[sp.Addr]; !ok || x != sp {
					seen[sp.Addr] = sp
					f(sp)
				}
			})
		}
	}
	// The bytes of the last period (a period's steps repeat but for
	// addresses, isa.Step: each period as many), and the periods before
	// the end that reach the limit, and one.
	p, n := max(period, 1), int64(0)
	for k := max(steps-p, 0); k < steps; k++ {
		step(k, func(sp GMSpan) { n += int64(sp.Rows) * sp.RowBytes })
	}
	first := 0
	if limit := installReach * c.llc.Capacity(); n > 0 && limit/n < int64(steps/p) {
		first = steps - p*int(limit/n+1)
	}
	for k := first; k < steps; k++ {
		step(k, func(sp GMSpan) { c.llc.Install2D(sp.Addr, sp.Rows, sp.RowBytes, sp.Stride) })
	}
}

// installReach is the most bytes a step skip installs in a cache, in its
// capacities (Chip.installSkipped): that many distinct bytes of the last
// steps fill every set with sectors of their own but about one in 4·10^7
// (16 ways: a set's share a Poisson draw of mean 48, fewer than 16; 8
// ways, one in 2·10^4), so the earlier steps' lines would be evicted
// anyway.
const installReach = 3

// stepReads is what a CTA reads in each of a run of its steps: those of
// base, then, where there are more, those of base's last period advanced
// by delta each period.
type stepReads struct {
	base   [][]GMSpan
	period int
	delta  [][]int64 // by step of the period, by read
}

// each calls f with each read of the run's step k, in order.
func (r *stepReads) each(k int, f func(GMSpan)) {
	if k < len(r.base) {
		for _, sp := range r.base[k] {
			f(sp)
		}
		return
	}
	p := r.period
	last := len(r.base) - p + (k-len(r.base)+p)%p // base's step in its last period alike k
	m := int64((k - last) / p)
	for i, sp := range r.base[last] {
		sp.Addr += m * r.delta[last%p][i]
		f(sp)
	}
}

// stepReads returns what CTA cta of grid g reads (Kind.GMRead) in each of
// its steps [at, at+steps), whose instructions repeat with period (the
// steps a step skip skips: isa.Step). Its stream is generated anew,
// resumed at step at, for three periods; where their reads advance by the
// same addresses from one period to the next (a GEMM's tiles along k) and
// the last period, generated too, is where that leads, the rest follow on
// so, else the rest is generated too. (The steps of a period repeat but
// for addresses, isa.Step: as many reads, of the same shapes.)
func (c *Chip) stepReads(g *isa.Grid, cta, at, steps, period int) stepReads {
	// gen generates the reads of steps [from, from+n).
	gen := func(from, n int) [][]GMSpan {
		out := make([][]GMSpan, n)
		cur := &isa.StepCursor{}
		cur.Ask(from)
		k := -1
		// One instruction's room for the kind to read (GMRead takes its
		// address through an interface: a loop variable's would escape,
		// an allocation per instruction generated).
		buf := new(isa.Instr)
		for in := range g.Steps(cta, cur) {
			if in.Op == isa.OpStep {
				if k = in.M; k >= from+n {
					break
				}
				continue
			}
			if k < from {
				continue // its prologue, before the first marker
			}
			*buf = in
			if sp, ok := c.kind.GMRead(buf); ok {
				out[k-from] = append(out[k-from], sp)
			}
		}
		return out
	}
	p := max(period, 1)
	all := func() stepReads { return stepReads{base: gen(at, steps), period: p} }
	if steps <= 4*p {
		return all()
	}
	r := stepReads{base: gen(at, 3*p), period: p, delta: make([][]int64, p)}
	// The delta of each read from one period to the next, the same twice,
	// its shape the same.
	shape := func(sp GMSpan) GMSpan { sp.Addr = 0; return sp }
	for j := range p {
		a, b, e := r.base[j], r.base[j+p], r.base[j+2*p]
		if len(a) != len(b) || len(b) != len(e) {
			return all()
		}
		for i := range a {
			d := b[i].Addr - a[i].Addr
			if e[i].Addr-b[i].Addr != d || shape(a[i]) != shape(b[i]) || shape(b[i]) != shape(e[i]) {
				return all()
			}
			r.delta[j] = append(r.delta[j], d)
		}
	}
	// The last period as generated, as extrapolated: else all of them.
	last := gen(at+steps-p, p)
	for j := range p {
		i, same := 0, true
		r.each(steps-p+j, func(sp GMSpan) {
			same = same && i < len(last[j]) && last[j][i] == sp
			i++
		})
		if !same || i != len(last[j]) {
			return all()
		}
	}
	return r
}

// keeps reports whether a pace of period (picoseconds a step) is the
// skip's, as its check judges: within the tolerance of its period and its
// measured spread.
func (sk *StepSkip) keeps(period, tolerance float64) bool {
	return math.Abs(period-float64(sk.Period)) <= float64(tolerance*float64(sk.Period))+float64(sk.Spread)
}

// stepsToSkip returns the steps every CTA of ctas skips, from step at
// (the leading CTA's next marker: an aligned step skip), and their period,
// or 0 where they may not (stepInterval): every CTA past its warm-up
// (warmUp of its steps, its repeating steps' first, and step floor: the
// grid's FastForward.StepFloors), a multiple of the CTAs' periods, at
// least two windows of measure, and leaving the leading CTA, after the
// skip, room for those behind to reach at (as many intervals as they are
// steps apart), the check's settling (a period and an interval) and its
// check intervals (check: Measure; 0 for a skip an earlier check stands
// for, StepSkip.Paced, which leaves room only for those behind to reach at
// and an interval, and a period) at rate steps an
// interval (the most a CTA took in the measured windows, at least one: an
// interval is a step of each in the mean, and the leading CTAs must not
// reach the loop's end during the check — H100 ape-int16 8192³'s second
// waves: CTAs 7 steps apart, checks 9 % fast with a margin of 6 steps),
// then two periods and two steps (the loop's last steps, which fetch
// nothing, run faster) before its repeating steps end.
//
// Every CTA skips the same steps: those behind the leader take the skip
// when they reach at, having read on their way what the leader fetched
// before it, and find after it what the leader fetched after — as in the
// full run, where they read what the leader fetched. Until 2026-12-05 each
// CTA skipped from its own next marker, so a CTA s steps behind resumed s
// steps behind the leader's resume, and nobody had fetched the s steps
// between: its misses cost the L2's bandwidth and the steps after the skip
// ran slower than the measured ones (MI300X ape-fp32f 8192³: 0.97 against
// 0.84 µs, its check failing; docs/design-notes.md, "Aligned step skips").
func stepsToSkip(ctas map[int]*stepCTA, measure, check int, warmUp float64, floor int, rate float64) (steps, at, period int, warming bool) {
	period = 1
	lead := math.MinInt
	for _, x := range ctas {
		if x.k < max(x.from+1, int(math.Ceil(warmUp*float64(x.n))), floor) || x.period < 1 {
			return 0, 0, 0, true
		}
		period = lcm(period, x.period)
		lead = max(lead, x.k)
	}
	at = lead + 1
	spread := lead - stepsBehind(ctas)
	// Intervals for those behind to reach at, and one; a period to spare.
	intervals, end := spread+1, period
	if check > 0 {
		// The check's settling (a period) and intervals, and the loop's
		// last steps kept out of them.
		intervals, end = intervals+period+check, 2*period+2
	}
	need := int(math.Ceil(rate*float64(intervals))) + end
	steps = math.MaxInt
	for _, x := range ctas {
		steps = min(steps, x.to-at-need)
	}
	steps = steps / period * period
	if steps < 2*measure || steps <= 0 {
		return 0, 0, 0, false
	}
	return steps, at, period, false
}

// stepsBehind returns the last marker's step of the CTA furthest behind.
func stepsBehind(ctas map[int]*stepCTA) int {
	k := math.MaxInt
	for _, x := range ctas {
		k = min(k, x.k)
	}
	return k
}

// stepRate returns the most steps a resident CTA (live, by slot) took an
// interval over the n intervals from the snapshot of steps first to that
// of last (stepSnap.ks), at least one: a CTA ahead of the others by its
// start need not be ahead by its pace (stepsToSkip).
func stepRate(first, last []int, live []*stepCTA, n int) float64 {
	rate := 1.0
	for i, x := range live {
		if x != nil {
			rate = max(rate, ctaRate(first, last, i, n))
		}
	}
	return rate
}

// ctaRate returns the steps the CTA in slot took an interval over the n
// intervals from the snapshot of steps first to that of last.
func ctaRate(first, last []int, slot, n int) float64 {
	return float64(last[slot]-first[slot]) / float64(n)
}

// stepWindowsSteady reports whether the durations d of two windows of
// measure intervals each spread within tol of their mean and have means
// that agree within tol/stepSteadiness of it (stepInterval); it also
// returns the larger window's spread (max − min) and the difference of
// the windows' means, over the mean of all (StepWait's record).
func stepWindowsSteady(d []float64, measure int, tol float64) (ok bool, spread, gap float64) {
	for _, h := range [][]float64{d[:measure], d[measure:]} {
		spread = max(spread, slices.Max(h)-slices.Min(h))
	}
	gap = math.Abs(fsum(d[:measure])-fsum(d[measure:])) / float64(measure)
	mean := fsum(d) / float64(len(d))
	return spread <= tol*mean && gap <= tol/stepSteadiness*mean, spread / mean, gap / mean
}

// StepWork adds the global-memory bytes and matrix flops of a CTA's
// skipped steps (Core's count of their work, after Step told it to skip;
// the cores add their own counters); after the skip's last CTA's, the
// cache counters of the skip's bytes (flushStepWork).
func (c *Chip) StepWork(gmRead, gmWrite int64, flops float64) {
	ff := c.grids.ff
	ff.ints[ffGMRead] += gmRead
	ff.ints[ffGMWrite] += gmWrite
	ff.ints[ffTrafficGMRead] += gmRead
	ff.ints[ffTrafficGMWrite] += gmWrite
	ff.ints[ffTrafficHBMWrite] += gmWrite
	ff.floats[0] += flops
	sr := &c.grids.steps
	sr.gmRead += gmRead
	sr.gmWrite += gmWrite
	if sr.pending == 0 { // the last CTA of the skip
		c.flushStepWork()
	}
}

// flushStepWork adds the cache counters of the skip every CTA has taken:
// its global-memory bytes at the measured rates.
func (c *Chip) flushStepWork() {
	sr, ff := &c.grids.steps, c.grids.ff
	var served int64
	for _, k := range []int{ffL2Hit, ffL2Miss, ffLLCHit, ffLLCMiss, ffTrafficL2Read, ffTrafficLLCRead} {
		x := int64(math.Round(sr.rates[k] * float64(sr.gmRead+sr.gmWrite)))
		ff.ints[k] += x
		if k == ffTrafficL2Read || k == ffTrafficLLCRead {
			served += x
		}
	}
	ff.ints[ffTrafficHBMRead] += sr.gmRead - served + int64(math.Round(sr.rates[ffTrafficHBMRead]*float64(sr.gmRead+sr.gmWrite)))
	sr.gmRead, sr.gmWrite = 0, 0
}

// lcm is the least common multiple of positive a and b.
func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// appendCacheAllocs appends to out the sectors allocated so far in each
// L2, then the LLC (mem.L2.Allocs).
func (c *Chip) appendCacheAllocs(out []int64) []int64 {
	for _, l2 := range c.l2s {
		out = append(out, l2.Allocs)
	}
	if c.llc != nil {
		out = append(out, c.llc.Allocs)
	}
	return out
}

// ageCaches ages each L2, then the LLC, by n[i] sector allocations,
// keeping its keep[i] most recent sectors (mem.L2.Age).
func (c *Chip) ageCaches(n, keep []int64) {
	for i, l2 := range c.l2s {
		l2.Age(n[i], keep[i])
	}
	if c.llc != nil {
		c.llc.Age(n[len(c.l2s)], keep[len(c.l2s)])
	}
}

// windowsSteady reports whether the windows of intervals a→b and b→c
// agree in their L2's and LLC's hit fractions (bytes) within hits and in
// every lane's fraction of time in each cause (the mean over the cores)
// within mix. (An interval is a step of every CTA, too short for the
// interval-by-interval rules of waves, ffSteady: B200 HGEMM's lanes swing
// from one to the next where its windows agree.)
func (c *Chip) windowsSteady(a, b, e *ffSnap, mix, hits float64) bool {
	return c.spansAgree(a, b, b, e, mix, hits)
}

// spansAgree reports whether the spans of the run from a0 to a1 and from
// b0 to b1 agree in their L2's and LLC's hit fractions (bytes) within hits
// and in every lane's fraction of time in each cause (the mean over the
// cores) within mix.
func (c *Chip) spansAgree(a0, a1, b0, b1 *ffSnap, mix, hits float64) bool {
	ff := c.grids.ff
	return hitsAgree(a0, a1, b0, b1, hits) && mixAgree(a0, a1, b0, b1, len(c.grids.cores), len(ff.lanes), ff.paths, mix)
}
