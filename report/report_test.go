package report_test

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/report"
)

// report.json carries the stable keys of DESIGN.md, and the pipe fractions
// of each pipe add up to one.
func TestReportJSONKeys(t *testing.T) {
	y := `kind: sgemm-cube
m: 64
k: 64
n: 64
tiling: {bm: 32, bk: 32, bn: 32}
numerics: full
cores: 2
`
	f, err := programs.Parse("t.yaml", ".", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	res, err := programs.Execute(f, programs.Options{}, programs.RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	res.Report.LUGEMM = &report.LUGEMM{M: 1}
	var buf bytes.Buffer
	if err := res.Report.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if keys := objectKeys(t, buf.Bytes()); !slices.IsSorted(keys) {
		t.Errorf("top-level keys not sorted: %v", keys)
	}
	for _, k := range []string{"machine", "program", "time", "flops", "pipes", "buffers", "memory", "error", "baselines", "sim", "lu_gemm"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report.json lacks %q", k)
		}
	}
	get := func(path string) any {
		var v any = m
		for _, p := range strings.Split(path, ".") {
			v = v.(map[string]any)[p]
		}
		return v
	}
	for _, k := range []string{"time.cycles", "time.seconds", "flops.tflops", "flops.peak_fraction", "buffers.L1.peak_bytes",
		"memory.gm_read_bytes", "memory.operational_intensity", "error.rel_fro", "error.bits", "baselines.hgemm.rel_fro",
		"baselines.cpu_sgemm_fp32.rel_fro", "sim.events", "pipes.M.busy", "pipes.MTE2.stall.bandwidth"} {
		if get(k) == nil {
			t.Errorf("report.json lacks %s", k)
		}
	}
	for name, p := range m["pipes"].(map[string]any) {
		pm := p.(map[string]any)
		sum := pm["busy"].(float64)
		for _, v := range pm["stall"].(map[string]any) {
			sum += v.(float64)
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("pipe %s: fractions sum to %v", name, sum)
		}
	}
	var s bytes.Buffer
	res.Report.WriteSummary(&s)
	for _, want := range []string{"TFLOP/s", "rel_fro", "wait_flag", "L0C"} {
		if !strings.Contains(s.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, s.String())
		}
	}
}

// objectKeys returns the keys of the JSON object in data, in their order.
func objectKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// The program sections write their keys sorted (as the maps they replaced
// did), and an optional key is present exactly when it is set: the
// refinement in its two shapes, the optional figures of the hplmxp section,
// its samples and lu_gemm's golden_mismatches.
func TestSectionKeys(t *testing.T) {
	keysOf := func(v any) []string {
		t.Helper()
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return objectKeys(t, data)
	}
	check := func(what string, v any, want ...string) {
		t.Helper()
		got := keysOf(v)
		if !slices.Equal(got, want) {
			t.Errorf("%s: keys %v, want %v", what, got, want)
		}
		if !slices.IsSorted(got) {
			t.Errorf("%s: keys not sorted: %v", what, got)
		}
	}
	one, x, yes, s := 1, 2.0, true, float32(0.5)
	base := []string{"factorization_seconds", "factorization_tflops", "flops", "host_stages_seconds", "iterations",
		"look_ahead", "n", "n_fused", "n_fusion", "nb", "peak_fraction", "refinement", "tflops", "total_seconds",
		"trailing_precision", "windows", "zones"}
	timed := report.HPLMxP{Refinement: report.HPLMxPRefinement{Timed: &report.HPLMxPRefinementTimed{}}}
	check("hplmxp (numerics off)", timed, base...)
	why := "converged"
	solved := report.HPLMxP{Refinement: report.HPLMxPRefinement{Solved: &report.HPLMxPRefinementSolved{Converged: &yes, StopReason: &why}},
		Converged: &yes, GoldenMismatches: &one, LPanelScale: &s, Passed: &yes, RefinementIterations: &one, ScaledResidual: &x}
	all := slices.Concat(base, []string{"converged", "golden_mismatches", "l_panel_scale", "passed", "refinement_iterations", "scaled_residual"})
	slices.Sort(all)
	check("hplmxp (numerics full, check)", solved, all...)
	check("refinement (numerics off)", timed.Refinement, "method", "note", "timed_iterations", "timed_steps")
	check("refinement (computed)", solved.Refinement, "converged", "history", "iterations", "method", "scaled_residual", "stop_reason", "threshold", "timed_steps")
	check("iteration", report.HPLMxPIteration{}, "flops", "iteration", "seconds", "start_seconds")
	check("iteration (timed)", report.HPLMxPIteration{TFLOPS: &x, MeasuredOverTheoretical: &x},
		"flops", "iteration", "measured_over_theoretical", "seconds", "start_seconds", "tflops")
	check("window", report.HPLMxPWindow{}, "first_iteration", "flops", "iterations", "progress", "seconds", "start_seconds")
	check("window (timed)", report.HPLMxPWindow{MeasuredOverTheoretical: &x},
		"first_iteration", "flops", "iterations", "measured_over_theoretical", "progress", "seconds", "start_seconds")
	check("lu_gemm", report.LUGEMM{}, "gm_bytes", "hbm_bytes", "k", "m", "nb", "operational_intensity", "operational_intensity_hbm", "seconds", "tflops")
	check("lu_gemm (numerics full)", report.LUGEMM{GoldenMismatches: &one, Bound: &report.Bound{}},
		"bound", "gm_bytes", "golden_mismatches", "hbm_bytes", "k", "m", "nb", "operational_intensity", "operational_intensity_hbm", "seconds", "tflops")
	// The zone keeps the field order it always had (it was a struct).
	if got, want := keysOf(report.HPLMxPZone{}), []string{"kernels", "seconds", "flops", "tflops", "cores", "gm_bytes",
		"operational_intensity", "hbm_bytes", "operational_intensity_hbm", "l2_hit_rate"}; !slices.Equal(got, want) {
		t.Errorf("zone: keys %v, want %v", got, want)
	}
}

