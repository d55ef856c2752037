package programs

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// kBatchTolerance is the largest relative change of a run's time batched
// k-steps may make in TestKBatchNearFull.
const kBatchTolerance = 0.015

// runKBatch runs an example timing only with --k-batch kb (1: in full).
func runKBatch(t *testing.T, example, machine string, kb int, sets ...string) *Result {
	t.Helper()
	f, err := ReadFile("examples/" + example)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Machine: machine, Numerics: NumericsOff, KBatch: kb, Overrides: mustSets(t, sets...)}, RunHooks{})
	if err != nil {
		t.Fatalf("%s on %s, k-batch %d: %v", example, machine, kb, err)
	}
	return res
}

// Batched k-steps (--k-batch) stay near the full simulation's time with
// several times fewer events on the SIMT kernels it batches (SGEMM on the
// CUDA cores of an A100, H100 and T4 — the T4's 4 MiB L2 limits the batch
// —, DGEMM on the A100's CUDA cores), and leave tensor-core kernels whole
// (an emulated GEMM: its native scheme batched, markidis not). The report
// says what was batched. The tolerance is 1.5 % (kBatchTolerance); these
// are within 0.01 % (8192³ on eight machines: within 0.03 %, docs/design-notes.md).
// Batches of 16 — what BenchmarkEmulatedTimingEvery runs native SGEMM
// with — on the A100 and on the RTX PRO 6000, whose batched runs move
// most (8192³ and four other shapes: −0.41 … +0.11 % at 16, −0.35 …
// −0.03 % at 8, up to +0.80 % at 32), at 2048³, where batches without
// their ramps come out +1.8 %.
func TestKBatchNearFull(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 10 GEMMs of 1024³ and 4 of 2048³")
	}
	n := []string{"program.m=1024", "program.n=1024", "program.k=1024"}
	n2 := []string{"program.scheme=native", "program.m=2048", "program.n=2048", "program.k=2048"}
	for _, c := range []struct {
		example, machine string
		sets             []string
		ask              int // --k-batch
		batch            int // the batch the plan keeps of it (the L2 may lower it; 0: none)
	}{
		{"a100-emulated-gemm.yaml", "a100", append([]string{"program.scheme=native"}, n...), 8, 8},
		{"a100-emulated-gemm.yaml", "h100-sxm", append([]string{"program.scheme=native"}, n...), 8, 8},
		{"a100-sgemm.yaml", "t4", n, 8, 5},
		{"a100-dgemm.yaml", "a100", append([]string{"program.unit=vector"}, n...), 8, 8},
		{"a100-emulated-gemm.yaml", "a100", append([]string{"program.scheme=markidis"}, n...), 8, 0},
		{"a100-emulated-gemm.yaml", "a100", n2, 16, 16},
		{"a100-emulated-gemm.yaml", "rtx-pro-6000", n2, 16, 16},
	} {
		label := fmt.Sprint(c.machine, " ", c.example, " ", c.sets, " k-batch ", c.ask)
		full := runKBatch(t, c.example, c.machine, 1, c.sets...)
		batched := runKBatch(t, c.example, c.machine, c.ask, c.sets...)
		tf, tb := full.Report.Time.Seconds, batched.Report.Time.Seconds
		t.Logf("%s: %+.3f %%, events %d → %d", label, 100*(tb/tf-1), full.Report.Sim.Events, batched.Report.Sim.Events)
		if got := reportedKBatch(batched.Report.Program); got != c.batch {
			t.Errorf("%s: program tiling k_batch %d, want %d (%v)", label, got, c.batch, batched.Report.Program)
		}
		if want := c.ask * min(c.batch, 1); batched.Report.Sim.KBatch != want || full.Report.Sim.KBatch != 0 {
			t.Errorf("%s: sim.k_batch %d batched (want %d), %d in full", label, batched.Report.Sim.KBatch, want, full.Report.Sim.KBatch)
		}
		if c.batch == 0 && !slices.ContainsFunc(batched.Report.Notes, func(n string) bool {
			return strings.HasPrefix(n, fmt.Sprintf("k-batch %d: no SIMT GEMM kernel", c.ask))
		}) {
			t.Errorf("%s: no note that nothing was batched: %q", label, batched.Report.Notes)
		}
		if fw, bw := full.Report.Memory, batched.Report.Memory; fw.GMReadBytes != bw.GMReadBytes || fw.GMWriteBytes != bw.GMWriteBytes {
			t.Errorf("%s: GM bytes %d/%d batched, %d/%d in full: a batch moves the same data", label, bw.GMReadBytes, bw.GMWriteBytes, fw.GMReadBytes, fw.GMWriteBytes)
		}
		ef, eb := full.Report.Sim.Events, batched.Report.Sim.Events
		if c.batch == 0 {
			if tb != tf || eb != ef {
				t.Errorf("%s: nothing batched, yet %.6g s and %d events against %.6g s and %d", label, tb, eb, tf, ef)
			}
			continue
		}
		if d := math.Abs(tb/tf - 1); d > kBatchTolerance {
			t.Errorf("%s: time %.6g s batched, %.6g s in full: %.2f %% apart, more than %.2g %%", label, tb, tf, 100*d, 100*kBatchTolerance)
		}
		if 3*eb > ef {
			t.Errorf("%s: %d events batched, %d in full: not 3× fewer", label, eb, ef)
		}
	}
}

