package arch

import "testing"

// steadyHits on hit fractions (per wave, oldest first) seen in runs and
// made up: a swing with the wave's place in the tile order passes, a
// slide into thrashing, a one-time step and a trend faster than the one
// flat waves may have (5 points over the 4 measured waves) do not.
func TestSteadyHits(t *testing.T) {
	for _, c := range []struct {
		name string
		hits []float64
		want bool
	}{
		{"flat", []float64{0.80, 0.81, 0.80, 0.82}, true},
		{"H100 bf16x9 8192³, period 4", []float64{0.842, 0.853, 0.848, 0.557, 0.828, 0.834, 0.829, 0.552}, true},
		{"period 2", []float64{0.9, 0.6, 0.9, 0.6, 0.9, 0.6}, true},
		{"period 4 not yet seen twice", []float64{0.842, 0.853, 0.848, 0.557, 0.828}, false},
		{"MI210 HGEMM 8192³ before its slide", []float64{0.89, 0.89, 0.90, 0.86}, true},
		{"MI210 sliding", []float64{0.89, 0.89, 0.90, 0.85, 0.66}, false},
		{"MI210 slid", []float64{0.89, 0.89, 0.90, 0.85, 0.66, 0.76, 0.71, 0.65}, false},
		{"MI210 slid, later", []float64{0.90, 0.85, 0.66, 0.76, 0.71, 0.65, 0.62, 0.60}, false},
		{"a trend under a swing", []float64{0.90, 0.70, 0.86, 0.66, 0.82, 0.62, 0.78, 0.58}, false},
		{"the trend alone", []float64{0.90, 0.88, 0.86, 0.84, 0.82, 0.80, 0.78, 0.76}, false},
		{"a slower trend under a swing (as slow as p = 1 allows)", []float64{0.90, 0.70, 0.88, 0.68, 0.86, 0.66, 0.84, 0.64}, true},
		{"a one-time step", []float64{0.80, 0.80, 0.80, 0.80, 0.80, 0.80, 0.80, 0.60}, false},
	} {
		h, m := make([]int64, len(c.hits)), make([]int64, len(c.hits))
		for i, f := range c.hits {
			h[i] = int64(f * 1000)
			m[i] = 1000 - h[i]
		}
		if got := steadyHits(h, m, 4, 0.05); got != c.want {
			t.Errorf("%s: steady %v, want %v", c.name, got, c.want)
		}
	}
	if !steadyHits(make([]int64, 4), make([]int64, 4), 4, 0.05) {
		t.Error("no L2 traffic: not steady")
	}
}
