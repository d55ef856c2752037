package arch

import (
	"math"

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
// increment (exact for the work: alike blocks run the same instructions).
// A program's kernels often are such: ape-int16's four INT8 GEMMs (their
// times equal to the picosecond on the RTX PRO 6000, MI300X and T4, within
// 0.1 % elsewhere). A skipped grid's caches are not touched (the next grid
// finds the L2 as the one before left it, with other addresses).

// kernelSteadiness divides FastForward.Tolerance for the difference of the
// times of the two grids a kernel skip compares.
const kernelSteadiness = 5

// KernelSkip is a grid a fast-forwarded run did not simulate
// (FastForward.Kernels).
type KernelSkip struct {
	Grid  string   // its name
	Index int      // its index in the program
	Like  string   // the grid it stands for: the one before it
	At    sim.Time // simulated time it started (and ended) at
	Shift sim.Time // the time it stands for: the grid before it's
	// Spread is the difference of the times of the two grids before it,
	// Allowed the most the rule lets it be (a fifth of the tolerance of
	// Shift): kernels that agree so closely can still differ by that
	// (GB200 ape-int16 8192³: the first two INT8 GEMMs 0.015 % apart, the
	// third 0.15 % from the second).
	Spread, Allowed sim.Time
	Events          uint64 // engine events it stands for (not simulated)
}

// kernelRun is a grid's counters from its start to its end, on the time
// line of the full run, for the kernel skips of the grids after it.
type kernelRun struct {
	index      int
	start, end ffSnap
}

// kernelDone records the counters of grid index, which started with start
// and ended at now.
func (gr *gridRunner) kernelDone(index int, start *ffSnap, now sim.Time) {
	r := kernelRun{index: index, start: start.clone(), end: gr.chip.ffSnapshot(now)}
	gr.kernels[0], gr.kernels[1] = gr.kernels[1], &r
}

// kernelSkip skips grid g (index cur) at now, when it is like the two
// grids before it and they took the same time, and reports whether it did.
func (gr *gridRunner) kernelSkip(g *isa.Grid, now sim.Time) bool {
	ff := gr.ff
	a, b := gr.kernels[0], gr.kernels[1]
	if ff == nil || !ff.Kernels || a == nil || b == nil || a.index != gr.cur-2 || b.index != gr.cur-1 {
		return false
	}
	da, db := a.end.t-a.start.t, b.end.t-b.start.t
	if da <= 0 || db <= 0 || math.Abs(float64(da-db)) > ff.Tolerance/kernelSteadiness*float64(db) {
		return false
	}
	if !gr.chip.runsAgree(a, b, ff.Mix, ff.Hits, ff.Tolerance) || !gridsAlike(&gr.grids[gr.cur-2], &gr.grids[gr.cur-1]) || !gridsAlike(&gr.grids[gr.cur-1], g) {
		return false
	}
	if ff.ints == nil {
		ff.ints = make([]int64, len(b.end.ints))
		ff.floats = make([]float64, len(b.end.floats))
	}
	for k := range b.end.ints {
		ff.ints[k] += b.end.ints[k] - b.start.ints[k]
	}
	for x := range b.end.floats {
		ff.floats[x] += b.end.floats[x] - b.start.floats[x]
	}
	ff.shift += db
	ff.kernels = append(ff.kernels, KernelSkip{Grid: g.Name, Index: gr.cur, Like: gr.grids[gr.cur-1].Name, At: now,
		Shift: db, Spread: max(da-db, db-da), Allowed: sim.Time(ff.Tolerance / kernelSteadiness * float64(db)), Events: uint64(b.end.ints[ffEvents] - b.start.ints[ffEvents])})
	// The grids after it compare with it as with the grid it stands for.
	gr.kernels[0], gr.kernels[1] = b, &kernelRun{index: gr.cur, start: b.start, end: b.end}
	return true
}

// runsAgree reports whether grid runs a and b agree in their L2's and
// LLC's hit fractions within hits, their misses and HBM reads within the
// tolerance (a fraction of the larger: hit fractions near 1 hide misses
// that differ by half — A100 ape-int16 8192³'s second INT8 GEMM finds its
// A pieces in the L2 from the first, the third not: with hits alone, the
// fourth standing for the third came out with 15 % fewer HBM reads), and
// in every lane's fraction of time in each cause (the mean over the
// cores) within mix.
func (c *Chip) runsAgree(a, b *kernelRun, mix, hits, tolerance float64) bool {
	for _, k := range []int{ffL2Hit, ffLLCHit} {
		fa := hitFraction(a.end.ints[k]-a.start.ints[k], a.end.ints[k+1]-a.start.ints[k+1])
		fb := hitFraction(b.end.ints[k]-b.start.ints[k], b.end.ints[k+1]-b.start.ints[k+1])
		if (fa < 0) != (fb < 0) || math.Abs(fa-fb) > hits {
			return false
		}
	}
	for _, k := range []int{ffL2Miss, ffLLCMiss, ffTrafficHBMRead} {
		x, y := a.end.ints[k]-a.start.ints[k], b.end.ints[k]-b.start.ints[k]
		if math.Abs(float64(x-y)) > tolerance*float64(max(x, y)) {
			return false
		}
	}
	for l := range c.grids.ff.lanes {
		for x := Cause(0); x < NumCauses; x++ {
			if math.Abs(c.causeFraction(&a.start, &a.end, l, x)-c.causeFraction(&b.start, &b.end, l, x)) > mix {
				return false
			}
		}
	}
	return true
}

// gridsAlike reports whether grids a and b have as many blocks, the same
// resources, cluster size and block classes, and each class's first block
// runs the same instructions in both but for addresses.
func gridsAlike(a, b *isa.Grid) bool {
	if a.CTAs != b.CTAs || a.Cluster != b.Cluster || a.Resources != b.Resources || a.TimingOnly != b.TimingOnly || a.Class == nil || b.Class == nil {
		return false
	}
	first := map[int]int{}
	for i := range a.CTAs {
		c := a.Class(i)
		if c != b.Class(i) {
			return false
		}
		if _, ok := first[c]; !ok {
			first[c] = i
		}
	}
	for _, i := range first {
		if !sameShape(b, i, ctaShape(a, i)) {
			return false
		}
	}
	return true
}
