package sweep

import (
	"time"

	"codeberg.org/go-pdf/fpdf"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/davinci-sim/davinci-sim/machines"
)

// Plot file size.
const (
	plotWidth  = 16 * vg.Centimeter
	plotHeight = 10 * vg.Centimeter
)

// numeric reads a parameter value as a number: a plain number, or a size
// (bytes), frequency (Hz) or bandwidth (B/s) with units.
func numeric(s string) (float64, bool) {
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f, true
	}
	if v, err := machines.ParseSize(s); err == nil {
		return float64(v), true
	}
	if v, err := machines.ParseFrequency(s); err == nil {
		return float64(v), true
	}
	if v, err := machines.ParseBandwidth(s); err == nil {
		return float64(v), true
	}
	return 0, false
}

// metricNumber reads a recorded metric as a finite number.
func metricNumber(raw json.RawMessage) (float64, bool) {
	var f *float64 // null (a metric the report lacks) is no number, not 0
	if json.Unmarshal(raw, &f) != nil || f == nil {
		return 0, false
	}
	return *f, !math.IsInf(*f, 0) && !math.IsNaN(*f)
}

// metricNumbers reads a recorded metric as numbers: one for a number, one
// per element for a list ("*" paths; NaN where an element is not a finite
// number); nil otherwise.
func metricNumbers(raw json.RawMessage) []float64 {
	if f, ok := metricNumber(raw); ok {
		return []float64{f}
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	out := make([]float64, len(list))
	for i, el := range list {
		f, ok := metricNumber(el)
		if !ok {
			f = math.NaN()
		}
		out[i] = f
	}
	return out
}

// line is one plotted line: a label and its points.
type line struct {
	label string
	xys   plotter.XYs
	// ends, where not nil (a plot whose x is a metric), are where each
	// study point's values end in xys: the line joins the values of one
	// point (a list metric's elements), never two points — the points of
	// a series are its markers; nil: every value of xys is joined.
	ends []int
}

// segments returns the parts of l's points that are joined: each study
// point's (ends), or all of them.
func (l *line) segments() []plotter.XYs {
	if l.ends == nil {
		return []plotter.XYs{l.xys}
	}
	var out []plotter.XYs
	start := 0
	for _, end := range l.ends {
		out = append(out, l.xys[start:end])
		start = end
	}
	return out
}

// DrawPlot draws plot pl from the records (ok and check-failed points
// with numeric values) into dir/NAME.png, .svg and .pdf: a line per
// series, its points joined in x order where x is a parameter, its
// points' markers where x is a metric (Plot.Series). Points that
// cannot be drawn (non-numeric, or not positive on a log axis) are left
// out with a warning on log; a plot with nothing to draw is skipped with a
// warning.
func DrawPlot(s *Study, pl Plot, recs []Record, dir string, log io.Writer) error {
	_, err := drawPlot(s, pl, recs, dir, log)
	return err
}

// maxPlotValue and minPlotLog bound the values a plot draws: an axis
// spanning ±1e308 has an infinite range, on which the plotting library's
// ticks never end, and one at 1e-300 on a log axis pads to 0.
const (
	maxPlotValue = 1e300
	minPlotLog   = 1e-300
)

// plottable reports whether v can be drawn on a linear (or log) axis.
func plottable(v float64, log bool) bool {
	if log {
		return v >= minPlotLog && v <= maxPlotValue
	}
	return v >= -maxPlotValue && v <= maxPlotValue // (NaN fails both)
}

// drawPlot is DrawPlot, reporting whether it drew the plot (false: nothing
// to draw, skipped).
func drawPlot(s *Study, pl Plot, recs []Record, dir string, log io.Writer) (bool, error) {
	warn := func(format string, a ...any) {
		if log != nil {
			fmt.Fprintf(log, "plot %s: %s\n", pl.Name, fmt.Sprintf(format, a...))
		}
	}
	// Keep the records that pass Where and have a value.
	var keep []Record
	for _, r := range recs {
		if r.Status == StatusFailed {
			continue
		}
		ok := true
		for k, v := range pl.Where {
			if r.Params[k] != v {
				ok = false
			}
		}
		if ok {
			keep = append(keep, r)
		}
	}
	// Series: the requested parameters plus, where x is a parameter, any
	// other parameter that still varies for the same x and series values,
	// so that each line is a function of x (a parameter that x
	// determines, such as bn = bm in a list of square blocks, does not
	// split lines). Where x is a metric no point is joined to another
	// (line.ends): with single values (a Pareto chart) the series are the
	// study's, each drawn as its points' markers; with lists ("*" paths),
	// each point's values are its line, and any other parameter that
	// varies for the same series values is added, so that each line is
	// one point's, named.
	xParam := slices.Contains(s.Params, pl.X)
	joined := xParam || pl.Join // (points joined in x order: Plot.Join)
	lists := slices.ContainsFunc(append(append([]string{pl.X}, pl.MoreX...), pl.Y...), func(m string) bool {
		return slices.Contains(strings.Split(m, "."), "*")
	})
	series := slices.Clone(pl.Series)
	for _, q := range s.Params {
		if q == pl.X || slices.Contains(series, q) || !joined && !lists {
			continue
		}
		if _, fixed := pl.Where[q]; fixed {
			continue
		}
		seen := map[string]string{}
		for _, r := range keep {
			key := ""
			switch {
			case xParam:
				key = r.Params[pl.X]
			case joined:
				key = string(r.Metrics[pl.X])
			}
			for _, c := range series {
				key += "\x00" + r.Params[c]
			}
			if v, ok := seen[key]; ok && v != r.Params[q] {
				series = append(series, q)
				break
			}
			seen[key] = r.Params[q]
		}
	}
	short := shortNames(series)
	shown := make([]map[string]string, len(series))
	for i, q := range series {
		shown[i] = fileLabels(keep, q)
	}

	// X positions: numbers, or categories in point order.
	xpos := map[string]float64{}
	var xcats []string
	categorical := false
	if xParam {
		for _, r := range keep {
			if _, ok := numeric(r.Params[pl.X]); !ok {
				categorical = true
			}
		}
		for _, r := range keep {
			v := r.Params[pl.X]
			if _, ok := xpos[v]; ok {
				continue
			}
			if categorical {
				xpos[v] = float64(len(xcats))
			} else {
				xpos[v], _ = numeric(v)
			}
			xcats = append(xcats, v)
		}
	}
	if categorical && pl.LogX {
		warn("x values are not all numbers; using a linear axis")
	}
	logx := pl.LogX && !categorical

	var lines []*line
	byKey := map[string]*line{}
	dropped := 0
	xs := append([]string{pl.X}, pl.MoreX...)
	for _, xm := range xs {
		for _, y := range pl.Y {
			for _, r := range keep {
				var parts []string
				if len(xs) > 1 {
					parts = append(parts, last(xm))
				}
				if len(pl.Y) > 1 {
					parts = append(parts, y)
				}
				for i, q := range series {
					v := r.Params[q]
					if f, ok := shown[i][v]; ok {
						v = f
					} else if v == "" {
						v = `""` // (the program's own value or default)
					}
					parts = append(parts, short[i]+"="+v)
				}
				key := strings.Join(parts, ", ")
				// A metric may be a list ("*" paths): the point gives
				// several, x and y element by element (a single value
				// goes with each element of the other).
				var xv []float64
				if xParam {
					xv = []float64{xpos[r.Params[xm]]}
				} else {
					xv = metricNumbers(r.Metrics[xm])
				}
				yv := metricNumbers(r.Metrics[y])
				n := max(len(xv), len(yv))
				if len(xv) == 0 || len(yv) == 0 || (len(xv) != n && len(xv) != 1) || (len(yv) != n && len(yv) != 1) {
					dropped++
					continue
				}
				var drawn *line // (the line r's values went to)
				for i := range n {
					x, yy := xv[min(i, len(xv)-1)], yv[min(i, len(yv)-1)]
					if !plottable(x, logx) || !plottable(yy, pl.LogY) ||
						(pl.YMin != nil && yy < *pl.YMin) || (pl.YMax != nil && yy > *pl.YMax) {
						dropped++
						continue
					}
					l := byKey[key]
					if l == nil {
						l = &line{label: key}
						byKey[key] = l
						lines = append(lines, l)
					}
					l.xys = append(l.xys, plotter.XY{X: x, Y: yy})
					drawn = l
				}
				if drawn != nil && !joined {
					drawn.ends = append(drawn.ends, len(drawn.xys)) // (r's values end here)
				}
			}
		}
	}
	if dropped > 0 {
		warn("%d values left out (missing, not numbers, not positive on a log axis, beyond ±%g (%g on a log axis), or outside ymin/ymax)", dropped, maxPlotValue, minPlotLog)
	}
	if len(lines) == 0 {
		// The files of an earlier run that drew it would stand for
		// these results: removed.
		var removed []string
		for _, ext := range plotFormats {
			path := filepath.Join(dir, pl.Name+ext)
			if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
				continue
			}
			if err := os.Remove(path); err != nil {
				return false, fmt.Errorf("plot %s: nothing to draw, and its earlier file stays: %v", pl.Name, err)
			}
			removed = append(removed, pl.Name+ext)
		}
		if len(removed) > 0 {
			warn("nothing to draw; skipped, and its earlier %s removed", strings.Join(removed, ", "))
		} else {
			warn("nothing to draw; skipped")
		}
		return false, nil
	}

	p := plot.New()
	// The axes' units are the points' (TOP/s where they count integer
	// operations).
	unit := plotUnit(keep, append(slices.Clone(xs), pl.Y...))
	titleOf := func(key string) string { return unitTitle(key, unit) }
	p.Title.Text = plotTitleIn(pl, unit)
	p.X.Label.Text = titleOf(pl.X)
	for _, x := range pl.MoreX {
		if titleOf(x) != p.X.Label.Text {
			p.X.Label.Text = "" // the legend names each x metric
		}
	}
	if pl.XLabel != "" {
		p.X.Label.Text = pl.XLabel
	}
	p.Y.Label.Text = titleOf(pl.Y[0])
	if len(pl.Y) > 1 {
		// The legend names each metric; the axis gets their common title
		// (e.g. the relative error), if any.
		for _, y := range pl.Y[1:] {
			if titleOf(y) != p.Y.Label.Text {
				p.Y.Label.Text = ""
			}
		}
	}
	// Nice steps on linear axes; on log ones, labels covering the axis,
	// which grows to the powers of ten logTicks returns beyond the data.
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{}, linearTicks{}
	if logx {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		p.X.AutoRescale = true
	}
	if pl.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.AutoRescale = true
	}
	if xParam && (categorical || len(xcats) <= 16) {
		// Label the ticks with the values as written (256KiB, single).
		ticks := make(plot.ConstantTicks, 0, len(xcats))
		for _, v := range xcats {
			if logx && xpos[v] <= 0 { // left out of the plot: no tick either (a log axis has no place for it)
				continue
			}
			ticks = append(ticks, plot.Tick{Value: xpos[v], Label: v})
		}
		sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
		p.X.Tick.Marker = ticks
		p.X.AutoRescale = false
	}
	if categorical {
		p.X.Min, p.X.Max = -0.5, float64(len(xcats))-0.5
	}
	p.Add(plotter.NewGrid())
	for _, l := range lines {
		for _, seg := range l.segments() {
			sort.SliceStable(seg, func(a, b int) bool { return seg[a].X < seg[b].X })
		}
	}
	drawn := lines // and the ceilings, which the legend should not cover either
	if pl.Roof != nil {
		drawn = append(slices.Clip(lines), addRoof(p, pl.Roof, lines, logx)...)
	}
	outside := !placeLegend(p, drawn, logx, pl.LogY)
	for i, l := range lines {
		if err := addLine(p, l, i); err != nil {
			warn("%v", err)
		}
	}
	widenFlat(&p.X, logx)
	widenFlat(&p.Y, pl.LogY)
	for _, ext := range plotFormats {
		if err := savePlot(p, outside, filepath.Join(dir, pl.Name+ext)); err != nil {
			return false, fmt.Errorf("plot %s: %v", pl.Name, err)
		}
	}
	return true, nil
}

