package programs

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/report"
)

// runLU executes an lu-fused program given as YAML through Execute.
func runLU(t *testing.T, yaml string, sets ...string) (*Result, error) {
	t.Helper()
	f, err := Parse("lu.yaml", ".", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ovs := mustSets(t, sets...)
	return Execute(f, Options{Overrides: ovs}, RunHooks{})
}

func hpl(t *testing.T, res *Result) *report.HPLMxP {
	t.Helper()
	sec := res.Report.HPLMxP
	if sec == nil {
		t.Fatal("no hplmxp section")
	}
	return sec
}

// The factors computed by the simulated machine equal the golden model's
// bit for bit, with and without fusion and look-ahead, for both trailing
// precisions, and refinement passes.
func TestLUMatchesGolden(t *testing.T) {
	cases := []struct {
		fused, fusion int
		la            bool
		trailing      string
		extra         string
	}{
		{1, 0, true, "fp32", ""},
		{1, 0, false, "fp32", ""},
		{2, 8, true, "fp32", ""},
		{3, 12, false, "fp32", ""},
		{2, 8, true, "fp16", ""},
		{2, 32, true, "fp32", ""}, // every core in both zone sets
		// several row and column tiles per block, blocks with a fusion zone
		{2, 4, true, "fp32", "n: 640\nnb: 64\ntiling: {bm: 32, bn: 32, bk: 16}\n"},
		{3, 6, true, "fp16", "n: 768\nnb: 64\ntiling: {bm: 32, bn: 64, bk: 32}\n"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("F%d_nf%d_la%v_%s", c.fused, c.fusion, c.la, c.trailing), func(t *testing.T) {
			size := "n: 256\nnb: 64\n"
			if c.extra != "" {
				size = c.extra
			}
			y := fmt.Sprintf("kind: lu-fused\n%sn_fused: %d\nn_fusion: %d\nlook_ahead: %v\ntrailing: %s\ncheck: true\nseed: 3\n",
				size, c.fused, c.fusion, c.la, c.trailing)
			res, err := runLU(t, y)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failure != nil {
				t.Fatal(res.Failure)
			}
			s := hpl(t, res)
			if s.GoldenMismatches == nil || *s.GoldenMismatches != 0 {
				t.Fatalf("mismatches %v", s.GoldenMismatches)
			}
			if !slices.Contains(res.Report.Notes, luFactorsChecked) {
				t.Errorf("the summary does not say the check passed: %q", res.Report.Notes)
			}
			if s.Passed == nil || !*s.Passed {
				t.Fatalf("refinement did not pass: %+v", s.Refinement.Solved)
			}
		})
	}
}

// BenchmarkLUFull4096 runs the full-numerics target size (n = 4096, nb =
// 256, fusion 6 on 24 cores): go test ./programs -run XXX -bench LUFull4096 -benchtime 1x
func BenchmarkLUFull4096(b *testing.B) {
	runLUBench(b, "kind: lu-fused\nn: 4096\nnb: 256\nn_fused: 6\nn_fusion: 24\nseed: 1\n")
}

// BenchmarkLUTiming32768 runs the timing-only target size (n = 32768):
// go test ./programs -run XXX -bench LUTiming32768 -benchtime 1x
func BenchmarkLUTiming32768(b *testing.B) {
	n := 32768
	if s := testingN(); s > 0 {
		n = s
	}
	for range b.N {
		f, err := Parse("lu.yaml", ".", []byte(fmt.Sprintf("kind: lu-fused\nn: %d\nnb: 256\nn_fused: 6\nn_fusion: 24\nnumerics: off\n", n)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Execute(f, Options{}, RunHooks{}); err != nil {
			b.Fatal(err)
		}
	}
}

// testingN reads LU_BENCH_N (0 if unset) to scale the timing benchmark.
func testingN() int {
	n, _ := strconv.Atoi(os.Getenv("LU_BENCH_N"))
	return n
}

// The trailing-update operator alone equals the golden model bit for bit
// (plain and fused, both trailing precisions).
func TestLUGEMMMatchesGolden(t *testing.T) {
	for _, y := range []string{
		"kind: lu-gemm\nm: 256\nnb: 64\nn_fused: 1\nnumerics: full\n",
		"kind: lu-gemm\nm: 192\nnb: 64\nn_fused: 3\nnumerics: full\ntiling: {bm: 32, bn: 64, bk: 32}\n",
		"kind: lu-gemm\nm: 128\nnb: 64\nn_fused: 2\ntrailing: fp16\nnumerics: full\n",
		// 910B3: FixPipe machine, its own cube preset, half the L1.
		"kind: lu-gemm\nmachine: ascend-910b3\nm: 256\nnb: 64\nn_fused: 3\nnumerics: full\n",
	} {
		res, err := runLU(t, y)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		sec := res.Report.LUGEMM
		if sec == nil || sec.GoldenMismatches == nil || *sec.GoldenMismatches != 0 || !(res.Report.Flops.TFLOPS > 0) {
			t.Fatalf("%s: %+v", y, sec)
		}
	}
}

// Bad parameters are clear input errors naming the key.
func TestLUBadInput(t *testing.T) {
	base := "kind: lu-fused\nn: 1024\nnb: 256\nnumerics: off\n"
	cases := []struct{ set, want string }{
		{"program.nb=100", `"nb"`},
		{"program.n=1000", `"n"`},
		{"program.n_fusion=40", `"n_fusion"`},
		{"program.n_fused=9", `"n_fused"`},
		{"program.trailing=bf16", `"trailing"`},
		{"program.refinement.method=cg", `"refinement.method"`},
		{"program.tiling.bm=48", `"tiling.bm"`},
		{"program.refinement.tolerance=17", `key "refinement.tolerance": must be in (0, 16]`},
		{"program.nb=2048", `key "nb": must be at most n = 1024`},
		{"program.diag=bogus", `key "diag": must be host (or gpu, on GPU machines); got "bogus"`},
		{"program.diag=gpu", `key "diag": "gpu" applies to GPU machines`},
	}
	for _, c := range cases {
		sets := []string{c.set}
		if c.set == "program.n_fused=9" {
			// With the default tiling bm shrinks until the L rows fit L1;
			// a fixed bm = 256 fits at most 7.
			sets = append(sets, "program.n_fusion=8", "program.n=4096", "program.tiling.bm=256")
		}
		_, err := runLU(t, base, sets...)
		if !badinput.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a bad-input error naming %s", c.set, err, c.want)
		}
	}
	// nb too large for the buffers: a 256-row group of a 4096-wide panel
	// overflows L1 (the default tiling would take bm = 64).
	_, err := runLU(t, "kind: lu-fused\nn: 8192\nnb: 4096\nnumerics: off\ntiling: {bm: 256}\n")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "too large") {
		t.Errorf("nb 4096: got %v", err)
	}
}

// Passing is HPL-MxP's check, a scaled residual below 16, whatever the
// tolerance: a refinement that passes without reaching a stricter
// tolerance says so (converged false, why it stopped) and does not fail
// the run; one that stops above 16 fails it (exit 1) instead of looping.
func TestLUNonConvergence(t *testing.T) {
	res, err := runLU(t, "kind: lu-fused\nn: 256\nnb: 64\nrefinement: {method: gmres, restart: 2, tolerance: 1e-30, max_iterations: 3}\n")
	if err != nil {
		t.Fatal(err)
	}
	s := hpl(t, res)
	sol := s.Refinement.Solved
	if res.Failure != nil || s.Passed == nil || !*s.Passed || s.Converged == nil || *s.Converged ||
		*sol.Converged || *sol.StopReason != luStopMaxIterations || s.RefinementIterations == nil || *s.RefinementIterations != 3 || !(*s.ScaledResidual < luPassThreshold) {
		t.Fatalf("tolerance 1e-30 not reached, HPL-MxP passed: failure %v, passed %v, converged %v, %+v", res.Failure, s.Passed, s.Converged, sol)
	}
	if n := res.Report.Notes[len(res.Report.Notes)-1]; !strings.Contains(n, "passed true") || !strings.Contains(n, "tolerance 1e-30 not reached (stopped: max_iterations)") {
		t.Errorf("summary note %q", n)
	}
	// One IR step leaves 5.4e3: not passed, the run fails.
	res, err = runLU(t, "kind: lu-fused\nn: 256\nnb: 64\nrefinement: {method: ir, tolerance: 1e-30, max_iterations: 1}\n")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Failure, ErrCheckFailed) || !strings.Contains(res.Failure.Error(), "did not converge") || !strings.Contains(res.Failure.Error(), "after 1 iteration (stopped: max_iterations; HPL-MxP passes below 16") {
		t.Fatalf("failure %v", res.Failure)
	}
	s = hpl(t, res)
	if s.Passed == nil || *s.Passed || *s.Converged || *s.Refinement.Solved.StopReason != luStopMaxIterations || !(*s.ScaledResidual >= luPassThreshold) {
		t.Fatalf("section %+v", s.Refinement.Solved)
	}
	// The default tolerance is HPL-MxP's: converged and passed agree.
	res, err = runLU(t, "kind: lu-fused\nn: 256\nnb: 64\n")
	if err != nil {
		t.Fatal(err)
	}
	if s = hpl(t, res); res.Failure != nil || !*s.Passed || !*s.Converged || *s.Refinement.Solved.StopReason != luStopConverged {
		t.Fatalf("default tolerance: failure %v, %+v", res.Failure, s.Refinement.Solved)
	}
}

