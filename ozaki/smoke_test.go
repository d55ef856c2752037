package ozaki

import (
	"math/rand"
	"testing"
)

func randMat(rng *rand.Rand, r, c int) []float64 {
	x := make([]float64, r*c)
	for i := range x {
		x[i] = rng.Float64()
	}
	return x
}

func BenchmarkGEMM1024S7(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const n = 1024
	A, B := randMat(rng, n, n), randMat(rng, n, n)
	cfg := Config{Bits: 55, Mode: Fixed}
	p, err := MakePlan(A, B, n, n, n, cfg)
	if err != nil || p.Slices != 7 {
		b.Fatal(err, p.Slices)
	}
	pa, pb := p.Digits(A, B)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		GEMMTile(&p, pa, pb, 0, n, 0, n)
	}
}
