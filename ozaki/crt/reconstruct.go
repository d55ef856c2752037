package crt

import (
	"math"
	"math/big"
	"math/bits"
)

// Int returns the exact reconstruction C' of the residues res (res[r] any
// integer congruent to C' modulo p_r) by the textbook CRT sum in math/big:
// X = (Σ_r (res_r·w_r mod p_r)·(P/p_r)) mod P with w_r = (P/p_r)^(−1) mod
// p_r, then C' = X if X ≤ H, else X − P (H = floor((P−1)/2)), so C' is the
// unique integer congruent to every res_r in [H−P+1, H] ⊇ [−H, H]. It is the
// slow reference for Float.
func (b *Basis) Int(res []int64) *big.Int {
	x := new(big.Int)
	for r, p := range b.Moduli {
		bp := big.NewInt(int64(p))
		m := new(big.Int).Quo(b.P, bp)
		w := new(big.Int).ModInverse(new(big.Int).Mod(m, bp), bp)
		t := new(big.Int).Mod(big.NewInt(res[r]), bp)
		t.Mul(t, w).Mod(t, bp).Mul(t, m)
		x.Add(x, t)
	}
	x.Mod(x, b.P)
	if x.Cmp(b.Half) > 0 {
		x.Sub(x, b.P)
	}
	return x
}

// Float returns RN(C'·2^e), the reconstruction C' (as Int) times 2^e
// rounded once to float64 (round to nearest, ties to even, gradual underflow
// into the subnormals, ±Inf on overflow; an exact C' = 0 gives +0, a nonzero
// C' that underflows gives a zero of its sign). It computes C' exactly with
// Garner's mixed-radix algorithm and 192-bit integers.
func (b *Basis) Float(res []int64, e int) float64 {
	c := make([]uint32, len(b.Moduli))
	for r, p := range b.Moduli {
		v := res[r] % int64(p)
		if v < 0 {
			v += int64(p)
		}
		c[r] = uint32(v)
	}
	v := make([]uint32, len(c))
	return b.round(c, v, e)
}

// round reconstructs C' from the residues c[r] ∈ [0, p_r) (v is scratch
// of the same length) and returns RN(C'·2^e).
//
// Garner: v_1 = c_1; v_r = ((…((c_r − v_1)·p_1⁻¹ − v_2)·p_2⁻¹ − …) −
// v_(r−1))·p_(r−1)⁻¹ mod p_r, so X = v_1 + p_1·(v_2 + p_2·(v_3 + …)) ∈
// [0, P) is ≡ c_r mod p_r for every r (Horner from the top in three
// 64-bit limbs). The subtraction is done as t + 2p_r − v_q ≥ 0 (v_q ≤ 255 <
// 2p_r since every p_r > 128); t·inv < 3·256·256 fits in uint32.
func (b *Basis) round(c, v []uint32, e int) float64 {
	mods := b.Moduli
	n := len(mods)
	for r := 0; r < n; r++ {
		p := uint32(mods[r])
		t := c[r]
		inv := b.inv[r]
		for q := 0; q < r; q++ {
			t = (t + 2*p - v[q]) * inv[q] % p
		}
		v[r] = t
	}
	var x [3]uint64
	x[0] = uint64(v[n-1])
	for r := n - 2; r >= 0; r-- {
		carry := uint64(v[r])
		p := uint64(mods[r])
		for i := 0; i < 3; i++ {
			hi, lo := bits.Mul64(x[i], p)
			var cc uint64
			lo, cc = bits.Add64(lo, carry, 0)
			x[i], carry = lo, hi+cc
		}
	}
	neg := false
	if greater(x, b.h3) {
		// |C'| = P − X.
		var br uint64
		x[0], br = bits.Sub64(b.p3[0], x[0], 0)
		x[1], br = bits.Sub64(b.p3[1], x[1], br)
		x[2], _ = bits.Sub64(b.p3[2], x[2], br)
		neg = true
	}
	return roundScaled(x, e, neg)
}

func greater(x, y [3]uint64) bool {
	for i := 2; i >= 0; i-- {
		if x[i] != y[i] {
			return x[i] > y[i]
		}
	}
	return false
}

// roundScaled returns ±RN(X·2^e) for the 192-bit magnitude X (−0 when a
// negative nonzero value underflows, +0 for X = 0).
func roundScaled(x [3]uint64, e int, neg bool) float64 {
	var L int
	switch {
	case x[2] != 0:
		L = 128 + bits.Len64(x[2])
	case x[1] != 0:
		L = 64 + bits.Len64(x[1])
	default:
		L = bits.Len64(x[0])
	}
	if L == 0 {
		return 0
	}
	// top holds the leading 64 bits (bit 63 set), sticky any lower nonzero bit.
	var top uint64
	sticky := false
	if L <= 64 {
		top = x[0] << (64 - L)
	} else {
		s := L - 64
		w, sh := s/64, uint(s%64)
		top = x[w] >> sh
		if sh > 0 {
			top |= x[w+1] << (64 - sh)
			sticky = x[w]&(1<<sh-1) != 0
		}
		for i := 0; i < w; i++ {
			sticky = sticky || x[i] != 0
		}
	}
	exp0 := e + L - 64 // value = (top + sticky fraction)·2^exp0
	ulpExp := max(exp0+63-52, -1074)
	drop := ulpExp - exp0 // ≥ 11
	var q uint64
	if drop <= 64 {
		q = top >> uint(drop)
		rem := top & (uint64(1)<<uint(drop) - 1)
		half := uint64(1) << uint(drop-1)
		if rem > half || (rem == half && (sticky || q&1 == 1)) {
			q++
		}
	} // drop > 64: value < half an ulp, rounds to 0
	f := math.Ldexp(float64(q), ulpExp) // q ≤ 2^53: exact, or ±Inf on overflow
	if neg {
		f = -f
	}
	return f
}
