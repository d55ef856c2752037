package arch

import (
	"math"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
)

// steadyHits on hit fractions (per wave, oldest first) seen in runs and
// made up: a swing that repeats with the measured waves passes; a slide
// into thrashing, flat waves after a slide (a pause in it), a one-time step, a trend faster than the one flat waves
// may have, an accelerating slide, a falling phase and a pattern that
// only looks periodic (3 in 4) do not.
func TestSteadyHits(t *testing.T) {
	for _, c := range []struct {
		name string
		hits []float64 // < 0: a wave without L2 traffic
		want bool
	}{
		{"flat", []float64{0.80, 0.81, 0.80, 0.82}, true},
		{"H100 bf16x9 8192³, period 4", []float64{0.842, 0.853, 0.848, 0.557, 0.828, 0.834, 0.829, 0.552}, true},
		{"period 2", []float64{0.9, 0.6, 0.9, 0.6, 0.9, 0.6, 0.9, 0.6}, true},
		{"period 4 not yet seen twice", []float64{0.842, 0.853, 0.848, 0.557, 0.828}, false},
		{"A100 native SGEMM 8192³, 3 in 4 waves (not repeating: 0.648, 0.925, 0.753 follow)", []float64{0.932, 0.880, 0.926, 0.776, 0.925, 0.926, 0.770, 0.926}, false},
		{"MI210 HGEMM 8192³ before its slide", []float64{0.89, 0.89, 0.90, 0.86}, true},
		{"MI210 sliding", []float64{0.89, 0.89, 0.90, 0.85, 0.66}, false},
		{"MI210 slid", []float64{0.89, 0.89, 0.90, 0.85, 0.66, 0.76, 0.71, 0.65}, false},
		{"MI210 slid, as run", []float64{0.706, 0.653, 0.597, 0.135, 0.103, 0.052, 0.020, 0.006}, false},
		{"MI210 thrashing, flat after the slide (the window before still slid)", []float64{0.135, 0.103, 0.052, 0.020, 0.006, 0.008, 0.007, 0.006}, false},
		{"MI210 thrashing, settled", []float64{0.009, 0.006, 0.007, 0.008, 0.006, 0.008, 0.007, 0.006}, true},
		{"MI210 sgemm-cube 8192³, hits paused in a slide at flat durations", []float64{0.90, 0.89, 0.84, 0.72, 0.50, 0.53, 0.51, 0.49}, false},
		{"flat, the waves before known and alike", []float64{0.81, 0.80, 0.82, 0.80, 0.80, 0.81, 0.80, 0.82}, true},
		{"paused in a slide, 3 waves known before (a kernel's first waves: MI210 sgemm-cube's third)", []float64{0.89, 0.84, 0.72, 0.50, 0.53, 0.51, 0.49}, false},
		{"flat, 2 waves known before, alike", []float64{0.80, 0.82, 0.81, 0.80, 0.82, 0.80}, true},
		{"a trend under a swing", []float64{0.90, 0.70, 0.88, 0.68, 0.84, 0.64, 0.82, 0.62}, false},
		{"a slow trend under a swing (under spread/measure a wave)", []float64{0.90, 0.70, 0.89, 0.69, 0.87, 0.67, 0.86, 0.66}, true},
		{"the trend alone", []float64{0.90, 0.88, 0.86, 0.84, 0.82, 0.80, 0.78, 0.76}, false},
		{"an accelerating slide", []float64{0.900, 0.892, 0.872, 0.869, 0.869, 0.839, 0.839, 0.799}, false},
		{"a phase falling", []float64{0.90, 0.60, 0.90, 0.60, 0.90, 0.58, 0.88, 0.53}, false},
		{"a one-time step", []float64{0.80, 0.80, 0.80, 0.80, 0.80, 0.80, 0.80, 0.60}, false},
		{"traffic appearing", []float64{-1, -1, -1, -1, 0.90, 0.87, 0.84, 0.81}, false},
		{"no traffic", []float64{-1, -1, -1, -1}, true},
	} {
		h, m := make([]int64, len(c.hits)), make([]int64, len(c.hits))
		for i, f := range c.hits {
			if f >= 0 {
				h[i] = int64(f * 1000)
				m[i] = 1000 - h[i]
			}
		}
		if got := steadyHits(h, m, 4, 0.05); got != c.want {
			t.Errorf("%s: steady %v, want %v", c.name, got, c.want)
		}
	}
}

