package crt

import (
	"math"

	"github.com/davinci-sim/davinci-sim/ozaki"
)

// Scale is the scale of one row of A or one column of B.
type Scale struct {
	// Sigma is σ = E(μ) + 1 for the line's largest finite magnitude μ, so
	// that every entry has |x| < 2^σ; 0 for a zero line.
	Sigma int
	// Zero reports that the line has no nonzero finite entry: all its
	// scaled integers are 0 and its outputs are exactly α·0 + β·C0.
	Zero bool
}

func scaleOf(mu float64) Scale {
	if mu == 0 {
		return Scale{Zero: true}
	}
	return Scale{Sigma: ozaki.Exp(mu) + 1}
}

func scalesOf(mu []float64) []Scale {
	out := make([]Scale, len(mu))
	for i, v := range mu {
		out[i] = scaleOf(v)
	}
	return out
}

// Scaled returns the scaled integer X = RN(x·2^(b−σ)) (round to nearest,
// ties to even) as X = mant·2^shift with |mant| < 2^53 and shift ≥ 0. The
// caller guarantees |x| < 2^σ (the line's own Scale), so |X| ≤ 2^b. Zero
// and non-finite x give (0, 0).
//
// Exactness: x = F·2^q with F an integer, |F| < 2^53 (math.Frexp, exact for
// subnormals), and q ≤ σ − 53 for normal x (q = −1074 for subnormals), so
// x·2^(b−σ) = F·2^(q+b−σ). If q+b−σ ≥ 0 the value is already an integer
// (shift = q+b−σ ≤ b − 53); otherwise F is shifted right by d = σ−b−q
// with round-to-nearest-even on the dropped bits, all in int64.
func Scaled(x float64, sigma, b int) (mant int64, shift int) {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, 0
	}
	f, e := math.Frexp(x) // x = f·2^e, 0.5 ≤ |f| < 1
	F := int64(f * (1 << 53))
	s := e - 53 + b - sigma
	if s >= 0 {
		return F, s
	}
	d := -s
	neg := F < 0
	a := F
	if neg {
		a = -a
	}
	var q int64
	if d < 63 {
		q = a >> d
		rem := a & (1<<d - 1)
		half := int64(1) << (d - 1)
		if rem > half || (rem == half && q&1 == 1) {
			q++
		}
	} // d ≥ 63: a < 2^53 ≤ 2^(d−1) = half, so X = 0
	if neg {
		q = -q
	}
	return q, 0
}

// symmetric maps v ∈ [0, p) to the INT8 residue of modulus p:
// [−(p−1)/2, (p−1)/2] for odd p, [−128, 127] (the low byte as int8) for 256.
func symmetric(v uint32, p int) int8 {
	if p == 256 {
		return int8(uint8(v))
	}
	if int(v) > (p-1)/2 {
		return int8(int(v) - p)
	}
	return int8(v)
}

// residue returns the INT8 residue of mant·2^shift modulo p given
// pow = 2^shift mod p.
func residue(mant int64, pow uint32, p int) int8 {
	m := mant % int64(p)
	if m < 0 {
		m += int64(p)
	}
	return symmetric(uint32(uint64(m)*uint64(pow)%uint64(p)), p)
}

// Residue returns the INT8 residue of X = mant·2^shift modulo p (p one
// of the moduli, shift ≥ 0): the representative of X mod p in
// [−(p−1)/2, (p−1)/2] for odd p and in [−128, 127] for p = 256.
func Residue(mant int64, shift, p int) int8 {
	pow, base := uint64(1%p), uint64(2)
	for s := shift; s > 0; s >>= 1 {
		if s&1 == 1 {
			pow = pow * base % uint64(p)
		}
		base = base * base % uint64(p)
	}
	return residue(mant, uint32(pow), p)
}

// residuesOf writes the residues of the scaled x (scale sigma, budget b)
// for each modulus of basis bs into dst[r][at].
func residuesOf(bs *Basis, x float64, sigma, b int, dst [][]int8, at int) {
	mant, shift := Scaled(x, sigma, b)
	if mant == 0 {
		for r := range dst {
			dst[r][at] = 0
		}
		return
	}
	for r, p := range bs.Moduli {
		dst[r][at] = residue(mant, bs.pow2[r][shift], p)
	}
}
