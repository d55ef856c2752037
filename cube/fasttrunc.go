package cube

import (
	"math"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Truncated block-FMA fast path (BlockFMA with a finite F: the NVIDIA
// tensor-core presets v100, t4, a100, ada, h100, b200 for FP16/BF16 inputs
// and FP32 output).
//
// The model (kernel.blockFMA): with e_max the largest nominal exponent
// e_a + e_b over the block's nonzero products and the exponent of a nonzero
// c, every nonzero term is truncated toward zero (in sign-magnitude) to a
// multiple of 2^u, u = e_max − F, the truncated terms are summed exactly and
// the sum S·2^u is rounded once.
//
// Here, per output element and block: e_max comes from integer exponents
// (the nominal exponent of every input, a large negative value for zeros so
// that a product with a zero never wins); the scale 2^(F − e_max) is a power
// of two built from its bits. A term t (c, or a product a·b, exact in
// float64: at most 22 significant bits for FP16 and 16 for BF16, exponents
// within float64's normal range) is scaled exactly, t·2^(F−e_max), and
// converted to int64 with Go's float→int conversion, which truncates toward
// zero — the model's sign-magnitude truncation. Every scaled term has
// magnitude < 2^(F+2) (a product's significand is < 4, c's < 2), so the
// int64 sum of the L + 1 terms is exact and, because F + 2 + ⌈log2(L+2)⌉ ≤ 53
// (checked in fastKindFor), converts exactly to float64; S·2^u is then exact
// (u ≥ −2·149 − F is far inside float64's normal range) and one rounding to
// FP32 (RNE, or RZ with overflow to ±Inf at 2^128) is the model's.
//
// Zeros: a block whose products are all zero and whose c is zero is the one
// case with a signed-zero rule (zeroSign: −0 only if c and every product are
// −0); it is handled by IEEE addition of the zero products, which gives −0
// exactly then. Otherwise an all-cancelling sum is S = 0 → +0, as in the
// model. An element whose accumulator overflows to ±Inf is recomputed with the
// reference path (the model stops at the first infinite block result).

// noExp is the exponent of a zero input: far below any sum of two real
// exponents, so the largest product exponent of a block ignores zeros; a
// sum below noExpLim means the block has no nonzero product.
const (
	noExp    = -1 << 20
	noExpLim = -1 << 19
)

// truncFits reports whether F and L keep the scaled integer sum below 2^53.
func truncFits(F, L int) bool {
	n := 0
	for x := L + 1; x > 0; x >>= 1 {
		n++
	}
	return F >= 0 && F+2+n <= 53
}

// prepTrunc fills the nominal-exponent arrays of A (row-major) and B
// (transposed), in the orders of a64 and b64.
func (f *fastCall) prepTrunc() {
	sc := f.sc
	f.L = f.kern.L
	sc.ea = grow(sc.ea, f.mm*f.k)
	sc.eb = grow(sc.eb, f.n*f.k)
	ex := f.tab.ex
	for t, p := range sc.pa[:f.mm*f.k] {
		sc.ea[t] = ex[p]
	}
	for t, p := range sc.pb[:f.n*f.k] {
		sc.eb[t] = ex[p]
	}
}

// expC returns the model's nominal exponent of a finite FP32 value c held
// in a float64 (−126 for subnormals), or noExp for a zero.
func expC(c float64) int32 {
	b := math.Float64bits(c)
	e := max(int32(b>>52&0x7ff)-1023, -126)
	if b<<1 == 0 {
		e = noExp
	}
	return e
}

// pow2i returns 2^e for −1022 ≤ e ≤ 1023 from its bits.
func pow2i(e int32) float64 {
	return math.Float64frombits(uint64(e+1023) << 52)
}

// truncRound rounds the block sum S·2^u to FP32 in the kernel's mode (RZ:
// overflow to ±Inf at 2^128, as outSpec.round).
func truncRound(S int64, u int32, rz bool) float64 {
	x := float64(S) * pow2i(u)
	if !rz {
		return float64(float32(x))
	}
	if math.Abs(x) >= 0x1p128 {
		return math.Inf(int(math.Copysign(1, x)))
	}
	// RZ: step one FP32 value toward zero when RNE rounded away from zero
	// (branch-free; a value rounding up to Inf steps back to MaxFloat32).
	r := float32(x)
	away := b2u(math.Abs(float64(r)) > math.Abs(x))
	return float64(math.Float32frombits(math.Float32bits(r) - away))
}

// truncZero is the block result when every product is zero and c = ±0:
// IEEE addition of the zero products and c (−0 only if all are −0).
func truncZero(c float64, x, y []float64) float64 {
	P := negZero
	for t, v := range x {
		P += v * y[t]
	}
	return c + P
}

func (f *fastCall) runTrunc(res []uint32) {
	f.prepTrunc()
	n := f.n
	plain := func(r, c int) bool { return !f.sc.rowSp[r] && !f.sc.colSp[c] && !f.cspec[r*n+c] }
	f.runTiles2x2(res, plain, f.trunc2x2, f.elemTrunc)
}

// runTiles2x2 walks C in 2×2 tiles (see runTiles).
func (f *fastCall) runTiles2x2(res []uint32, plain func(i, j int) bool, tile func(res []uint32, i, j int), elem func(i, j int) uint32) {
	mm, n := f.mm, f.n
	i := 0
	for ; i+2 <= mm; i += 2 {
		j := 0
		for ; j+2 <= n; j += 2 {
			if plain(i, j) && plain(i, j+1) && plain(i+1, j) && plain(i+1, j+1) {
				tile(res, i, j)
				continue
			}
			for r := i; r < i+2; r++ {
				for c := j; c < j+2; c++ {
					res[r*n+c] = elem(r, c)
				}
			}
		}
		for ; j < n; j++ {
			res[i*n+j] = elem(i, j)
			res[(i+1)*n+j] = elem(i+1, j)
		}
	}
	for ; i < mm; i++ {
		for j := 0; j < n; j++ {
			res[i*n+j] = elem(i, j)
		}
	}
}

// elemTrunc computes element (i, j) alone.
func (f *fastCall) elemTrunc(i, j int) uint32 {
	if f.special(i, j) {
		return f.ref(i, j)
	}
	k, L, F := f.k, f.L, int32(f.kern.F)
	rz := f.kern.os.mode == fp.RZ
	x := f.sc.a64[i*k : (i+1)*k]
	y := f.sc.b64[j*k : (j+1)*k][:len(x)]
	ex := f.sc.ea[i*k : (i+1)*k][:len(x)]
	ey := f.sc.eb[j*k : (j+1)*k][:len(x)]
	c := f.outC[i*f.n+j]
	for s := 0; s < k; s += L {
		e := min(s+L, k)
		m := expC(c)
		for t := s; t < e; t++ {
			m = max(m, ex[t]+ey[t])
		}
		if m < noExpLim {
			c = truncZero(c, x[s:e], y[s:e])
			continue
		}
		sc := pow2i(F - m)
		S := int64(c * sc)
		for t := s; t < e; t++ {
			S += int64(x[t] * y[t] * sc)
		}
		c = truncRound(S, m-F, rz)
		if math.IsInf(c, 0) {
			return f.ref(i, j)
		}
	}
	return toBits(c)
}

// trunc2x2 computes the 2×2 outputs at (i, j) (no Inf/NaN inputs or c).
func (f *fastCall) trunc2x2(res []uint32, i, j int) {
	k, n, L, F := f.k, f.n, f.L, int32(f.kern.F)
	rz := f.kern.os.mode == fp.RZ
	a, b, ea, eb := f.sc.a64, f.sc.b64, f.sc.ea, f.sc.eb
	x0 := a[i*k : (i+1)*k]
	x1 := a[(i+1)*k : (i+2)*k][:len(x0)]
	y0 := b[j*k : (j+1)*k][:len(x0)]
	y1 := b[(j+1)*k : (j+2)*k][:len(x0)]
	ex0 := ea[i*k : (i+1)*k][:len(x0)]
	ex1 := ea[(i+1)*k : (i+2)*k][:len(x0)]
	ey0 := eb[j*k : (j+1)*k][:len(x0)]
	ey1 := eb[(j+1)*k : (j+2)*k][:len(x0)]
	r0, r1 := i*n+j, (i+1)*n+j
	c00, c01, c10, c11 := f.outC[r0], f.outC[r0+1], f.outC[r1], f.outC[r1+1]
	inf := false
	for s := 0; s < k; s += L {
		e := min(s+L, k)
		m00, m01, m10, m11 := expC(c00), expC(c01), expC(c10), expC(c11)
		for t := s; t < e; t++ {
			u0, u1, v0, v1 := ex0[t], ex1[t], ey0[t], ey1[t]
			m00 = max(m00, u0+v0)
			m01 = max(m01, u0+v1)
			m10 = max(m10, u1+v0)
			m11 = max(m11, u1+v1)
		}
		if min(m00, m01, m10, m11) < noExpLim {
			// A block without nonzero terms: the zero-sign rule.
			c00, c01 = f.truncBlockZ(c00, m00, x0[s:e], y0[s:e], F, rz), f.truncBlockZ(c01, m01, x0[s:e], y1[s:e], F, rz)
			c10, c11 = f.truncBlockZ(c10, m10, x1[s:e], y0[s:e], F, rz), f.truncBlockZ(c11, m11, x1[s:e], y1[s:e], F, rz)
		} else {
			s00, s01, s10, s11 := pow2i(F-m00), pow2i(F-m01), pow2i(F-m10), pow2i(F-m11)
			S00, S01, S10, S11 := int64(c00*s00), int64(c01*s01), int64(c10*s10), int64(c11*s11)
			for t := s; t < e; t++ {
				u0, u1, v0, v1 := x0[t], x1[t], y0[t], y1[t]
				S00 += int64(u0 * v0 * s00)
				S01 += int64(u0 * v1 * s01)
				S10 += int64(u1 * v0 * s10)
				S11 += int64(u1 * v1 * s11)
			}
			c00, c01 = truncRound(S00, m00-F, rz), truncRound(S01, m01-F, rz)
			c10, c11 = truncRound(S10, m10-F, rz), truncRound(S11, m11-F, rz)
		}
		inf = inf || math.IsInf(c00, 0) || math.IsInf(c01, 0) || math.IsInf(c10, 0) || math.IsInf(c11, 0)
	}
	res[r0], res[r0+1], res[r1], res[r1+1] = toBits(c00), toBits(c01), toBits(c10), toBits(c11)
	if inf {
		for _, p := range [4][2]int{{i, j}, {i, j + 1}, {i + 1, j}, {i + 1, j + 1}} {
			res[p[0]*n+p[1]] = f.ref(p[0], p[1])
		}
	}
}

// truncBlockZ is one element's block with e_max = m (a block that may have
// no nonzero term).
func (f *fastCall) truncBlockZ(c float64, m int32, x, y []float64, F int32, rz bool) float64 {
	if m < noExpLim {
		return truncZero(c, x, y)
	}
	sc := pow2i(F - m)
	S := int64(c * sc)
	for t, v := range x {
		S += int64(v * y[t] * sc)
	}
	return truncRound(S, m-F, rz)
}
