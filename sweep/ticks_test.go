package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// labelled returns the labelled ticks of ticks within [lo, hi] (up to a
// millionth of the range), in order of value.
func labelled(ticks []plot.Tick, lo, hi float64) []plot.Tick {
	var out []plot.Tick
	tol := 1e-6 * (hi - lo)
	for _, t := range ticks {
		if t.Label != "" && t.Value >= lo-tol && t.Value <= hi+tol {
			out = append(out, t)
		}
	}
	return out
}

func labelStrings(ticks []plot.Tick) []string {
	var out []string
	for _, t := range ticks {
		out = append(out, t.Label)
	}
	return out
}

// extent is the range an axis over [lo, hi] has once it has grown to its
// ticks (Axis.AutoRescale).
func extent(ticks []plot.Tick, lo, hi float64) (float64, float64) {
	for _, t := range ticks {
		lo, hi = min(lo, t.Value), max(hi, t.Value)
	}
	return lo, hi
}

// maxLogGap is the widest stretch of the log axis [lo, hi] without a
// label, as a fraction of the axis.
func maxLogGap(ticks []plot.Tick, lo, hi float64) float64 {
	prev, gap := math.Log10(lo), 0.0
	for _, t := range labelled(ticks, lo, hi) {
		gap = max(gap, math.Log10(t.Value)-prev)
		prev = math.Log10(t.Value)
	}
	gap = max(gap, math.Log10(hi)-prev)
	return gap / (math.Log10(hi) - math.Log10(lo))
}

// A log axis over less than a decade or so gets several labels spread over
// it: 7.3 to 16.6 had only 8, 9 and 10 labelled, nothing above 10.
func TestLogTicksNarrowRange(t *testing.T) {
	for _, r := range [][2]float64{{7.3, 16.6}, {8e-5, 1.2e-4}, {4, 6}, {1.2, 1.9}, {0.9, 11}, {1.5, 14}, {2.1, 9.5}, {0.2, 30}, {3e-3, 0.9}} {
		lo, hi := r[0], r[1]
		ticks := logTicks{}.Ticks(lo, hi)
		if lo2, hi2 := extent(ticks, lo, hi); lo2 != lo || hi2 != hi {
			t.Errorf("[%g, %g]: ticks beyond the range (%g, %g) on an axis under three decades", lo, hi, lo2, hi2)
		}
		in := labelled(ticks, lo, hi)
		if len(in) < 3 {
			t.Errorf("[%g, %g]: labels %q, want 3 or more within the range", lo, hi, labelStrings(in))
		}
		if g := maxLogGap(ticks, lo, hi); g > 0.45 {
			t.Errorf("[%g, %g]: labels %q leave %.0f %% of the axis unlabelled in one stretch", lo, hi, labelStrings(in), 100*g)
		}
	}
	var above10 bool
	for _, tk := range labelled(logTicks{}.Ticks(7.3, 16.6), 7.3, 16.6) {
		above10 = above10 || tk.Value > 10.5
	}
	if !above10 {
		t.Errorf("[7.3, 16.6]: nothing labelled between 10 and 16.6")
	}
}

// Over several decades every decade is labelled, minor ticks mark 2..9
// times them, and an end more than half a decade short of a power of ten
// grows to it: the relative error reaching 1.3e-7 had nothing labelled
// below 1e-06.
func TestLogTicksEveryDecade(t *testing.T) {
	for _, c := range []struct {
		lo, hi   float64
		from, to int // the decades labelled
	}{
		{1.3e-7, 1e-2, -7, -2},
		{1.3e-7, 4.4e-2, -7, -1},
		{3e-7, 0.05, -7, -1},
		{1e-5, 1e-2, -5, -2},
		{0.7, 1200, 0, 3},
		{0.2, 1200, -1, 3},
		{2, 1.5e5, 0, 5},
		{1.6e12, 3.1e15, 12, 15},
		{1.6e12, 4e15, 12, 16},
	} {
		ticks := logTicks{}.Ticks(c.lo, c.hi)
		lo, hi := extent(ticks, c.lo, c.hi)
		in := labelled(ticks, lo, hi)
		var got []int
		for _, tk := range in {
			e := math.Log10(tk.Value)
			if math.Abs(e-math.Round(e)) > 1e-9 {
				t.Errorf("[%g, %g]: label %q at %g, not a power of ten", c.lo, c.hi, tk.Label, tk.Value)
			}
			got = append(got, int(math.Round(e)))
		}
		var want []int
		for e := c.from; e <= c.to; e++ {
			want = append(want, e)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("[%g, %g]: labelled decades %v (%q), want %v", c.lo, c.hi, got, labelStrings(in), want)
		}
		// Unlabelled stretches at the ends: at most half a decade.
		if in[0].Value > lo*math.Sqrt(10)*(1+1e-9) || in[len(in)-1].Value*math.Sqrt(10)*(1+1e-9) < hi {
			t.Errorf("[%g, %g]: axis [%g, %g] labelled only from %g to %g", c.lo, c.hi, lo, hi, in[0].Value, in[len(in)-1].Value)
		}
		// The axis grown to its ticks keeps them (AutoRescale is stable).
		again := logTicks{}.Ticks(lo, hi)
		if fmt.Sprint(again) != fmt.Sprint(ticks) {
			t.Errorf("[%g, %g]: ticks on the grown axis [%g, %g] differ", c.lo, c.hi, lo, hi)
		}
		minors := map[float64]bool{}
		for _, tk := range ticks {
			if tk.Label == "" {
				minors[tk.Value] = true
			}
		}
		for d := 2; d <= 9; d++ {
			v := pow10Multiple(d, c.from)
			if !minors[v] {
				t.Errorf("[%g, %g]: no minor tick at %g", c.lo, c.hi, v)
			}
		}
	}
	// Hundreds of decades: every so many labelled, not hundreds of labels.
	if n := len(labelled(logTicks{}.Ticks(1e-300, 1e300), 1e-300, 1e300)); n < 5 || n > maxDecadeLabels {
		t.Errorf("1e-300 to 1e300: %d labels", n)
	}
	if len(logTicks{}.Ticks(0, 1)) != 0 || len(logTicks{}.Ticks(-1, 1)) != 0 {
		t.Errorf("ticks for a non-positive range")
	}
}

