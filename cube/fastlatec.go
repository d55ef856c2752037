package cube

import (
	"math"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Late-c fast path (Kind TruncatedLateC: the CDNA3 preset mi300; FP16 and
// BF16 inputs, FP32 output rounded RNE or RZ, any L and F with
// F + 2 + ⌈log2(L + 2)⌉ ≤ 53).
//
// The model (kernel.truncLateC), per block of L products in increasing k:
// e_dot is the largest nominal exponent e_a + e_b over the nonzero
// products; a product of magnitude ≥ 2^128 makes the block ±Inf (NaN with
// both signs); without nonzero products the block gives c (c = ±0: the
// IEEE sum of c and the zero products, −0 only if all are −0); otherwise
// every product is truncated toward zero to a multiple of 2^u_d,
// u_d = e_dot − F, and summed exactly (S_d), c is rounded toward −∞ to a
// multiple of 2^u_c, u_c = max(e_dot, e_c) − F (e_c: c's nominal exponent,
// −126 for subnormals), and S_d·2^u_d + C_q·2^u_c is rounded once to FP32
// (an exact zero gives +0). An infinite c or block result meets the later
// blocks' products: c = ±Inf plus finite products stays c, a product of
// magnitude ≥ 2^128 of the other sign gives NaN.
//
// Here, per element and block, as in the truncated block-FMA path
// (fasttrunc.go): e_dot from the integer nominal exponents (zeros carry
// noExp, so that a block without a nonzero product has e_dot < noExpLim);
// each product a·b is exact in float64 (at most 22 significant bits, far
// inside the normal range), scaled exactly by 2^(F − e_dot) and converted
// to int64 by Go's conversion, which truncates toward zero — the model's
// truncation; every scaled product is below 2^(F+2) in magnitude, so the
// int64 sum of L of them is exact and below 2^53 (truncFits), and
// x = S_d·2^u_d is exact in float64. c·2^−u_c is exact (c is an FP32
// value, u_c ≥ e_c − F) and math.Floor rounds it toward −∞ exactly; the
// result C_q has at most F + 1 bits, so c_q = C_q·2^u_c is exact too. The
// sum c_q + x rounded once to FP32 is addRNE (or addRZ): the float64 sum
// when it is exact, else the round-to-odd sum rounded once more, which is
// the one rounding of the exact sum (round-to-odd lemma), as the model's
// sumRO and outSpec.round; a zero sum is +0 in both (x and c_q are never
// −0). Without c (c = ±0) the block result is x rounded (x = +0 for an
// all-truncated sum, as the model's x == 0 → +0).
//
// Products of magnitude ≥ 2^128 (BF16 only) are excluded per element by
// the row's and column's largest exponents (H_A + H_B + 2 ≤ 128, the
// sequential path's prepRanges): such elements, and rows or columns with
// Inf/NaN or an Inf/NaN c, take the reference kernel.dot. A block result
// that overflows to ±Inf is returned as the element's result: with no
// product of magnitude ≥ 2^128 no later block can change it.
//
// What runs where: with AVX-512 (useAVX512), 4×8 tiles in assembly
// (lateCTile4x8, fastlatec_amd64.s: the truncated path's tile with c kept
// out of e_dot and the integer sum and added late, the arithmetic above
// lane for lane, on the truncated path's panels); elsewhere 2×2 tiles in
// Go (lateC2x2; the products of a block for four outputs share their
// loads and the exponent maxima, through the truncated path's
// pair-interleaved copies and block bodies, called with no c term);
// elemLateC for the edges, the elements that fail the tests and those a
// tile reports as reaching ±Inf.

// lateCFits reports whether the late-c kernel k can take the fast path.
func lateCFits(k *kernel) bool {
	o := k.os
	return o.p == 24 && o.emin == -126 && o.emax == 127 && !o.ftz && !k.ftz && !k.fp16in &&
		(o.mode == fp.RNE || o.mode == fp.RZ) && k.F != Exact && truncFits(k.F, k.L) &&
		k.info != nil && k.info.table != nil
}

// plainLateC reports whether element (i, j) can take the fast arithmetic:
// no Inf/NaN input or c, and (BF16) no product of magnitude ≥ 2^128.
func (f *fastCall) plainLateC(i, j int) bool {
	if f.special(i, j) {
		return false
	}
	return f.sc.rowHL == nil || f.sc.rowHL[2*i]+f.sc.colHL[2*j]+2 <= 128
}

func (f *fastCall) runLateC(res []uint32) {
	avx := useAVX512 && f.k > 0 && f.mm >= 4 && f.n >= 8
	f.prepTrunc(!avx)
	f.prepSeqRanges()
	plain := (*fastCall).plainLateC
	if f.clean && f.sc.rowHL == nil {
		plain = nil
	}
	if avx {
		f.prepTile4x8(true)
		f.runTiles(4, 8, res, plain, (*fastCall).lateCAVX, (*fastCall).elemLateC)
		return
	}
	f.runTiles(2, 2, res, plain, (*fastCall).lateC2x2, (*fastCall).elemLateC)
}

// lateCTileFn is lateCTile4x8 (a variable so that tests can count the
// calls).
var lateCTileFn = lateCTile4x8

// lateCAVX computes the 4×8 tile at (i, j) (the elements pass plainLateC;
// i a multiple of 4, j of 8, k > 0) with the AVX-512 routine, and redoes
// with elemLateC the elements that reached an infinite block result.
func (f *fastCall) lateCAVX(res []uint32, i, j int) {
	f.tile4x8(res, i, j, lateCTileFn, (*fastCall).elemLateC)
}

// lateCEnd returns the block result from the products' truncated sum S
// (block exponent m ≥ noExpLim) and c: round(c_q + S·2^(m−F)).
func lateCEnd(c float64, S int64, m, F int32, rz bool) float64 {
	x := float64(S) * pow2i(m-F)
	if c == 0 {
		if rz {
			return addRZ(0, x)
		}
		return float64(float32(x))
	}
	u := max(m, expC(c)) - F
	cq := math.Floor(c*pow2i(-u)) * pow2i(u)
	if rz {
		return addRZ(cq, x)
	}
	return addRNE(cq, x)
}

// lateCZero is the block result without a nonzero product: c, or the IEEE
// sum of c = ±0 and the zero products (truncZero).
func lateCZero(c float64, x, y []float64) float64 {
	if c != 0 {
		return c
	}
	return truncZero(c, x, y)
}

// elemLateC computes element (i, j) alone.
func (f *fastCall) elemLateC(i, j int) uint32 {
	if !f.plainLateC(i, j) {
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
		m := int32(noExp)
		for t := s; t < e; t++ {
			m = max(m, ex[t]+ey[t])
		}
		if m < noExpLim {
			c = lateCZero(c, x[s:e], y[s:e])
			continue
		}
		sc := pow2i(F - m)
		var S int64
		for t := s; t < e; t++ {
			S += int64(x[t] * y[t] * sc)
		}
		if c = lateCEnd(c, S, m, F, rz); math.IsInf(c, 0) {
			break // no later block changes it (no product ≥ 2^128 here)
		}
	}
	return toBits(c)
}

// lateC2x2 computes the 2×2 outputs at (i, j) (i, j even; the elements
// pass plainLateC). It reads the pair-interleaved copies (prepTrunc).
func (f *fastCall) lateC2x2(res []uint32, i, j int) {
	k, n, L, F := f.k, f.n, f.L, int32(f.kern.F)
	rz := f.kern.os.mode == fp.RZ
	sc := f.sc
	pa := sc.pa2[i*k : (i+2)*k]
	pb := sc.pb2[j*k : (j+2)*k][:len(pa)]
	qa := sc.ea2[i*k : (i+2)*k][:len(pa)]
	qb := sc.eb2[j*k : (j+2)*k][:len(pa)]
	r0, r1 := i*n+j, (i+1)*n+j
	c00, c01, c10, c11 := f.outC[r0], f.outC[r0+1], f.outC[r1], f.outC[r1+1]
	const nx = noExp
	for s := 0; s < k; s += L {
		e := min(s+L, k)
		var S00, S01, S10, S11 int64
		var m00, m01, m10, m11 int32
		// The block bodies of the truncated path with c = 0 and the
		// accumulators' exponents noExp: the products' sums and e_dot.
		switch {
		case e-s == 8 && L == 8:
			S00, S01, S10, S11, m00, m01, m10, m11 = truncBlk8((*[16]float64)(pa[2*s:2*e]), (*[16]float64)(pb[2*s:2*e]),
				(*[16]int32)(qa[2*s:2*e]), (*[16]int32)(qb[2*s:2*e]), nx, nx, nx, nx, F, 0, 0, 0, 0)
		case e-s == 16 && L == 16:
			S00, S01, S10, S11, m00, m01, m10, m11 = truncBlk16((*[32]float64)(pa[2*s:2*e]), (*[32]float64)(pb[2*s:2*e]),
				(*[32]int32)(qa[2*s:2*e]), (*[32]int32)(qb[2*s:2*e]), nx, nx, nx, nx, F, 0, 0, 0, 0)
		case e-s == 4 && L == 4:
			S00, S01, S10, S11, m00, m01, m10, m11 = truncBlk4((*[8]float64)(pa[2*s:2*e]), (*[8]float64)(pb[2*s:2*e]),
				(*[8]int32)(qa[2*s:2*e]), (*[8]int32)(qb[2*s:2*e]), nx, nx, nx, nx, F, 0, 0, 0, 0)
		default:
			S00, S01, S10, S11, m00, m01, m10, m11 = truncBlkN(pa[2*s:2*e], pb[2*s:2*e], qa[2*s:2*e], qb[2*s:2*e], nx, nx, nx, nx, F, 0, 0, 0, 0)
		}
		if min(m00, m01, m10, m11) < noExpLim {
			// A block without nonzero products for some element.
			x0, x1 := sc.a64[i*k+s:i*k+e], sc.a64[(i+1)*k+s:(i+1)*k+e]
			y0, y1 := sc.b64[j*k+s:j*k+e], sc.b64[(j+1)*k+s:(j+1)*k+e]
			c00 = lateCStep(c00, S00, m00, F, rz, x0, y0)
			c01 = lateCStep(c01, S01, m01, F, rz, x0, y1)
			c10 = lateCStep(c10, S10, m10, F, rz, x1, y0)
			c11 = lateCStep(c11, S11, m11, F, rz, x1, y1)
		} else {
			c00 = lateCEnd(c00, S00, m00, F, rz)
			c01 = lateCEnd(c01, S01, m01, F, rz)
			c10 = lateCEnd(c10, S10, m10, F, rz)
			c11 = lateCEnd(c11, S11, m11, F, rz)
		}
		if math.IsInf(c00+c01+c10+c11, 0) || math.IsNaN(c00+c01+c10+c11) {
			// An infinite block result (which no later block changes):
			// redo the four elements one by one.
			res[r0], res[r0+1] = f.elemLateC(i, j), f.elemLateC(i, j+1)
			res[r1], res[r1+1] = f.elemLateC(i+1, j), f.elemLateC(i+1, j+1)
			return
		}
	}
	res[r0], res[r0+1], res[r1], res[r1+1] = toBits(c00), toBits(c01), toBits(c10), toBits(c11)
}

// lateCStep is one element's block result for any block exponent m.
func lateCStep(c float64, S int64, m, F int32, rz bool, x, y []float64) float64 {
	if m < noExpLim {
		return lateCZero(c, x, y)
	}
	return lateCEnd(c, S, m, F, rz)
}
