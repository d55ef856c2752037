package ozaki

import (
	"math"
	"math/rand"
	"testing"
)

// refTile computes the tile the slow, obviously-correct way: DiagonalProducts
// per chunk and diagonal, Recombine, ApplyScales.
func refTile(p *Plan, pa, pb [][]int8, r0, rows, col0, cols int) []float64 {
	m, k, n := p.M, p.K, p.N
	s := len(pa)
	acc := make([]float64, m*n)
	chunk := p.Chunk
	if chunk == 0 {
		chunk = max(k, 1)
	}
	for l0 := 0; l0 < k; l0 += chunk {
		l1 := min(k, l0+chunk)
		for d := 2; d <= p.Products.MaxDiagonal(s); d++ {
			Recombine(acc, DiagonalProducts(pa, pb, m, k, n, p.Products, l0, l1, d), d)
		}
	}
	out := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		copy(out[i*cols:], acc[(r0+i)*n+col0:(r0+i)*n+col0+cols])
	}
	ApplyScales(out, p.ScalesA, p.ScalesB, r0, rows, col0, cols)
	return out
}

func sameBits(t *testing.T, what string, want, got []float64) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: len %d vs %d", what, len(want), len(got))
	}
	for x := range want {
		if math.Float64bits(want[x]) != math.Float64bits(got[x]) {
			t.Fatalf("%s: element %d: want %v (%#x) got %v (%#x)", what, x, want[x],
				math.Float64bits(want[x]), got[x], math.Float64bits(got[x]))
		}
	}
}

// TestKernelMatchesReference: the fast SWAR kernel gives the bits of the
// reference DiagonalProducts+Recombine path, for both product sets, several
// slice counts, forced small chunks (several chunks), odd shapes, tiles and
// worker counts.
func TestKernelMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, tc := range []struct {
		m, k, n, bits, chunk, workers int
		set                           ProductSet
	}{
		{5, 7, 3, 55, 0, 1, Triangular},
		{9, 130, 140, 55, 64, 2, Triangular},
		{9, 130, 140, 55, 64, 3, Square},
		{4, 50, 260, 7, 0, 1, Triangular},
		{6, 33, 17, 200, 10, 2, Square},
		{6, 33, 17, 103, 0, 2, Triangular},
		{3, 0, 4, 53, 0, 1, Triangular},
	} {
		A := make([]float64, tc.m*tc.k)
		B := make([]float64, tc.k*tc.n)
		for x := range A {
			A[x] = (rng.Float64() - 0.5) * math.Ldexp(1, rng.Intn(40)-20)
			if rng.Intn(9) == 0 {
				A[x] = 0
			}
		}
		for x := range B {
			B[x] = (rng.Float64() - 0.5) * math.Ldexp(1, rng.Intn(40)-20)
		}
		p, err := MakePlan(A, B, tc.m, tc.k, tc.n, Config{Bits: tc.bits, Products: tc.set, Chunk: tc.chunk, Workers: tc.workers})
		if err != nil {
			t.Fatal(err)
		}
		pa, pb := p.Digits(A, B)
		want := refTile(&p, pa, pb, 0, tc.m, 0, tc.n)
		sameBits(t, "full", want, GEMMTile(&p, pa, pb, 0, tc.m, 0, tc.n))
		if tc.m > 2 && tc.n > 2 {
			r0, c0 := 1, 2
			rows, cols := tc.m-2, tc.n-2
			sameBits(t, "tile", refTile(&p, pa, pb, r0, rows, c0, cols), GEMMTile(&p, pa, pb, r0, rows, c0, cols))
		}
	}
}