// A refinement stuck at FP64's rounding floor stops (stop_reason
// stagnated) instead of spending every remaining iteration, and the host's
// time holds the steps it took: tolerance 1e-6 on n = 512 stalls near
// 1e-3 after about six steps (it ran all 50 before).
func TestLURefineStopsOnStagnation(t *testing.T) {
	base := "kind: lu-fused\nn: 512\nnb: 128\n"
	res, err := runLU(t, base, "program.numerics=off", "program.refinement.timing_iterations=1")
	if err != nil {
		t.Fatal(err)
	}
	step := hpl(t, res).HostStagesSeconds["refine"] / 2 // x0 and one step
	for _, method := range []string{"ir", "gmres"} {
		res, err := runLU(t, base, "program.refinement.tolerance=1e-6", "program.refinement.method="+method)
		if err != nil {
			t.Fatal(err)
		}
		s := hpl(t, res)
		sol := s.Refinement.Solved
		if res.Failure != nil || *sol.StopReason != luStopStagnated || *s.Converged || !*s.Passed || sol.Iterations > 10 {
			t.Fatalf("%s: failure %v, %+v", method, res.Failure, sol)
		}
		h := sol.History
		if n := len(h); h[n-1] < h[n-2]/2 || h[n-2] < h[n-3]/2 {
			t.Errorf("%s: stopped while the residual still halved: %v", method, h)
		}
		if got, want := s.HostStagesSeconds["refine"], float64(1+sol.TimedSteps)*step; math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: refine %.6g s, want %.6g (%d steps)", method, got, want, 1+sol.TimedSteps)
		}
	}
}

