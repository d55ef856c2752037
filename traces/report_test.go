package traces_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/programs"
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
	res.Report.Sections = map[string]any{"extra": map[string]int{"x": 1}}
	var buf bytes.Buffer
	if err := res.Report.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"machine", "program", "time", "flops", "pipes", "buffers", "memory", "error", "baselines", "sim", "extra"} {
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