// The summary's kernel table: each kernel's time and events with their
// shares of the run's.
func TestSummaryKernels(t *testing.T) {
	r := &report.Report{Kernels: []report.KernelReport{
		{Name: "split", Blocks: 1024, Seconds: 1e-4, Events: 250},
		{Name: "products", Blocks: 128, Seconds: 3e-4, Events: 750},
	}}
	r.Time.Seconds, r.Sim.Events = 4e-4, 1000
	var b bytes.Buffer
	r.WriteSummary(&b)
	for _, want := range []string{
		"kernel     blocks      seconds  share     events (share)",
		"split        1024       0.0001  25.0%        250 ( 25.0%)",
		"products      128       0.0003  75.0%        750 ( 75.0%)",
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// The summary's launch line: the time from each kernel's launch to its
// first block (the machine's assumed launch cost), total and share of the
// run's; "each" only when every launch took the same; none without kernels.
func TestSummaryLaunches(t *testing.T) {
	for _, c := range []struct {
		name    string
		kernels []report.KernelReport
		want    string // "" = no launch line
	}{
		{"one", []report.KernelReport{{Launched: 0, Started: 21e-6, Finished: 28e-6}},
			"launch    21µs of it (75.0 %) before the kernel's first block started (the machine's core.launch_ns)"},
		{"equal", []report.KernelReport{{Launched: 0, Started: 3e-6}, {Launched: 10e-6, Started: 13e-6}},
			"launch    6µs of it (21.4 %) from 2 kernels' launches to their first blocks (the machine's core.launch_ns, 3µs each)"},
		{"unequal", []report.KernelReport{{Launched: 0, Started: 3e-6}, {Launched: 10e-6, Started: 15e-6}},
			"launch    8µs of it (28.6 %) from 2 kernels' launches to their first blocks (the machine's core.launch_ns)"},
		{"none", nil, ""},
	} {
		r := &report.Report{Kernels: c.kernels}
		r.Time.Seconds = 28e-6
		var b bytes.Buffer
		r.WriteSummary(&b)
		if c.want == "" {
			if strings.Contains(b.String(), "launch ") {
				t.Errorf("%s: summary has a launch line:\n%s", c.name, b.String())
			}
		} else if !strings.Contains(b.String(), c.want+"\n") {
			t.Errorf("%s: summary lacks %q:\n%s", c.name, c.want, b.String())
		}
	}
}

// Integer GEMMs' rates are operations, not floating-point ones: TOP/s,
// op/byte and GOP/s per W in the summary (igemm, ape-int16); others FLOP.
func TestSummaryIntegerOps(t *testing.T) {
	for conv, want := range map[string][]string{
		"int8 ops (2mnk; peak = INT8 cube peak)": {"TOP/s = 50.0 % of 2.00 TOP/s", "3.0 op/byte", "4.0 GOP/s per W"},
		"fp16 (2mnk)":                            {"TFLOP/s = 50.0 % of 2.00 TFLOP/s", "3.0 flop/byte", "4.0 GFLOP/s per W"},
	} {
		r := &report.Report{Flops: &report.FlopsReport{Total: 1e12, Convention: conv, TFLOPS: 1, PeakFraction: 0.5, PeakTFLOPS: 2},
			Energy: &report.EnergyReport{GFLOPSPerWatt: 4}}
		r.Memory = &report.MemoryReport{OperationalIntensity: 3}
		var b strings.Builder
		r.WriteSummary(&b)
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: summary lacks %q:\n%s", conv, w, b.String())
			}
		}
	}
}