// labelStyle classifies a tick label: exponent ("e") or plain, with its
// number of decimals (plain) or mantissa digits (exponent).
func labelStyle(label string) (exp bool, digits int) {
	mant := label
	if i := strings.IndexAny(label, "eE"); i >= 0 {
		exp, mant = true, label[:i]
	}
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		digits = len(mant) - i - 1
	}
	return exp, digits
}

// The labels of one axis share a style: 0.00012 / 0.0001 / 8e-05 and
// 0.01 … 0.0001, 1e-05 mixed plain decimals with exponents.
func TestTickLabelsOneStyle(t *testing.T) {
	type axis struct {
		log    bool
		lo, hi float64
	}
	axes := []axis{
		{true, 8e-5, 1.2e-4}, {true, 1e-5, 1e-2}, {true, 1.3e-7, 0.05}, {true, 3e-7, 0.05}, {true, 7.3, 16.6},
		{true, 0.001, 900}, {true, 2e-5, 3e-3}, {true, 0.5, 2e6}, {true, 90, 1.1e5}, {true, 6e-5, 4e-4},
		{false, 0, 1.2e-4}, {false, 0, 1}, {false, 12.3, 23.1}, {false, 1e6, 6e6}, {false, -3.3, 7.1},
		{false, 0.5e300, 1.5e300}, {false, 2.6e-5, 1.71e-4}, {false, 99990, 100010},
	}
	rng := rand.New(rand.NewSource(1))
	for range 300 {
		lo := math.Pow(10, -9+18*rng.Float64())
		axes = append(axes, axis{true, lo, lo * math.Pow(10, 6*rng.Float64())}, axis{false, lo, lo * (1 + 10*rng.Float64())})
	}
	for _, a := range axes {
		var ticks []plot.Tick
		if a.log {
			ticks = logTicks{}.Ticks(a.lo, a.hi)
		} else {
			ticks = linearTicks{}.Ticks(a.lo, a.hi)
		}
		lo, hi := extent(ticks, a.lo, a.hi)
		labels := labelStrings(labelled(ticks, lo, hi))
		if len(labels) < 2 {
			t.Errorf("log %v [%g, %g]: labels %q", a.log, a.lo, a.hi, labels)
			continue
		}
		ref := labels[0]
		if ref == "0" {
			ref = labels[1]
		}
		exp0, digits0 := labelStyle(ref)
		for _, l := range labels {
			if _, err := strconv.ParseFloat(l, 64); err != nil {
				t.Errorf("log %v [%g, %g]: label %q is no number", a.log, a.lo, a.hi, l)
			}
			exp, digits := labelStyle(l)
			if l == "0" && exp0 { // 0 beside exponents
				continue
			}
			// Plain decimals on a log axis: as many as the value needs.
			if exp != exp0 || (!a.log || exp) && digits != digits0 {
				t.Errorf("log %v [%g, %g]: labels %q mix styles", a.log, a.lo, a.hi, labels)
				break
			}
		}
	}
}

