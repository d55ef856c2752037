package gpu_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// ctaStepped is ctaProducts (one MMA per k-step, vector work beside it)
// with a step marker starting each k-step (isa.Grid.Steps) that resumes
// where cur asks; slow, if not nil, tells whether k-step kt reads its A
// tile from a region of its own (L2 misses) rather than base's.
func ctaStepped(base int64, k int, cur *isa.StepCursor, slow func(kt int) bool) isa.Stream {
	return ctaSteppedAt(0, base, k, cur, slow)
}

// ctaSteppedAt is ctaStepped for CTA c, whose slow steps' regions are its
// own.
func ctaSteppedAt(c int, base int64, k int, cur *isa.StepCursor, slow func(kt int) bool) isa.Stream {
	return ctaSteps(c, base, k, cur, slow, nil)
}

// ctaSteps is ctaSteppedAt whose k-steps kt run four products instead of
// one where heavy(kt) (heavy nil: none).
func ctaSteps(c int, base int64, k int, cur *isa.StepCursor, slow, heavy func(kt int) bool) isa.Stream {
	const bk = 64
	steps := k / bk
	return func(yield func(isa.Instr) bool) {
		var ins []isa.Instr
		for kt := 0; kt < steps; kt++ {
			if cur != nil {
				if to := cur.Take(); to > kt {
					kt = to
				}
				if !yield(isa.Step(kt, steps, 1, 1, steps-1)) {
					return
				}
			}
			gmA := base + int64(kt*bk)*2
			if slow != nil && slow(kt) {
				gmA = int64(64+c*256+kt) << 24
			}
			products := 1
			if heavy != nil && heavy(kt) {
				products = 4
			}
			ins = kStep(ins[:0], gmA, base+1<<20, kt, k, products, true)
			for _, in := range ins {
				if !yield(in) {
					return
				}
			}
		}
		for _, in := range storeTile(ins[:0]) {
			if !yield(in) {
				return
			}
		}
	}
}

