package cube

import (
	"math"
	"math/bits"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Sequential FP32 fast paths (see fast.go for why they are exact).
//
// With AVX-512 (useAVX512) both run 8×16 tiles in assembly (seqTile8x16,
// fastseq_amd64.s): the 16 columns j..j+15 are the float32 lanes of a
// vector, eight rows at once (eight independent chains, enough to cover
// the FMA latency), and per k in increasing order
// acc = VFMADD231PS(a[i,k] broadcast, b[k, j..j+15], acc) with the
// rounding embedded in the instruction ({rn-sae} or {rz-sae}, independent
// of MXCSR). Why that is the model's step acc = round(acc + a·b):
//   - FP16 and BF16 values are FP32 values (exact float32 operands).
//   - The FMA rounds the exact a·b + acc once (IEEE 754 fusedMultiplyAdd),
//     and the model rounds the exact sum once too (kernel.add2: sumRO then
//     one rounding; round-to-odd makes that the rounding of the exact
//     sum). This holds whether or not a·b is an FP32 value, so the tile
//     needs no BF16 product-exactness test (plainSeq, which the Go
//     element path still needs for its float32 product): BF16 products
//     below 2^−149 or beyond 2^128 are rounded once with the sum, as in
//     the model.
//   - Zeros: IEEE gives a·b the XOR sign, −0 for −0 + −0 and +0 for an
//     exact zero sum of other signs under RN and RZ; a nonzero exact sum
//     that rounds to zero keeps its sign; kernel.add2 has the same rules.
//   - Subnormals: Go leaves MXCSR's FTZ and DAZ off, so the hardware
//     follows IEEE gradual underflow, as float32(x) and roundRZ32 do; the
//     ftz kernels do not take the fast paths (fastKindFor).
//   - Overflow, RNE: the hardware and float32(x) both give ±Inf, which
//     finite products leave unchanged (the model stops there).
//   - Overflow, RZ: the model gives ±Inf once |exact sum| ≥ 2^128
//     (roundRZ32), the hardware ±MaxFloat32. Elements that may get there
//     are kept out of the tiles by plainSeqRZ (never for FP16: products
//     are below 2^32).
// Inf/NaN inputs or c (per row of A, column of B, element of C) keep the
// tile on the element path, as do edge rows and columns beyond the last
// full tile. Elsewhere (no AVX-512, or the tests' switch) fp32-rne uses
// the Go 2×4 tiles (seqRNE2x4) and fp32-rz the Go four-column loop.

// prepRanges computes, for BF16 inputs, the largest exponent and the
// smallest lowest-bit exponent per row of A and column of B (the float32
// exactness test of the products). FP16 products are always exact.
func (f *fastCall) prepRanges() {
	if f.info.frac != 7 { // FP16
		return
	}
	sc := f.sc
	sc.rowHL = grow(sc.rowHL, 2*f.mm)
	sc.colHL = grow(sc.colHL, 2*f.n)
	rng := func(p []uint16, out []int32) {
		hi, lo := int32(-hlBias), int32(hlBias)
		for _, x := range p {
			if v := f.tab.hl[x]; v != 0 {
				hi = max(hi, int32(v>>16)-hlBias)
				lo = min(lo, int32(v&0xffff)-hlBias)
			}
		}
		out[0], out[1] = hi, lo
	}
	for i := 0; i < f.mm; i++ {
		rng(sc.pa[i*f.k:(i+1)*f.k], sc.rowHL[2*i:2*i+2])
	}
	for j := 0; j < f.n; j++ {
		rng(sc.pb[j*f.k:(j+1)*f.k], sc.colHL[2*j:2*j+2])
	}
}

// plainSeq reports whether element (i, j) can use native float32 products:
// no Inf/NaN anywhere and (BF16) every product an exact float32.
func (f *fastCall) plainSeq(i, j int) bool {
	if f.special(i, j) {
		return false
	}
	if f.sc.rowHL == nil || f.info.frac != 7 {
		return true
	}
	r, c := f.sc.rowHL[2*i:2*i+2], f.sc.colHL[2*j:2*j+2]
	return r[0]+c[0]+2 <= 127 && r[1]+c[1] >= -149
}

// prepSeqRanges resets and computes the BF16 exactness ranges
// (prepRanges); rowHL stays nil for FP16, whose products are all exact.
func (f *fastCall) prepSeqRanges() {
	f.sc.rowHL, f.sc.colHL = f.sc.rowHL[:0], f.sc.colHL[:0]
	f.prepRanges()
	if f.info.frac != 7 {
		f.sc.rowHL = nil
	}
}

// interleave2x4 copies a32 and b32 as row pairs of A and column quads of
// B (element t of the group at [t][r]: a2, b4), so that the 2×4 tiles in
// Go (seqRNE2x4, pair2x4) follow one pointer per operand.
func (f *fastCall) interleave2x4() {
	k, sc := f.k, f.sc
	sc.a2 = grow(sc.a2, f.mm/2*k)
	sc.b4 = grow(sc.b4, f.n/4*k)
	for r := 0; r+1 < f.mm; r += 2 {
		x0, x1 := sc.a32[r*k:(r+1)*k], sc.a32[(r+1)*k:(r+2)*k]
		o := sc.a2[r/2*k : (r/2+1)*k]
		for t := range o {
			o[t] = [2]float32{x0[t], x1[t]}
		}
	}
	for c := 0; c+3 < f.n; c += 4 {
		y0, y1, y2, y3 := sc.b32[c*k:(c+1)*k], sc.b32[(c+1)*k:(c+2)*k], sc.b32[(c+2)*k:(c+3)*k], sc.b32[(c+3)*k:(c+4)*k]
		o := sc.b4[c/4*k : (c/4+1)*k]
		for t := range o {
			o[t] = [4]float32{y0[t], y1[t], y2[t], y3[t]}
		}
	}
}

func (f *fastCall) runSeqRNE(res []uint32) {
	f.prepSeqRanges()
	if f.runSeqAVX(res, false) {
		return
	}
	f.interleave2x4()
	plain := (*fastCall).plainSeq
	if f.clean && f.sc.rowHL == nil {
		plain = nil
	}
	f.runTiles(2, 4, res, plain, (*fastCall).seqRNE2x4, (*fastCall).elemSeqRNE)
}

func (f *fastCall) elemSeqRNE(i, j int) uint32 {
	if !f.plainSeq(i, j) {
		return f.ref(i, j)
	}
	k := f.k
	x := f.sc.a32[i*k : (i+1)*k]
	y := f.sc.b32[j*k : (j+1)*k][:len(x)]
	acc := float32(f.outC[i*f.n+j])
	for t, v := range x {
		acc += float32(v * y[t])
	}
	return math.Float32bits(acc)
}

// seqRNE2x4 computes the 2×4 outputs at (i, j) (i even, j a multiple of
// 4): eight independent float32 chains, each in increasing k.
//
// The compiler's scheduler hoists all eight products of an iteration above
// the additions, which needs 18 XMM registers (amd64 has 15 usable) and
// spills an accumulator to memory, a store-to-load round trip in its
// dependency chain. A never-taken branch (t = f.never = −1) in the middle of
// the loop body splits it into two blocks of four products and four
// additions each. (Unrolling by two k steps measured no faster.)
func (f *fastCall) seqRNE2x4(res []uint32, i, j int) {
	k, n := f.k, f.n
	xa := f.sc.a2[i/2*k : (i/2+1)*k]
	xb := f.sc.b4[j/4*k : (j/4+1)*k][:len(xa)]
	c := f.outC
	r0, r1 := i*n+j, (i+1)*n+j
	c00, c01, c02, c03 := float32(c[r0]), float32(c[r0+1]), float32(c[r0+2]), float32(c[r0+3])
	c10, c11, c12, c13 := float32(c[r1]), float32(c[r1+1]), float32(c[r1+2]), float32(c[r1+3])
	never := f.never
	for t := range xa {
		u0, u1 := xa[t][0], xa[t][1]
		v := &xb[t]
		c00 += float32(u0 * v[0])
		c10 += float32(u1 * v[0])
		c01 += float32(u0 * v[1])
		c11 += float32(u1 * v[1])
		if t == never { // never true: splits the block, see above
			schedBarrier()
		}
		c02 += float32(u0 * v[2])
		c12 += float32(u1 * v[2])
		c03 += float32(u0 * v[3])
		c13 += float32(u1 * v[3])
	}
	res[r0], res[r0+1], res[r0+2], res[r0+3] = math.Float32bits(c00), math.Float32bits(c01), math.Float32bits(c02), math.Float32bits(c03)
	res[r1], res[r1+1], res[r1+2], res[r1+3] = math.Float32bits(c10), math.Float32bits(c11), math.Float32bits(c12), math.Float32bits(c13)
}

// runSeqRZ computes the RZ chains four columns at a time (independent
// chains, so their latencies overlap).
func (f *fastCall) runSeqRZ(res []uint32) {
	if useAVX512 {
		f.prepSeqRanges()
		if f.runSeqAVX(res, true) {
			return
		}
	}
	n := f.n
	for i := 0; i < f.mm; i++ {
		j := 0
		for ; j+4 <= n; j += 4 {
			if f.special(i, j) || f.special(i, j+1) || f.special(i, j+2) || f.special(i, j+3) {
				for c := j; c < j+4; c++ {
					res[i*n+c] = f.elemSeqRZ(i, c)
				}
				continue
			}
			f.seqRZ1x4(res, i, j)
		}
		for ; j < n; j++ {
			res[i*n+j] = f.elemSeqRZ(i, j)
		}
	}
}

// elemSeqRZ: acc = RZ(acc + a·b) per product, the product exact in float64.
func (f *fastCall) elemSeqRZ(i, j int) uint32 { return f.elemSeq(i, j, addRZ) }

// elemSeq computes element (i, j) of a sequential chain alone, each step
// add(acc, a·b) with the product exact in float64 (the reference where
// its row or column holds Inf or NaN).
func (f *fastCall) elemSeq(i, j int, add func(acc, p float64) float64) uint32 {
	if f.special(i, j) {
		return f.ref(i, j)
	}
	k := f.k
	x := f.sc.a64[i*k : (i+1)*k]
	y := f.sc.b64[j*k : (j+1)*k][:len(x)]
	acc := f.outC[i*f.n+j]
	for t, v := range x {
		acc = add(acc, float64(v*y[t]))
	}
	return toBits(acc)
}

// addRZ returns RZ_fp32(x + y) of the exact sum, for an FP32 value x
// (possibly ±Inf) and a finite float64 y, with IEEE signed zeros (the zero
// rules of kernel.add2 and blockFMA with RZ). FP32 values are float64
// values, so when the float64 sum s is not an FP32 value the exact sum lies
// strictly between the same two FP32 neighbours as s and RZ(x+y) = RZ(s);
// when s is an FP32 value, the exact sum is below it in magnitude exactly
// when the TwoSum error has the opposite sign.
func addRZ(x, y float64) float64 {
	s := x + y
	if !(math.Abs(s) < 0x1p127) || s == 0 { // overflow range, Inf, or an (exact) zero
		if s == 0 {
			return s // IEEE: −0 only for −0 + −0; x + (−x) = +0
		}
		return addSlow(x, y, fp.RZ)
	}
	bv := s - x
	e := (x - (s - bv)) + (y - bv) // TwoSum: s + e = x + y
	f := float32(s)
	r := float64(f)
	// Step one FP32 value toward zero (f ≠ 0 then) when RNE rounded away
	// from zero, or when s is an FP32 value above the exact sum in
	// magnitude. Branch-free: the conditions are data-dependent coin flips.
	away := b2u(math.Abs(r) > math.Abs(s))
	below := b2u(r == s) & b2u(e != 0) & uint32((math.Float64bits(e)^math.Float64bits(s))>>63)
	return float64(math.Float32frombits(math.Float32bits(f) - (away | below)))
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// roundRZ32 is outSpec.round for FP32 RZ (overflow to ±Inf only at 2^128).
func roundRZ32(x float64) float64 {
	if math.Abs(x) >= 0x1p128 {
		return math.Inf(int(math.Copysign(1, x)))
	}
	f := float32(x)
	if math.Abs(float64(f)) > math.Abs(x) {
		f = math.Nextafter32(f, 0)
	}
	return float64(f)
}

// schedBarrier is the never-called target of the branch that splits
// seqRNE2x4's loop body.
//
//go:noinline
func schedBarrier() {}

// seqTileFn is seqTile8x16 (a variable so that tests can count the calls).
var seqTileFn = seqTile8x16

// runSeqAVX runs a sequential path (rz: fp32-rz, else fp32-rne) with the
// AVX-512 8×16 tiles and reports whether it did (not without AVX-512 or
// for calls smaller than a tile). prepRanges must have run.
func (f *fastCall) runSeqAVX(res []uint32, rz bool) bool {
	if !useAVX512 || f.k == 0 || f.mm < 8 || f.n < 16 {
		return false
	}
	f.prepSeq8x16()
	plain, elem := f.plainTiles(), (*fastCall).elemSeqRNE
	if rz {
		elem = (*fastCall).elemSeqRZ
		if f.sc.rowHL != nil { // BF16: sums may reach 2^128
			plain = (*fastCall).plainSeqRZ
		}
	}
	tile := (*fastCall).seqAVXRNE
	if rz {
		tile = (*fastCall).seqAVXRZ
	}
	f.runTiles(8, 16, res, plain, tile, elem)
	return true
}

// prepSeq8x16 fills the panels of the AVX-512 tiles: a8 holds A by octets
// of rows, term-major (a8[(g·k + t)·8 + r] is A[8g+r, t]), b16 holds B by
// sixteens of columns, term-major (b16[(p·k + t)·16 + l] is B[t, 16p+l]),
// as float32 (exact: FP16 and BF16 values are FP32 values), from a32/b32
// (RNE) or a64/b64 (RZ). Edge rows and columns are not copied.
func (f *fastCall) prepSeq8x16() {
	sc, k := f.sc, f.k
	nq, no := f.mm/8, f.n/16
	sc.a8, sc.b16 = grow(sc.a8, nq*k*8), grow(sc.b16, no*k*16)
	if f.useF32 {
		panel(sc.a32, sc.a8, nq, 8, k, 0)
		panel(sc.b32, sc.b16, no, 16, k, 0)
	} else {
		panel(sc.a64, sc.a8, nq, 8, k, 0)
		panel(sc.b64, sc.b16, no, 16, k, 0)
	}
}

// panel lays out groups of w rows of length k of v (row-major) term-major
// within a group, converted and biased: out[(g·k + t)·w + r] =
// D(v[(w·g + r)·k + t]) + bias. The AVX-512 tiles read their operands
// this way (one vector of w lanes per term); the conversions used are
// exact (FP16/BF16 values to float32, exponents to int32). A zero bias is
// not added (−0 + 0 would lose the sign of a zero value).
func panel[S, D int32 | float32 | float64](v []S, out []D, groups, w, k int, bias D) {
	for g := 0; g < groups; g++ {
		o := out[g*k*w:][:k*w]
		for r := 0; r < w; r++ {
			x := v[(w*g+r)*k:][:k]
			if bias == 0 {
				for t, y := range x {
					o[t*w+r] = D(y)
				}
				continue
			}
			for t, y := range x {
				o[t*w+r] = D(y) + bias
			}
		}
	}
}

// plainSeqRZ reports whether element (i, j) can take the AVX-512 RZ tile:
// no Inf/NaN, and the exact running sums stay below 2^128 in magnitude,
// where the hardware's RZ (±MaxFloat32) and the model's (±Inf) differ.
// Under RZ |acc| never exceeds |c| + Σ|a·b|, and every product is below
// 2^(H_A + H_B + 2) (H: the row's or column's largest exponent), so the
// sum is below 2^(H_A + H_B + 2 + bits(k)); that is safe if at most 2^104
// (|c| ≤ MaxFloat32 = 2^128 − 2^104), or at most 2^127 with |c| < 2^127.
// FP16 products are below 2^32: always safe (rowHL nil).
func (f *fastCall) plainSeqRZ(i, j int) bool {
	if f.special(i, j) {
		return false
	}
	if f.sc.rowHL == nil {
		return true
	}
	h := int(f.sc.rowHL[2*i]+f.sc.colHL[2*j]) + 2 + bits.Len(uint(f.k))
	return h <= 104 || h <= 127 && math.Abs(f.outC[i*f.n+j]) < 0x1p127
}

// seqAVXRNE computes the 8×16 tile at (i, j) of fp32-rne with the AVX-512
// routine (no Inf/NaN inputs or c; i a multiple of 8, j of 16, k > 0).
func (f *fastCall) seqAVXRNE(res []uint32, i, j int) { f.seqAVX(res, i, j, false) }

// seqAVXRZ is seqAVXRNE for fp32-rz (the elements also pass plainSeqRZ).
func (f *fastCall) seqAVXRZ(res []uint32, i, j int) { f.seqAVX(res, i, j, true) }

func (f *fastCall) seqAVX(res []uint32, i, j int, rz bool) {
	k, n, sc := f.k, f.n, f.sc
	ga, gb := i/8*k*8, j/16*k*16
	// The routine reads rows i..i+7, columns j..j+15 of C and writes them
	// in res (stride n), and reads the whole panels: check the bounds here.
	_, _ = f.cbits[(i+7)*n+j+15], res[(i+7)*n+j+15]
	_, _ = sc.a8[ga+8*k-1], sc.b16[gb+16*k-1]
	seqTileFn(&sc.a8[ga], &sc.b16[gb], &f.cbits[i*n+j], &res[i*n+j], n, k, rz)
}

// seqRZ1x4 computes the 1×4 outputs at (i, j) of fp32-rz from the
// decoded a64 and b64 (no Inf/NaN inputs or c there; j a multiple of 4).
func (f *fastCall) seqRZ1x4(res []uint32, i, j int) {
	k, n := f.k, f.n
	x := f.sc.a64[i*k : (i+1)*k]
	b := f.sc.b64
	y0, y1 := b[j*k : (j+1)*k][:len(x)], b[(j+1)*k : (j+2)*k][:len(x)]
	y2, y3 := b[(j+2)*k : (j+3)*k][:len(x)], b[(j+3)*k : (j+4)*k][:len(x)]
	c := f.outC[i*n+j : i*n+j+4]
	c0, c1, c2, c3 := c[0], c[1], c[2], c[3]
	for t, v := range x {
		c0 = addRZ(c0, float64(v*y0[t]))
		c1 = addRZ(c1, float64(v*y1[t]))
		c2 = addRZ(c2, float64(v*y2[t]))
		c3 = addRZ(c3, float64(v*y3[t]))
	}
	res[i*n+j], res[i*n+j+1], res[i*n+j+2], res[i*n+j+3] = toBits(c0), toBits(c1), toBits(c2), toBits(c3)
}