// addLine draws line l, the i-th, in its style: its points' markers, and
// its joined parts (line.segments) as lines — all of it where it is one
// (x a parameter, or Plot.Join), each study point's values of several
// where x is a metric (a list metric's; a single value has no line); the
// legend shows the line, where one is drawn, and the marker.
func addLine(p *plot.Plot, l *line, i int) error {
	segs := l.segments()
	var thumbs []plot.Thumbnailer
	for _, seg := range segs {
		if len(segs) > 1 && len(seg) < 2 {
			continue
		}
		ln, err := plotter.NewLine(seg)
		if err != nil {
			return err
		}
		ln.Color = plotutil.Color(i)
		ln.Dashes = plotutil.Dashes(i / 7)
		p.Add(ln)
		if thumbs == nil {
			thumbs = append(thumbs, ln)
		}
	}
	sc, err := plotter.NewScatter(l.xys)
	if err != nil {
		return err
	}
	sc.Color = plotutil.Color(i)
	sc.Shape = plotutil.Shape(i)
	p.Add(sc)
	if l.label != "" {
		p.Legend.Add(l.label, append(thumbs, sc)...)
	}
	return nil
}

// widenFlat gives an axis whose values are all one v a range around it
// where the plotting library's v ± 1 is none: v/2 to 2v on a log axis
// with v ≤ 1 (v − 1 is not positive) or v − 1 rounding to v (v ≥ 2^53),
// v ± |v|/2 on a linear one with v ± 1 rounding to v. Elsewhere the library's range stands (the
// charts drawn before stay as they were).
func widenFlat(a *plot.Axis, log bool) {
	v := a.Min
	switch {
	case a.Max != v || math.IsInf(v, 0) || math.IsNaN(v):
	case log && (v-1 <= 0 || v-1 == v):
		a.Min, a.Max = v/2, v*2
	case !log && (v-1 == v || v+1 == v):
		h := float64(math.Abs(v) / 2) // (rounded: not fused into the sums)
		a.Min, a.Max = v-h, v+h
	}
}

