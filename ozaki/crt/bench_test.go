package crt

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

// BenchmarkGEMM1024N14 times the golden GEMM (GEMMTile over the whole
// matrix: 14 residue GEMMs and the reconstruction) for m = n = k = 1024
// with 14 moduli; compare with ozaki's BenchmarkGEMM1024S7 (28 products).
func BenchmarkGEMM1024N14(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const n = 1024
	A, B := randMat(rng, n, n), randMat(rng, n, n)
	p, err := MakePlan(A, B, n, n, n, Config{Moduli: 14})
	if err != nil {
		b.Fatal(err)
	}
	ra, rb := p.Residues(A, B)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		GEMMTile(&p, ra, rb, 0, n, 0, n)
	}
}

// BenchmarkPlanResidues1024N14 times MakePlan (scan, scales) and the
// residues of A and B for m = n = k = 1024 and 14 moduli.
func BenchmarkPlanResidues1024N14(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const n = 1024
	A, B := randMat(rng, n, n), randMat(rng, n, n)
	for i := 0; i < b.N; i++ {
		p, _ := MakePlan(A, B, n, n, n, Config{Moduli: 14})
		p.Residues(A, B)
	}
}