// stationary on made-up waves (durations in ns, hit fractions, one core
// with one lane whose busy fraction is given): waves that vary at random
// about steady means pass, with their noise; a trend in the durations, a
// step in the hits or in a lane's busy fraction, traffic appearing, and a
// window of the wrong length do not.
func TestStationary(t *testing.T) {
	const measure = 4
	lanes, paths := 1, 0
	block := coreInts(lanes, paths)
	snaps := func(dur, hits, busy []float64) []ffSnap {
		w := make([]ffSnap, len(dur)+1)
		w[0].ints = make([]int64, ffGlobal+block)
		for i, d := range dur {
			s := ffSnap{t: w[i].t + sim.Time(d*1000), ints: append([]int64(nil), w[i].ints...)}
			if hits[i] >= 0 {
				s.ints[ffL2Hit] += int64(hits[i] * 1e6)
				s.ints[ffL2Miss] += int64((1 - hits[i]) * 1e6)
			}
			s.ints[ffGlobal+int(Busy)] += int64(busy[i] * d * 1000)
			s.ints[ffGlobal+int(QueueEmpty)] += int64((1 - busy[i]) * d * 1000)
			w[i+1] = s
		}
		return w
	}
	flat := func(x float64) []float64 { return []float64{x, x, x, x, x, x, x, x} }
	noisy := []float64{18.0, 17.9, 25.0, 23.7, 21.2, 22.6, 20.4, 23.8} // GB200 ozaki's first GEMM, 8192³ (µs → ns here)
	for _, c := range []struct {
		name            string
		dur, hits, busy []float64
		want            bool
	}{
		{"noisy durations, flat hits and mix", noisy, flat(0.75), flat(0.6), true},
		{"noisy durations and hits", noisy, []float64{0.753, 0.717, 0.750, 0.746, 0.694, 0.774, 0.705, 0.751}, flat(0.6), true},
		{"a trend in the durations", []float64{20, 20.5, 21, 21.5, 22, 22.5, 23, 23.5}, flat(0.75), flat(0.6), false},
		{"a step in the hits", noisy, []float64{0.75, 0.75, 0.75, 0.75, 0.65, 0.65, 0.65, 0.65}, flat(0.6), false},
		{"a step in the busy fraction", noisy, flat(0.75), []float64{0.6, 0.6, 0.6, 0.6, 0.7, 0.7, 0.7, 0.7}, false},
		{"traffic appearing", noisy, []float64{-1, -1, -1, -1, 0.8, 0.8, 0.8, 0.8}, flat(0.6), false},
		{"one window only", noisy[:4], flat(0.75)[:4], flat(0.6)[:4], false},
		// The rules before fail (hits neither flat nor repeating); no
		// noise in the durations (a skip records Stationary itself).
		{"flat durations, hits swinging without a pattern", flat(21), []float64{0.80, 0.70, 0.80, 0.70, 0.72, 0.78, 0.74, 0.76}, flat(0.6), true},
	} {
		ok, apart, gap, _, sd := stationary(snaps(c.dur, c.hits, c.busy), measure, 1, lanes, paths, 0.05, 0.05, 0.05)
		if ok != c.want {
			t.Errorf("%s: stationary %v (gap %.0f ps, noise %.0f ps), want %v", c.name, ok, gap, sd, c.want)
		}
		// Refused for the windows' means only where they are apart: the
		// trend (20.75 against 22.75 ns, 9 %), not a step in the hits or mix.
		if wantApart := c.name == "a trend in the durations"; apart != wantApart {
			t.Errorf("%s: refused for the means apart %v, want %v", c.name, apart, wantApart)
		}
		want := 0.0
		if c.dur[0] != c.dur[1] {
			want = 2500 // ps: the noisy durations' standard deviation
		}
		if ok && math.Abs(sd-want) > 500 {
			t.Errorf("%s: noise %.0f ps, want ~%.0f (the durations' standard deviation)", c.name, sd, want)
		}
	}
}