// addRoof draws the ceilings of roof (grey, one dash pattern each) over
// the x range of lines, widened by half a decade on a log axis (10 % on a
// linear one) and starting where a ceiling is half the lowest y drawn (so
// that the ceilings do not stretch the y axis), sampled densely enough to
// show the kink at peak / slope; it returns the ceilings as drawn
// (unlabelled: their legend entries are added here).
func addRoof(p *plot.Plot, roof *Roof, lines []*line, logx bool) (ceilings []*line) {
	xlo, hi, ylo := math.Inf(1), math.Inf(-1), math.Inf(1)
	for _, l := range lines {
		for _, q := range l.xys {
			xlo, hi, ylo = min(xlo, q.X), max(hi, q.X), min(ylo, q.Y)
		}
	}
	if !(hi >= xlo) {
		return nil
	}
	if logx {
		xlo, hi = xlo/math.Sqrt(10), hi*math.Sqrt(10)
	} else {
		xlo, hi = max(0, xlo-float64(0.1*(hi-xlo))), hi+float64(0.1*(hi-xlo))
	}
	for i, s := range roof.Slopes {
		lo := max(xlo, ylo/2/s.Slope)
		if lo >= hi {
			continue
		}
		const steps = 64
		var xys plotter.XYs
		for k := range steps + 1 {
			x := lo + float64((hi-lo)*float64(k)/steps) // ·1/64 is exact: a product
			if logx {
				x = lo * math.Pow(hi/lo, float64(k)/steps)
			}
			xys = append(xys, plotter.XY{X: x, Y: min(roof.Peak, s.Slope*x)})
		}
		if k := roof.Peak / s.Slope; k > lo && k < hi {
			xys = append(xys, plotter.XY{X: k, Y: roof.Peak})
			sort.Slice(xys, func(a, b int) bool { return xys[a].X < xys[b].X })
		}
		ln, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		ln.Color = color.Gray{Y: uint8(90 + 50*(i%3))}
		ln.Dashes = []vg.Length{vg.Points(6), vg.Points(2 + 2*float64(i))}
		ln.Width = vg.Points(1.5)
		p.Add(ln)
		p.Legend.Add(s.Label, ln)
		ceilings = append(ceilings, &line{xys: xys})
	}
	return ceilings
}

