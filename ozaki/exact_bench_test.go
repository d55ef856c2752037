package ozaki

import (
	"math/rand"
	"testing"
)

// BenchmarkExactDot1024 times the exact reference of one output of a
// k = 1024 GEMM and its componentwise bound: ExactDot and AbsDot, and
// DotAndAbs (one pass for both), over U(−1, 1) rows.
//
//	go test -run XXX -bench ExactDot ./ozaki/
func BenchmarkExactDot1024(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x, y := make([]float64, 1024), make([]float64, 1024)
	for i := range x {
		x[i], y[i] = 2*rng.Float64()-1, 2*rng.Float64()-1
	}
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			ExactDot(x, y)
			AbsDot(x, y)
		}
	})
	b.Run("together", func(b *testing.B) {
		for b.Loop() {
			DotAndAbs(x, y)
		}
	})
}