// Linear axes step by 1, 2, 2.5 or 5 × 10^k through round values, 4 to 8
// labels: gonum's default had 35/55/75 and 12.50/17.50/22.50.
func TestLinearTicksNice(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{30, 80, "30 40 50 60 70 80"},
		{32, 78, "40 50 60 70"},
		{12.3, 23.1, "14 16 18 20 22"},
		{0, 1, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{-3.3, 7.1, "-2 0 2 4 6"},
		{0, 1.2e-4, "0 2.0e-05 4.0e-05 6.0e-05 8.0e-05 1.0e-04 1.2e-04"},
		{4, 6, "4.0 4.5 5.0 5.5 6.0"},
	} {
		got := strings.Join(labelStrings(labelled(linearTicks{}.Ticks(c.lo, c.hi), c.lo, c.hi)), " ")
		if got != c.want {
			t.Errorf("[%g, %g]: labels %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	rng := rand.New(rand.NewSource(2))
	for range 2000 {
		// Ranges from a millionth of their values to a thousand times them
		// (narrower ones run into float64's precision).
		lo := (rng.Float64()*2 - 1) * math.Pow(10, -6+12*rng.Float64())
		hi := lo + max(math.Abs(lo), 1e-3)*math.Pow(10, -6+9*rng.Float64())
		in := labelled(linearTicks{}.Ticks(lo, hi), lo, hi)
		if len(in) < 4 || len(in) > 8 {
			t.Errorf("[%g, %g]: %d labels %q, want 4 to 8", lo, hi, len(in), labelStrings(in))
			continue
		}
		// The step, snapped to the nice value it should be.
		step := in[1].Value - in[0].Value
		k := math.Floor(math.Log10(step))
		m, ok := near([]float64{1, 2, 2.5, 5, 10}, step/math.Pow(10, k))
		if !ok {
			t.Errorf("[%g, %g]: step %g", lo, hi, step)
			continue
		}
		step = m * math.Pow(10, k)
		for i, tk := range in {
			if r := tk.Value / step; math.Abs(r-math.Round(r)) > 1e-6 {
				t.Errorf("[%g, %g]: tick %g is no multiple of the step %g", lo, hi, tk.Value, step)
			}
			if i > 0 && math.Abs(tk.Value-in[i-1].Value-step) > 1e-6*step {
				t.Errorf("[%g, %g]: uneven steps %q", lo, hi, labelStrings(in))
			}
			if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || math.Abs(v-tk.Value) > 1e-6*step {
				t.Errorf("[%g, %g]: label %q for %g", lo, hi, tk.Label, tk.Value)
			}
		}
	}
	// Degenerate ranges: no panic, no endless loop.
	for _, r := range [][2]float64{{5, 5}, {1e15 - 1, 1e15 + 1}, {9e15 - 1, 9e15 + 1}, {-1e300, 1e300}, {0, 5e-324}} {
		_ = linearTicks{}.Ticks(r[0], r[1])
	}
}

// near returns the one of vs within a millionth of x, if any.
func near(vs []float64, x float64) (float64, bool) {
	for _, v := range vs {
		if math.Abs(v-x) < 1e-6*v {
			return v, true
		}
	}
	return 0, false
}

// Drawn plots use the markers: a log y over 7.3 to 16.6 labels 12 and
// 14, a linear one 40 to 70 by 10, and a log one down to 1.3e-7 1e-07 —
// no label of another style.
func TestPlotTickLabels(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [a, b, c]\nvary: {program.m: 1..20 +1}\n"+
		"plot:\n  - {name: log, x: program.m, y: a, logy: true}\n  - {name: lin, x: program.m, y: b}\n  - {name: err, x: program.m, y: c, logy: true}\n")
	var recs []Record
	for i, p := range s.Points {
		f := float64(i) / float64(len(s.Points)-1)
		a := 7.3 + (16.6-7.3)*f
		b := 32 + (78-32)*f
		c := 1.3e-7 * math.Pow(4.4e-2/1.3e-7, f)
		recs = append(recs, Record{Index: i, Params: s.paramMap(p), Status: StatusOK, Metrics: map[string]json.RawMessage{
			"a": json.RawMessage(strconv.FormatFloat(a, 'g', -1, 64)),
			"b": json.RawMessage(strconv.FormatFloat(b, 'g', -1, 64)),
			"c": json.RawMessage(strconv.FormatFloat(c, 'g', -1, 64)),
		}})
	}
	dir := t.TempDir()
	for _, c := range []struct {
		plot       int
		want, lack []string
	}{
		{0, []string{">8<", ">10<", ">12<", ">14<", ">16<"}, []string{">9<"}},
		{1, []string{">40<", ">50<", ">60<", ">70<"}, []string{">35<", ">55<", ">75<"}},
		{2, []string{">1e-07<", ">1e-06<", ">1e-04<", ">1e-01<"}, []string{">0.0001<", ">0.01<"}},
	} {
		pl := s.Plots[c.plot]
		if err := DrawPlot(s, pl, recs, dir, nil); err != nil {
			t.Fatal(err)
		}
		svg := string(readFile(t, filepath.Join(dir, pl.Name+".svg")))
		for _, w := range c.want {
			if !strings.Contains(svg, w) {
				t.Errorf("plot %s lacks the label %s", pl.Name, w)
			}
		}
		for _, w := range c.lack {
			if strings.Contains(svg, w) {
				t.Errorf("plot %s has the label %s", pl.Name, w)
			}
		}
	}
}