// steppedGrid is 3 waves (4 SMs, 2 CTAs each) of CTAs of 200 k-steps that
// read the same tiles (L2 hits after the first), with step markers; slow
// as ctaStepped's.
func steppedGrid(slow func(kt int) bool) isa.Grid {
	const k = 64 * 200
	return isa.Grid{Name: "stepped", CTAs: 8 * 3,
		CTA:       func(c int) isa.Stream { return ctaSteppedAt(c, 0, k, nil, slow) },
		Steps:     func(c int, cur *isa.StepCursor) isa.Stream { return ctaSteppedAt(c, 0, k, cur, slow) },
		Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
}

// Step skips on a grid whose k-steps repeat: each wave's CTAs skip most of
// their steps together, every skip checked; the work counters — every
// lane's instructions, bytes on every path, GM bytes, flops, vector
// repeats — equal the full run's exactly (each skipped step stands for
// the work of the step before it, counted at issue as the lanes count it
// when it runs), the time within the skips' estimate, with a fraction of
// the events. Without FastForward.Steps the markers change nothing.
func TestStepSkips(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := steppedGrid(nil)
	full, err := runGrid(t, m, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	ff := arch.DefaultFastForward
	ff.Steps = true
	fast, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	if len(fast.FastForwardSteps) != 3 {
		t.Fatalf("step skips %+v, want one a wave", fast.FastForwardSteps)
	}
	for _, s := range fast.FastForwardSteps {
		if !s.Checked || s.CTAs != 8 || s.Steps < 120 || s.Shift <= 0 {
			t.Errorf("step skip %+v: want checked, 8 CTAs, most of their 200 steps, shift steps × period", s)
		}
	}
	withinStepEstimate(t, "with step skips", fast, full)
	if fast.Events*3 > full.Events {
		t.Errorf("events %d with step skips, %d in full: want a third at most", fast.Events, full.Events)
	}
	if fast.GMReadBytes != full.GMReadBytes || fast.GMWriteBytes != full.GMWriteBytes || fast.MMADFlops != full.MMADFlops {
		t.Errorf("GM bytes %d/%d, flops %g with step skips; %d/%d, %g in full", fast.GMReadBytes, fast.GMWriteBytes, fast.MMADFlops, full.GMReadBytes, full.GMWriteBytes, full.MMADFlops)
	}
	if a, b := fast.Traffic.GMRead, full.Traffic.GMRead; a != b {
		t.Errorf("traffic GM reads %d with step skips, %d in full", a, b)
	}
	// The skipped steps' GM reads (divided among the caches and HBM at
	// measured rates, not looked up): every k-step of every CTA reads
	// the same tiles.
	var blockSteps int64
	for _, s := range fast.FastForwardSteps {
		blockSteps += int64(s.Steps) * int64(s.CTAs)
	}
	if perStep := full.GMReadBytes / (int64(g.CTAs) * 200); fast.SkippedGMReadBytes != blockSteps*perStep || full.SkippedGMReadBytes != 0 {
		t.Errorf("skipped GM reads %d, want %d block-steps × %d bytes (full run: %d)", fast.SkippedGMReadBytes, blockSteps, perStep, full.SkippedGMReadBytes)
	}
	// Every byte read is served by the L2, the LLC or HBM — the skipped
	// ones too, each skip's at its measured rates (a skip's last CTA's
	// bytes once went uncounted).
	if tr := fast.Traffic; tr.L2Read+tr.LLCRead+tr.HBMRead != tr.GMRead {
		t.Errorf("traffic with step skips: L2 %d + LLC %d + HBM %d reads, GM %d", tr.L2Read, tr.LLCRead, tr.HBMRead, tr.GMRead)
	}
	sameCoreWork(t, "with step skips", fast, full)
	// How the steps went: every block-step was simulated or skipped,
	// and the skips were taken where two windows had formed.
	if len(fast.StepWaits) != 1 {
		t.Fatalf("step waits %+v, want the grid's", fast.StepWaits)
	}
	if w := fast.StepWaits[0]; w.Grid != g.Name || w.Steps+blockSteps != int64(g.CTAs)*200 || w.Windows < len(fast.FastForwardSteps) {
		t.Errorf("step wait %+v: want %d block-steps simulated (%d skipped of %d), two windows formed at least %d times", w, int64(g.CTAs)*200-blockSteps, blockSteps, g.CTAs*200, len(fast.FastForwardSteps))
	}
	// The markers alone (no step skips) change nothing.
	ff.Steps = false
	plain, err := runGrid(t, m, isa.Grid{Name: g.Name, CTAs: g.CTAs, CTA: g.CTA, Resources: g.Resources}, &ff)
	if err != nil {
		t.Fatal(err)
	}
	marked, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain, marked) {
		t.Errorf("a grid with Steps, not skipped:\n%+v\nwithout:\n%+v", marked, plain)
	}
}

// A grid whose k-steps slow down after the first 120 (each CTA's A tiles
// then miss in the L2, more than the memory's bandwidth serves at the
// pace before): the step skip measured on the fast steps is checked on
// slower ones, fails, and stops the run with a StepCheckError naming the
// grid; run again with its skips measured past a floor twice the failed
// skip's step (FastForward.StepFloors: the measured steps may have been
// the loop's start) — past step 170 of 200, where no skip has room — it
// is the full simulation, as it is with its steps off (FastForward.NoSteps,
// after a second failure).
func TestStepSkipCheckFails(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4", "machine.gm.bandwidth=20GB/s")
	g := steppedGrid(func(kt int) bool { return kt >= 120 })
	full, ff, se, err := fullAndStepped(t, m, g)
	if se == nil || se.Grid != 0 || se.Skip.Checked || se.Skip.CheckPeriod <= se.Skip.Period {
		t.Fatalf("got %v, want a failed step check of grid 0 with slower steps after the skip", err)
	}
	// Slower steps, the grid's first such failure: skips measured
	// further on.
	se.Again(&ff, 1)
	floor := max(2*se.Skip.From, se.Skip.From+2*ff.Measure)
	if want := []arch.StepFloor{{Grid: 0, Step: floor}}; !reflect.DeepEqual(ff.StepFloors, want) || len(ff.NoSteps) != 0 {
		t.Errorf("run again with StepFloors %+v, NoSteps %+v; want %+v and none", ff.StepFloors, ff.NoSteps, want)
	}
	floored, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	if floored.Time != full.Time || len(floored.FastForwardSteps) != 0 {
		t.Errorf("skips past step %d: time %v, step skips %+v; full: %v", floor, floored.Time, floored.FastForwardSteps, full.Time)
	}
	// A second failure: the kernel's other skips may have missed such
	// stretches too; every block's steps are simulated.
	se.Again(&ff, 1)
	if want := []arch.BlockRange{arch.WholeGrid(0)}; !reflect.DeepEqual(ff.NoSteps, want) {
		t.Errorf("run again with NoSteps %+v, want %+v", ff.NoSteps, want)
	}
	again, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	if again.Time != full.Time || len(again.FastForwardSteps) != 0 {
		t.Errorf("steps off: time %v, step skips %+v; full: %v", again.Time, again.FastForwardSteps, full.Time)
	}
}

// The third wave's k-steps slow down after the first 120 (four products a
// step after one): its skip's check finds slower steps, and the run made
// again measures the skips of this grid and the later ones past a floor
// twice the failed skip's step; its check failing again, the run made
// again simulates every block's steps, of this grid and the later ones
// (the kernel has slow stretches its other skips may not have met).
func TestStepSkipCheckFailsSlowerLate(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	ff := arch.DefaultFastForward
	ff.Steps = true
	_, err := runGrid(t, m, lateGrid(func(c, kt int) bool { return c >= 16 && kt >= 120 }), &ff)
	var se *arch.StepCheckError
	if !errors.As(err, &se) || se.Skip.First != 16 || se.Skip.CheckPeriod <= se.Skip.Period {
		t.Fatalf("got %v, want a failed step check of the third wave, slower after the skip", err)
	}
	se.Again(&ff, 2)
	floor := max(2*se.Skip.From, se.Skip.From+2*ff.Measure)
	if want := []arch.StepFloor{{Grid: 0, Step: floor}, {Grid: 1, Step: floor}}; !reflect.DeepEqual(ff.StepFloors, want) || len(ff.NoSteps) != 0 {
		t.Errorf("run again with StepFloors %+v, NoSteps %+v; want %+v and none", ff.StepFloors, ff.NoSteps, want)
	}
	_, err = runGrid(t, m, lateGrid(func(c, kt int) bool { return c >= 16 && kt >= 120 }), &ff)
	if !errors.As(err, &se) || se.Skip.First != 16 || se.Skip.From <= floor || se.Skip.CheckPeriod <= se.Skip.Period {
		t.Fatalf("got %v, want a failed step check of the third wave past step %d, slower after the skip", err, floor)
	}
	se.Again(&ff, 2)
	if want := []arch.BlockRange{arch.WholeGrid(0), arch.WholeGrid(1)}; !reflect.DeepEqual(ff.NoSteps, want) {
		t.Errorf("run again with NoSteps %+v, want %+v", ff.NoSteps, want)
	}
}

// Steps whose intervals never settle — every third k-step of every block
// runs four products — are not skipped, and the run says why: every
// block-step simulated, two windows formed and refused as unsteady, the
// closest beyond the tolerance.
func TestStepWaitsUnsteady(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	ff := arch.DefaultFastForward
	ff.Steps = true
	st, err := runGrid(t, m, lateGrid(func(c, kt int) bool { return kt%3 == 0 }), &ff)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.FastForwardSteps) != 0 || len(st.StepWaits) != 1 {
		t.Fatalf("step skips %+v, waits %+v: want none, and the grid's wait", st.FastForwardSteps, st.StepWaits)
	}
	w := st.StepWaits[0]
	if w.Steps != 24*200 || w.Windows == 0 || w.Unsteady == 0 || w.Spread <= ff.Tolerance && w.Gap <= ff.Tolerance/5 {
		t.Errorf("wait %+v: want all 4800 block-steps simulated, unsteady windows, the closest beyond the tolerance", w)
	}
}