// PDFs carry a creation date and list their objects in map order unless
// told otherwise; fixing both keeps the plots byte-identical between runs
// (a study's outputs are compared to check they are current).
func init() {
	epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	fpdf.SetDefaultCreationDate(epoch)
	fpdf.SetDefaultModificationDate(epoch)
	fpdf.SetDefaultCatalogSort(true)
}

// savePlot renders p to path through a temporary file (the format follows
// the extension of path). With outside, the legend goes in a strip right of
// the chart (the image that much wider, the chart as large as any other)
// instead of over its data area.
func savePlot(p *plot.Plot, outside bool, path string) (err error) {
	defer func() {
		if r := recover(); r != nil { // gonum/plot panics on some degenerate axes
			err = fmt.Errorf("cannot draw: %v", r)
		}
	}()
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	var wt io.WriterTo
	if !outside {
		if wt, err = p.WriterTo(plotWidth, plotHeight, format); err != nil {
			return err
		}
	} else {
		chart, legend := *p, p.Legend
		chart.Legend = plot.NewLegend()
		legend.Left, legend.Top = true, true
		legend.XOffs, legend.YOffs = 0, 0
		size := legend.Rectangle(draw.Canvas{}).Size()
		strip := legendMargin + size.X + legendMargin
		// The strip's top at the data area's, below the title; a legend
		// taller than the chart makes the image taller (the chart keeps
		// its size, at the top).
		title := chart.Title.TextStyle.Rectangle(chart.Title.Text).Size().Y + chart.Title.Padding
		height := max(plotHeight, title+size.Y+legendMargin)
		c, err := draw.NewFormattedCanvas(plotWidth+strip, height, format)
		if err != nil {
			return err
		}
		dc := draw.New(c)
		if chart.BackgroundColor != nil { // the strip's too
			dc.SetColor(chart.BackgroundColor)
			dc.Fill(dc.Rectangle.Path())
		}
		chart.Draw(draw.Crop(dc, 0, -strip, height-plotHeight, 0))
		legend.Draw(draw.Crop(dc, plotWidth+legendMargin, -legendMargin, 0, -title))
		wt = c
	}
	var b strings.Builder
	if _, err := wt.WriteTo(&b); err != nil {
		return err
	}
	return writeAtomic(path, []byte(b.String()))
}