// luStagnated: two steps in a row that do not halve the residual once it
// passes (below 16); one slow step, or a halving among the last two, is no
// stagnation. Above 16 any fall is progress: two steps without one stop.
func TestLUStagnated(t *testing.T) {
	for _, c := range []struct {
		h    []float64
		want bool
	}{
		{[]float64{1e8}, false},
		{[]float64{1e8, 9e7}, false},
		{[]float64{1e8, 9e7, 8e7}, false}, // (slow, but nearer to passing)
		{[]float64{1000, 600, 360, 216}, false},
		{[]float64{1e8, 100, 100, 120}, true}, // (stuck above 16)
		{[]float64{1e8, 100, 90, 100}, false},
		{[]float64{10, 9, 8}, true},
		{[]float64{1e8, 600, 0.02, 0.0024, 0.0015, 6e-4, 9e-4}, false}, // 6e-4 halved 0.0015
		{[]float64{1e8, 600, 0.02, 0.0024, 0.0015, 6e-4, 9e-4, 9e-4}, true},
		{[]float64{1, 0.5, 0.25}, true}, // exactly half is not less than half
		{[]float64{1, 0.49, 0.3}, false},
	} {
		if got := luStagnated(c.h); got != c.want {
			t.Errorf("%v: stagnated %v, want %v", c.h, got, c.want)
		}
	}
}