// lateGrid is steppedGrid (3 waves of 8 CTAs, 200 k-steps, base 0) whose
// CTA c's k-steps kt run four products instead of one where heavy(c, kt).
func lateGrid(heavy func(c, kt int) bool) isa.Grid {
	const k = 64 * 200
	steps := func(c int, cur *isa.StepCursor) isa.Stream {
		return ctaSteps(c, 0, k, cur, nil, func(kt int) bool { return heavy(c, kt) })
	}
	return isa.Grid{Name: "late", CTAs: 8 * 3,
		CTA:       func(c int) isa.Stream { return steps(c, nil) },
		Steps:     steps,
		Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
}

// A grid whose third wave's k-steps speed up after the first 120 (four
// products a step, then one): the first two waves' step skips pass their
// checks, the third's finds faster steps, fails and names its lowest
// block; run again with the steps of that block and the ones after it
// simulated (StepCheckError.Again), the run keeps the first two waves'
// skips — the same ones, the run being the same up to them — and
// simulates the third wave's steps, within the skips' estimate of the
// full run.
func TestStepSkipCheckFailsLate(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := lateGrid(func(c, kt int) bool { return c >= 16 && kt < 120 })
	full, ff, se, err := fullAndStepped(t, m, g)
	if se == nil || se.Grid != 0 || se.Skip.First != 16 || se.Skip.CTAs != 8 || se.Skip.CheckPeriod >= se.Skip.Period {
		t.Fatalf("got %v, want a failed step check of the third wave (blocks 16–23), faster after the skip", err)
	}
	two := ff
	se.Again(&two, 2)
	if want := []arch.BlockRange{{Grid: 0, From: 16, To: math.MaxInt}, {Grid: 1, From: 16, To: math.MaxInt}}; !reflect.DeepEqual(two.NoSteps, want) {
		t.Errorf("run again with NoSteps %+v, want %+v", two.NoSteps, want)
	}
	se.Again(&ff, 1)
	again := againLikeFull(t, m, g, &ff, full)
	if len(again.FastForwardSteps) != 2 {
		t.Fatalf("step skips %+v run again, want the first two waves'", again.FastForwardSteps)
	}
	// The same skips as a run whose third wave is like the first two:
	// the run made again is the same up to the third wave's start.
	plain := arch.DefaultFastForward
	plain.Steps = true
	alike, err := runGrid(t, m, lateGrid(func(c, kt int) bool { return false }), &plain)
	if err != nil {
		t.Fatal(err)
	}
	if len(alike.FastForwardSteps) < 2 || !reflect.DeepEqual(again.FastForwardSteps, alike.FastForwardSteps[:2]) {
		t.Errorf("step skips run again %+v, want the first two of a run with an alike third wave, %+v", again.FastForwardSteps, alike.FastForwardSteps)
	}
	for i, s := range again.FastForwardSteps {
		if !s.Checked || s.First != 8*i || s.CTAs != 8 {
			t.Errorf("step skip %+v: want checked, blocks %d–%d", s, 8*i, 8*i+7)
		}
	}
}

// A grid whose third wave's steps turn four times lighter inside its step
// skip, its blocks started apart (the second wave's blocks 9 and 13 ran
// their first three k-steps with four products): the blocks ahead take the
// skip first and run the light steps while those behind still run heavy
// ones to reach it, so the leading ones finish before the check's
// intervals are in. Their own steps after the skip are the check (the
// skip left room for it at the pace measured): it fails, faster, and the
// run made again simulates the third wave's steps, within the skips'
// estimate of the full run. (Before, the skip stayed unchecked and the
// run came out 4.8 % long — within its estimate, where an unchecked skip
// counts whole.)
func TestStepSkipCheckFailsAhead(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := lateGrid(func(c, kt int) bool { return c >= 16 && kt < 120 || c >= 8 && c < 16 && c%4 == 1 && kt < 3 })
	full, ff, se, err := fullAndStepped(t, m, g)
	if se == nil || se.Grid != 0 || se.Skip.First != 16 || se.Skip.CheckPeriod >= se.Skip.Period || se.Skip.CheckHits != -1 || !se.Ahead || se.Block < 16 ||
		!strings.Contains(err.Error(), fmt.Sprintf("block %d's, which finished before", se.Block)) {
		t.Fatalf("got %v, want a failed step check of the third wave (blocks 16–23) decided by a block that finished first, faster", err)
	}
	se.Again(&ff, 1)
	for _, s := range againLikeFull(t, m, g, &ff, full).FastForwardSteps {
		if s.First >= 16 {
			t.Errorf("step skip %+v of the third wave run again: its blocks' steps were to be simulated", s)
		}
	}
}

// sameCoreWork reports (as errors) every core's lane instructions, path
// bytes and vector repeats of run a (how: "fast-forwarded", …) that differ
// from those of the full run b.
func sameCoreWork(t *testing.T, how string, a, b *arch.Stats) {
	t.Helper()
	for i := range b.Cores {
		for l := range b.Cores[i].Lanes {
			if x, y := a.Cores[i].Lanes[l].Instrs, b.Cores[i].Lanes[l].Instrs; x != y {
				t.Errorf("core %d lane %d: %d instructions %s, %d in full", i, l, x, how, y)
			}
		}
		if x, y := a.Cores[i].PathBytes, b.Cores[i].PathBytes; !reflect.DeepEqual(x, y) {
			t.Errorf("core %d: path bytes %v %s, %v in full", i, x, how, y)
		}
		if x, y := a.Cores[i].VectorRepeats, b.Cores[i].VectorRepeats; x != y {
			t.Errorf("core %d: vector repeats %d %s, %d in full", i, x, how, y)
		}
	}
}

// AppendCounters (what step skips read at each interval) appends what
// Counters reports, in fast-forward's layout, at any time of a run: lanes'
// time by cause — the current interval's too — and instructions, path
// bytes, vector repeats, buffer means.
func TestAppendCounters(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
	if err != nil {
		t.Fatal(err)
	}
	g := steppedGrid(nil)
	if err := chip.Start(isa.Program{Name: g.Name, Grids: []isa.Grid{g}}); err != nil {
		t.Fatal(err)
	}
	for _, at := range []sim.Time{20 * sim.Microsecond, 20*sim.Microsecond + 333, 90 * sim.Microsecond} {
		if err := chip.Engine().RunUntil(at); err != nil {
			t.Fatal(err)
		}
		now := chip.Engine().Now()
		for i := range 4 {
			core, ok := chip.Core(i).(arch.GridCore)
			if !ok {
				t.Fatal("a GPU core is not an arch.GridCore")
			}
			cs := core.Counters(now)
			var ints []int64
			var floats []float64
			for _, l := range cs.Lanes {
				for _, x := range l.Time {
					ints = append(ints, int64(x))
				}
				ints = append(ints, int64(l.Instrs))
			}
			ints = append(append(ints, cs.PathBytes...), cs.VectorRepeats)
			for _, b := range cs.Buffers {
				floats = append(floats, b.Mean)
			}
			a, ok := core.(arch.CounterAppender)
			if !ok {
				t.Fatal("a GPU core is not an arch.CounterAppender")
			}
			gotI, gotF := a.AppendCounters([]int64{-1}, nil, now)
			if !reflect.DeepEqual(gotI[1:], ints) || !reflect.DeepEqual(gotF, floats) || gotI[0] != -1 {
				t.Errorf("at %v core %d: AppendCounters\n%v %v\nCounters\n%v %v", now, i, gotI, gotF, ints, floats)
			}
		}
	}
}

// Streams generated ahead of the SMs (arch.Ahead, the default with two
// processors) give the run of streams generated as read, statistic for
// statistic — with step skips, whose cursors the generators read on the
// other goroutine, and with a check that fails.
func TestStepSkipsReadAhead(t *testing.T) {
	if arch.NewAhead() == nil {
		t.Skip("GOMAXPROCS 1")
	}
	run := func(m *machines.Machine, g isa.Grid, noAhead bool) (*arch.Stats, error) {
		t.Helper()
		ff := arch.DefaultFastForward
		ff.Steps = true
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing, FastForward: &ff, NoReadAhead: noAhead})
		if err != nil {
			t.Fatal(err)
		}
		return chip.Run(isa.Program{Name: g.Name, Grids: []isa.Grid{g, g}})
	}
	fast := archtest.Machine(t, "a100", "machine.cores=4")
	slow := archtest.Machine(t, "a100", "machine.cores=4", "machine.gm.bandwidth=20GB/s")
	for i, c := range []struct {
		m *machines.Machine
		g isa.Grid
	}{{fast, steppedGrid(nil)}, {slow, steppedGrid(func(kt int) bool { return kt >= 120 })}} {
		plain, perr := run(c.m, c.g, true)
		// Whether the worker fills a chunk before the engine needs it
		// depends on the scheduler (these grids are small, and go test
		// runs packages side by side): the run is made again until one
		// was, each time with the same result.
		for try := 0; ; try++ {
			filled := arch.AheadFilled()
			ahead, aerr := run(c.m, c.g, false)
			var pe, ae *arch.StepCheckError
			errors.As(perr, &pe)
			errors.As(aerr, &ae)
			if fmt.Sprint(perr) != fmt.Sprint(aerr) || !reflect.DeepEqual(pe, ae) || !reflect.DeepEqual(plain, ahead) {
				t.Errorf("case %d read ahead:\n%+v (%+v)\nas read:\n%+v (%+v)", i, ahead, ae, plain, pe)
			}
			if arch.AheadFilled() > filled {
				break
			}
			if try == 20 {
				t.Errorf("case %d: no chunk generated ahead in %d runs", i, try+1)
				break
			}
		}
		if i == 0 && (perr != nil || len(plain.FastForwardSteps) == 0) || i == 1 && perr == nil {
			t.Errorf("case %d: %v, %d step skips: want skips, and a failed check in case 1", i, perr, len(plain.FastForwardSteps))
		}
	}
}

