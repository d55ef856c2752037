package gpu_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// runKernels runs grids on 4 SMs, fast-forwarded with ff (nil: fully
// simulated), and returns the statistics and the kernels' times.
func runKernels(t *testing.T, ff *arch.FastForward, grids ...isa.Grid) (*arch.Stats, []arch.GridTimes) {
	return runKernelsOn(t, archtest.Machine(t, "a100", "machine.cores=4"), ff, grids...)
}

// runKernelsOn is runKernels on machine m.
func runKernelsOn(t *testing.T, m *machines.Machine, ff *arch.FastForward, grids ...isa.Grid) (*arch.Stats, []arch.GridTimes) {
	t.Helper()
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing, FastForward: ff})
	if err != nil {
		t.Fatal(err)
	}
	st, err := chip.Run(isa.Program{Name: "kernels", Grids: grids})
	if err != nil {
		t.Fatal(err)
	}
	return st, chip.GridTimes()
}

// kernelGrid is a grid of 5 waves of periodic CTAs reading their tiles at
// base (alike for any base: one class).
func kernelGrid(name string, base int64) isa.Grid {
	return isa.Grid{Name: name, CTAs: 8 * 5, CTA: func(int) isa.Stream { return ctaAt(base) },
		Class:     func(int) int { return 0 },
		Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
}

// Kernel skips (FastForward.Kernels): of five alike kernels reading the same
// tiles (the first from a cold L2), those whose two predecessors took the
// same time are not run and stand for the one before — here exactly: the
// run's time and every work counter equal the full simulation's, with
// fewer events, and each kernel's time is its full run's. A kernel that
// differs (deeper k-loop) is run, and the kernels after it too until two
// alike ones agree again.
func TestKernelSkips(t *testing.T) {
	grids := []isa.Grid{kernelGrid("k0", 0), kernelGrid("k1", 0), kernelGrid("k2", 0), kernelGrid("k3", 0), kernelGrid("k4", 0)}
	full, fullTimes := runKernels(t, nil, grids...)
	ff := arch.DefaultFastForward
	ff.Kernels = true
	fast, times := runKernels(t, &ff, grids...)
	t.Logf("kernel skips %+v; events %d → %d", fast.FastForwardKernels, full.Events, fast.Events)
	if len(fast.FastForwardKernels) < 2 {
		t.Fatalf("kernel skips %+v: want the last two kernels (at least) skipped", fast.FastForwardKernels)
	}
	for _, k := range fast.FastForwardKernels {
		if k.Index < 2 || k.LikeIndex != k.Index-1 || k.Like != grids[k.Index-1].Name || k.Shift <= 0 {
			t.Errorf("kernel skip %+v: want a kernel after two others, standing for the one before it", k)
		}
	}
	if fast.Time != full.Time {
		t.Errorf("time %v with kernel skips, %v in full", fast.Time, full.Time)
	}
	if fast.Events >= full.Events {
		t.Errorf("events %d with kernel skips, %d in full", fast.Events, full.Events)
	}
	if fast.GMReadBytes != full.GMReadBytes || fast.GMWriteBytes != full.GMWriteBytes || fast.MMADFlops != full.MMADFlops || fast.Traffic != full.Traffic {
		t.Errorf("work with kernel skips: GM %d/%d, flops %g, traffic %+v; in full %d/%d, %g, %+v", fast.GMReadBytes, fast.GMWriteBytes, fast.MMADFlops, fast.Traffic, full.GMReadBytes, full.GMWriteBytes, full.MMADFlops, full.Traffic)
	}
	sameCoreWork(t, "with kernel skips", fast, full)
	sameTimes(t, times, fullTimes)
	// Each kernel's events are what simulating it cost: they add up to
	// the run's; a kernel skipped whole executes only its launch's wake-up
	// (alike kernels, simulated, execute as many as each other).
	for _, c := range []struct {
		st    *arch.Stats
		times []arch.GridTimes
	}{{full, fullTimes}, {fast, times}} {
		var sum uint64
		for _, g := range c.times {
			sum += g.Events
		}
		if sum != c.st.Events {
			t.Errorf("kernels' events %d, the run's %d", sum, c.st.Events)
		}
	}
	for _, k := range fast.FastForwardKernels {
		if e := times[k.Index].Events; e > 1 {
			t.Errorf("kernel %s skipped whole executed %d events", k.Grid, e)
		}
	}
	if times[1].Events != fullTimes[1].Events || times[1].Events == 0 {
		t.Errorf("kernel k1 simulated with %d events, in full %d", times[1].Events, fullTimes[1].Events)
	}
	// The skipped kernels' GM reads (alike kernels read alike).
	if want := int64(len(fast.FastForwardKernels)) * full.GMReadBytes / int64(len(grids)); fast.SkippedGMReadBytes != want {
		t.Errorf("skipped GM reads %d, want %d kernels' %d", fast.SkippedGMReadBytes, len(fast.FastForwardKernels), want)
	}
	// Without a launch latency (the grid before a skipped one finishes,
	// it starts and ends, and the next launches at one simulated time)
	// each kernel's times are still the full run's.
	m := archtest.Machine(t, "a100", "machine.cores=4", "machine.core.launch_ns=0")
	full0, fullTimes0 := runKernelsOn(t, m, nil, grids...)
	fast0, times0 := runKernelsOn(t, m, &ff, grids...)
	if len(fast0.FastForwardKernels) < 2 || fast0.Time != full0.Time {
		t.Errorf("launch 0: kernel skips %+v, time %v (full %v)", fast0.FastForwardKernels, fast0.Time, full0.Time)
	}
	sameTimes(t, times0, fullTimes0)

	// A deeper kernel between: not alike, run; the two after it do not
	// agree with it, the last agrees with the one before it (alike, the
	// same time).
	deep := kernelGrid("deep", 0)
	deep.CTA = func(int) isa.Stream { return ctaDeep(0, 1024) }
	mixed := []isa.Grid{grids[0], grids[1], deep, grids[3], grids[4], kernelGrid("k5", 0)}
	st, _ := runKernels(t, &ff, mixed...)
	for _, k := range st.FastForwardKernels {
		if k.Index < 5 {
			t.Errorf("kernel %s skipped (%+v): a kernel of other instructions is among the two before it", k.Grid, k)
		}
	}
	if len(st.FastForwardKernels) != 1 {
		t.Errorf("kernel skips %+v: want the last kernel's", st.FastForwardKernels)
	}
}

// Tail skips: of three alike kernels of 10 waves whose first reads from a
// cold L2 (so the second's time differs and no whole kernel is skipped),
// the third runs its first waves, which take the second's time, and its
// rest stands for the second's: the run's time and every work counter as
// the full simulation's, fewer events, the L2, LLC and HBM reads adding
// up to the global-memory reads.
func TestKernelTailSkips(t *testing.T) {
	grids := make([]isa.Grid, 3)
	for i := range grids {
		grids[i] = kernelGrid(fmt.Sprint("k", i), 0)
		grids[i].CTAs = 8 * 10
	}
	full, fullTimes := runKernels(t, nil, grids...)
	ff := arch.DefaultFastForward
	ff.Kernels = true
	fast, times := runKernels(t, &ff, grids...)
	checkTailSkip(t, fast, full, times, fullTimes, false)
}

// checkTailSkip checks a run of three kernels of 10 waves of 8 blocks
// whose third's rest was skipped after its first 5 waves (its own blocks'
// work where own) against the full run: the time and the third kernel's
// within the skip's allowance, fewer events, the L2, LLC and HBM reads
// adding up to the GM reads, the work exact (sameWorkTotals).
func checkTailSkip(t *testing.T, fast, full *arch.Stats, times, fullTimes []arch.GridTimes, own bool) {
	t.Helper()
	t.Logf("kernel skips %+v; events %d → %d", fast.FastForwardKernels, full.Events, fast.Events)
	k := fast.FastForwardKernels
	// The GM reads not looked up: the blocks not run (the rest of the
	// third kernel, those its and the others' wave skips skipped) of
	// 240 alike.
	skipped := 3*8*10 - k[0].FromCTA - 2*8*10
	for _, s := range fast.FastForward {
		skipped += s.Waves * s.WaveCTAs
	}
	if want := int64(skipped) * full.GMReadBytes / (3 * 8 * 10); len(k) == 1 && fast.SkippedGMReadBytes != want {
		t.Errorf("skipped GM reads %d, want %d blocks' %d", fast.SkippedGMReadBytes, skipped, want)
	}
	if len(k) != 1 || k[0].Index != 2 || k[0].FromCTA != 8*5 || k[0].OwnWork != own {
		t.Fatalf("kernel skips %+v: want the third kernel's rest after its 5 waves (own work: %v)", k, own)
	}
	if d := fast.Time - full.Time; max(d, -d) > k[0].Allowed {
		t.Errorf("time %v with a tail skip, %v in full (allowed %v)", fast.Time, full.Time, k[0].Allowed)
	}
	if a, b := times[2].Finished-times[2].Started, fullTimes[2].Finished-fullTimes[2].Started; max(a-b, b-a) > k[0].Allowed {
		t.Errorf("third kernel %v with a tail skip, %v in full", a, b)
	}
	if fast.Events >= full.Events {
		t.Errorf("events %d with a tail skip, %d in full", fast.Events, full.Events)
	}
	if tr := fast.Traffic; tr.L2Read+tr.LLCRead+tr.HBMRead != tr.GMRead || tr.GMRead != full.Traffic.GMRead || tr.GMWrite != full.Traffic.GMWrite {
		t.Errorf("traffic with a tail skip %+v, in full %+v", tr, full.Traffic)
	}
	sameWorkTotals(t, "with a tail skip", fast, full)
}

// sameTimes compares the kernel times of a fast-forwarded run with the
// full run's (not their events: what each cost).
func sameTimes(t *testing.T, times, full []arch.GridTimes) {
	t.Helper()
	for i := range times {
		if times[i].Launched != full[i].Launched || times[i].Started != full[i].Started || times[i].Finished != full[i].Finished {
			t.Errorf("kernel %d: launched, started, finished %v %v %v fast-forwarded; %v %v %v in full", i, times[i].Launched, times[i].Started, times[i].Finished, full[i].Launched, full[i].Started, full[i].Finished)
		}
	}
}

// Kernels that alternate (A B A B A): A's CTAs read the same tiles (L2
// hits after the first), each B's CTAs tiles of their own in a region of
// its own (misses), with enough products a k-step that both take the same
// time within 1 %. The fourth and the third do not agree in misses, so the
// fifth cannot stand for the fourth; but the second and the fourth agree:
// it stands for the third, the one two before it — the run's time, work
// and kernels' times the full simulation's. (The fourth is run: the first
// read its tiles from a cold L2, unlike the third.)
func TestKernelSkipsAlternate(t *testing.T) {
	const products = 128
	a := func(name string) isa.Grid {
		g := kernelGrid(name, 0)
		g.CTA = func(int) isa.Stream { return ctaProducts(0, 512, products, false) }
		return g
	}
	b := func(name string, region int64) isa.Grid {
		g := kernelGrid(name, region<<30)
		g.CTA = func(c int) isa.Stream { return ctaProducts(region<<30+int64(c)<<22, 512, products, false) }
		return g
	}
	grids := []isa.Grid{a("a0"), b("b1", 1), a("a2"), b("b3", 2), a("a4")}
	full, fullTimes := runKernels(t, nil, grids...)
	ff := arch.DefaultFastForward
	ff.Kernels = true
	fast, times := runKernels(t, &ff, grids...)
	if k := fast.FastForwardKernels; len(k) != 1 || k[0].Grid != "a4" || k[0].Like != "a2" || k[0].LikeIndex != 2 {
		t.Fatalf("kernel skips %+v: want a4's, standing for a2", k)
	}
	if fast.Time != full.Time || fast.Events >= full.Events {
		t.Errorf("time %v, events %d with kernel skips; %v, %d in full", fast.Time, fast.Events, full.Time, full.Events)
	}
	if fast.GMReadBytes != full.GMReadBytes || fast.MMADFlops != full.MMADFlops || fast.Traffic != full.Traffic {
		t.Errorf("work with kernel skips: GM reads %d, flops %g, traffic %+v; in full %d, %g, %+v", fast.GMReadBytes, fast.MMADFlops, fast.Traffic, full.GMReadBytes, full.MMADFlops, full.Traffic)
	}
	sameTimes(t, times, fullTimes)
}

// epilogueGrid is kernelGrid's 10 waves of CTAs with step markers (8
// k-steps) and extra(c) more instructions (extraInstr's) in CTA c: after
// its store, or after the at-th instruction after the marker of k-step
// step (step ≥ 0); slow(c, kt), if not nil, says whether CTA c's k-step
// kt reads its A tile from a region of its own (L2 misses); class is its
// isa.Grid.Class.
func epilogueGrid(name string, class, extra func(c int) int, step, at int, slow func(c, kt int) bool) isa.Grid {
	cta := func(c int, cur *isa.StepCursor) isa.Stream {
		var sl func(int) bool
		if slow != nil {
			sl = func(kt int) bool { return slow(c, kt) }
		}
		s := ctaSteps(c, 0, 512, cur, sl, nil)
		return func(yield func(isa.Instr) bool) {
			more := func() bool {
				for range extra(c) {
					if !yield(extraInstr()) {
						return false
					}
				}
				return true
			}
			k, since := -1, 0
			for in := range s {
				if !yield(in) {
					return
				}
				if in.Op == isa.OpStep {
					k, since = in.M, 0
					continue
				}
				if since++; step >= 0 && k == step && since == at && !more() {
					return
				}
			}
			if step < 0 {
				more()
			}
		}
	}
	g := kernelGrid(name, 0)
	g.CTAs = 8 * 10
	g.Class = class
	g.CTA = func(c int) isa.Stream {
		s := cta(c, &isa.StepCursor{})
		return func(yield func(isa.Instr) bool) { // (without the markers)
			for in := range s {
				if in.Op != isa.OpStep && !yield(in) {
					return
				}
			}
		}
	}
	g.Steps = cta
	return g
}

// extraInstr is epilogueGrid's extra instruction (a vector add).
var extraInstr = func() isa.Instr { return gpu.Elementwise(isa.VAdd, 56<<10, 56<<10, 56<<10, 2048, fp.FP32) }

// sameWorkTotals compares the work counters of two runs over the cores
// (GM bytes, flops, vector repeats, each lane's instructions): skipped
// blocks' work is spread over the cores by their shares, so per core
// (sameCoreWork) only alike grids' tail skips match.
func sameWorkTotals(t *testing.T, what string, fast, full *arch.Stats) {
	t.Helper()
	totals := func(st *arch.Stats) (int64, []uint64) {
		var repeats int64
		lanes := make([]uint64, len(st.Cores[0].Lanes))
		for i := range st.Cores {
			repeats += st.Cores[i].VectorRepeats
			for l := range lanes {
				lanes[l] += st.Cores[i].Lanes[l].Instrs
			}
		}
		return repeats, lanes
	}
	r, lanes := totals(fast)
	fr, fullLanes := totals(full)
	if r != fr || !slices.Equal(lanes, fullLanes) || fast.GMReadBytes != full.GMReadBytes || fast.GMWriteBytes != full.GMWriteBytes || fast.MMADFlops != full.MMADFlops {
		t.Errorf("work %s: vector repeats %d, instructions by lane %v, GM %d/%d, flops %g; in full %d, %v, %d/%d, %g", what, r, lanes, fast.GMReadBytes, fast.GMWriteBytes, fast.MMADFlops, fr, fullLanes, full.GMReadBytes, full.GMWriteBytes, full.MMADFlops)
	}
}

// Tail skips of a kernel alike the one before it but for its epilogue
// (SGEMM-cube's hh GEMM adds the other products' sum to its own): its
// first waves take the time of the one before's, its rest stands for
// that one's rest, and its rest's work is its own blocks' — every work
// counter (GM bytes, flops, each lane's instructions, vector repeats)
// the full run's exactly, though it runs more vector instructions than
// the kernel it stands for; L2, LLC and HBM reads add up to its GM reads.
// So too with two classes in uneven shares whose blocks drift apart (some
// measured blocks still running at the decision), where only one class's
// epilogue differs, and with clusters of two whose ranks are the classes.
// A kernel whose main loop differs — the same instructions in its first
// k-step, or in its last after that step's first instruction — is not
// tail-skipped; a grid whose blocks of a class are not alike fails.
func TestKernelTailSkipsOtherEpilogue(t *testing.T) {
	one, none, three := func(int) int { return 0 }, func(int) int { return 0 }, func(int) int { return 3 }
	ff := arch.DefaultFastForward
	ff.Kernels = true
	grids := []isa.Grid{epilogueGrid("k0", one, none, -1, 0, nil), epilogueGrid("k1", one, none, -1, 0, nil), epilogueGrid("k2", one, three, -1, 0, nil)}
	full, fullTimes := runKernels(t, nil, grids...)
	fast, times := runKernels(t, &ff, grids...)
	checkTailSkip(t, fast, full, times, fullTimes, true)

	class := func(c int) int { return b2i(c%4 == 0) }
	slow := func(c, _ int) bool { return c%3 == 0 }
	for _, cl := range []struct {
		name    string
		class   func(int) int
		cluster int
	}{{"classes", class, 1}, {"clusters", func(c int) int { return c % 2 }, 2}} {
		more := func(c int) int { return 3 * cl.class(c) }
		gs := []isa.Grid{epilogueGrid("k0", cl.class, none, -1, 0, slow), epilogueGrid("k1", cl.class, none, -1, 0, slow), epilogueGrid("k2", cl.class, more, -1, 0, slow)}
		for i := range gs {
			gs[i].CTAs, gs[i].Cluster = 82, cl.cluster
		}
		full, _ := runKernels(t, nil, gs...)
		fast, _ := runKernels(t, &ff, gs...)
		if k := fast.FastForwardKernels; len(k) != 1 || !k[0].OwnWork {
			t.Errorf("%s: kernel skips %+v: want the third kernel's rest, with its own work", cl.name, k)
			continue
		}
		sameWorkTotals(t, cl.name, fast, full)
	}

	// A grid whose class says its blocks are alike where they are not
	// (blocks 0–7 and 60–79 run three more instructions) fails, naming
	// them, instead of standing the measured blocks' work for theirs.
	liar := epilogueGrid("k2", one, func(c int) int { return 3 * b2i(c < 8 || c >= 60) }, -1, 0, nil)
	chip, err := arch.NewChip(archtest.Machine(t, "a100", "machine.cores=4"), arch.Options{Mode: arch.Timing, FastForward: &ff})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chip.Run(isa.Program{Name: "kernels", Grids: []isa.Grid{grids[0], grids[1], liar}}); err == nil || !strings.Contains(err.Error(), "declares blocks 32 and 79 alike") {
		t.Errorf("a grid whose class is wrong: %v", err)
	}

	for _, step := range []struct{ step, at int }{{0, 1}, {7, 1}} {
		loop := []isa.Grid{grids[0], grids[1], epilogueGrid("k2", one, three, step.step, step.at, nil)}
		if st, _ := runKernels(t, &ff, loop...); len(st.FastForwardKernels) != 0 {
			t.Errorf("kernel skips %+v: the third kernel's k-step %d differs", st.FastForwardKernels, step.step)
		}
	}
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