// legendMargin is the space either side of a legend drawn beside its chart.
const legendMargin = 4 * vg.Millimeter

// shortNames returns the last segment of each dotted path, or the whole
// path where two last segments would collide.
func shortNames(paths []string) []string {
	out := make([]string, len(paths))
	count := map[string]int{}
	for _, q := range paths {
		count[last(q)]++
	}
	for i, q := range paths {
		if count[last(q)] > 1 {
			out[i] = q
		} else {
			out[i] = last(q)
		}
	}
	return out
}

func last(q string) string {
	if i := strings.LastIndexByte(q, '.'); i >= 0 {
		return q[i+1:]
	}
	return q
}

// fileLabels returns, for a parameter whose values are files (fileParam:
// program and machine files), the base name without extension that a
// legend shows for each file value in recs (an embedded machine's name
// stays as it is) — unless two values would then read the same; nil
// otherwise.
func fileLabels(recs []Record, q string) map[string]string {
	if !fileParam(q) {
		return nil
	}
	out := map[string]string{}
	taken := map[string]bool{}
	for _, r := range recs {
		v := r.Params[q]
		if _, ok := out[v]; ok {
			continue
		}
		label := v
		if q == ParamProgram || isMachineFile(v) {
			label = strings.TrimSuffix(filepath.Base(v), filepath.Ext(v))
		}
		if label == "" || taken[label] {
			return nil
		}
		out[v], taken[label] = label, true
	}
	return out
}

