package crt

import (
	"math"
	"math/rand"
	"testing"
)

func spreadMat(rng *rand.Rand, r, c, span int) []float64 {
	x := make([]float64, r*c)
	for i := range x {
		x[i] = (rng.Float64() - 0.5) * math.Ldexp(1, rng.Intn(span+1)-span/2)
		if rng.Intn(11) == 0 {
			x[i] = 0
		}
	}
	return x
}

// TestKernelMatchesReference: GEMMTile = the ModProducts+Reconstruct path =
// the math/big contract (no residues, no CRT), for several shapes, moduli
// counts, chunks, workers and tiles.
func TestKernelMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, tc := range []struct{ m, k, n, moduli, chunk, workers int }{
		{5, 7, 3, 14, 0, 1},
		{9, 130, 140, 14, 64, 2},
		{9, 130, 131, 20, 7, 3},
		{4, 50, 260, 8, 0, 1},
		{6, 33, 17, 24, 10, 2},
		{6, 33, 17, 3, 0, 2},
		{3, 0, 4, 14, 0, 1},
	} {
		A, B := spreadMat(rng, tc.m, tc.k, 30), spreadMat(rng, tc.k, tc.n, 30)
		p, err := MakePlan(A, B, tc.m, tc.k, tc.n, Config{Moduli: tc.moduli, Chunk: tc.chunk, Workers: tc.workers})
		if err != nil {
			t.Fatal(err)
		}
		ra, rb := p.Residues(A, B)
		got := GEMMTile(&p, ra, rb, 0, tc.m, 0, tc.n)
		sameBits(t, "ref", refTile(&p, ra, rb, 0, tc.m, 0, tc.n), got)
		want, _ := bigTile(&p, A, B, 0, tc.m, 0, tc.n)
		sameBits(t, "big", want, got)
		if tc.m > 2 && tc.n > 2 {
			sameBits(t, "tile", refTile(&p, ra, rb, 1, tc.m-2, 2, tc.n-2), GEMMTile(&p, ra, rb, 1, tc.m-2, 2, tc.n-2))
		}
	}
}
