package gpu_test

import (
	"fmt"
	"slices"
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
	t.Logf("kernel skips %+v; events %d → %d", fast.FastForwardKernels, full.Events, fast.Events)
	if len(fast.FastForwardKernels) != 1 || fast.FastForwardKernels[0].Index != 2 || fast.FastForwardKernels[0].FromCTA != 8*5 {
		t.Fatalf("kernel skips %+v: want the third kernel's rest after its 5 waves", fast.FastForwardKernels)
	}
	if d := fast.Time - full.Time; max(d, -d) > fast.FastForwardKernels[0].Allowed {
		t.Errorf("time %v with a tail skip, %v in full", fast.Time, full.Time)
	}
	if fast.Events >= full.Events {
		t.Errorf("events %d with a tail skip, %d in full", fast.Events, full.Events)
	}
	if fast.GMReadBytes != full.GMReadBytes || fast.GMWriteBytes != full.GMWriteBytes || fast.MMADFlops != full.MMADFlops {
		t.Errorf("work with a tail skip: GM %d/%d, flops %g; in full %d/%d, %g", fast.GMReadBytes, fast.GMWriteBytes, fast.MMADFlops, full.GMReadBytes, full.GMWriteBytes, full.MMADFlops)
	}
	if tr := fast.Traffic; tr.L2Read+tr.LLCRead+tr.HBMRead != tr.GMRead || tr.GMRead != full.Traffic.GMRead {
		t.Errorf("traffic with a tail skip %+v, in full %+v", tr, full.Traffic)
	}
	var instrs, fullInstrs uint64
	for i := range fast.Cores {
		instrs += fast.Cores[i].Instrs
		fullInstrs += full.Cores[i].Instrs
	}
	if instrs != fullInstrs {
		t.Errorf("instructions %d with a tail skip, %d in full", instrs, fullInstrs)
	}
	if a, b := times[2].Finished-times[2].Started, fullTimes[2].Finished-fullTimes[2].Started; max(a-b, b-a) > fast.FastForwardKernels[0].Allowed {
		t.Errorf("third kernel %v with a tail skip, %v in full", a, b)
	}
}

// sameTimes compares kernel times.
func sameTimes(t *testing.T, times, full []arch.GridTimes) {
	t.Helper()
	for i := range times {
		if times[i].Launched != full[i].Launched || times[i].Started != full[i].Started || times[i].Finished != full[i].Finished {
			t.Errorf("kernel %d: launched, started, finished %v %v %v with kernel skips; %v %v %v in full", i, times[i].Launched, times[i].Started, times[i].Finished, full[i].Launched, full[i].Started, full[i].Finished)
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
// k-steps), with extra element-wise instructions after the store (in the
// first k-step, after its marker, where inLoop).
func epilogueGrid(name string, extra int, inLoop bool) isa.Grid {
	cta := func(cur *isa.StepCursor) isa.Stream {
		s := ctaSteps(0, 0, 512, cur, nil, nil)
		return func(yield func(isa.Instr) bool) {
			more := func() bool {
				for range extra {
					if !yield(gpu.Elementwise(isa.VAdd, 56<<10, 56<<10, 56<<10, 2048, fp.FP32)) {
						return false
					}
				}
				return true
			}
			first := true
			for in := range s {
				if !yield(in) {
					return
				}
				if in.Op == isa.OpStep && first && inLoop && !more() {
					return
				}
				first = first && in.Op != isa.OpStep
			}
			if !inLoop {
				more()
			}
		}
	}
	g := kernelGrid(name, 0)
	g.CTAs = 8 * 10
	g.CTA = func(int) isa.Stream {
		var s isa.Stream = cta(&isa.StepCursor{})
		return func(yield func(isa.Instr) bool) { // (without the markers)
			for in := range s {
				if in.Op != isa.OpStep && !yield(in) {
					return
				}
			}
		}
	}
	g.Steps = func(_ int, cur *isa.StepCursor) isa.Stream { return cta(cur) }
	return g
}

// Tail skips of a kernel alike the one before it but for its epilogue
// (SGEMM-cube's hh GEMM adds the other products' sum to its own): its
// first waves take the time of the one before's, its rest stands for
// that one's rest, and its rest's work is its own blocks' — every work
// counter (GM bytes, flops, each lane's instructions, vector repeats)
// the full run's exactly, though it runs more vector instructions than
// the kernel it stands for. A kernel whose main loop differs (the same
// extra instructions in its first k-step) is not tail-skipped.
func TestKernelTailSkipsOtherEpilogue(t *testing.T) {
	grids := []isa.Grid{epilogueGrid("k0", 0, false), epilogueGrid("k1", 0, false), epilogueGrid("k2", 3, false)}
	full, fullTimes := runKernels(t, nil, grids...)
	ff := arch.DefaultFastForward
	ff.Kernels = true
	fast, times := runKernels(t, &ff, grids...)
	t.Logf("kernel skips %+v; events %d → %d", fast.FastForwardKernels, full.Events, fast.Events)
	k := fast.FastForwardKernels
	if len(k) != 1 || k[0].Index != 2 || k[0].FromCTA != 8*5 || !k[0].OwnWork {
		t.Fatalf("kernel skips %+v: want the third kernel's rest after its 5 waves, with its own work", k)
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
	if fast.GMReadBytes != full.GMReadBytes || fast.GMWriteBytes != full.GMWriteBytes || fast.MMADFlops != full.MMADFlops {
		t.Errorf("work with a tail skip: GM %d/%d, flops %g; in full %d/%d, %g", fast.GMReadBytes, fast.GMWriteBytes, fast.MMADFlops, full.GMReadBytes, full.GMWriteBytes, full.MMADFlops)
	}
	if tr := fast.Traffic; tr.L2Read+tr.LLCRead+tr.HBMRead != tr.GMRead || tr.GMRead != full.Traffic.GMRead || tr.GMWrite != full.Traffic.GMWrite {
		t.Errorf("traffic with a tail skip %+v, in full %+v", tr, full.Traffic)
	}
	var repeats, fullRepeats int64
	lanes, fullLanes := make([]uint64, len(fast.Cores[0].Lanes)), make([]uint64, len(fast.Cores[0].Lanes))
	for i := range fast.Cores {
		repeats += fast.Cores[i].VectorRepeats
		fullRepeats += full.Cores[i].VectorRepeats
		for l := range lanes {
			lanes[l] += fast.Cores[i].Lanes[l].Instrs
			fullLanes[l] += full.Cores[i].Lanes[l].Instrs
		}
	}
	if repeats != fullRepeats || !slices.Equal(lanes, fullLanes) {
		t.Errorf("vector repeats %d, instructions by lane %v with a tail skip; %d, %v in full", repeats, lanes, fullRepeats, fullLanes)
	}

	loop := []isa.Grid{grids[0], grids[1], epilogueGrid("k2", 3, true)}
	if st, _ := runKernels(t, &ff, loop...); len(st.FastForwardKernels) != 0 {
		t.Errorf("kernel skips %+v: the third kernel's main loop differs", st.FastForwardKernels)
	}
}