// placeLegend puts the legend in the corner of the data area that covers
// the fewest points of the lines (their points, and points along their
// segments: lines sorted by x, the parts joined: line.segments), and
// reports whether that corner covers none (else the legend is better drawn
// beside the chart: savePlot's outside).
func placeLegend(p *plot.Plot, lines []*line, logx, logy bool) (free bool) {
	var xs, ys []float64
	var ends []int // where each joined part's points end in xs, ys
	for _, l := range lines {
		for _, seg := range l.segments() {
			for _, q := range seg {
				xs = append(xs, q.X)
				ys = append(ys, q.Y)
			}
			ends = append(ends, len(xs))
		}
	}
	norm := func(vs []float64, log bool) []float64 {
		out := make([]float64, len(vs))
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, v := range vs {
			if log {
				v = math.Log(v)
			}
			out[i] = v
			lo, hi = min(lo, v), max(hi, v)
		}
		for i := range out {
			if hi > lo {
				out[i] = (out[i] - lo) / (hi - lo)
			} else {
				out[i] = 0.5
			}
		}
		return out
	}
	nx, ny := norm(xs, logx), norm(ys, logy)
	// Points along each segment, on the axes' scales.
	const along = 8
	start := 0
	for _, end := range ends {
		for i := start + 1; i < end; i++ {
			for k := 1; k < along; k++ {
				f := float64(k) / along
				nx = append(nx, nx[i-1]+float64(f*(nx[i]-nx[i-1])))
				ny = append(ny, ny[i-1]+float64(f*(ny[i]-ny[i-1])))
			}
		}
		start = end
	}
	// The legend's share of the data area, which is the image less the
	// title, the axes and their padding (about: the tick labels' widths
	// are not known yet), with a margin.
	// (legend shares p.Legend's entries array: its additions may land in
	// spare capacity there, beyond p.Legend's length, where p.Legend's
	// own additions overwrite them later — p.Legend never sees them.)
	legend := p.Legend // the entries added so far (the roof's), and the lines'
	for _, l := range lines {
		if l.label != "" {
			legend.Add(l.label)
		}
	}
	size := legend.Rectangle(draw.Canvas{}).Size()
	if size.Y == 0 {
		return true // no legend to place
	}
	width := min(1, float64((size.X+legendMargin)/(plotWidth-2*vg.Centimeter)))
	height := min(1, float64((size.Y+legendMargin)/(plotHeight-2*vg.Centimeter)))
	best, bestN := 0, math.MaxInt
	for c := range 4 { // top-right, top-left, bottom-right, bottom-left
		top, left := c < 2, c%2 == 1
		n := 0
		for i := range nx {
			inX := nx[i] >= 1-width
			if left {
				inX = nx[i] <= width
			}
			inY := ny[i] >= 1-height
			if !top {
				inY = ny[i] <= height
			}
			if inX && inY {
				n++
			}
		}
		if n < bestN {
			best, bestN = c, n
		}
	}
	p.Legend.Top = best < 2
	p.Legend.Left = best%2 == 1
	return bestN == 0
}

// Tick marks. gonum/plot's own (DefaultTicks, LogTicks) put linear ticks at
// odd places (35, 55, 75), leave parts of a log axis unlabelled and mix
// label styles (0.0001 next to 1e-05); the axes use these instead, whose
// labels share one style per axis (labels.go).

// linearTicks marks a linear axis with nicely spaced labelled ticks: a step
// of 1, 2, 2.5 or 5 × 10^k giving 4 to 8 labels within the range, all with
// the same number of decimals; unlabelled ticks halve (or fifth) the step.
type linearTicks struct{}

// Ticks returns the ticks between lo and hi.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	st, ok := niceStep(lo, hi)
	if !ok {
		return singleTick(lo, hi)
	}
	return st.ticks(lo, hi)
}

// singleTick is the one labelled tick of a range too narrow (or not
// finite) to step through: at its lower end, if finite.
func singleTick(lo, hi float64) []plot.Tick {
	if math.IsInf(lo, 0) || math.IsNaN(lo) || !(hi >= lo) {
		return nil
	}
	return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 6, 64)}}
}

// step is a linear tick step, m10 × 10^(k−1) with m10 one of 10, 20, 25, 50
// (1, 2, 2.5 or 5 × 10^k).
type step struct {
	m10, k int
}

// stepMantissas are the steps' mantissas (× 10).
var stepMantissas = []int{10, 20, 25, 50}

// value returns n × m × 10^(k−1) (n, m integers), computed as one product
// or quotient of exact integers and a power of ten, so that it is the
// double nearest the decimal value (0.3, not 0.30000000000000004).
func (st step) value(n float64, m int) float64 {
	v := n * float64(m)
	e := st.k - 1
	if p := math.Pow10(max(e, -e)); !math.IsInf(p, 0) {
		if e >= 0 {
			v *= p
		} else {
			v /= p
		}
	} else {
		v *= math.Pow10(e) // (beyond float64's powers of ten: not exact)
	}
	if v == 0 {
		return 0 // not −0
	}
	return v
}

// size is the step as a number.
func (st step) size() float64 { return st.value(1, st.m10) }

// tolerance widens a range by a little, so that ticks on its ends (up to
// rounding) stay in.
func tolerance(lo, hi float64) float64 {
	return float64(1e-9 * max(hi-lo, math.Abs(lo)*1e-7, math.Abs(hi)*1e-7))
}

