package sweep

import (
	"time"

	"codeberg.org/go-pdf/fpdf"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
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
}

// DrawPlot draws plot pl from the records (ok and check-failed points
// with numeric values) into dir/NAME.png, .svg and .pdf. Points that
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
	// Series: the requested parameters plus any other parameter that
	// still varies for the same x and series values, so that each line is
	// a function of x (a parameter that x determines, such as bn = bm in
	// a list of square blocks, does not split lines).
	series := slices.Clone(pl.Series)
	for _, q := range s.Params {
		if q == pl.X || slices.Contains(series, q) {
			continue
		}
		if _, fixed := pl.Where[q]; fixed {
			continue
		}
		seen := map[string]string{}
		for _, r := range keep {
			key := r.Params[pl.X]
			if !slices.Contains(s.Params, pl.X) {
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
	xParam := slices.Contains(s.Params, pl.X)
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
				}
			}
		}
	}
	if dropped > 0 {
		warn("%d values left out (missing, not numbers, not positive on a log axis, beyond ±%g (%g on a log axis), or outside ymin/ymax)", dropped, maxPlotValue, minPlotLog)
	}
	if len(lines) == 0 {
		warn("nothing to draw; skipped")
		return false, nil
	}

	p := plot.New()
	p.Title.Text = plotTitle(pl)
	p.X.Label.Text = axisTitle(pl.X)
	for _, x := range pl.MoreX {
		if axisTitle(x) != p.X.Label.Text {
			p.X.Label.Text = "" // the legend names each x metric
		}
	}
	if pl.XLabel != "" {
		p.X.Label.Text = pl.XLabel
	}
	p.Y.Label.Text = axisTitle(pl.Y[0])
	if len(pl.Y) > 1 {
		// The legend names each metric; the axis gets their common title
		// (e.g. the relative error), if any.
		for _, y := range pl.Y[1:] {
			if axisTitle(y) != p.Y.Label.Text {
				p.Y.Label.Text = ""
			}
		}
	}
	if logx {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if pl.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
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
	}
	if categorical {
		p.X.Min, p.X.Max = -0.5, float64(len(xcats))-0.5
	}
	p.Add(plotter.NewGrid())
	for _, l := range lines {
		sort.SliceStable(l.xys, func(a, b int) bool { return l.xys[a].X < l.xys[b].X })
	}
	drawn := lines // and the ceilings, which the legend should not cover either
	if pl.Roof != nil {
		drawn = append(slices.Clip(lines), addRoof(p, pl.Roof, lines, logx)...)
	}
	outside := !placeLegend(p, drawn, logx, pl.LogY)
	for i, l := range lines {
		ln, sc, err := plotter.NewLinePoints(l.xys)
		if err != nil {
			warn("%v", err)
			continue
		}
		ln.Color = plotutil.Color(i)
		ln.Dashes = plotutil.Dashes(i / 7)
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(ln, sc)
		if l.label != "" {
			p.Legend.Add(l.label, ln, sc)
		}
	}
	widenFlat(&p.X, logx)
	widenFlat(&p.Y, pl.LogY)
	for _, ext := range []string{".png", ".svg", ".pdf"} {
		if err := savePlot(p, outside, filepath.Join(dir, pl.Name+ext)); err != nil {
			return false, fmt.Errorf("plot %s: %v", pl.Name, err)
		}
	}
	return true, nil
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
// segments: lines sorted by x), and reports whether that corner covers none
// (else the legend is better drawn beside the chart: savePlot's outside).
func placeLegend(p *plot.Plot, lines []*line, logx, logy bool) (free bool) {
	var xs, ys []float64
	var ends []int // where each line's points end in xs, ys
	for _, l := range lines {
		for _, q := range l.xys {
			xs = append(xs, q.X)
			ys = append(ys, q.Y)
		}
		ends = append(ends, len(xs))
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

// logTicks marks a log axis: labelled ticks at powers of ten (computed
// exactly with math.Pow10, unlike repeated multiplication) and unlabelled
// ones at 2..9 times them. An axis spanning less than a decade, with fewer
// than two powers of ten on it, labels every 1..9 multiple instead, and one
// with fewer than two of those takes plot's default (linear) ticks, so
// every axis has at least two labels.
type logTicks struct{}

// Ticks returns the ticks between lo and hi (both > 0).
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))) && e < 400; e++ {
		d := math.Pow10(e)
		for i := 1; i < 10; i++ {
			v := d * float64(i)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if i == 1 {
				t.Label = strconv.FormatFloat(d, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled >= 2 {
		return ticks
	}
	if len(ticks) >= 2 {
		for i := range ticks {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 6, 64)
		}
		return ticks
	}
	return plot.DefaultTicks{}.Ticks(lo, hi)
}
