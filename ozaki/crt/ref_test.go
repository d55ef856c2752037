package crt

import (
	"math"
	"math/big"
	"testing"
)

// bigScaled computes RN(x·2^(b−σ)) (ties to even) independently of Scaled,
// in math/big.
func bigScaled(x float64, sigma, b int) *big.Int {
	if x == 0 {
		return new(big.Int)
	}
	v := new(big.Float).SetPrec(2200).SetFloat64(x)
	v.SetMantExp(v, b-sigma)
	t, _ := v.Int(nil) // toward zero
	frac := new(big.Float).SetPrec(2200).Sub(v, new(big.Float).SetPrec(2200).SetInt(t))
	frac.Abs(frac)
	switch frac.Cmp(big.NewFloat(0.5)) {
	case 1:
		t.Add(t, big.NewInt(int64(v.Sign())))
	case 0:
		if t.Bit(0) == 1 {
			t.Add(t, big.NewInt(int64(v.Sign())))
		}
	}
	return t
}

// bigRound returns RN(X·2^e) via math/big.
func bigRound(x *big.Int, e int) float64 {
	if x.Sign() == 0 {
		return 0
	}
	f := new(big.Float).SetInt(x)
	f.SetMantExp(f, e)
	v, _ := f.Float64()
	return v
}

// bigTile is the contract computed without residues or CRT: C'_ij =
// Σ_l A'_il·B'_lj in math/big from the scaled integers, then one rounding
// RN(C'·2^(σA_i−bA+σB_j−bB)). It also reports max |C'| (for bound checks).
func bigTile(p *Plan, a, b []float64, r0, rows, c0, cols int) ([]float64, *big.Int) {
	k, n := p.K, p.N
	out := make([]float64, rows*cols)
	maxC := new(big.Int)
	xa := make([]*big.Int, rows*k)
	for i := 0; i < rows; i++ {
		for l := 0; l < k; l++ {
			xa[i*k+l] = bigScaled(a[(r0+i)*k+l], p.ScalesA[r0+i].Sigma, p.BitsA)
		}
	}
	xb := make([]*big.Int, k*cols)
	for l := 0; l < k; l++ {
		for j := 0; j < cols; j++ {
			xb[l*cols+j] = bigScaled(b[l*n+c0+j], p.ScalesB[c0+j].Sigma, p.BitsB)
		}
	}
	s, t := new(big.Int), new(big.Int)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			s.SetInt64(0)
			for l := 0; l < k; l++ {
				s.Add(s, t.Mul(xa[i*k+l], xb[l*cols+j]))
			}
			if new(big.Int).Abs(s).Cmp(maxC) > 0 {
				maxC.Abs(s)
			}
			out[i*cols+j] = bigRound(s, p.ScalesA[r0+i].Sigma-p.BitsA+p.ScalesB[c0+j].Sigma-p.BitsB)
		}
	}
	return out, maxC
}

// refTile is the machine's dataflow done the slow way: per modulus and
// k-chunk one INT8 GEMM (ModProducts), the chunk results reduced modulo p_r
// and summed, then Reconstruct.
func refTile(p *Plan, ra, rb [][]int8, r0, rows, c0, cols int) []float64 {
	m, k, n := p.M, p.K, p.N
	cr := make([][]int32, len(p.Moduli))
	for r, pr := range p.Moduli {
		sum := make([]int32, rows*cols)
		for l0 := 0; l0 < k; l0 += p.Chunk {
			D := ModProducts(ra, rb, m, k, n, r, l0, min(k, l0+p.Chunk))
			for i := 0; i < rows; i++ {
				for j := 0; j < cols; j++ {
					x := &sum[i*cols+j]
					*x = ((*x+D[(r0+i)*n+c0+j]%int32(pr))%int32(pr) + int32(pr)) % int32(pr)
				}
			}
		}
		cr[r] = sum
	}
	return p.Reconstruct(cr, r0, rows, c0, cols)
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