// Timing: fusion moves the far trailing matrix to the fusion cores, look-ahead
// overlaps the host, and numerics off gives the same time as full numerics.
func TestLUTimingProperties(t *testing.T) {
	run := func(y string) *Result {
		res, err := runLU(t, y)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	base := "kind: lu-fused\nn: 1024\nnb: 64\nseed: 2\n"
	full := run(base + "n_fused: 2\nn_fusion: 16\n")
	off := run(base + "n_fused: 2\nn_fusion: 16\nnumerics: off\nrefinement: {timing_iterations: 2}\n")
	if got, want := hpl(t, off).FactorizationSeconds, hpl(t, full).FactorizationSeconds; got != want {
		t.Errorf("factorization time with numerics off %v, full %v", got, want)
	}
	la := hpl(t, run(base+"numerics: off\n")).FactorizationSeconds
	nola := hpl(t, run(base+"numerics: off\nlook_ahead: false\n")).FactorizationSeconds
	if !(la < nola) {
		t.Errorf("look-ahead %v s not faster than without %v s", la, nola)
	}
	zones := hpl(t, full).Zones
	if zones["fusion"] == nil || zones["fusion"].Cores != 16 || zones["trsm"].Cores != 16 {
		t.Errorf("zones %v", zones)
	}
	it := hpl(t, full).Iterations
	if len(it) != 16 {
		t.Errorf("%d iteration samples, want 16", len(it))
	}
}

// Sampled numerics: a timing-only simulation whose factors come from the
// golden model give the same refinement result and the same time as full.
func TestLUSampledEqualsFull(t *testing.T) {
	y := "kind: lu-fused\nn: 512\nnb: 64\nn_fused: 2\nn_fusion: 8\nseed: 5\n"
	full, err := runLU(t, y)
	if err != nil {
		t.Fatal(err)
	}
	sampled, err := runLU(t, y+"numerics: sampled\n")
	if err != nil {
		t.Fatal(err)
	}
	a, b := hpl(t, full), hpl(t, sampled)
	for _, c := range []struct {
		key        string
		full, smpl any
	}{
		{"scaled_residual", a.ScaledResidual, b.ScaledResidual},
		{"refinement_iterations", a.RefinementIterations, b.RefinementIterations},
		{"total_seconds", a.TotalSeconds, b.TotalSeconds},
		{"l_panel_scale", a.LPanelScale, b.LPanelScale},
	} {
		if !reflect.DeepEqual(c.full, c.smpl) {
			t.Errorf("%s: full %v, sampled %v", c.key, reflect.Indirect(reflect.ValueOf(c.full)), reflect.Indirect(reflect.ValueOf(c.smpl)))
		}
	}
}

// The GM bytes tagged on the kernels at launch are exact: the zones' bytes
// add up to the run's GM traffic (the kernels' only GM transfers).
func TestLUZoneBytes(t *testing.T) {
	for _, y := range []string{
		"n: 1024\nnb: 128\nn_fused: 2\nn_fusion: 16\n",
		"n: 1024\nnb: 128\nn_fused: 3\nn_fusion: 8\ntrailing: fp16\n",
		"n: 768\nnb: 64\nn_fused: 1\nn_fusion: 0\nlook_ahead: false\n",
		"n: 640\nnb: 64\nn_fused: 2\nn_fusion: 32\ntiling: {bm: 32, bn: 32, bk: 16}\n",
	} {
		res, err := runLU(t, "kind: lu-fused\nnumerics: off\n"+y)
		if err != nil {
			t.Fatal(err)
		}
		total, hbm := 0.0, 0.0
		for name, z := range hpl(t, res).Zones {
			total += z.GMBytes
			hbm += z.HBMBytes
			// The bound is a lower bound on each kernel's time.
			if b := z.Bound; b == nil || !(b.Efficiency > 0 && b.Efficiency <= 1) || z.L2HitRate < 0 || z.L2HitRate > 1 {
				t.Errorf("%q: zone %s: bound %+v, L2 hit rate %v", y, name, b, z.L2HitRate)
			}
		}
		if want := float64(res.Stats.GMReadBytes + res.Stats.GMWriteBytes); total != want || total == 0 {
			t.Errorf("%q: zones' GM bytes %v, run's GM traffic %v", y, total, want)
		}
		// Per-kernel HBM traffic, measured, adds up to the run's.
		if want := float64(res.Stats.Traffic.HBM()); hbm != want || hbm == 0 || hbm > total {
			t.Errorf("%q: zones' HBM bytes %v, run's %v (GM %v)", y, hbm, want, total)
		}
		if m := res.Report.Memory; m.OperationalIntensityHBM < m.OperationalIntensity {
			t.Errorf("%q: flop per HBM byte %v below flop per GM byte %v", y, m.OperationalIntensityHBM, m.OperationalIntensity)
		}
	}
}

// Keys given that the run's combination does not use are noted: GMRES's
// restart under ir, timing_iterations with numerics computed, n_fusion
// without fusion; the defaults note nothing.
func TestLUUnusedKeysNoted(t *testing.T) {
	small := "kind: lu-fused\nn: 512\nnb: 128\n"
	res, err := runLU(t, small+"numerics: full\nrefinement: {method: ir, restart: 20, timing_iterations: 5}\n")
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Report.Notes, "\n")
	for _, want := range []string{"refinement.restart (20) is not used: it is GMRES's restart length; refinement.method is ir",
		"refinement.timing_iterations (5) is not used: with numerics full"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note %q in\n%s", want, notes)
		}
	}
	res, err = runLU(t, small+"numerics: off\nn_fused: 1\nn_fusion: 8\n")
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(res.Report.Notes, "\n"); !strings.Contains(notes, "n_fusion (8) is not used: n_fused is 1") {
		t.Errorf("no n_fusion note in\n%s", notes)
	}
	res, err = runLU(t, small+"numerics: off\n")
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(res.Report.Notes, "\n"); strings.Contains(notes, "is not used") {
		t.Errorf("defaults noted as unused:\n%s", notes)
	}
}