// log10 is math.Log10 rounded (its product is not fused into an addition
// around it: the same ticks on every platform, .ci/fused-float).
func log10(x float64) float64 { return float64(math.Log10(x)) }

// span returns the indices n of the multiples n × size of size within
// [lo, hi] (first, last; last < first if none).
func span(lo, hi, size float64) (first, last float64) {
	tol := tolerance(lo, hi)
	return math.Ceil((lo - tol) / size), math.Floor((hi + tol) / size)
}

// niceStep picks the step for [lo, hi]: 4 to 8 labels, 5 or 6 preferred,
// 2.5 only where 1, 2 and 5 give no such count (it needs one more decimal).
func niceStep(lo, hi float64) (step, bool) {
	width := hi - lo
	if !(width > 0) || math.IsInf(width, 0) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return step{}, false
	}
	k0 := int(math.Floor(math.Log10(width)))
	var best step
	bestCost := math.Inf(1)
	for k := k0 - 2; k <= k0+1; k++ {
		for _, m := range stepMantissas {
			st := step{m, k}
			size := st.size()
			if !(size > 0) || math.IsInf(size, 0) {
				continue
			}
			first, last := span(lo, hi, size)
			n := last - first + 1
			if n < 2 || n > 1000 || max(math.Abs(first), math.Abs(last)) > 1<<53 {
				continue // (beyond 2^53 steps from 0, n ± 1 is n)
			}
			cost := math.Abs(n - 5.5)
			if n < 4 || n > 8 {
				cost += 10
			}
			if m == 25 {
				cost++
			}
			if cost < bestCost {
				best, bestCost = st, cost
			}
		}
	}
	return best, !math.IsInf(bestCost, 1)
}

// ticks returns the labelled multiples of the step in [lo, hi], with
// unlabelled ones between: half steps for 1 and 2 × 10^k, fifths for 2.5
// and 5 × 10^k.
func (st step) ticks(lo, hi float64) []plot.Tick {
	div := 2
	if st.m10 == 25 || st.m10 == 50 {
		div = 5
	}
	first, last := span(lo, hi, st.size())
	var labelled []float64
	for i := 0; i <= int(last-first); i++ {
		labelled = append(labelled, st.value(first+float64(i), st.m10))
	}
	labels := linearLabels(labelled, st)
	ticks := make([]plot.Tick, 0, div*len(labelled))
	for i, v := range labelled {
		ticks = append(ticks, plot.Tick{Value: v, Label: labels[i]})
	}
	minor := step{st.m10 / div, st.k}
	if first, last := span(lo, hi, minor.size()); max(math.Abs(first), math.Abs(last)) <= 1<<53 {
		for i := 0; i <= int(last-first); i++ {
			if n := first + float64(i); math.Mod(n, float64(div)) != 0 {
				ticks = append(ticks, plot.Tick{Value: minor.value(n, minor.m10)})
			}
		}
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	return ticks
}

// logTicks marks a log axis so that labels cover it:
//
//   - over less than three decades, labels at the 1, 2, 5 multiples of the
//     powers of ten, or else at all 1..9 multiples, if that gives three to
//     eight labels none of which is more than 40 % of the axis from the
//     next (or the axis end);
//   - else, over two decades or more, labelled ticks at every power of ten
//     (computed exactly with math.Pow10) and unlabelled ones at 2..9 times
//     them; an end more than half a decade from the nearest power of ten
//     gets the next power of ten too, beyond the range, for the axis to
//     grow to it (Axis.AutoRescale) rather than end in an unlabelled part.
//     More than maxDecadeLabels decades label every 2nd, 3rd, 5th, ... one;
//   - else the linear ticks of the range (8, 10, 12, ... on 7.3 to 16.6).
//
// All labels on an axis share one style: plain decimals (0.001, 20) where
// they lie between 1e-4 and 1e5, else exponents (1e-07, 2e+06).
type logTicks struct{}

// maxDecadeLabels bounds the labels of a log axis over many decades.
const maxDecadeLabels = 15

// Ticks returns the ticks between lo and hi (both > 0), and beyond them the
// powers of ten an axis over two decades or more should grow to.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	decades := log10(hi) - log10(lo)
	if decades >= 3 {
		return decadeTicks(lo, hi)
	}
	for _, muls := range [][]int{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		labelled := multiples(lo, hi, muls)
		if len(labelled) > 8 || !covers(labelled, lo, hi) {
			continue
		}
		var ticks []plot.Tick
		labels := logLabels(labelled)
		j := 0
		for _, v := range multiples(lo, hi, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}) {
			t := plot.Tick{Value: v}
			if j < len(labelled) && v == labelled[j] {
				t.Label = labels[j]
				j++
			}
			ticks = append(ticks, t)
		}
		return ticks
	}
	if decades >= 2 {
		return decadeTicks(lo, hi)
	}
	return linearTicks{}.Ticks(lo, hi)
}

