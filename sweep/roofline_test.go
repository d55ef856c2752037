package sweep

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/report"
)

// TestLookupEvery: "*" maps the rest of the path over a list, null where
// an element lacks it (so two such lists stay aligned).
func TestLookupEvery(t *testing.T) {
	doc := map[string]any{"w": []any{map[string]any{"i": 0.0, "r": 0.5}, map[string]any{"i": 6.0}}}
	for path, want := range map[string]any{
		"w.*.i": []any{0.0, 6.0},
		"w.*.r": []any{0.5, nil},
		"w.*":   doc["w"],
	} {
		got, ok := Lookup(doc, path)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v", path, got, ok, want)
		}
	}
	if err := report.CheckPath("kernels.*.seconds"); err != nil {
		t.Errorf("CheckPath with *: %v", err)
	}
	if err := report.CheckPath("kernels.x.seconds"); err == nil || !strings.Contains(err.Error(), "or * for every element") {
		t.Errorf("CheckPath(kernels.x.seconds) = %v", err)
	}
}

// TestPlotRoofAndLists: a plot with two x metrics draws a line family per
// x metric (named in the legend) with the roof's ceilings; list metrics
// give one point per element, and a null element is left out.
func TestPlotRoofAndLists(t *testing.T) {
	s := writeStudy(t, `program: prog.yaml
metrics: [oi, oih, t, w.*.i, w.*.r]
vary: {program.buffering: [single, double]}
plot:
  - {name: roof, x: [oi, oih], y: t, logx: true, logy: true, xlabel: "OI both", roof: {peak: 100, slopes: {"mem 1 TB/s": 1, "path 2 TB/s": 2}}}
  - {name: lists, x: w.*.i, y: w.*.r, series: program.buffering}
`)
	rec := func(i int, buf string, oi, oih, tf, w string) Record {
		m := map[string]json.RawMessage{"oi": json.RawMessage(oi), "oih": json.RawMessage(oih), "t": json.RawMessage(tf)}
		var ws []map[string]any
		_ = json.Unmarshal([]byte(w), &ws)
		doc := map[string]any{"w": []any{}}
		for _, x := range ws {
			doc["w"] = append(doc["w"].([]any), x)
		}
		for _, k := range []string{"w.*.i", "w.*.r"} {
			v, _ := Lookup(doc, k)
			m[k], _ = json.Marshal(v)
		}
		return Record{Index: i, Params: map[string]string{"program.buffering": buf}, Status: StatusOK, Metrics: m}
	}
	recs := []Record{
		rec(0, "single", "10", "30", "20", `[{"i": 0, "r": 0.9}, {"i": 6, "r": 0.5}, {"i": 12}]`),
		rec(1, "double", "40", "90", "70", `[{"i": 0, "r": 0.8}, {"i": 6, "r": 0.4}, {"i": 12, "r": 0.1}]`),
	}
	dir := t.TempDir()
	var log bytes.Buffer
	for _, pl := range s.Plots {
		if err := DrawPlot(s, pl, recs, dir, &log); err != nil {
			t.Fatal(err)
		}
	}
	svg := string(readFile(t, filepath.Join(dir, "roof.svg")))
	for _, want := range []string{"mem 1 TB/s", "path 2 TB/s", ">oi<", ">oih<", "OI both"} {
		if !strings.Contains(svg, want) {
			t.Errorf("roof plot lacks %q", want)
		}
	}
	if !strings.Contains(log.String(), "plot lists: 1 values left out") {
		t.Errorf("warnings %q: want the null element left out", log.String())
	}
	if got := s.Plots[0]; got.X != "oi" || !reflect.DeepEqual(got.MoreX, []string{"oih"}) || got.Roof == nil || got.Roof.Peak != 100 || len(got.Roof.Slopes) != 2 {
		t.Errorf("parsed %+v", got)
	}
}

// TestPlotRoofErrors: bad roofs and x lists are bad input naming the key.
func TestPlotRoofErrors(t *testing.T) {
	base := "program: p.yaml\nmetrics: [a, b]\nvary: {program.m: [1, 2]}\nplot: "
	for text, want := range map[string]string{
		"{x: a, y: b, roof: {peak: -1, slopes: {m: 1}}}":      `key "plot.roof.peak": want a positive number`,
		"{x: a, y: b, roof: {peak: 1}}":                       `needs peak and slopes`,
		"{x: a, y: b, roof: {peak: 1, slopes: {m: zero}}}":    `key "plot.roof.slopes.m": want a positive number`,
		"{x: a, y: b, roof: {peak: 1, slopes: 2}}":            `must be a mapping`,
		"{x: a, y: b, roof: {peak: 1, slopes: {m: 1}, q: 1}}": `unknown key "plot.roof.q"; the keys are peak, slopes`,
	} {
		_, err := ParseStudy("s.yaml", ".", []byte(base+text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", text, err, want)
		}
	}
	// (With metrics of report.json: a name that is none of them is first
	// taken for a metric's right spelling, checkMetrics.)
	text := "program: p.yaml\nmetrics: [lu_gemm.operational_intensity, lu_gemm.tflops]\nvary: {program.m: [1, 2]}\nplot: {x: [lu_gemm.operational_intensity, program.m], y: lu_gemm.tflops}"
	if _, err := ParseStudy("s.yaml", ".", []byte(text)); err == nil || !strings.Contains(err.Error(), `"program.m" is not one of the metrics`) {
		t.Errorf("a parameter among several x: error %v", err)
	}
}

// TestPlotYRange: ymin/ymax parse to numbers and bad ones are bad input.
func TestPlotYRange(t *testing.T) {
	base := "program: p.yaml\nmetrics: [a, b]\nvary: {program.m: [1, 2]}\nplot: "
	s, err := ParseStudy("s.yaml", ".", []byte(base+"{x: a, y: b, ymin: 0.1, ymax: 2}"))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Plots[0]; p.YMin == nil || *p.YMin != 0.1 || p.YMax == nil || *p.YMax != 2 {
		t.Errorf("parsed %+v", p)
	}
	for _, text := range []string{"{x: a, y: b, ymin: low}", "{x: a, y: b, ymax: .inf}"} {
		if _, err := ParseStudy("s.yaml", ".", []byte(base+text)); err == nil || !strings.Contains(err.Error(), "finite number") {
			t.Errorf("%s: error %v", text, err)
		}
	}
}
