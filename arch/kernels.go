package arch

import (
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// Kernel skips (FastForward.Kernels): a grid like the two before it — as
// many blocks, the same resources, cluster size and block classes, each
// class's first block running the same instructions but for addresses —
// is not run when those two took the same time within a fifth of the
// tolerance (1 %) and agreed in their L2 and LLC hit fractions (within
// FastForward.Hits) and every lane's stall mix (within FastForward.Mix): it
// stands for the grid before it — its time, events and every counter's
// increment (exact for the work: alike blocks run the same instructions);
// where those two disagree in misses but the three before it alternate,
// for the grid two before it.
// A program's kernels often are such: ape-int16's four INT8 GEMMs (their
// times equal to the picosecond on the RTX PRO 6000, MI300X and T4, within
// 0.1 % elsewhere). A skipped grid's caches are not touched (the next grid
// finds the L2 as the one before left it, with other addresses).

// kernelSteadiness divides FastForward.Tolerance for the difference of the
// times of the two grids a kernel skip compares.
const kernelSteadiness = 5

// kernelPrefix is the fewest waves, and kernelPrefixShare the least share
// of its waves, of a grid like the one before it that run before the rest
// of it may stand for the rest of that one (a tail skip:
// gridRunner.tailSkip). A few waves of a long kernel did not tell: T4
// ape-int16 8192³'s INT8 GEMMs (102 waves) agreed within 1 % over their
// first 5 and differed by 2.4 % over all (the run +1.3 % where it was
// −0.4 %).
const (
	kernelPrefix      = 5
	kernelPrefixShare = 4
)

// prefixWave is the wave of grid g at whose dispatch its prefix ends.
func (gr *gridRunner) prefixWave(g *isa.Grid) int {
	return max(kernelPrefix, (g.CTAs+gr.wave-1)/gr.wave/kernelPrefixShare)
}

// KernelSkip is a grid a fast-forwarded run did not simulate
// (FastForward.Kernels).
type KernelSkip struct {
	Grid  string // its name
	Index int    // its index in the program
	Like  string // the grid it stands for: the one before it (two before, where they alternate)
	// LikeIndex is Like's index in the program.
	LikeIndex int
	At        sim.Time // simulated time it started (and ended) at
	Shift     sim.Time // the time it stands for: the grid before it's
	// Spread is the difference of the times of the two grids before it,
	// Allowed the most the rule lets it be (a fifth of the tolerance of
	// Shift): kernels that agree so closely can still differ by that
	// (GB200 ape-int16 8192³: the first two INT8 GEMMs 0.015 % apart, the
	// third 0.15 % from the second).
	Spread, Allowed sim.Time
	Events          uint64 // engine events it stands for (not simulated)
	// FromCTA, if not 0, marks a tail skip: the grid's blocks from
	// FromCTA on were not run, the rest of it stands for the rest of
	// the grid before it from the same wave (whose first prefixWave
	// waves took the same time as this one's), and Shift is the time it
	// added at the grid's end (At).
	FromCTA int
	// OwnWork marks a tail skip of a grid alike the one before it but
	// for what follows their main loops (loopsAlike): its rest's work is
	// its own blocks', measured, not that grid's.
	OwnWork bool
}

// sameTime reports whether a grid's time (or its first waves') x is
// within a fifth of the tolerance of ref > 0, another's.
func (ff *fastForward) sameTime(x, ref sim.Time) bool {
	return ref > 0 && math.Abs(float64(x-ref)) <= ff.Tolerance/kernelSteadiness*float64(ref)
}

// kernelRun is a grid's counters from its start to its end, on the time
// line of the full run, for the kernel skips of the grids after it.
type kernelRun struct {
	index      int
	start, end ffSnap
	// prefix is the counters at the dispatch of its wave prefixWave
	// (nil: none), wave its CTAs per wave
	prefix *ffSnap
	wave   int
}

// kernelDone records the counters of grid index, which started with start
// and ended at now.
func (gr *gridRunner) kernelDone(index int, start *ffSnap, now sim.Time) {
	r := kernelRun{index: index, start: *start, end: gr.chip.ffSnapshot(now), prefix: gr.prefix, wave: gr.wave} // (each grid's start is a snapshot of its own)
	gr.kernels[0], gr.kernels[1], gr.kernels[2] = gr.kernels[1], gr.kernels[2], &r
}

// kernelSkip skips grid g (index cur) at now, when it is like the two
// grids before it and they took the same time, and reports whether it did:
// it stands for the one before it where those two agreed (runsAgree), and
// for the one two before it where they did not but the three before it
// alternate — the first and the third agreeing (MI210 ape-int16 8192³'s
// INT8 GEMMs, their times 0.02 % apart, alternate between two L2 miss
// counts 5.7 % and HBM reads 9.2 % apart).
func (gr *gridRunner) kernelSkip(g *isa.Grid, now sim.Time) bool {
	ff := gr.ff
	c, a, b := gr.kernels[0], gr.kernels[1], gr.kernels[2]
	if ff == nil || !ff.Kernels || a == nil || b == nil || a.index != gr.cur-2 || b.index != gr.cur-1 || gr.excluded() {
		return false
	}
	da, db := a.end.t-a.start.t, b.end.t-b.start.t
	if da <= 0 || !ff.sameTime(da, db) {
		return false
	}
	like := b // the grid g stands for
	if !gr.chip.runsAgree(&a.start, &a.end, &b.start, &b.end, ff.Mix, ff.Hits, ff.Tolerance) {
		if c == nil || c.index != gr.cur-3 || !ff.sameTime(c.end.t-c.start.t, db) ||
			!gr.chip.runsAgree(&c.start, &c.end, &b.start, &b.end, ff.Mix, ff.Hits, ff.Tolerance) || !gridsAlike(&gr.grids[gr.cur-3], &gr.grids[gr.cur-2]) {
			return false
		}
		like = a
	}
	if !gridsAlike(&gr.grids[gr.cur-2], &gr.grids[gr.cur-1]) || !gridsAlike(&gr.grids[gr.cur-1], g) {
		return false
	}
	if ff.ints == nil {
		ff.ints = make([]int64, len(like.end.ints))
		ff.floats = make([]float64, len(like.end.floats))
	}
	for k := range like.end.ints {
		ff.ints[k] += like.end.ints[k] - like.start.ints[k]
	}
	for x := range like.end.floats {
		ff.floats[x] += like.end.floats[x] - like.start.floats[x]
	}
	dl, ok := gr.chip.addShift(ff, now, float64(like.end.t-like.start.t), "skipped kernel "+g.Name)
	if !ok {
		return false
	}
	gr.doneBy[gr.cur] += int64(g.CTAs)
	ff.kernels = append(ff.kernels, KernelSkip{Grid: g.Name, Index: gr.cur, Like: gr.grids[like.index].Name, LikeIndex: like.index, At: now,
		Shift: dl, Spread: max(da-db, db-da), Allowed: sim.Time(ff.Tolerance / kernelSteadiness * float64(dl)), Events: uint64(like.end.ints[ffEvents] - like.start.ints[ffEvents])})
	// The grids after it compare with it as with the grid it stands for.
	r := *like
	r.index = gr.cur
	gr.kernels[0], gr.kernels[1], gr.kernels[2] = a, b, &r
	return true
}

// excluded reports whether blocks of grid cur are excluded from skips
// (FastForward.Exclude: a failed check's, or the caller's): then no kernel
// or tail skip either.
func (gr *gridRunner) excluded() bool {
	return slices.ContainsFunc(gr.ff.Exclude, func(x BlockRange) bool { return x.Grid == gr.cur })
}

// tailSkip is called at the dispatch of grid g's wave prefixWave (its
// counters then in gr.prefix): when g is like the grid before it, whose
// same first waves took the same time within a fifth of the tolerance and
// agreed in hits, misses, HBM reads and stall mix (runsAgree), no more of
// g's blocks are run, and its end (tailEnd) stands for the rest of that
// grid. It reports whether it skipped. The termwise schemes' third product
// GEMM is like the second (their first differs: it reads the split's
// output from the L2), or like it through its main loop (sgemm-cube's:
// loopsAlike), when its rest's work is its own (tailMeasure).
func (gr *gridRunner) tailSkip(g *isa.Grid) bool {
	ff, p := gr.ff, gr.kernels[2]
	// (Not while a wave skip's check waits for waves after it: they would
	// never run.)
	if p == nil || p.index != gr.cur-1 || p.prefix == nil || p.wave != gr.wave || (g.CTAs-gr.next)/gr.wave < 3 || gr.check >= 0 || gr.excluded() {
		return false
	}
	da, db := p.prefix.t-p.start.t, gr.prefix.t-gr.start.t
	if !ff.sameTime(db, da) {
		return false
	}
	if !gr.chip.runsAgree(&p.start, p.prefix, &gr.start, gr.prefix, ff.Mix, ff.Hits, ff.Tolerance) {
		return false
	}
	if !gridsAlike(&gr.grids[gr.cur-1], g) {
		// Alike but for what follows their main loops (SGEMM-cube's hh
		// GEMM adds the other two's sum, scaled, to its own: RTX PRO
		// 6000 8192³'s hh and lh first waves 0.29 % apart): the rest's
		// work is the grid's own, its prefix's last wave's blocks' of
		// each class times the blocks of that class not run. (No wave
		// skip measured those: it moved the dispatch a wave or more past
		// its measured blocks, and its check, which must be over, came
		// after that.)
		if !loopsAlike(&gr.grids[gr.cur-1], g) {
			return false
		}
		m := &tailMeasure{from: gr.next - gr.wave, to: gr.next, class: map[int]*classWork{}}
		for c := m.from; c < g.CTAs; c++ {
			k := g.Class(c)
			w := m.class[k]
			if w == nil {
				w = &classWork{ref: c}
				m.class[k] = w
			}
			if c < m.to {
				w.measured++
				continue
			}
			if w.skipped++; w.measured == 0 {
				return false // a class the measured blocks do not have
			}
			if w.skipped == 1 {
				w.first = c
			}
			w.last = c
		}
		// The grid says its blocks of a class run the same instructions
		// but for addresses (isa.Grid.Class): the first and the last not
		// run of each class are compared with a measured one, as a wave
		// skip spot-checks its skipped blocks (a grid that says wrong
		// fails).
		for _, k := range slices.Sorted(maps.Keys(m.class)) {
			w := m.class[k]
			if w.skipped == 0 {
				continue
			}
			for _, c := range []int{w.first, w.last} {
				if !sameCTA(g, c, g, w.ref) {
					gr.chip.Fail(fmt.Errorf("kernel %s: its Class declares blocks %d and %d alike, but their instructions differ", g.Name, w.ref, c))
					return false
				}
			}
		}
		for c := m.from; c < m.to; c++ {
			if w, ok := gr.recent[c]; ok {
				m.add(g.Class(c), w)
				delete(gr.recent, c)
			}
		}
		gr.tailWork = m
	}
	gr.tail, gr.tailFrom = p, gr.next
	gr.next = g.CTAs
	return true
}

// tailMeasure is the work of a tail skip's measured blocks [from, to)
// by class (isa.Grid.Class), summed as they finish.
type tailMeasure struct {
	from, to int
	class    map[int]*classWork
}

// classWork is the work of a class's measured blocks.
type classWork struct {
	measured, skipped int // the class's blocks measured, and not run
	n                 int // measured blocks finished
	sum               ffWorkSum
	// ref is a measured block of the class, first and last its first
	// and last block not run
	ref, first, last int
}

// add records the work w of a measured block of class k.
func (m *tailMeasure) add(k int, w *CTAWork) {
	x := m.class[k]
	x.sum.add(w)
	x.n++
}

// work returns the work of the blocks not run: per class, their number
// times the class's measured blocks' mean (an error unless every measured
// block reported its work).
func (m *tailMeasure) work() (ffWorkSum, error) {
	var w ffWorkSum
	for _, k := range slices.Sorted(maps.Keys(m.class)) { // (a fixed order: float sums)
		x := m.class[k]
		if x.n != x.measured {
			return w, fmt.Errorf("%d of the %d measured blocks of class %d (blocks %d–%d) reported their work", x.n, x.measured, k, m.from, m.to-1)
		}
		if x.skipped > 0 {
			w.addScaled(&x.sum, float64(x.skipped)/float64(x.n))
		}
	}
	return w, nil
}

// tailEnd ends grid g, tail-skipped, at now (its blocks in flight done):
// its time on the full run's time line becomes its prefix's plus the rest
// of the grid before it; its work that grid's (alike grids do the same
// work: every work counter's total equals it) or, where the grids differ
// after their main loops, its simulated blocks' plus its measured
// blocks' mean times the blocks not run (tailMeasure); and its other
// counters its own prefix's plus the rest of that grid's (the L2, LLC and
// HBM reads made to add up to its global-memory reads).
func (gr *gridRunner) tailEnd(g *isa.Grid, now sim.Time) error {
	ff, p, own := gr.ff, gr.tail, gr.tailWork
	gr.tail, gr.tailWork = nil, nil
	end := gr.chip.ffSnapshot(now)
	// (Not below 0: the blocks in flight at the prefix's end finished
	// later than the rest of the grid before it took — its last waves,
	// left at least 3, make that unlikely; then only the work is added.)
	shift := gr.prefix.t + (p.end.t - p.prefix.t) - end.t
	timed := int64(1)
	if shift < 0 {
		shift, timed = 0, 0
	}
	if ff.ints == nil {
		ff.ints = make([]int64, len(end.ints))
		ff.floats = make([]float64, len(end.floats))
	}
	// Each counter's increment: work from the grid's start (that grid's
	// total), the rest from the prefix's end (that grid's rest); the L2,
	// LLC and HBM reads made to add up to the GM reads.
	// (Where the grids differ after their main loops, the work is the
	// grid's own: its blocks not run times its measured blocks' mean,
	// ffAddWork.)
	restOf := func(k int) int64 { // that grid's rest less this one's blocks in flight
		return timed * ((p.end.ints[k] - p.prefix.ints[k]) - (end.ints[k] - gr.prefix.ints[k]))
	}
	d := make([]int64, len(end.ints))
	for k := range d {
		if !ff.isWork(k) {
			d[k] = restOf(k)
		} else if own == nil {
			d[k] = (p.end.ints[k] - p.start.ints[k]) - (end.ints[k] - gr.start.ints[k])
		}
	}
	gmRead := d[ffTrafficGMRead]
	if own != nil {
		w, err := own.work()
		if err != nil {
			return err
		}
		if gmRead, _, err = gr.chip.ffAddWork(ff, &gr.start, &end, &w); err != nil {
			return err
		}
		// The rest's cache counters are the grid before's, for its own
		// GM reads: scaled to the grid's (their epilogues may read
		// other bytes), so that the HBM takes only its share.
		if read := restOf(ffTrafficGMRead); read > 0 {
			r := float64(gmRead) / float64(read)
			for _, k := range []int{ffL2Hit, ffL2Miss, ffLLCHit, ffLLCMiss, ffTrafficL2Read, ffTrafficLLCRead} {
				d[k] = int64(math.Round(float64(d[k]) * r))
			}
		}
	} else {
		ff.floats[0] += (p.end.floats[0] - p.start.floats[0]) - (end.floats[0] - gr.start.floats[0]) // flops: work
	}
	// HBM's reads: the rest of the GM reads, and the bytes beyond them
	// that grid's rest fetched (whole lines), scaled as the caches' are.
	over := make([]float64, ffGlobal)
	for _, k := range []int{ffTrafficGMRead, ffTrafficL2Read, ffTrafficLLCRead, ffTrafficHBMRead} {
		over[k] = float64(restOf(k))
	}
	if read := over[ffTrafficGMRead]; own != nil && read > 0 {
		over[ffTrafficHBMRead] *= float64(gmRead) / read
		over[ffTrafficL2Read] *= float64(gmRead) / read
		over[ffTrafficLLCRead] *= float64(gmRead) / read
		over[ffTrafficGMRead] = float64(gmRead)
	}
	d[ffTrafficHBMRead] = gmRead - d[ffTrafficL2Read] - d[ffTrafficLLCRead] + int64(math.Round(overFetched(over)))
	if own != nil && gmRead-d[ffTrafficL2Read]-d[ffTrafficLLCRead] < 0 { // (the blocks in flight at the prefix's end read less from the caches than the grid before's rest)
		d[ffTrafficLLCRead] = min(d[ffTrafficLLCRead], gmRead)
		d[ffTrafficL2Read] = gmRead - d[ffTrafficLLCRead]
		d[ffTrafficHBMRead] = 0
	}
	for k, x := range d {
		ff.ints[k] += x
	}
	for x := 1; x < len(end.floats); x++ {
		ff.floats[x] += float64(float64(timed) * ((p.end.floats[x] - p.prefix.floats[x]) - (end.floats[x] - gr.prefix.floats[x])))
	}
	if _, ok := gr.chip.addShift(ff, now, float64(shift), "the rest of kernel "+g.Name); !ok {
		return nil
	}
	rest := p.end.t - p.prefix.t
	waves := (g.CTAs - gr.tailFrom + gr.wave - 1) / gr.wave // (its rest's, and half of one for the blocks in flight)
	da, db := p.prefix.t-p.start.t, gr.prefix.t-gr.start.t
	gr.doneBy[gr.cur] += int64(g.CTAs - gr.tailFrom)
	ff.kernels = append(ff.kernels, KernelSkip{Grid: g.Name, Index: gr.cur, Like: gr.grids[gr.cur-1].Name, LikeIndex: gr.cur - 1, At: now,
		Shift: shift, Spread: sim.Time(math.Round(math.Abs(float64(da-db)) / float64(da) * float64(rest))),
		Allowed: sim.Time(ff.Tolerance/kernelSteadiness*float64(rest)) + rest/sim.Time(2*max(waves, 1)),
		Events:  uint64(max(d[ffEvents], 0)), FromCTA: gr.tailFrom, OwnWork: own != nil})
	return nil
}

// runsAgree reports whether the spans of the run from a0 to a1 and from
// b0 to b1 agree (spansAgree) and in their L2 and LLC misses and HBM reads
// within the tolerance, a fraction of the larger (hit fractions near 1
// hide misses that differ by much — MI100 ape-int16 8192³'s INT8 GEMMs
// alternate between 2427 and 2233 MB of HBM reads at times 0.05 % apart).
func (c *Chip) runsAgree(a0, a1, b0, b1 *ffSnap, mix, hits, tolerance float64) bool {
	for _, k := range []int{ffL2Miss, ffLLCMiss, ffTrafficHBMRead} {
		x, y := a1.ints[k]-a0.ints[k], b1.ints[k]-b0.ints[k]
		if math.Abs(float64(x-y)) > tolerance*float64(max(x, y)) {
			return false
		}
	}
	return c.spansAgree(a0, a1, b0, b1, mix, hits)
}

// gridsAlike reports whether grids a and b have as many blocks, the same
// resources, cluster size and block classes, and each class's first block
// runs the same instructions in both but for addresses.
func gridsAlike(a, b *isa.Grid) bool {
	first, ok := launchesAlike(a, b)
	return ok && everyClass(first, func(i int) bool { return sameCTA(b, i, a, i) })
}

// everyClass reports whether alike holds for each class's first block
// (first, as launchesAlike returns it).
func everyClass(first map[int]int, alike func(i int) bool) bool {
	for _, i := range first {
		if !alike(i) {
			return false
		}
	}
	return true
}

// loopsAlike reports whether grids a and b are alike (gridsAlike) up to
// what follows their main loops: each class's first block runs, in both,
// the same instructions but for addresses through its last step — its
// step markers (isa.Grid.Steps), at least two, and after the last as many
// instructions as the step before it has — and only its epilogue may
// differ.
func loopsAlike(a, b *isa.Grid) bool {
	first, ok := launchesAlike(a, b)
	return ok && a.Steps != nil && b.Steps != nil && everyClass(first, func(i int) bool {
		// The common prefix must hold both streams' step markers and
		// as many instructions after the last as the step before it
		// has: the last step whole (a marker starts its step).
		prev, last, n, later := commonLoop(a, b, i, false)
		return !later && prev >= 0 && n >= last+(last-prev)
	})
}

// stepsAlike reports whether grids a and b are alike in their main loops:
// as many blocks, the same cluster size and block classes, and each
// class's first block runs, in both, the same instructions but for
// addresses from its first step marker to its last (isa.Grid.Steps) —
// whatever comes before the loop and after it, and the resources that
// takes (Ape FP32-F's lh holds and reads the C its hh wrote: 61440
// registers to 59392 on the MI300X; the caller compares the blocks a core
// holds).
func stepsAlike(a, b *isa.Grid) bool {
	first, ok := classesAlike(a, b)
	return ok && a.Steps != nil && b.Steps != nil && everyClass(first, func(i int) bool {
		_, last, _, later := commonLoop(a, b, i, true)
		return last >= 0 && !later
	})
}

// commonLoop reads block i's streams in grids a and b (isa.Grid.Steps)
// side by side, addresses aside (isa.Instr.Shape), from their starts or,
// fromLoop, from each one's first step marker (none: n 0, last −1), to
// where they differ. It returns the positions in that common prefix of its
// last two markers (−1: none) and its length n, and whether either stream
// holds a marker past it. Neither stream is held: a long k-loop's would
// be gigabytes (2^24 k-steps).
func commonLoop(a, b *isa.Grid, i int, fromLoop bool) (prev, last, n int, later bool) {
	nextA, stopA := iter.Pull(a.Steps(i, &isa.StepCursor{}))
	defer stopA()
	nextB, stopB := iter.Pull(b.Steps(i, &isa.StepCursor{}))
	defer stopB()
	x, okX := nextA()
	y, okY := nextB()
	if fromLoop {
		for okX && x.Op != isa.OpStep {
			x, okX = nextA()
		}
		for okY && y.Op != isa.OpStep {
			y, okY = nextB()
		}
		if !okX || !okY {
			return -1, -1, 0, false
		}
	}
	prev, last = -1, -1
	for okX && okY && x.Shape() == y.Shape() {
		if x.Op == isa.OpStep {
			prev, last = last, n
		}
		n++
		x, okX = nextA()
		y, okY = nextB()
	}
	// marker reads the rest of a stream from in, reporting whether it
	// holds a marker.
	marker := func(in isa.Instr, ok bool, next func() (isa.Instr, bool)) bool {
		for ; ok; in, ok = next() {
			if in.Op == isa.OpStep {
				return true
			}
		}
		return false
	}
	return prev, last, n, marker(x, okX, nextA) || marker(y, okY, nextB)
}

// launchesAlike reports whether grids a and b have as many blocks, the
// same resources, cluster size and block classes, and returns each
// class's first block.
func launchesAlike(a, b *isa.Grid) (first map[int]int, ok bool) {
	if a.Resources != b.Resources {
		return nil, false
	}
	return classesAlike(a, b)
}

// classesAlike is launchesAlike but for the resources.
func classesAlike(a, b *isa.Grid) (first map[int]int, ok bool) {
	if a.CTAs != b.CTAs || a.Cluster != b.Cluster || a.TimingOnly != b.TimingOnly || a.Class == nil || b.Class == nil {
		return nil, false
	}
	first = map[int]int{}
	for i := range a.CTAs {
		c := a.Class(i)
		if c != b.Class(i) {
			return nil, false
		}
		if _, ok := first[c]; !ok {
			first[c] = i
		}
	}
	return first, true
}

// isWork reports whether ffSnap's int counter k counts work (instructions,
// global-memory bytes, path bytes, vector repeats: what alike blocks do
// alike) rather than time or the caches' state.
func (ff *fastForward) isWork(k int) bool {
	switch k {
	case ffGMRead, ffGMWrite, ffTrafficGMRead, ffTrafficGMWrite, ffTrafficHBMWrite:
		return true
	case ffEvents, ffL2Hit, ffL2Miss, ffLLCHit, ffLLCMiss, ffTrafficL2Read, ffTrafficLLCRead, ffTrafficHBMRead:
		return false
	}
	// a core's block: per lane its time by cause and instructions, then
	// path bytes and vector repeats — all but the times are work
	lanes := len(ff.lanes) * laneInts
	i := (k - ffGlobal) % coreInts(len(ff.lanes), ff.paths)
	return i >= lanes || i%laneInts == int(NumCauses)
}