// The summary's bandwidth use is HBM's (gm_bandwidth_utilisation): on the
// HBM line where an L2 served GM traffic, not beside the GM bytes that
// include the L2's hits; without an L2 on the GM line.
func TestSummaryBandwidthUseIsHBMs(t *testing.T) {
	for _, c := range []struct {
		l2       int64
		line     string
		notOnOne string
	}{
		{l2: 1 << 20, line: "HBM ", notOnOne: "GM "},
		{l2: 0, line: "GM ", notOnOne: "HBM "},
	} {
		r := &report.Report{Memory: &report.MemoryReport{GMReadBytes: 4 << 20, HBMReadBytes: 3 << 20, L2HitBytes: c.l2, GMBandwidthUse: 0.25}}
		var b strings.Builder
		r.WriteSummary(&b)
		found := false
		for _, l := range strings.Split(b.String(), "\n") {
			has := strings.Contains(l, "bandwidth use 25.0 %")
			if has && strings.HasPrefix(l, c.line) {
				found = true
			}
			if has && strings.HasPrefix(l, c.notOnOne) {
				t.Errorf("L2 bytes %d: bandwidth use on the %q line:\n%s", c.l2, c.notOnOne, b.String())
			}
		}
		if !found {
			t.Errorf("L2 bytes %d: no bandwidth use on the %q line:\n%s", c.l2, c.line, b.String())
		}
	}
}

// The summary's error lines: MRED and the symmetric max_err beside the
// Frobenius and max relative errors, the references of 0 counted (left
// out of MRED; a nonzero result there is max_rel's +Inf), and a program's
// own comparison (emulated-gemm's error_vs_cpu_sgemm, LE-GEMM's metrics)
// on a line named by its report.json path.
func TestSummaryErrorMetrics(t *testing.T) {
	r := &report.Report{
		Error: &report.ErrorReport{Reference: "fp64", RelFro: 1e-7, MaxRel: math.Inf(1), MRED: 2e-6, MaxErr: 4e-3, Bits: 23, Elements: 100,
			ZeroRef: 3, ZeroRefDiffers: 2},
		Program: report.Program{"kind": "emulated-gemm",
			"error_vs_cpu_sgemm": accuracy.Metrics{RelFro: 7e-7, MaxRel: 9e-3, MRED: 2.5e-6, MaxErr: 5e-3, Bits: 20.4, N: 100, ZeroRef: 1}},
	}
	var b strings.Builder
	r.WriteSummary(&b)
	for _, want := range []string{
		"error     rel_fro 1.000e-07  max_rel +Inf  bits 23.0  (vs fp64, 100 elements)\n",
		"          mred 2.000e-06  max_err 4.000e-03; 3 references are 0 (not in mred), 2 of them with a result that is not (max_rel +Inf)\n",
		"  program.error_vs_cpu_sgemm: rel_fro 7.000e-07  max_rel 9.000e-03  mred 2.500e-06  max_err 5.000e-03  bits 20.4  (100 elements; 1 reference is 0 (not in mred))\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
