package cube

import (
	"math"
	"math/bits"

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
//
// What runs where. runTrunc walks C in tiles (runTiles): tiles whose rows
// and columns hold no Inf/NaN (and no Inf/NaN c) take a tile routine, the
// others and the edge rows/columns take elemTrunc (one element, the
// arithmetic above in scalar Go). On amd64 with AVX-512 F, DQ and VL
// (useAVX512, from golang.org/x/sys/cpu, which also checks that the OS
// saves the ZMM and mask registers) the tile is 4×8, in assembly
// (truncTile4x8, fasttrunc_amd64.s): the eight columns are the eight lanes
// of a vector, four rows at once, over A and B panels laid out term-major
// (prepTile4x8). It performs the scalar arithmetic lane for lane, so its
// results are the same bits: e_max as int32 lanes (VPADDD, VPMAXSD, c's
// exponent included; exponents carry a +127 bias so that c's comes straight
// from the FP32 exponent field, max(field, 1) for subnormals), the scale
// 2^(F−e_max) from its bits, the exact products a·b·scale (two VMULPD),
// the truncation toward zero (VCVTTPD2QQ truncates like Go's float→int64
// conversion; every operand is below 2^(F+2) in magnitude), exact int64
// sums (VPADDQ), the exact S·2^u (VCVTQQ2PD is exact below 2^53, the
// multiplication by a power of two exact in float64's normal range) and
// one rounding to FP32 with the mode embedded in the instruction
// (VCVTPD2PS {rz-sae} or {rn-sae}, independent of MXCSR): the IEEE
// rounding of the exact value, which float32(x) and roundRZ32 compute too,
// subnormals included. Two cases differ from the hardware and are taken
// out by masks: RZ overflow (the instruction gives ±MaxFloat32 for
// |x| ≥ 2^128, the model ±Inf) — lanes with |x| ≥ 2^128 under RZ or an
// infinite result under RNE are returned in a redo mask and recomputed by
// the reference path, as the scalar code does; and blocks without a
// nonzero term (e_max < noExpLim), whose lanes take the IEEE sum
// c + (−0 + Σ a·b) of truncZero by a masked blend (when all 32 lanes of
// the tile have such a block, e.g. zero rows padding a tile, the product
// pass is skipped). Elsewhere (other CPUs and architectures, or
// useAVX512 switched off by the tests, which run both) the tile is 2×2 in
// Go (trunc2x2, fasttruncblk.go), the same arithmetic with the products of
// a block for four outputs interleaved.

// noExp is the exponent of a zero input: far below any sum of two real
// exponents, so the largest product exponent of a block ignores zeros; a
// sum below noExpLim means the block has no nonzero product.
// infExp marks an infinite block result (the element is redone by the
// reference path).
const (
	noExp    = -1 << 20
	noExpLim = -1 << 19
	infExp   = 1 << 20
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
// (transposed), in the orders of a64 and b64, and the pair-interleaved
// copies of the 2×2 tiles if pairs is set.
func (f *fastCall) prepTrunc(pairs bool) {
	sc := f.sc
	f.L = f.kern.L
	if f.tab != nil { // FP32/TF32 inputs: load32 filled ea and eb
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
	if !pairs {
		return
	}
	// Pair-interleaved copies for the 2×2 tiles: rows 2r and 2r+1 of A
	// (columns of B) with element t at 2t and 2t+1 of the pair's segment.
	k := f.k
	inter := func(v []float64, e []int32, rows int, v2 []float64, e2 []int32) {
		for r := 0; r+1 < rows; r += 2 {
			v0, v1 := v[r*k:(r+1)*k], v[(r+1)*k:(r+2)*k]
			e0, e1 := e[r*k:(r+1)*k], e[(r+1)*k:(r+2)*k]
			ov, oe := v2[r*k:(r+2)*k], e2[r*k:(r+2)*k]
			for t := range v0 {
				ov[2*t], ov[2*t+1] = v0[t], v1[t]
				oe[2*t], oe[2*t+1] = e0[t], e1[t]
			}
		}
	}
	sc.pa2, sc.ea2 = grow(sc.pa2, f.mm*k), grow(sc.ea2, f.mm*k)
	sc.pb2, sc.eb2 = grow(sc.pb2, f.n*k), grow(sc.eb2, f.n*k)
	inter(sc.a64, sc.ea, f.mm, sc.pa2, sc.ea2)
	inter(sc.b64, sc.eb, f.n, sc.pb2, sc.eb2)
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

// truncRZ rounds the exact float64 block result x toward zero to FP32 when
// x lies in FP32's normal range: the truncation of x's significand to 24
// bits (clear the low 29 fraction bits). It returns the result, its
// exponent, and false (and nothing useful) outside that range (zero, FP32
// subnormals, overflow).
func truncRZ(x float64) (float64, int32, bool) {
	b := math.Float64bits(x)
	e := int32(b>>52&0x7ff) - 1023
	return math.Float64frombits(b &^ (1<<29 - 1)), e, uint32(e+126) <= 253
}

// truncRound rounds the exact float64 block result x to FP32 in the
// kernel's mode (RZ: overflow to ±Inf at 2^128, as outSpec.round) and
// returns the result and its nominal exponent (expC; infExp for ±Inf).
func truncRound(x float64, rz bool) (float64, int32) {
	if rz {
		if r, e, ok := truncRZ(x); ok {
			return r, e
		}
	}
	return truncRoundSlow(x, rz)
}

func truncRoundSlow(x float64, rz bool) (float64, int32) {
	var r float64
	switch {
	case x == 0:
		return 0, noExp
	case !rz:
		r = float64(float32(x))
	default:
		r = roundRZ32(x)
	}
	if math.IsInf(r, 0) {
		return r, infExp
	}
	return r, expC(r)
}

// truncZero is the block result when every product is zero and c = ±0:
// IEEE addition of the zero products and c (−0 only if all are −0).
func truncZero(c float64, x, y []float64) float64 {
	P := negZero
	for t, v := range x {
		P += float64(v * y[t])
	}
	return c + P
}

func (f *fastCall) runTrunc(res []uint32) {
	if useAVX512 && f.k > 0 && f.mm >= 4 && f.n >= 8 {
		f.prepTrunc(false)
		f.prepTile4x8(true)
		f.runTiles(4, 8, res, f.plainTiles(), (*fastCall).truncAVX, (*fastCall).elemTrunc)
		return
	}
	f.prepTrunc(true)
	f.runTiles(2, 2, res, f.plainTiles(), (*fastCall).trunc2x2, (*fastCall).elemTrunc)
}

// prepTile4x8 fills the panels of the AVX-512 tiles: a4 (and ea4 if exps
// is set) hold A (its exponents, +127) by quads of rows, term-major
// (a4[(g·k + t)·4 + r] is A[4g+r, t]); b8 (eb8) hold B (its exponents) by
// octets of columns, term-major (b8[(p·k + t)·8 + l] is B[t, 8p+l]). Edge
// rows and columns (beyond the last full quad or octet) are not copied:
// the element path computes them.
func (f *fastCall) prepTile4x8(exps bool) {
	sc, k := f.sc, f.k
	nq, no := f.mm/4, f.n/8
	sc.a4, sc.b8 = grow(sc.a4, nq*k*4), grow(sc.b8, no*k*8)
	panel(sc.a64, sc.a4, nq, 4, k, 0)
	panel(sc.b64, sc.b8, no, 8, k, 0)
	if !exps {
		return
	}
	sc.ea4, sc.eb8 = grow(sc.ea4, nq*k*4), grow(sc.eb8, no*k*8)
	panel(sc.ea, sc.ea4, nq, 4, k, 127)
	panel(sc.eb, sc.eb8, no, 8, k, 0)
}

// truncTileFn is truncTile4x8 (a variable so that tests can count the
// calls).
var truncTileFn = truncTile4x8

// truncAVX computes the 4×8 tile at (i, j) (no Inf/NaN inputs or c; i a
// multiple of 4, j of 8, k > 0) with the AVX-512 routine, and redoes with
// the reference path the elements that reached an infinite block result.
func (f *fastCall) truncAVX(res []uint32, i, j int) {
	f.tile4x8(res, i, j, truncTileFn, (*fastCall).ref)
}

// tile4x8 runs tile, an AVX-512 routine of the truncated panels (truncated
// block FMA, truncated late c), on the 4×8 tile at (i, j), and computes with
// redo the elements it reports (bit 8r + l of its mask: an infinite block
// result).
func (f *fastCall) tile4x8(res []uint32, i, j int, tile func(ap *float64, eap *int32, bp *float64, ebp *int32, c *float64, res *uint32, n, k, L, F int, rz bool) (bad uint32),
	redo func(f *fastCall, i, j int) uint32) {
	k, n, sc := f.k, f.n, f.sc
	ga, gb := i/4*k*4, j/8*k*8
	// The routine reads and writes rows i..i+3, columns j..j+7 of C with
	// stride n, and the whole panels: check the bounds here.
	_, _ = f.outC[(i+3)*n+j+7], res[(i+3)*n+j+7]
	_, _ = sc.a4[ga+4*k-1], sc.ea4[ga+4*k-1]
	_, _ = sc.b8[gb+8*k-1], sc.eb8[gb+8*k-1]
	bad := tile(&sc.a4[ga], &sc.ea4[ga], &sc.b8[gb], &sc.eb8[gb], &f.outC[i*n+j], &res[i*n+j],
		n, k, f.L, f.kern.F, f.kern.os.mode == fp.RZ)
	for ; bad != 0; bad &= bad - 1 {
		b := bits.TrailingZeros32(bad)
		r, c := i+b/8, j+b%8
		res[r*n+c] = redo(f, r, c)
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
	ec := expC(c)
	for s := 0; s < k; s += L {
		e := min(s+L, k)
		m := ec
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
		c, ec = truncRound(float64(S)*pow2i(m-F), rz)
		if math.IsInf(c, 0) {
			return f.ref(i, j)
		}
	}
	return toBits(c)
}

// trunc2x2 computes the 2×2 outputs at (i, j) (no Inf/NaN inputs or c);
// i and j are even. It reads the pair-interleaved copies (prepTrunc).
func (f *fastCall) trunc2x2(res []uint32, i, j int) {
	k, n, L, F := f.k, f.n, f.L, int32(f.kern.F)
	rz := f.kern.os.mode == fp.RZ
	sc := f.sc
	// Rows i, i+1 of A and columns j, j+1 of B, element t of the pair at
	// 2t and 2t+1.
	pa := sc.pa2[i*k : (i+2)*k]
	pb := sc.pb2[j*k : (j+2)*k][:len(pa)]
	qa := sc.ea2[i*k : (i+2)*k][:len(pa)]
	qb := sc.eb2[j*k : (j+2)*k][:len(pa)]
	r0, r1 := i*n+j, (i+1)*n+j
	c00, c01, c10, c11 := f.outC[r0], f.outC[r0+1], f.outC[r1], f.outC[r1+1]
	e00, e01, e10, e11 := expC(c00), expC(c01), expC(c10), expC(c11)
	bad := false // an infinite block result
	for s, blk := 0, 0; s < k; s, blk = s+L, blk+1 {
		e := min(s+L, k)
		var S00, S01, S10, S11 int64
		var m00, m01, m10, m11 int32
		switch {
		case e-s == 8 && L == 8:
			S00, S01, S10, S11, m00, m01, m10, m11 = truncBlk8((*[16]float64)(pa[2*s:2*e]), (*[16]float64)(pb[2*s:2*e]),
				(*[16]int32)(qa[2*s:2*e]), (*[16]int32)(qb[2*s:2*e]), e00, e01, e10, e11, F, c00, c01, c10, c11)
		case e-s == 16 && L == 16:
			S00, S01, S10, S11, m00, m01, m10, m11 = truncBlk16((*[32]float64)(pa[2*s:2*e]), (*[32]float64)(pb[2*s:2*e]),
				(*[32]int32)(qa[2*s:2*e]), (*[32]int32)(qb[2*s:2*e]), e00, e01, e10, e11, F, c00, c01, c10, c11)
		case e-s == 4 && L == 4:
			S00, S01, S10, S11, m00, m01, m10, m11 = truncBlk4((*[8]float64)(pa[2*s:2*e]), (*[8]float64)(pb[2*s:2*e]),
				(*[8]int32)(qa[2*s:2*e]), (*[8]int32)(qb[2*s:2*e]), e00, e01, e10, e11, F, c00, c01, c10, c11)
		default:
			S00, S01, S10, S11, m00, m01, m10, m11 = truncBlkN(pa[2*s:2*e], pb[2*s:2*e], qa[2*s:2*e], qb[2*s:2*e], e00, e01, e10, e11, F, c00, c01, c10, c11)
		}
		if min(m00, m01, m10, m11) < noExpLim {
			// A block without nonzero terms: the zero-sign rule.
			x0, x1 := f.sc.a64[i*k+s:i*k+e], f.sc.a64[(i+1)*k+s:(i+1)*k+e]
			y0, y1 := f.sc.b64[j*k+s:j*k+e], f.sc.b64[(j+1)*k+s:(j+1)*k+e]
			c00, e00 = truncBlockZ(c00, m00, x0, y0, F, rz)
			c01, e01 = truncBlockZ(c01, m01, x0, y1, F, rz)
			c10, e10 = truncBlockZ(c10, m10, x1, y0, F, rz)
			c11, e11 = truncBlockZ(c11, m11, x1, y1, F, rz)
			bad = bad || max(e00, e01, e10, e11) == infExp
			continue
		}
		b00, b01 := uint64(F+1023-m00)<<52, uint64(F+1023-m01)<<52
		b10, b11 := uint64(F+1023-m10)<<52, uint64(F+1023-m11)<<52
		x00 := float64(S00) * math.Float64frombits(2046<<52-b00)
		x01 := float64(S01) * math.Float64frombits(2046<<52-b01)
		x10 := float64(S10) * math.Float64frombits(2046<<52-b10)
		x11 := float64(S11) * math.Float64frombits(2046<<52-b11)
		var ok bool
		if c00, e00, ok = truncRZ(x00); !ok || !rz {
			c00, e00 = truncRound(x00, rz)
		}
		if c01, e01, ok = truncRZ(x01); !ok || !rz {
			c01, e01 = truncRound(x01, rz)
		}
		if c10, e10, ok = truncRZ(x10); !ok || !rz {
			c10, e10 = truncRound(x10, rz)
		}
		if c11, e11, ok = truncRZ(x11); !ok || !rz {
			c11, e11 = truncRound(x11, rz)
		}
		bad = bad || max(e00, e01, e10, e11) == infExp
	}
	res[r0], res[r0+1], res[r1], res[r1+1] = toBits(c00), toBits(c01), toBits(c10), toBits(c11)
	// After an infinite block result the later blocks computed garbage:
	// redo the tile with the reference path, which stops at the first
	// infinity.
	if bad {
		for _, p := range [4][2]int{{i, j}, {i, j + 1}, {i + 1, j}, {i + 1, j + 1}} {
			res[p[0]*n+p[1]] = f.ref(p[0], p[1])
		}
	}
}

// truncBlkN is truncBlk4/8/16 for any block length (pa, pb, qa, qb of
// equal even length).
func truncBlkN(pa, pb []float64, qa, qb []int32, m00, m01, m10, m11, F int32, c00, c01, c10, c11 float64) (S00, S01, S10, S11 int64, o00, o01, o10, o11 int32) {
	qa, qb = qa[:len(pa)], qb[:len(pa)]
	for t := 1; t < len(qa); t += 2 {
		u0, u1, v0, v1 := qa[t-1], qa[t], qb[t-1], qb[t]
		m00 = max(m00, u0+v0)
		m01 = max(m01, u0+v1)
		m10 = max(m10, u1+v0)
		m11 = max(m11, u1+v1)
	}
	s00 := math.Float64frombits(uint64(F+1023-m00) << 52)
	s01 := math.Float64frombits(uint64(F+1023-m01) << 52)
	s10 := math.Float64frombits(uint64(F+1023-m10) << 52)
	s11 := math.Float64frombits(uint64(F+1023-m11) << 52)
	S00, S01, S10, S11 = sum2x2(pa, pb, s00, s01, s10, s11)
	S00, S01, S10, S11 = S00+int64(c00*s00), S01+int64(c01*s01), S10+int64(c10*s10), S11+int64(c11*s11)
	return S00, S01, S10, S11, m00, m01, m10, m11
}

// sum2x2 returns the int64 sums of the truncated scaled products
// trunc(a_r·b_c·s_rc) over a block of pair-interleaved values.
func sum2x2(pa, pb []float64, s00, s01, s10, s11 float64) (S00, S01, S10, S11 int64) {
	pb = pb[:len(pa)]
	for t := 1; t < len(pa); t += 2 {
		u0, u1, v0, v1 := pa[t-1], pa[t], pb[t-1], pb[t]
		S00 += int64(u0 * v0 * s00)
		S01 += int64(u0 * v1 * s01)
		S10 += int64(u1 * v0 * s10)
		S11 += int64(u1 * v1 * s11)
	}
	return
}

// truncBlockZ is one element's block with e_max = m (a block that may have
// no nonzero term); it returns the result and its exponent.
func truncBlockZ(c float64, m int32, x, y []float64, F int32, rz bool) (float64, int32) {
	if m < noExpLim {
		r := truncZero(c, x, y)
		return r, expC(r)
	}
	sc := pow2i(F - m)
	S := int64(c * sc)
	for t, v := range x {
		S += int64(v * y[t] * sc)
	}
	return truncRound(float64(S)*pow2i(m-F), rz)
}
