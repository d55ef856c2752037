package programs

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
)

// Step skips (arch.FastForward.Steps) with every CTA generator of the GPU
// GEMM kernels — multistage cp.async into shared memory (A100 HGEMM),
// shared-memory operands (H100 wgmma), cta_group::2 pairs with tensor
// memory (B200), register staging (staging: registers), no staging
// (staging: none), outside accumulators (Ootomo), a fused split
// (Markidis, split: fused), batched SIMT k-steps (native SGEMM with
// --k-batch 8: the full batches between the ramps repeat) — against the
// full simulation (batched alike): the skipped
// steps' work is exact (every core's instructions by lane, bytes by path,
// vector repeats; GM bytes; flops), the time within the uncertainty the
// report states, with fewer events.
func TestStepSkipsEveryGenerator(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
		kBatch  int
	}{
		{"a100", []string{"program.scheme=hgemm"}, 0},
		{"h100-sxm", []string{"program.scheme=hgemm"}, 0},
		{"b200", []string{"program.scheme=hgemm"}, 0},
		{"a100", []string{"program.scheme=hgemm", "program.tiling.staging=registers"}, 0},
		{"a100", []string{"program.scheme=hgemm", "program.tiling.staging=none"}, 0},
		{"a100", []string{"program.scheme=ootomo"}, 0},
		{"mi300x", []string{"program.scheme={name: markidis, split: fused}"}, 0},
		{"a100", []string{"program.scheme=native"}, 8},
	} {
		sets := append([]string{"program.m=2048", "program.n=2048", "program.k=4096"}, c.sets...)
		t.Run(c.machine+" "+sets[len(sets)-1], func(t *testing.T) {
			run := func(ff *arch.FastForward) *Result {
				t.Helper()
				f := mustRead(t, "examples/a100-emulated-gemm.yaml") // (a run's overrides stay in its File)
				res, err := Execute(f, Options{Machine: c.machine, Numerics: NumericsOff, FastForward: ff, KBatch: c.kBatch, Overrides: mustSets(t, sets...)}, RunHooks{})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			ff := arch.DefaultFastForward
			ff.Steps = true
			full, fast := run(nil).Stats, run(&ff)
			st := fast.Stats
			if len(st.FastForwardSteps) == 0 {
				t.Fatalf("no step skips: %q", fast.Report.Notes)
			}
			d := math.Abs(float64(st.Time - full.Time))
			if unc := fast.Report.Sim.SkipUncertaintySeconds * 1e12; d > unc {
				t.Errorf("time %v with step skips, %v in full: %.4g ps apart, stated ±%.4g", st.Time, full.Time, d, unc)
			}
			t.Logf("time %+.3f %%, events %d → %d, HBM reads %d → %d", 100*(float64(st.Time)/float64(full.Time)-1), full.Events, st.Events, full.Traffic.HBMRead, st.Traffic.HBMRead)
			if st.Events >= full.Events {
				t.Errorf("events %d with step skips, %d in full", st.Events, full.Events)
			}
			// The report carries the GM reads the skips stand for.
			if sk := st.SkippedGMReadBytes; sk <= 0 || sk >= st.GMReadBytes || fast.Report.Sim.SkippedGMReadBytes != sk {
				t.Errorf("skipped GM reads %d of %d (report: %d)", sk, st.GMReadBytes, fast.Report.Sim.SkippedGMReadBytes)
			}
			if st.GMReadBytes != full.GMReadBytes || st.GMWriteBytes != full.GMWriteBytes || math.Abs(st.MMADFlops-full.MMADFlops) > 1e-9*full.MMADFlops {
				t.Errorf("GM bytes %d/%d, flops %g with step skips; %d/%d, %g in full", st.GMReadBytes, st.GMWriteBytes, st.MMADFlops, full.GMReadBytes, full.GMWriteBytes, full.MMADFlops)
			}
			// Summed over the cores (which core runs which block depends
			// on when blocks finish).
			sum := func(st *arch.Stats) (instrs []uint64, paths []int64, repeats int64) {
				for _, c := range st.Cores {
					for l, ls := range c.Lanes {
						instrs = append(instrs, 0)[:max(len(instrs), l+1)]
						instrs[l] += ls.Instrs
					}
					for p, b := range c.PathBytes {
						paths = append(paths, 0)[:max(len(paths), p+1)]
						paths[p] += b
					}
					repeats += c.VectorRepeats
				}
				return instrs, paths, repeats
			}
			ai, ap, ar := sum(st)
			bi, bp, br := sum(full)
			if !reflect.DeepEqual(ai, bi) || !reflect.DeepEqual(ap, bp) || ar != br {
				t.Errorf("instructions by lane %v, bytes by path %v, vector repeats %d with step skips; %v, %v, %d in full", ai, ap, ar, bi, bp, br)
			}
		})
	}
}

