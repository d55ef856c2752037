package arch

import "testing"

// steadyHits on hit fractions (per wave, oldest first) seen in runs and
// made up: a swing that repeats with the measured waves passes; a slide
// into thrashing, a one-time step, a trend faster than the one flat waves
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
		{"MI210 thrashing, flat (the rule before accepts it too)", []float64{0.135, 0.103, 0.052, 0.020, 0.006, 0.008, 0.007, 0.006}, true},
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
