package cube

import (
	"math"
	"math/bits"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Pairwise fast path (Kind Pairwise: the CDNA2 preset mi210; FP16 and BF16
// inputs, FP32 output rounded RNE, with or without FlushSubnormals, any
// block length L ≤ 64).
//
// The model (kernel.pairwise, pairwise32, roundAdd): per block of L
// products in increasing k (the last block possibly shorter, padded with
// +0 to the next power of two n), with FTZ:
//
//	p_t = FTZ(RNE32(FTZin(a_t)·FTZin(b_t)))
//	tree: t_i = FTZ(RNE32(t_2i + t_2i+1)), level by level, to t_0 = s
//	acc = FTZ(RNE32(acc + s))
//
// where FTZin flushes subnormal inputs of the input format to a zero of
// their sign, FTZ(x) is a zero of x's sign when the exact x is below 2^−126
// in magnitude (before rounding), RNE32 rounds to FP32 with overflow to
// ±Inf, exact zero sums follow IEEE (−0 + −0 = −0, x + (−x) = +0) and acc
// starts at FTZ(c). Without FTZ the same with every FTZ left out.
//
// Here every value is a float32 and every step one IEEE float32 operation
// (Go's float32 × and + round to nearest even; explicit float32
// conversions keep the compiler from fusing a product into an addition),
// followed, with FTZ, by ftz32: a result r with a zero exponent field
// (0 < |r| < 2^−126, or ±0) becomes the zero of r's sign. Why that is the
// model, step by step:
//   - Inputs: FP16 and BF16 values are float32 values. With FTZ, the
//     subnormal inputs of the format (FP16 below 2^−14, BF16 below 2^−126)
//     are replaced by zeros of their sign when the tiles are loaded
//     (prepPair), as kernel.pairwise clears their significand.
//   - Products: a float32 multiplication is the one RNE rounding of the
//     exact product, with overflow to ±Inf and IEEE signs for zeros, as
//     RNE32. FTZ: an FP16 product of normal inputs is at least 2^−28, and
//     a BF16 product has at most 16 significant bits, so one in
//     [2^−127, 2^−126) is an exact FP32 subnormal and one below 2^−127
//     rounds to at most 2^−127. Hence |RNE32(p)| < 2^−126 exactly when
//     |p| < 2^−126, and its sign is p's (IEEE underflow keeps the sign):
//     ftz32 of the rounded product is FTZ(RNE32(p)).
//   - Sums (tree and acc + s): both operands are FP32 values, multiples of
//     2^−149, so their exact sum is too; below 2^−126 it is an FP32 value
//     (subnormal or zero) and the float32 addition is exact. So
//     |RNE32(x + y)| < 2^−126 exactly when |x + y| < 2^−126, with the same
//     sign, and ftz32 after the addition is FTZ before the rounding (the
//     model's "flush before rounding" never sees a sum that would round up
//     to 2^−126). The model rounds x + y through the round-to-odd sumRO:
//     the same RNE rounding (round-to-odd lemma). Zero sums follow IEEE in
//     both.
//   - Padding: the tree of a short block is padded with +0 exactly as the
//     model does (−0 + +0 = +0 matters).
//   - Inf and NaN: an overflow (BF16 products from 2^128, sums) makes every
//     later value of the element ±Inf or NaN (Inf + finite = Inf, and no
//     operation makes a non-finite value finite again), and the model
//     carries it through the later blocks the same way (a later overflow
//     to the other infinity gives NaN). An element whose result is not
//     finite is recomputed by the reference kernel.dot all the same, and
//     every finite result went through finite values only, where the steps
//     above agree. Inf/NaN inputs (per row of A and column of B) and Inf or
//     NaN c take the reference path from the start.
//
// The tiles skip the flushes of the products and of the tree (only the
// acc + s flush stays) for elements where no product and no tree sum can
// fall below 2^−126: always for FP16 (normal inputs are at least 2^−14,
// and every product and tree sum is a multiple of 2^−48: products lie in
// [2^−28, 2^32), and an FP32 sum of multiples of 2^−48 is one — exact
// below 2^(24−48), above it its ulp is a multiple of 2^−48 — so a nonzero
// one is at least 2^−48); for BF16 when lo_A + lo_B ≥ −126, lo being the
// smallest exponent of a lowest set bit over the (flushed) nonzero
// elements of the row of A and of the column of B: every product, and by
// the same argument every tree sum, is then a multiple of
// 2^(lo_A + lo_B) ≥ 2^−126, so a nonzero one is not flushed. Without FTZ
// nothing is flushed at all. Elements that fail the test (BF16 values
// near 2^−63 and below, or with bits that far down) take elemPair, which
// flushes every step.
//
// What runs where: with AVX-512 (useAVX512) and L = 4, 8×16 tiles in
// assembly (pairTile8x16, fastpair_amd64.s), the 16 columns in the lanes
// of a vector; elsewhere 2×4 tiles in Go for L = 4 (pair2x4) and elemPair
// for every element for other L. A tail block (k not a multiple of L) is
// finished by pairBlocks on the tile's accumulators.

// pairKind returns fastPairwise when the Pairwise kernel k can take the
// fast path: FP32 output without a reduced mantissa, RNE, L ≤ 64, and
// 16-bit inputs (the caller checks for FP16/BF16).
func pairKind(k *kernel) fastKind {
	o := k.os
	if o.p != 24 || o.emin != -126 || o.emax != 127 || o.mode != fp.RNE || o.ftz != k.ftz || k.fp16in ||
		k.window != 0 || k.L < 1 || k.L > 64 || k.info == nil || k.info.table == nil {
		return fastNone
	}
	return fastPairwise
}

// pairNoLo is lo of a row or column without a nonzero element: large
// enough that every test passes.
const pairNoLo = 1 << 20

// pairState is the pairwise path's per-call state, kept in the scratch.
type pairState struct {
	loA, loB []int32 // BF16 with FTZ: lo per row of A / column of B
	ftzMask  uint32  // 0x80000000 with FTZ (ftz32 keeps the sign), all ones without
	allSafe  bool    // every element passes the no-flush test
}

// prepPair flushes the subnormal inputs (FTZ) in a32 and b32 and computes
// the no-flush test's exponents (BF16 with FTZ).
func (f *fastCall) prepPair() {
	sc := f.sc
	ps := &sc.pair
	f.L = f.kern.L
	ps.ftzMask = ^uint32(0)
	ps.allSafe = true
	ps.loA, ps.loB = ps.loA[:0], ps.loB[:0]
	if !f.kern.ftz {
		return
	}
	ps.ftzMask = 1 << 31
	expMask := uint16(0x7f80) // BF16 exponent field
	if f.info.frac == 10 {
		expMask = 0x7c00 // FP16
	}
	flush := func(p []uint16, v []float32) {
		v = v[:len(p)]
		for t, x := range p {
			if x&expMask == 0 {
				v[t] = math.Float32frombits(uint32(x&0x8000) << 16)
			}
		}
	}
	flush(sc.pa[:f.mm*f.k], sc.a32)
	flush(sc.pb[:f.n*f.k], sc.b32)
	if f.info.frac == 10 {
		return // FP16: always safe
	}
	lo := func(p []uint16) int32 {
		l := int32(pairNoLo)
		for _, x := range p {
			if x&expMask != 0 && x&expMask != expMask { // normal: not flushed, not special
				l = min(l, int32(f.tab.hl[x]&0xffff)-hlBias)
			}
		}
		return l
	}
	ps.loA, ps.loB = grow(ps.loA, f.mm), grow(ps.loB, f.n)
	minA, minB := int32(pairNoLo), int32(pairNoLo)
	for i := range ps.loA {
		ps.loA[i] = lo(sc.pa[i*f.k : (i+1)*f.k])
		minA = min(minA, ps.loA[i])
	}
	for j := range ps.loB {
		ps.loB[j] = lo(sc.pb[j*f.k : (j+1)*f.k])
		minB = min(minB, ps.loB[j])
	}
	ps.allSafe = minA+minB >= -126
}

// pairSafe reports whether element (i, j) passes the no-flush test.
func (f *fastCall) pairSafe(i, j int) bool {
	ps := &f.sc.pair
	return ps.allSafe || ps.loA[i]+ps.loB[j] >= -126
}

// plainPair reports whether element (i, j) can take a tile: no Inf/NaN
// input or c, and the no-flush test passed.
func (f *fastCall) plainPair(i, j int) bool {
	return !f.special(i, j) && f.pairSafe(i, j)
}

// ftz32 is the model's flush of a rounded result r (see above) when mask is
// 0x80000000, the identity when mask is all ones: a zero exponent field
// keeps only the sign.
func ftz32(r float32, mask uint32) float32 {
	if b := math.Float32bits(r); b&0x7f800000 == 0 {
		return math.Float32frombits(b & mask)
	}
	return r
}

// pairBlocks runs the blocks of one element over the products x[t]·y[t]
// (flushed inputs) from acc (flushed) with every flush, and returns the
// new acc. It is the model step for step for any L ≤ 64 (a last block
// shorter than L padded with +0 to a power of two).
func pairBlocks(x, y []float32, acc float32, L int, mask uint32) float32 {
	var t [64]float32
	y = y[:len(x)]
	for s := 0; s < len(x); s += L {
		e := min(s+L, len(x))
		m := e - s
		n := 1 << bits.Len(uint(m-1)) // next power of two ≥ m
		for q := 0; q < m; q++ {
			t[q] = ftz32(float32(x[s+q]*y[s+q]), mask)
		}
		for q := m; q < n; q++ {
			t[q] = 0
		}
		for h := n / 2; h >= 1; h /= 2 {
			for q := 0; q < h; q++ {
				t[q] = ftz32(t[2*q]+t[2*q+1], mask)
			}
		}
		acc = ftz32(acc+t[0], mask)
	}
	return acc
}

// pairFinish returns the result bits of element (i, j) from its final acc:
// the reference path's when acc is not finite (see above).
func (f *fastCall) pairFinish(acc float32, i, j int) uint32 {
	b := math.Float32bits(acc)
	if b&0x7f800000 == 0x7f800000 {
		return f.ref(i, j)
	}
	return b
}

// elemPair computes element (i, j) alone, flushing every step.
func (f *fastCall) elemPair(i, j int) uint32 {
	if f.special(i, j) {
		return f.ref(i, j)
	}
	k, mask := f.k, f.sc.pair.ftzMask
	x := f.sc.a32[i*k : (i+1)*k]
	y := f.sc.b32[j*k : (j+1)*k]
	acc := ftz32(float32(f.outC[i*f.n+j]), mask)
	return f.pairFinish(pairBlocks(x, y, acc, f.L, mask), i, j)
}

func (f *fastCall) runPair(res []uint32) {
	f.prepPair()
	plain := (*fastCall).plainPair
	if f.clean && f.sc.pair.allSafe {
		plain = nil
	}
	if f.L == 4 && f.runPairAVX(res, plain) {
		return
	}
	if f.L != 4 {
		f.runTiles(2, 4, res, nil, (*fastCall).pairElems2x4, (*fastCall).elemPair)
		return
	}
	f.interleave2x4()
	f.runTiles(2, 4, res, plain, (*fastCall).pair2x4, (*fastCall).elemPair)
}

// pairElems2x4 is a 2×4 tile computed element by element (L ≠ 4).
func (f *fastCall) pairElems2x4(res []uint32, i, j int) {
	for r := i; r < i+2; r++ {
		for c := j; c < j+4; c++ {
			res[r*f.n+c] = f.elemPair(r, c)
		}
	}
}

// pair2x4 computes the 2×4 outputs at (i, j) for L = 4 (i even, j a
// multiple of 4; the elements pass plainPair): per full block, eight
// trees (p0 + p1) + (p2 + p3) of float32 products without flushes, the
// acc + s addition flushed; a tail block by pairBlocks.
func (f *fastCall) pair2x4(res []uint32, i, j int) {
	k, n, mask := f.k, f.n, f.sc.pair.ftzMask
	xa := f.sc.a2[i/2*k : (i/2+1)*k]
	xb := f.sc.b4[j/4*k : (j/4+1)*k][:len(xa)]
	c := f.outC
	r0, r1 := i*n+j, (i+1)*n+j
	var acc [2][4]float32
	for q := 0; q < 4; q++ {
		acc[0][q] = ftz32(float32(c[r0+q]), mask)
		acc[1][q] = ftz32(float32(c[r1+q]), mask)
	}
	nf := k &^ 3
	for t := 0; t < nf; t += 4 {
		a := (*[4][2]float32)(xa[t : t+4])
		b := (*[4][4]float32)(xb[t : t+4])
		for r := 0; r < 2; r++ {
			u0, u1, u2, u3 := a[0][r], a[1][r], a[2][r], a[3][r]
			s0 := (float32(u0*b[0][0]) + float32(u1*b[1][0])) + (float32(u2*b[2][0]) + float32(u3*b[3][0]))
			s1 := (float32(u0*b[0][1]) + float32(u1*b[1][1])) + (float32(u2*b[2][1]) + float32(u3*b[3][1]))
			s2 := (float32(u0*b[0][2]) + float32(u1*b[1][2])) + (float32(u2*b[2][2]) + float32(u3*b[3][2]))
			s3 := (float32(u0*b[0][3]) + float32(u1*b[1][3])) + (float32(u2*b[2][3]) + float32(u3*b[3][3]))
			acc[r][0] = ftz32(acc[r][0]+s0, mask)
			acc[r][1] = ftz32(acc[r][1]+s1, mask)
			acc[r][2] = ftz32(acc[r][2]+s2, mask)
			acc[r][3] = ftz32(acc[r][3]+s3, mask)
		}
	}
	for r := 0; r < 2; r++ {
		for q := 0; q < 4; q++ {
			a := acc[r][q]
			if nf < k {
				a = pairBlocks(f.sc.a32[(i+r)*k+nf:(i+r+1)*k], f.sc.b32[(j+q)*k+nf:(j+q+1)*k], a, 4, mask)
			}
			res[(i+r)*n+j+q] = f.pairFinish(a, i+r, j+q)
		}
	}
}

// pairTileFn is pairTile8x16 (a variable so that tests can count the
// calls).
var pairTileFn = pairTile8x16

// runPairAVX runs the path with the AVX-512 8×16 tiles (L = 4) and reports
// whether it did (not without AVX-512 or for calls smaller than a tile).
// prepPair must have run.
func (f *fastCall) runPairAVX(res []uint32, plain func(f *fastCall, i, j int) bool) bool {
	if !useAVX512 || f.k < 4 || f.mm < 8 || f.n < 16 {
		return false
	}
	f.prepSeq8x16() // the panels of a32 and b32 (flushed inputs)
	f.runTiles(8, 16, res, plain, (*fastCall).pairAVX, (*fastCall).elemPair)
	return true
}

// pairAVX computes the 8×16 tile at (i, j) (i a multiple of 8, j of 16;
// the elements pass plainPair): the full blocks with the AVX-512 routine,
// a tail block with pairBlocks, non-finite results with the reference.
func (f *fastCall) pairAVX(res []uint32, i, j int) {
	k, n, sc := f.k, f.n, f.sc
	ga, gb := i/8*k*8, j/16*k*16
	// The routine reads rows i..i+7, columns j..j+15 of C and writes them
	// in res (stride n), and reads the panels' full blocks: check the
	// bounds here.
	_, _ = f.cbits[(i+7)*n+j+15], res[(i+7)*n+j+15]
	_, _ = sc.a8[ga+8*k-1], sc.b16[gb+16*k-1]
	nb := k / 4
	mask := sc.pair.ftzMask
	pairTileFn(&sc.a8[ga], &sc.b16[gb], &f.cbits[i*n+j], &res[i*n+j], n, nb, mask)
	nf := 4 * nb
	for r := i; r < i+8; r++ {
		out := res[r*n+j : r*n+j+16]
		for q, b := range out {
			if nf < k {
				acc := pairBlocks(sc.a32[r*k+nf:(r+1)*k], sc.b32[(j+q)*k+nf:(j+q+1)*k], math.Float32frombits(b), 4, mask)
				b = math.Float32bits(acc)
			}
			if b&0x7f800000 == 0x7f800000 {
				b = f.ref(r, j+q)
			}
			out[q] = b
		}
	}
}
