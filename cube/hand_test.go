package cube

import (
	"math"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

func f16(t testing.TB, x float64) uint32 {
	t.Helper()
	b := fp.FromFloat64(x, fp.FP16, fp.Options{})
	if fp.ToFloat64(b, fp.FP16) != x {
		t.Fatalf("%g is not an FP16 value", x)
	}
	return b
}

func f32bits(x float64) uint32 { return math.Float32bits(float32(x)) }

// pad4 extends a vector to the k = 4 entries of the Fasi et al. tests.
func pad4(v []float64) []float64 {
	for len(v) < 4 {
		v = append(v, 0)
	}
	return v
}

// TestHandVectors checks the hand vectors of FACTS.md §3 (Fasi et al.).
func TestHandVectors(t *testing.T) {
	p := math.Ldexp
	cases := []struct {
		name       string
		a, b       []float64
		c          float64
		v100, a100 float64
	}{
		{"products exact", []float64{1 - p(1, -11)}, []float64{1 - p(1, -11)}, 0, 1 - p(1, -10) + p(1, -22), 1 - p(1, -10) + p(1, -22)},
		{"extra alignment bit", []float64{1}, []float64{1}, -(1 - p(1, -24)), p(1, -23), p(1, -24)},
		{"RZ positive", []float64{1, 1, 1, 1}, []float64{2, p(1, -23) + p(1, -24), 0, 0}, 0, 2, 2},
		{"RZ negative", []float64{1, 1, 1, 1}, []float64{-2, -(p(1, -23) + p(1, -24)), 0, 0}, 0, -2, -2},
		{"normalisation in addition", []float64{1, 1, 1, 1}, []float64{p(1, -24), p(1, -24), p(1, -24), p(1, -24)}, 1 - p(1, -24), 1 + p(1, -23), 1 + p(1, -23)},
		{"normalisation in subtraction", []float64{1, 1}, []float64{1, -p(1, -24)}, -1 + p(1, -24), p(1, -23), 0},
		{"carry bits", []float64{1, 1, 1, 1}, []float64{1, 1.5, 1.75, 1.875}, 1.875, 8, 8},
	}
	for _, tc := range cases {
		var a, b []uint32
		for _, x := range pad4(tc.a) {
			a = append(a, f16(t, x))
		}
		for _, x := range pad4(tc.b) {
			b = append(b, f16(t, x))
		}
		for _, gpu := range []struct {
			name string
			want float64
		}{{"v100", tc.v100}, {"a100", tc.a100}, {"t4", tc.a100}} {
			m, err := Preset(gpu.name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Dot(fp.FP16, a, b, f32bits(tc.c), fp.FP32)
			if err != nil {
				t.Fatal(err)
			}
			if got != f32bits(gpu.want) {
				t.Errorf("%s on %s: got %g (%08x), want %g (%08x)", tc.name, gpu.name,
					math.Float32frombits(got), got, gpu.want, f32bits(gpu.want))
			}
		}
	}
}