// decadeTicks are logTicks' ticks of a range over two decades or more.
func decadeTicks(lo, hi float64) []plot.Tick {
	eLo, eHi := ceilExp(lo), floorExp(hi)
	every := 1
	for _, n := range []int{1, 2, 3, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000} {
		every = n
		if multiplesIn(eLo, eHi, n) <= maxDecadeLabels {
			break
		}
	}
	if every == 1 {
		// Grow to the next power of ten where an end is more than half a
		// decade from it (not into subnormal numbers or infinity).
		if float64(eLo)-log10(lo) > 0.5 && eLo-1 >= -307 {
			eLo--
			lo = math.Pow10(eLo)
		}
		if log10(hi)-float64(eHi) > 0.5 && eHi+1 <= 308 {
			eHi++
			hi = math.Pow10(eHi)
		}
	}
	var labelled []float64
	var ticks []plot.Tick
	for e := eLo; e <= eHi; e++ {
		if e%every == 0 {
			labelled = append(labelled, math.Pow10(e))
		} else if eHi-eLo <= 100 {
			ticks = append(ticks, plot.Tick{Value: math.Pow10(e)})
		}
	}
	labels := logLabels(labelled)
	for i, v := range labelled {
		ticks = append(ticks, plot.Tick{Value: v, Label: labels[i]})
	}
	if every == 1 {
		for _, v := range multiples(lo, hi, []int{2, 3, 4, 5, 6, 7, 8, 9}) {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	return ticks
}

// multiplesIn counts the multiples of n in [lo, hi].
func multiplesIn(lo, hi, n int) int {
	c := 0
	for e := lo; e <= hi; e++ {
		if e%n == 0 {
			c++
		}
	}
	return c
}

// floorExp is the largest e with 10^e ≤ v (up to rounding), v > 0.
func floorExp(v float64) int {
	e := int(math.Floor(math.Log10(v)))
	for e < 308 && math.Pow10(e+1) <= v*(1+1e-9) {
		e++
	}
	for e > -330 && math.Pow10(e) > v*(1+1e-9) {
		e--
	}
	return e
}

// ceilExp is the smallest e with 10^e ≥ v (up to rounding), v > 0.
func ceilExp(v float64) int {
	e := floorExp(v)
	if math.Pow10(e) < v*(1-1e-9) {
		e++
	}
	return e
}

// pow10Multiple returns d × 10^e (d a small integer) as the double nearest
// the decimal value.
func pow10Multiple(d, e int) float64 {
	if e < 0 && e >= -308 {
		return float64(d) / math.Pow10(-e)
	}
	return float64(d) * math.Pow10(e)
}

// multiples returns, in order, the values d × 10^e (d in muls) within
// [lo, hi] (0 < lo ≤ hi), up to rounding.
func multiples(lo, hi float64, muls []int) []float64 {
	var out []float64
	for e := floorExp(lo); e <= floorExp(hi); e++ {
		for _, d := range muls {
			if v := pow10Multiple(d, e); v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				out = append(out, v)
			}
		}
	}
	return out
}

// covers reports whether labels (ascending, within [lo, hi]) are at least
// three and leave no gap wider than 40 % of the axis (on a log scale), the
// axis ends included.
func covers(labels []float64, lo, hi float64) bool {
	if len(labels) < 3 {
		return false
	}
	width := log10(hi) - log10(lo)
	prev := log10(lo)
	for _, v := range append(slices.Clip(labels), hi) {
		if log10(v)-prev > float64(0.4*width) {
			return false
		}
		prev = log10(v)
	}
	return true
}