// reportedKBatch is the smallest k_batch the program section's tilings
// report (0: none batched).
func reportedKBatch(prog map[string]any) int {
	var tilings []map[string]int
	if t, ok := prog["tiling"].(map[string]int); ok {
		tilings = append(tilings, t)
	}
	if ks, ok := prog["product_kernels"].([]map[string]any); ok {
		for _, k := range ks {
			if t, ok := k["tiling"].(map[string]int); ok {
				tilings = append(tilings, t)
			}
		}
	}
	least := 0
	for i, t := range tilings {
		if i == 0 || t["k_batch"] < least {
			least = t["k_batch"]
		}
	}
	return least
}

// The batch schedule: k-steps ramp 1, 2, 4 … up to the batch and back
// down, cover k exactly once in order, and keep the real kernel's
// resources; a k-loop too short for the batch asked gets a smaller one;
// tensor-core kernels and k-loops too short for any stay unbatched; on the V100's 6 MiB L2 SGEMM 4096³ batches 5, not 8.
func TestKBatchPlan(t *testing.T) {
	plan := func(machine string, p GEMMParams, in fp.Format, sh gpuShape) *gpuGEMMPlan {
		t.Helper()
		m, err := machines.Load(machine, nil)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := newGPUGEMMPlan("test.yaml", p, m, in, sh)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	full := plan("a100", GEMMParams{Kind: "sgemm", M: 1024, N: 1024, K: 1000, Unit: "vector"}, fp.FP32, gpuShape{})
	p := GEMMParams{Kind: "sgemm", M: 1024, N: 1024, K: 1000, Unit: "vector", kBatch: 8}
	pl := plan("a100", p, fp.FP32, gpuShape{})
	if pl.batch != 8 || pl.t.bk != 64 || pl.real != full.t || pl.smem != full.smem || pl.regs != full.regs {
		t.Fatalf("batch %d, tile %+v (real %+v), smem %d regs %d; want 8, bk 64, the full plan's %+v, %d, %d", pl.batch, pl.t, pl.real, pl.smem, pl.regs, full.t, full.smem, full.regs)
	}
	var sizes []int
	for kt := 0; kt < pl.nkt; kt++ {
		if pl.kOff(kt) != pl.ks[kt] || pl.depth(kt) <= 0 {
			t.Fatalf("k-step %d at %d, depth %d", kt, pl.kOff(kt), pl.depth(kt))
		}
		sizes = append(sizes, realSteps(pl, kt))
	}
	// 1000 = 125 real k-steps of 8: ramps of 1+2+4, 13 batches of 8, 7, then 4, 2, 1.
	want := []int{1, 2, 4, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7, 4, 2, 1}
	if fmt.Sprint(sizes) != fmt.Sprint(want) || pl.ks[pl.nkt] != 1000 || pl.depth(pl.nkt-1) != 1000-124*8 {
		t.Errorf("k-steps of %v real ones, end %d, last depth %d; want %v, 1000, %d", sizes, pl.ks[pl.nkt], pl.depth(pl.nkt-1), want, 1000-124*8)
	}
	// A k-loop too short for batches of 8 (17 k-steps: the ramps and a
	// batch need 22) batches 4; a small remainder goes among the last
	// ramp's k-steps, in decreasing order.
	for _, c := range []struct {
		k    int
		want []int
	}{
		{17 * 8, []int{1, 2, 4, 4, 3, 2, 1}},
		{39 * 8, []int{1, 2, 4, 8, 8, 8, 4, 2, 1, 1}},
	} {
		pl := plan("a100", GEMMParams{Kind: "sgemm", M: 1024, N: 1024, K: c.k, Unit: "vector", kBatch: 8}, fp.FP32, gpuShape{})
		var sizes []int
		for kt := 0; kt < pl.nkt; kt++ {
			sizes = append(sizes, realSteps(pl, kt))
		}
		if fmt.Sprint(sizes) != fmt.Sprint(c.want) || pl.ks[pl.nkt] != c.k {
			t.Errorf("k = %d: k-steps of %v real ones (end %d), want %v", c.k, sizes, pl.ks[pl.nkt], c.want)
		}
	}
	for _, c := range []struct {
		label   string
		machine string
		p       GEMMParams
		in      fp.Format
		sh      gpuShape
		want    int
	}{
		{"short k-loop", "a100", GEMMParams{Kind: "sgemm", M: 256, N: 256, K: 64, Unit: "vector", kBatch: 8}, fp.FP32, gpuShape{}, 2},
		{"too short a k-loop", "a100", GEMMParams{Kind: "sgemm", M: 256, N: 256, K: 24, Unit: "vector", kBatch: 8}, fp.FP32, gpuShape{}, 1},
		{"tensor cores", "a100", GEMMParams{Kind: "hgemm", M: 4096, N: 4096, K: 4096, kBatch: 4}, fp.FP16, gpuShape{}, 1},
		{"fused split", "a100", GEMMParams{Kind: "emulated-gemm", M: 1024, N: 1024, K: 4096, kBatch: 4}, fp.FP16, gpuShape{a: 2, b: 2, groups: 1, fused: true}, 1},
		{"V100's 6 MiB L2", "v100", GEMMParams{Kind: "sgemm", M: 4096, N: 4096, K: 4096, Unit: "vector", kBatch: 8}, fp.FP32, gpuShape{}, 5},
		{"DGEMM on the CUDA cores", "a100", GEMMParams{Kind: "dgemm", M: 4096, N: 4096, K: 4096, Unit: "vector", kBatch: 8}, fp.FP64, gpuShape{}, 6},
	} {
		if got := plan(c.machine, c.p, c.in, c.sh).batch; got != c.want {
			t.Errorf("%s: batch %d, want %d", c.label, got, c.want)
		}
	}
}

// --k-batch where it conflicts with the run is bad input: one line naming
// it; where it has nothing to batch, the run is as without it, with a note
// (as fast-forward's on DaVinci), traced or not.
func TestKBatchBadInput(t *testing.T) {
	f, err := ReadFile("examples/a100-sgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(f, Options{Numerics: NumericsFull, KBatch: 2}, RunHooks{})
	wantBadInputLine(t, err, "--k-batch 2: timing only", "a100-sgemm.yaml")
	for _, c := range []struct {
		example, machine, want string
	}{
		{"a100-hgemm.yaml", "a100", "hgemm on a100 (nvidia-sm) has none: every k-step was simulated"},
		{"sgemm-cube.yaml", "ascend-910a", "sgemm-cube on ascend-910a (davinci) has none"},
		{"hgemm.yaml", "ascend-910a", "hgemm on ascend-910a (davinci) has none"},
	} {
		var results []*Result
		for _, kb := range []int{1, 2} {
			f, err := ReadFile("examples/" + c.example)
			if err != nil {
				t.Fatal(err)
			}
			var obs arch.Observer
			if kb == 2 {
				obs = nopObserver{} // traced: nothing is batched, so nothing is missed
			}
			res, err := Execute(f, Options{Machine: c.machine, Numerics: NumericsOff, KBatch: kb,
				Overrides: mustSets(t, "program.m=256", "program.n=256", "program.k=256")}, RunHooks{Observer: obs})
			if err != nil {
				t.Fatalf("%s, k-batch %d: %v", c.example, kb, err)
			}
			results = append(results, res)
		}
		if !slices.ContainsFunc(results[1].Report.Notes, func(n string) bool { return strings.Contains(n, "k-batch 2: ") && strings.Contains(n, c.want) }) {
			t.Errorf("%s: no note %q: %q", c.example, c.want, results[1].Report.Notes)
		}
		if a, b := results[0].Report.Time.Seconds, results[1].Report.Time.Seconds; a != b || results[1].Report.Sim.KBatch != 0 {
			t.Errorf("%s: time %v without --k-batch, %v with (sim.k_batch %d)", c.example, a, b, results[1].Report.Sim.KBatch)
		}
	}
	// The range is checked for library callers too (the CLI and the
	// study parser check it first, naming their flag and key).
	f, err = ReadFile("examples/a100-sgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(f, Options{Numerics: NumericsOff, KBatch: MaxKBatch + 1}, RunHooks{})
	wantBadInputLine(t, err, fmt.Sprintf("--k-batch %d: must be in 1..%d", MaxKBatch+1, MaxKBatch), "a100-sgemm.yaml")
}

// realSteps is the number of the real kernel's k-steps simulated k-step
// kt of pl holds.
func realSteps(pl *gpuGEMMPlan, kt int) int {
	return (pl.depth(kt) + pl.real.bk - 1) / pl.real.bk
}

// nopObserver watches a run and keeps nothing.
type nopObserver struct{}

func (nopObserver) Interval(int, int, arch.Cause, sim.Time, sim.Time, *isa.Instr, *arch.Group) {}
func (nopObserver) Flag(int, int, int, int, bool, sim.Time)                                    {}
func (nopObserver) Occupancy(int, int, int64, sim.Time)                                        {}
func (nopObserver) Bandwidth(sim.Time, float64)                                                {}