// A grid whose k-steps from the 120th read A tiles no CTA shares (L2
// misses) at the pace of those before (misses cost no latency): the step skips
// measured before pass their checks, but a check's L2 hit fraction moved
// away from the measured one (HitsMoved) — the skipped steps' bytes stand
// for the measured hits, so the report says they may be off — while the
// skips that measured and checked the same steps' hits did not move.
func TestStepSkipHitsMoved(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4", "machine.gm.latency_cycles=0")
	ff := arch.DefaultFastForward
	ff.Steps = true
	for _, c := range []struct {
		name  string
		slow  func(kt int) bool
		moved bool
	}{{"hits alike", nil, false}, {"misses from step 120", func(kt int) bool { return kt >= 120 }, true}} {
		fast, err := runGrid(t, m, steppedGrid(c.slow), &ff)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		moved := 0
		for _, s := range fast.FastForwardSteps {
			if s.Hits < 0 || s.Checked && s.CheckHits < 0 {
				t.Errorf("%s: step skip %+v: no hit fractions", c.name, s)
			}
			if !s.Checked && s.CheckPeriod == 0 && s.CheckHits != -1 {
				t.Errorf("%s: step skip %+v: no check, but its hits %v", c.name, s, s.CheckHits)
			}
			if s.HitsMoved != (s.Checked && math.Abs(s.CheckHits-s.Hits) > ff.Hits) {
				t.Errorf("%s: step skip %+v: HitsMoved %v", c.name, s, s.HitsMoved)
			}
			if s.HitsMoved {
				moved++
			}
		}
		if len(fast.FastForwardSteps) == 0 || (moved > 0) != c.moved {
			t.Errorf("%s: %d of %d step skips' hits moved, want some: %v", c.name, moved, len(fast.FastForwardSteps), c.moved)
		}
	}
}

