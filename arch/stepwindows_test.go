package arch

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
)

// spansChip is a chip of cores cores whose fast-forward snapshots have
// lanes lanes and paths paths per core (only the shape spansAgree reads).
func spansChip(cores, lanes, paths int) *Chip {
	return &Chip{grids: &gridRunner{cores: make([]GridCore, cores),
		ff: &fastForward{lanes: make([]struct{}, lanes), paths: paths}}}
}

// spansSnap is a snapshot at t of such a chip: L2 hits and misses, and
// every core's lanes' time in each cause from at(core, lane, cause).
func spansSnap(c *Chip, t sim.Time, hit, miss int64, at func(core, lane, cause int) int64) *ffSnap {
	ff := c.grids.ff
	block := coreInts(len(ff.lanes), ff.paths)
	s := &ffSnap{t: t, ints: make([]int64, ffGlobal+len(c.grids.cores)*block)}
	s.ints[ffL2Hit], s.ints[ffL2Miss] = hit, miss
	for i := range c.grids.cores {
		for l := range ff.lanes {
			for x := 0; x < int(NumCauses); x++ {
				s.ints[ffGlobal+i*block+l*laneInts+x] = at(i, l, x)
			}
		}
	}
	return s
}

// spansAgree compares two spans' lanes by their time in each cause, the
// mean over the cores: a lane whose share of a cause moved by more than
// mix (on one core, or a little on all) makes them disagree, one that
// moved on one core only by less than mix over the cores does not, nor
// does a move under mix; hit fractions apart by more than hits disagree.
func TestSpansAgree(t *testing.T) {
	const cores, lanes, paths = 4, 3, 2
	c := spansChip(cores, lanes, paths)
	// split is a lane's time in each cause over span ps long: busy in
	// cause 0, the rest waiting on a flag (cause 1).
	split := func(busy, span int64, x int) int64 {
		switch x {
		case 0:
			return busy
		case 1:
			return span - busy
		}
		return 0
	}
	// Span a: [0, 1000), every lane 50 % busy on every core; span b:
	// [1000, 3000), twice as long (the fractions, not the times, compare),
	// every lane 50 % busy but lane on core (−1: every core), busy ps of
	// 2000.
	zero := spansSnap(c, 0, 0, 0, func(int, int, int) int64 { return 0 })
	a1 := spansSnap(c, 1000, 800, 200, func(_, _, x int) int64 { return split(500, 1000, x) })
	for _, tc := range []struct {
		name       string
		lane, core int
		busy, hit  int64
		want       bool
	}{
		{"the same mix", 0, -1, 1000, 800, true},
		{"lane 2 busy 60 % on every core", 2, -1, 1200, 800, false},
		{"lane 1 busy 53 % on every core (under mix)", 1, -1, 1060, 800, true},
		{"lane 0 busy 66 % on core 3 alone (4 % over the cores)", 0, 3, 1320, 800, true},
		{"lane 0 busy 90 % on core 3 alone (10 % over the cores)", 0, 3, 1800, 800, false},
		{"the same mix, hits 0.8 → 0.7", 0, -1, 1000, 700, false},
	} {
		b1 := spansSnap(c, 3000, 800+2*tc.hit, 200+2*(1000-tc.hit), func(i, l, x int) int64 {
			busy := int64(1000)
			if l == tc.lane && (tc.core < 0 || i == tc.core) {
				busy = tc.busy
			}
			return split(500, 1000, x) + split(busy, 2000, x)
		})
		if got := c.spansAgree(zero, a1, a1, b1, 0.05, 0.05); got != tc.want {
			t.Errorf("%s: spansAgree = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// spansAgree decides as comparing causeFraction lane by lane and cause by
// cause does (its walk of the snapshots sums the same counters), on random
// spans of random lengths.
func TestSpansAgreeAsCauseFraction(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var agreed int
	const runs = 2000
	for n := 0; n < runs; n++ {
		cores, lanes, paths := 1+r.IntN(8), 1+r.IntN(7), r.IntN(3)
		c := spansChip(cores, lanes, paths)
		var s [4]*ffSnap
		t0 := sim.Time(0)
		for k := range s {
			t0 += sim.Time(1 + r.IntN(5000))
			base := int64(t0)
			s[k] = spansSnap(c, t0, 0, 0, func(int, int, int) int64 { return base/int64(NumCauses) + int64(r.IntN(400)) })
		}
		mix := r.Float64() * 0.2
		want := true
		for l := 0; l < lanes && want; l++ {
			for x := Cause(0); x < NumCauses; x++ {
				if math.Abs(c.causeFraction(s[0], s[1], l, x)-c.causeFraction(s[2], s[3], l, x)) > mix {
					want = false
					break
				}
			}
		}
		if got := c.spansAgree(s[0], s[1], s[2], s[3], mix, 1); got != want {
			t.Fatalf("case %d (%d cores, %d lanes, %d paths, mix %.3f): spansAgree = %v, causeFraction lane by lane says %v", n, cores, lanes, paths, mix, got, want)
		}
		if want {
			agreed++
		}
	}
	if agreed < runs/10 || agreed > runs*9/10 {
		t.Fatalf("%d of %d random cases agree: want both outcomes often", agreed, runs)
	}
}

// stepWindowsSteady on two windows of 4 intervals (ns) seen in runs and
// made up: flat intervals and noise within the tolerance in each window
// about one mean pass; a window spread beyond it, and a slow trend whose
// windows each pass but whose means differ by more than a fifth of it (A100
// HGEMM with register staging: ~900 down to 726 ns) do not.
func TestStepWindowsSteady(t *testing.T) {
	for _, c := range []struct {
		name string
		d    []float64
		want bool
	}{
		{"flat (H100 ape-fp32b)", []float64{869, 869, 869, 869, 869, 869, 869, 869}, true},
		{"noise within 5 %, one mean", []float64{1000, 1030, 990, 1020, 1010, 995, 1025, 1000}, true},
		{"a window spread 6 %", []float64{1000, 1060, 1000, 1000, 1000, 1000, 1000, 1000}, false},
		{"a slow trend: windows of 4 % each, means 4 % apart", []float64{1000, 990, 980, 970, 960, 950, 940, 930}, false},
		{"a trend under a fifth of the tolerance: means 0.8 % apart", []float64{1000, 998, 996, 994, 992, 990, 988, 986}, true},
		{"means 1.2 % apart", []float64{1000, 1000, 1000, 1000, 988, 988, 988, 988}, false},
		{"B200: a swing about a steady mean", []float64{362, 368, 370, 362, 368, 370, 362, 368}, true},
	} {
		if got, _, _ := stepWindowsSteady(c.d, 4, 0.05); got != c.want {
			t.Errorf("%s: stepWindowsSteady = %v, want %v", c.name, got, c.want)
		}
	}
}

// stepsToSkip on resident CTAs seen in runs and made up: a wave in
// lockstep skips all but its check's room, from the step after its
// markers; CTAs apart skip from the leading one's next step as many as
// leave it room for those behind to reach that step and for the check
// (V100 sgemm-cube 8192³'s widest wave: 42 steps apart, period 6, 126
// steps), fewer where the CTAs took more steps than one an interval in
// the measured windows; periods 2 and 3 skip a multiple of 6; a CTA in its
// warm-up or below the grid's floor, one without a period, or too few
// steps left: none. A skip an earlier check stands for (check 0:
// StepSkip.Paced) leaves no room for a check's settling and intervals.
func TestStepsToSkip(t *testing.T) {
	cta := func(k, n, period, from, to int) *stepCTA {
		return &stepCTA{k: k, n: n, period: period, from: from, to: to}
	}
	for _, c := range []struct {
		name             string
		ctas             []*stepCTA
		floor            int
		rate             float64
		steps, at, cycle int
		check            int
	}{
		{"a wave in lockstep", []*stepCTA{cta(16, 200, 1, 1, 199), cta(16, 200, 1, 1, 199)}, 0, 1, 172, 17, 1, 4},
		{"a wave in lockstep, paced (no check)", []*stepCTA{cta(16, 200, 1, 1, 199), cta(16, 200, 1, 1, 199)}, 0, 1, 180, 17, 1, 0},
		{"42 steps apart, paced (no check)", []*stepCTA{cta(16, 256, 6, 1, 255), cta(37, 256, 6, 1, 255), cta(58, 256, 6, 1, 255)}, 0, 1, 144, 59, 6, 0},
		{"42 steps apart", []*stepCTA{cta(16, 256, 6, 1, 255), cta(37, 256, 6, 1, 255), cta(58, 256, 6, 1, 255)}, 0, 1, 126, 59, 6, 4},
		{"42 steps apart, 1.5 steps an interval", []*stepCTA{cta(16, 256, 6, 1, 255), cta(37, 256, 6, 1, 255), cta(58, 256, 6, 1, 255)}, 0, 1.5, 102, 59, 6, 4},
		{"periods 2 and 3", []*stepCTA{cta(20, 200, 2, 1, 199), cta(21, 200, 3, 1, 199)}, 0, 1, 150, 22, 6, 4},
		{"past the grid's floor", []*stepCTA{cta(24, 200, 1, 1, 199), cta(25, 200, 1, 1, 199)}, 24, 1, 162, 26, 1, 4},
		{"a CTA in its warm-up (13 of 200 steps)", []*stepCTA{cta(16, 200, 1, 1, 199), cta(12, 200, 1, 1, 199)}, 0, 1, 0, 0, 0, 4},
		{"a CTA below the grid's floor", []*stepCTA{cta(24, 200, 1, 1, 199), cta(23, 200, 1, 1, 199)}, 24, 1, 0, 0, 0, 4},
		{"a CTA before its repeating steps", []*stepCTA{cta(16, 200, 1, 20, 199)}, 0, 1, 0, 0, 0, 4},
		{"a CTA without a period", []*stepCTA{cta(16, 200, 0, 1, 199)}, 0, 1, 0, 0, 0, 4},
		{"too few steps left: under two windows", []*stepCTA{cta(182, 200, 1, 1, 199)}, 0, 1, 0, 0, 0, 4},
		{"just two windows left", []*stepCTA{cta(180, 200, 1, 1, 199)}, 0, 1, 8, 181, 1, 4},
		{"two windows left but at 1.25 steps an interval", []*stepCTA{cta(180, 200, 1, 1, 199)}, 0, 1.25, 0, 0, 0, 4},
	} {
		m := map[int]*stepCTA{}
		for i, x := range c.ctas {
			m[i] = x
		}
		steps, at, period, warming := stepsToSkip(m, 4, c.check, 1.0/16, c.floor, c.rate)
		if steps != c.steps || at != c.at || period != c.cycle {
			t.Errorf("%s: stepsToSkip = %d steps from %d, period %d; want %d from %d, %d", c.name, steps, at, period, c.steps, c.at, c.cycle)
		}
		// Refused for a CTA's warm-up (or its missing period), or for
		// too few steps left: which, for the run's record (StepWait).
		if wantWarming := strings.HasPrefix(c.name, "a CTA "); warming != wantWarming {
			t.Errorf("%s: stepsToSkip refused for the warm-up %v, want %v", c.name, warming, wantWarming)
		}
	}
}

// stepRate: the most steps a live CTA took an interval, at least one; a
// free slot's steps do not count.
func TestStepRate(t *testing.T) {
	x := &stepCTA{}
	for _, c := range []struct {
		name        string
		first, last []int
		live        []*stepCTA
		want        float64
	}{
		{"in step", []int{10, 20, 30}, []int{18, 28, 38}, []*stepCTA{x, x, x}, 1},
		{"one ahead by its pace", []int{10, 20, 30}, []int{18, 28, 42}, []*stepCTA{x, x, x}, 1.5},
		{"slower than a step an interval", []int{10, 20}, []int{14, 24}, []*stepCTA{x, x}, 1},
		{"a free slot", []int{10, 0, 30}, []int{18, 99, 40}, []*stepCTA{x, nil, x}, 1.25},
	} {
		if got := stepRate(c.first, c.last, c.live, 8); got != c.want {
			t.Errorf("%s: stepRate = %v, want %v", c.name, got, c.want)
		}
	}
}

// stepsToSkip's skips on random resident CTAs: from the leading CTA's next
// step, a multiple of the period, at least two windows, and the most that
// leaves every CTA, after the skip, room (at the measured steps an
// interval) for those behind to reach the skip, the check's settling and
// its intervals, and the loop's last steps before its repeating steps end —
// for a skip an earlier check stands for, only for those behind to reach it
// and an interval and a period — (one period more would not).
func TestStepsToSkipLeavesTheCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const measure = 4
	var skipped int
	for n := 0; n < 5000; n++ {
		m := map[int]*stepCTA{}
		steps := 64 + r.IntN(400)
		from, spread := r.IntN(steps/2), r.IntN(64) // (the CTAs' steps: within spread of each other)
		for i := range 1 + r.IntN(16) {
			x := &stepCTA{n: steps, period: 1 + r.IntN(4), from: 1, to: steps - 1 - r.IntN(3)}
			x.k = from + r.IntN(spread+1)
			m[i] = x
		}
		rate := 1 + r.Float64()
		check := measure * r.IntN(2)
		skip, at, period, _ := stepsToSkip(m, measure, check, 1.0/16, 0, rate)
		if skip == 0 {
			continue
		}
		skipped++
		if skip%period != 0 || skip < 2*measure {
			t.Fatalf("case %d: %d steps, period %d: want a multiple of it, at least %d", n, skip, period, 2*measure)
		}
		lead, behind := 0, math.MaxInt
		for _, x := range m {
			lead, behind = max(lead, x.k), min(behind, x.k)
		}
		if at != lead+1 {
			t.Fatalf("case %d: skip from %d, want the leading CTA's next step %d", n, at, lead+1)
		}
		room := func(x *stepCTA, s int) bool {
			// (those behind reaching the skip, settling and the check at
			// rate steps an interval, then the loop's last two periods,
			// and a step to spare)
			settle, end := period+1, 2*period+2
			if check == 0 {
				// (no check: those behind reaching it, and a period)
				settle, end = 1, period
			}
			return float64(at+s+end)+rate*float64(lead-behind+settle+check) <= float64(x.to)
		}
		more := false
		for _, x := range m {
			if !room(x, skip) {
				t.Fatalf("case %d: CTA at step %d of %d (repeating to %d) skipping %d steps (period %d, %.2f steps an interval) has no room for the check", n, x.k, x.n, x.to, skip, period, rate)
			}
			if !room(x, skip+period) {
				more = true
			}
		}
		if !more {
			t.Fatalf("case %d: %d steps skipped where %d left room for every CTA", n, skip, skip+period)
		}
	}
	if skipped < 1000 {
		t.Fatalf("%d of 5000 random cases skipped: want many", skipped)
	}
}

// sameTime, the kernel skips' time rule: within a fifth of the tolerance
// of the reference (1 % at 5 %), either way; a reference of 0 matches
// nothing.
func TestSameTime(t *testing.T) {
	ff := &fastForward{FastForward: FastForward{Tolerance: 0.05}}
	for _, c := range []struct {
		x, ref sim.Time
		want   bool
	}{
		{1000, 1000, true}, {1010, 1000, true}, {990, 1000, true}, {1011, 1000, false}, {989, 1000, false},
		{534408044, 534408044, true}, {0, 0, false}, {5, 0, false},
	} {
		if got := ff.sameTime(c.x, c.ref); got != c.want {
			t.Errorf("sameTime(%d, %d) = %v, want %v", c.x, c.ref, got, c.want)
		}
	}
}