// hypot (the GMRES rotations') is math.Hypot on amd64 bit for bit — its
// assembly computes max·√(1 + (min/max)²) as hypot does everywhere — and
// tells a fused square from it: a value where √(1 + q²) with q² not
// rounded first differs.
func TestHypotMatchesMath(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := [][2]float64{{0, 0}, {3, 4}, {-3, 4}, {1e300, 1e300}, {1e-300, 3e-310}, {math.Inf(-1), 1}, {math.NaN(), 1}, {2, math.Inf(1)}}
	for range 20000 {
		cases = append(cases, [2]float64{rng.NormFloat64() * math.Exp2(float64(rng.IntN(80)-40)), rng.NormFloat64()})
	}
	fusedDiffers := false
	for _, c := range cases {
		got, want := hypot(c[0], c[1]), math.Hypot(c[0], c[1])
		if runtime.GOARCH == "amd64" && math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("hypot(%g, %g) = %g, math.Hypot %g", c[0], c[1], got, want)
		}
		p, q := max(math.Abs(c[0]), math.Abs(c[1])), min(math.Abs(c[0]), math.Abs(c[1]))
		if p > 0 && !math.IsInf(p, 0) && !math.IsNaN(p+q) {
			q /= p
			if p*math.Sqrt(math.FMA(q, q, 1)) != got {
				fusedDiffers = true
			}
		}
	}
	if !fusedDiffers {
		t.Fatal("no case where a fused 1 + q² gives another hypot: the test could not tell")
	}
}