// A grid whose blocks all run the same steps (one Class): the first
// wave's step skip is checked, and the later waves', measured at the pace
// that check kept, take it for their own (arch.StepSkip.Paced: no check
// measured after them, its period theirs, their hits after them not
// measured), the work exactly the
// full run's and the time within the estimate; without a Class no skip is
// paced (the blocks' steps are not known alike). Where the third wave's blocks
// are a class of their own (their steps after the 120th run four products
// where the first waves' ran one), its skip is checked and fails; where a
// Class says its blocks alike though they are not, the skip takes the
// first wave's check for its own and the slower steps go unseen (what the
// Class promises, as for wave skips).
func TestStepSkipPaced(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := steppedGrid(nil)
	ff := arch.DefaultFastForward
	ff.Steps = true
	checked, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	g.Class = func(int) int { return 0 }
	full, err := runGrid(t, m, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	if len(fast.FastForwardSteps) != 3 || len(checked.FastForwardSteps) != 3 {
		t.Fatalf("step skips %+v (without classes %+v), want one a wave", fast.FastForwardSteps, checked.FastForwardSteps)
	}
	first := fast.FastForwardSteps[0]
	if first.Paced || !first.Checked || first.CheckPeriod == 0 {
		t.Errorf("first wave's skip %+v: want checked after it", first)
	}
	for i, s := range fast.FastForwardSteps {
		if i > 0 && (!s.Paced || !s.Checked || s.CheckPeriod != first.CheckPeriod || s.CheckHits != -1 || s.HitsMoved) {
			t.Errorf("skip %d %+v: want paced by the first's check (%+v)", i, s, first)
		}
		// Its period keeps the checked pace and its shift is its steps
		// at its period (the estimate above would grow with an error
		// that shrank both: it allows |CheckPeriod − Period| a step).
		if d := math.Abs(float64(s.Period - first.CheckPeriod)); i > 0 && d > ff.Tolerance*float64(first.CheckPeriod) {
			t.Errorf("skip %d: period %v, %.3g from the checked pace %v (tolerance %g)", i, s.Period, d, first.CheckPeriod, ff.Tolerance)
		}
		if d := math.Abs(float64(s.Shift) - float64(s.Steps)*float64(s.Period)); d > float64(s.Steps) {
			t.Errorf("skip %d: shift %v for %d steps of %v", i, s.Shift, s.Steps, s.Period)
		}
		if x := checked.FastForwardSteps[i]; x.Paced || !x.Checked || x.CheckPeriod == 0 {
			t.Errorf("skip %d without classes %+v: want checked after it", i, x)
		}
	}
	withinStepEstimate(t, "with paced skips", fast, full)
	if fast.GMReadBytes != full.GMReadBytes || fast.GMWriteBytes != full.GMWriteBytes || fast.MMADFlops != full.MMADFlops {
		t.Errorf("GM bytes %d/%d, flops %g with paced skips; %d/%d, %g in full", fast.GMReadBytes, fast.GMWriteBytes, fast.MMADFlops, full.GMReadBytes, full.GMWriteBytes, full.MMADFlops)
	}
	sameCoreWork(t, "with paced skips", fast, full)
	// Decided on one window (pacedStepSkip: two windows would take 8
	// intervals of the wave's steps, one takes 4).
	if len(fast.StepWaits) != 1 || fast.StepWaits[0].Paced == 0 {
		t.Errorf("step waits %+v: want skips decided on one window at the checked pace", fast.StepWaits)
	}

	late := func(c, kt int) bool { return c >= 16 && kt >= 120 }
	for _, c := range []struct {
		name  string
		class func(int) int
		fails bool
	}{{"the third wave a class of its own", func(c int) int { return c / 16 }, true}, {"a Class that says wrong", func(int) int { return 0 }, false}} {
		g := lateGrid(late)
		g.Class = c.class
		st, err := runGrid(t, m, g, &ff)
		var se *arch.StepCheckError
		if failed := errors.As(err, &se) && se.Skip.First == 16 && se.Skip.CheckPeriod > se.Skip.Period; failed != c.fails {
			t.Errorf("%s: got %v, want a failed check of the third wave: %v", c.name, err, c.fails)
		}
		if !c.fails && (err != nil || len(st.FastForwardSteps) != 3 || !st.FastForwardSteps[2].Paced) {
			t.Errorf("%s: %v, skips %+v: want the third wave's paced", c.name, err, st.FastForwardSteps)
		}
	}
}

// fullAndStepped runs grid g on m fully, then with step skips (settings
// ff), and returns the full run, ff and the error the second run stopped
// with, as a failed step check (nil: it did not).
func fullAndStepped(t *testing.T, m *machines.Machine, g isa.Grid) (full *arch.Stats, ff arch.FastForward, se *arch.StepCheckError, err error) {
	t.Helper()
	if full, err = runGrid(t, m, g, nil); err != nil {
		t.Fatal(err)
	}
	ff = arch.DefaultFastForward
	ff.Steps = true
	_, err = runGrid(t, m, g, &ff)
	errors.As(err, &se)
	return full, ff, se, err
}

// againLikeFull runs grid g on m again with ff (as a failed check's Again
// set it up) and holds it to the full run: its time within the step
// skips' estimate, its GM reads and flops the same; it returns the run.
func againLikeFull(t *testing.T, m *machines.Machine, g isa.Grid, ff *arch.FastForward, full *arch.Stats) *arch.Stats {
	t.Helper()
	again, err := runGrid(t, m, g, ff)
	if err != nil {
		t.Fatal(err)
	}
	withinStepEstimate(t, "run again", again, full)
	if again.GMReadBytes != full.GMReadBytes || again.MMADFlops != full.MMADFlops {
		t.Errorf("GM reads %d, flops %g run again; %d, %g in full", again.GMReadBytes, again.MMADFlops, full.GMReadBytes, full.MMADFlops)
	}
	return again
}

// withinStepEstimate reports (as an error) a run's time further from the
// full run's than its step skips' estimate: each skip's steps times the
// larger of its check's distance from its period and its measured spread,
// plus a step (the step term of programs' fastForwardUncertainty).
func withinStepEstimate(t *testing.T, what string, run, full *arch.Stats) {
	t.Helper()
	var unc float64
	for _, s := range run.FastForwardSteps {
		unc += float64(s.Steps)*math.Max(math.Abs(float64(s.CheckPeriod-s.Period)), float64(s.Spread)) + float64(s.Period)
	}
	if d := math.Abs(float64(run.Time - full.Time)); d > unc {
		t.Errorf("time %v %s, %v in full: %.3g ps apart, estimate ±%.3g", run.Time, what, full.Time, d, unc)
	}
}
