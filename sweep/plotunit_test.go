package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An integer GEMM's report counts operations, not flops (flops.convention
// "int8 ops …"; its summary says TOP/s): its points record so, and the
// plots' titles and axes say TOP/s and op/byte, where they said TFLOP/s
// whatever the results were — also drawn again from the results alone
// (sweep plot), and on a plot that mixes both kinds of points.
func TestPlotUnitOfIntegerOps(t *testing.T) {
	dir := t.TempDir()
	for name, kind := range map[string]string{"igemm.yaml": "igemm", "hgemm.yaml": "hgemm"} {
		prog := "kind: " + kind + "\nmachine: a100\nm: 256\nk: 256\nn: 256\nnumerics: off\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(prog), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	study := `program: igemm.yaml
vary:
  program: [igemm.yaml, hgemm.yaml]
  program.m: [256, 512]
metrics: [flops.tflops, memory.operational_intensity]
plot:
  - {name: int, x: program.m, y: flops.tflops, where: {program: igemm.yaml}}
  - {name: roof, x: memory.operational_intensity, y: flops.tflops, where: {program: igemm.yaml}}
  - {name: fp, x: program.m, y: flops.tflops, where: {program: hgemm.yaml}}
  - {name: both, x: program.m, y: flops.tflops, series: program}
`
	path := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStudy(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := Run(s, Options{Out: out, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadResults(filepath.Join(out, ResultsJSONL), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		want := ""
		if r.Params["program"] == "igemm.yaml" {
			want = OpUnit
		}
		if r.Status != StatusOK || r.OpUnit != want {
			t.Errorf("point %d (%s): status %s, op_unit %q, want %q", r.Index, r.Params["program"], r.Status, r.OpUnit, want)
		}
	}
	check := func(when string) {
		for name, want := range map[string][]string{
			"int":  {">Throughput (TOP/s) against program.m (program=igemm.yaml)<", ">Throughput (TOP/s)<"},
			"roof": {">Operational intensity (op/byte)<", ">Throughput (TOP/s)<"},
			"fp":   {">Throughput (TFLOP/s)<"},
			"both": {">Throughput (TFLOP/s or TOP/s)<"},
		} {
			svg := string(readFile(t, filepath.Join(out, name+".svg")))
			for _, w := range want {
				if !strings.Contains(svg, w) {
					t.Errorf("%s: plot %s lacks %q", when, name, w)
				}
			}
			if name != "fp" && name != "both" && (strings.Contains(svg, "FLOP") || strings.Contains(svg, "flop")) {
				t.Errorf("%s: plot %s of integer operations names flops", when, name)
			}
		}
	}
	check("run")
	for _, f := range []string{"int.svg", "roof.svg", "fp.svg", "both.svg"} {
		os.Remove(filepath.Join(out, f))
	}
	if _, _, _, err := Redraw(s, out, nil); err != nil {
		t.Fatal(err)
	}
	check("sweep plot")
}

func TestUnitTitle(t *testing.T) {
	for _, c := range []struct{ key, unit, want string }{
		{"flops.tflops", unitOP, "Throughput (TOP/s)"},
		{"flops.tflops", unitMixed, "Throughput (TFLOP/s or TOP/s)"},
		{"flops.tflops", unitFLOP, "Throughput (TFLOP/s)"},
		{"flops.peak_tflops", unitOP, "Peak (TOP/s)"},
		{"flops.total", unitOP, "Operations (op)"},
		{"memory.operational_intensity", unitOP, "Operational intensity (op/byte)"},
		{"memory.operational_intensity_hbm", unitMixed, "Operational intensity after the L2 (flop/HBM byte or op/HBM byte)"},
		{"hplmxp.tflops", unitOP, "HPL-MxP throughput (TFLOP/s)"}, // (not counted under flops.convention)
		{"time.seconds", unitOP, "Simulated time (s)"},
	} {
		if got := unitTitle(c.key, c.unit); got != c.want {
			t.Errorf("unitTitle(%q, %q) = %q, want %q", c.key, c.unit, got, c.want)
		}
	}
}
