package report_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/report"
)

// A float of report.json that is ±Inf or NaN — in gpu-bench's section (a
// benchmark that moved nothing: 0/0), flops, memory, a list, a map, a
// section's own MarshalJSON, a float32 — is written as the string "+Inf",
// "-Inf" or "NaN": the report stays valid JSON and says so, where
// encoding/json failed the whole report ("json: unsupported value: NaN").
func TestWriteJSONNonFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	f32 := float32(math.Inf(-1))
	r := &report.Report{
		Machine:   "m",
		Program:   report.Program{"kind": "gpu-bench", "x": nan},
		GPUBench:  &report.GPUBench{Test: "l2-bandwidth", KernelSeconds: 0, Achieved: nan, Reference: inf, Fraction: math.Inf(-1), Unit: "GB/s"},
		Flops:     &report.FlopsReport{Total: 1, TFLOPS: inf, PeakFraction: nan},
		Memory:    &report.MemoryReport{L2HitRate: nan, OperationalIntensity: inf},
		Kernels:   []report.KernelReport{{Name: "k", Seconds: nan}},
		Error:     &report.ErrorReport{Reference: "fp64", RelFro: inf, Bits: nan, Elements: 4},
		Baselines: map[string]report.ErrorReport{"hgemm": {MaxRel: math.Inf(-1)}},
		Pipes:     map[string]report.PipeReport{"p": {Busy: nan, Stall: map[string]float64{"latency": inf}}},
		HPLMxP: &report.HPLMxP{HostStagesSeconds: map[string]float64{"getrf": nan}, LPanelScale: &f32,
			Refinement: report.HPLMxPRefinement{Solved: &report.HPLMxPRefinementSolved{History: []float64{1, inf, nan}, ScaledResidual: nan}}},
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("report.json is not valid JSON: %v\n%s", err, buf.Bytes())
	}
	get := func(path string) any {
		var v any = doc
		for _, p := range strings.Split(path, ".") {
			switch c := v.(type) {
			case map[string]any:
				v = c[p]
			case []any:
				i := int(p[0] - '0')
				v = c[i]
			default:
				return nil
			}
		}
		return v
	}
	for path, want := range map[string]any{
		"gpu_bench.achieved": "NaN", "gpu_bench.reference": "+Inf", "gpu_bench.fraction": "-Inf", "gpu_bench.kernel_seconds": 0.0,
		"flops.tflops": "+Inf", "flops.peak_fraction": "NaN", "flops.total": 1.0,
		"error.rel_fro": "+Inf", "error.bits": "NaN", "error.elements": 4.0, "baselines.hgemm.max_rel": "-Inf",
		"memory.l2_hit_rate": "NaN", "memory.operational_intensity": "+Inf",
		"kernels.0.seconds": "NaN", "pipes.p.busy": "NaN", "pipes.p.stall.latency": "+Inf", "program.x": "NaN",
		"hplmxp.host_stages_seconds.getrf": "NaN", "hplmxp.l_panel_scale": "-Inf",
		"hplmxp.refinement.scaled_residual": "NaN", "hplmxp.refinement.history.1": "+Inf", "hplmxp.refinement.history.2": "NaN",
	} {
		if got := get(path); got != want {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
}
