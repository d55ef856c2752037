package sweep

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// dataLines matches the lines of three points or more that a plot's SVG
// draws (the grid's and the axes' have a width of their own, the legend's
// samples two points; markers are arcs).
var dataLines = regexp.MustCompile(`<path d="M[^"A]*L[^"A]*L[^"A]*" style="fill:none;stroke:#[0-9A-F]{6}" />`)

// A plot whose x is a metric joins no two points into a line: the points
// of a series that differ in another parameter (here program.m, given in
// points) are its markers, one legend entry for the series — a Pareto
// chart of throughput against accuracy joined the sizes of one scheme into
// one line, in the order of their throughputs (a user review). A point's
// own values, a list metric's elements, stay joined: one line a point,
// named by the parameters that tell it from the series' other points. An
// x parameter's lines are as before: the points joined in x order; so are
// a metric x's with join: true (a weak-scaling curve against
// cluster.npus).
func TestPlotMetricXJoinsNoPoints(t *testing.T) {
	s := writeStudy(t, `program: prog.yaml
metrics: [t, e, w.*.i, w.*.r]
points: [{program.m: 256}, {program.m: 512}, {program.m: 1024}]
vary: {program.tiling.bm: [64, 128]}
plot:
  - {name: pareto, x: t, y: e, series: program.tiling.bm}
  - {name: lists, x: w.*.i, y: w.*.r, series: program.tiling.bm}
  - {name: param, x: program.m, y: t, series: program.tiling.bm}
  - {name: joined, x: t, y: e, series: program.tiling.bm, join: true}
`)
	var recs []Record
	for _, p := range s.Points {
		i := float64(p.Index)
		m := map[string]json.RawMessage{}
		for k, v := range map[string]any{"t": 10 + i, "e": 20 - i*i, "w.*.i": []float64{0, 1, 2}, "w.*.r": []float64{i, i + 1, i / 2}} {
			m[k], _ = json.Marshal(v)
		}
		recs = append(recs, Record{Index: p.Index, Params: s.paramMap(p), Status: StatusOK, Metrics: m})
	}
	dir := t.TempDir()
	for _, c := range []struct {
		plot   string
		lines  int      // lines through the data (of 3 points each)
		legend []string // its entries
	}{
		{"pareto", 0, []string{"bm=64", "bm=128"}}, // (6 points, 2 series: their markers)
		{"lists", 6, []string{"bm=64, m=256", "bm=128, m=256", "bm=64, m=512", "bm=128, m=512", "bm=64, m=1024", "bm=128, m=1024"}}, // (each point's list)
		{"param", 2, []string{"bm=64", "bm=128"}},  // (each series' 3 points in x order)
		{"joined", 2, []string{"bm=64", "bm=128"}}, // (as param: join)
	} {
		i := 0
		for i < len(s.Plots) && s.Plots[i].Name != c.plot {
			i++
		}
		if err := DrawPlot(s, s.Plots[i], recs, dir, nil); err != nil {
			t.Fatal(err)
		}
		svg := string(readFile(t, filepath.Join(dir, c.plot+".svg")))
		if n := len(dataLines.FindAllString(svg, -1)); n != c.lines {
			t.Errorf("%s: %d lines through the data, want %d", c.plot, n, c.lines)
		}
		var legend []string
		for _, m := range regexp.MustCompile(`>([a-z]+=[^<]*)<`).FindAllStringSubmatch(svg, -1) {
			legend = append(legend, m[1])
		}
		if !slices.Equal(legend, c.legend) {
			t.Errorf("%s: legend %q, want %q", c.plot, legend, c.legend)
		}
	}
}