// A step skip whose check fails (T4 sgemm-cube 4096³: its kernels' steps
// take 2048 ns for their first ~20, then ~1150) makes the run again with
// the steps of that kernel and every later one simulated — once, not a
// run per kernel — and says so; the result is then within the stated
// uncertainty of the full run.
func TestStepSkipCheckFailsRunsAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("T4 sgemm-cube 4096³ in full and with step skips (~5 s)")
	}
	fast := stepSkipsAgainstFull(t, "t4", append([]string{"program.scheme=sgemm-cube", "program.m=4096", "program.n=4096", "program.k=4096"}, t4Sectored...)...)
	failed := 0
	for _, n := range fast.Report.Notes {
		if strings.Contains(n, "CHECK FAILED") && strings.Contains(n, "after a step skip") {
			failed++
			if !strings.Contains(n, "the steps of this kernel, and of the kernels after it, simulated") {
				t.Errorf("note %q", n)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failed step checks, want 1: %q", failed, fast.Report.Notes)
	}
}

// stepSkipsAgainstFull runs the emulated GEMM example on machine with
// sets, with step skips (arch.DefaultFastForward) and in full, checks that
// the first's time is within its stated uncertainty of the full run's, and
// returns it.
func stepSkipsAgainstFull(t *testing.T, machine string, sets ...string) *Result {
	t.Helper()
	ff := arch.DefaultFastForward
	ff.Steps = true
	fast, full := runEmulatedTiming(t, machine, &ff, sets...), runEmulatedTiming(t, machine, nil, sets...)
	d := math.Abs(float64(fast.Stats.Time - full.Stats.Time))
	if unc := fast.Report.Sim.SkipUncertaintySeconds * 1e12; d > unc && d > 0 {
		t.Errorf("time %v, full %v: %.4g ps apart, stated ±%.4g", fast.Stats.Time, full.Stats.Time, d, unc)
	}
	return fast
}

// runEmulatedTiming runs the emulated-GEMM example timing-only on machine
// with the overrides sets, fast-forwarded by ff (nil: in full).
func runEmulatedTiming(t *testing.T, machine string, ff *arch.FastForward, sets ...string) *Result {
	t.Helper()
	f := mustRead(t, "examples/a100-emulated-gemm.yaml")
	res, err := Execute(f, Options{Machine: machine, Numerics: NumericsOff, FastForward: ff, Overrides: mustSets(t, sets...)}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A wave whose first steps run at a pace of their own does not skip on
// them once the kernel has a checked pace (arch.StepWait.Unpaced): MI300X
// HGEMM 6144×6144×8192's first wave skips at step 22 and its check keeps
// 0.9748 µs; the second wave's steps 4–12 run at ~0.84 µs, and a skip
// measured on them failed its check and made the run again (until
// 2026-12-05). Now that wave skips only on windows at the checked pace or
// past step 22: no run is made again, the note says why the early windows
// were passed over, and the time is within
// the stated uncertainty of the full run. The later waves' skips, measured
// at that pace, take the first wave's check for their own
// (arch.StepSkip.Paced): each starts before the checked skip's step and
// ends past its end by more than a check's intervals (with room kept for
// a check, it fails). arch/gpu TestStepSkipPaced pins the one-window
// decision.
func TestStepSkipKeepsTheCheckedPace(t *testing.T) {
	if testing.Short() {
		t.Skip("MI300X HGEMM 6144×6144×8192 in full and with step skips (~6 s)")
	}
	fast := stepSkipsAgainstFull(t, "mi300x", "program.scheme=hgemm", "program.m=6144", "program.n=6144", "program.k=8192")
	if n := fast.Report.Sim.DiscardedRuns; n != 0 {
		t.Errorf("%d runs made again: %q", n, fast.Report.Notes)
	}
	if !slices.ContainsFunc(fast.Report.Notes, func(n string) bool {
		return strings.Contains(n, "the windows' pace differed from the one this kernel's last checked skip kept")
	}) {
		t.Errorf("no note of windows passed over for their pace: %q", fast.Report.Notes)
	}
	var checked *arch.StepSkip
	paced := 0
	for i, s := range fast.Stats.FastForwardSteps {
		switch {
		case !s.Paced && s.Checked && s.CheckPeriod > 0 && checked == nil:
			checked = &fast.Stats.FastForwardSteps[i]
		case s.Paced:
			paced++
			if checked == nil || s.CheckPeriod != checked.CheckPeriod || !s.Checked {
				t.Errorf("skip %d paced by no earlier checked skip's check (%+v)", i, s)
			} else if s.From >= checked.From || s.From+s.Steps < checked.From+checked.Steps+arch.DefaultFastForward.Measure {
				// The checked skip ran steps 22–112; the paced ones start
				// as soon as their windows keep its pace and leave no room
				// for a check's intervals: 17–121.
				t.Errorf("paced skip %d: steps %d–%d, want from before the checked skip's %d to past its end %d by a check's intervals", i, s.From, s.From+s.Steps, checked.From, checked.From+checked.Steps)
			}
		}
	}
	if paced == 0 {
		t.Errorf("no skip took the checked pace's check: %+v", fast.Stats.FastForwardSteps)
	}
}

// t4Sectored gives the T4 the L2 directory of 2 KiB tags (128-byte lines,
// 16 a tag) its files had until 2026-11-30: the tests of failed step
// checks were written on it — its kernels start each wave with ~30 steps
// finding nothing in the L2, then run faster, and a skip measured on that
// start fails its check. With the file's 128-byte tags the start is not
// slower and no check fails.
var t4Sectored = []string{"machine.l2.line_bytes=128", "machine.l2.lines_per_tag=16"}

// Batched SIMT k-steps (--k-batch) mark as repeating the full batches
// between the ramps (gpuGEMMPlan.repeating): every step from the range's
// first to the step a skip resumes at (its last) issues the same
// instructions but for addresses and flag ids — the copies, fragment loads
// and FMA runs of a whole batch, fetching a whole batch ahead — and the
// range holds all but the pipeline's stages of the full batches.
func TestBatchedStepsRepeat(t *testing.T) {
	job := buildJob(t, "examples/a100-emulated-gemm.yaml", Options{Machine: "a100", Numerics: NumericsOff, KBatch: 16,
		Overrides: mustSets(t, "program.scheme=native", "program.m=512", "program.n=512", "program.k=4096")})
	g := job.Program().Grids[0]
	if g.Steps == nil {
		t.Fatal("batched kernel without step markers")
	}
	type shape struct {
		op               isa.Op
		pipe             isa.Pipe
		nBurst           int
		burst            int64
		rows, cols       int
		m, k, n          int
		with             bool
		srcPipe, dstPipe isa.Pipe
	}
	var steps [][]shape
	from, to := -1, -1
	for in := range g.Steps(g.CTAs/2, &isa.StepCursor{}) {
		if in.Op == isa.OpStep {
			if in.M != len(steps) {
				t.Fatalf("marker of step %d after %d steps", in.M, len(steps))
			}
			steps = append(steps, nil)
			from, to = in.Rows, in.Cols
			continue
		}
		if len(steps) > 0 {
			steps[len(steps)-1] = append(steps[len(steps)-1], shape{in.Op, in.Pipe, in.NBurst, in.BurstLen, in.Rows, in.Cols, in.M, in.K, in.N, in.WithNext, in.SrcPipe, in.DstPipe})
		}
	}
	// 512 real k-steps of 8: ramps 1, 2, 4, 8 and their mirror, 30 full
	// batches of 16 between (and 2 more real steps in the tail).
	if len(steps) != 39 {
		t.Fatalf("%d batched steps, want 39", len(steps))
	}
	if from != 5 || to < from+20 || to > 4+30-1 {
		t.Errorf("steps [%d, %d) repeat: want from 5 (the second full batch) to within the 30 full ones", from, to)
	}
	t.Logf("%d steps, [%d, %d) repeat", len(steps), from, to)
	for k := from + 1; k <= to; k++ {
		if !reflect.DeepEqual(steps[k], steps[from]) {
			t.Errorf("step %d (%d instructions) differs from step %d (%d) in the repeating range [%d, %d)", k, len(steps[k]), from, len(steps[from]), from, to)
		}
	}
	if reflect.DeepEqual(steps[len(steps)-1], steps[from]) {
		t.Error("the last (ramp-down) step issues what a full batch does")
	}
}
