package cube

import (
	"math"
	"math/bits"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Fast MMAD paths for FP32 and TF32 inputs (FP32 output), bit-identical to
// the reference path (runMMAD → kernel.dot) and falling back to it where
// the argument below does not hold. fast.go dispatches them (fastKind32).
//
// Inputs. An FP32 pattern's value is its float32 value; a TF32 input in an
// FP32 container is the float32 value of the pattern with its low 13 bits
// cleared (fmtInfo.decode: the same sign, exponent and top 10 fraction
// bits). Either way the input is an FP32 value (≤ 24 significant bits,
// |x| < 2^128, lowest bit ≥ 2^−149), held exactly as a float64 (load32). A
// product of two of them has ≤ 48 significant bits and lies in
// [2^−298, 2^256): it is exact in float64 (53 bits, normal range down to
// 2^−1022). Rows of A / columns of B holding Inf or NaN (exponent field
// all ones, after the TF32 mask) and Inf/NaN elements of C take the
// reference kernel.dot for the elements they touch, as on the FP16/BF16
// paths.
//
// Sequential, RNE (fp32-rne: the CUDA cores' FFMA chain; fastSeqRNE32).
// The model's step is kernel.add2(acc, a·b): the exact product, −0 for
// −0 + −0 and otherwise +0 for two zeros, +0 for a nonzero exact sum that
// cancels, else the exact sum rounded to odd at 53 bits (sumRO) and then to
// FP32 RNE (float32(x), gradual underflow, ±Inf past the overflow
// threshold); round-to-odd at 53 ≥ 24 + 2 bits makes that the one RNE
// rounding of the exact sum (subnormal results have even fewer bits). So
// the step is IEEE 754 binary32 fusedMultiplyAdd(a, b, acc) under RNE with
// subnormals, signed zeros included (the product's zero has the XOR sign;
// a nonzero exact sum that rounds to zero keeps its sign in both). After
// an overflow acc = ±Inf, and Inf + finite products stays Inf in both.
//   - With AVX-512 the 8×16 tiles of fastseq.go run unchanged
//     (VFMADD231PS {rn-sae} on float32 lanes: that very IEEE operation;
//     fastseq.go's argument already covers products that are not FP32
//     values). The operands are the exact FP32 input values.
//   - In Go (addRNE32): p = a·b in float64 (exact, written float64(x*y)
//     so that no FMA is fused in), s = acc + p rounded to float64 (RNE),
//     r = float32(s). Double rounding can only differ from the one
//     rounding when s is a rounding boundary of FP32: every FP32 value and
//     midpoint m is a float64, and RNE to float64 is monotonic, so x < m
//     implies s ≤ m and x > m implies s ≥ m (x the exact sum); if s equals
//     no midpoint, x and s lie on the same side of every midpoint (and of
//     the overflow threshold 2^128 − 2^103, itself a midpoint) and round
//     to the same FP32 value. For |s| ≥ 2^−126 the midpoints of FP32 at
//     s's binade are exactly the float64 values whose low 29 fraction bits
//     are 1000…0 (2^28); those, and |s| < 2^−126 (subnormal results,
//     zeros), take addRNE32Slow, which is kernel.add2. The slow case is
//     rare (one sum in 2^29 for random data, plus the tiny ones).
//
// Sequential, RZ (fp32-rz; fastSeqRZ32): fastseq.go's RZ paths as they
// are: addRZ takes an FP32 x and any finite float64 y (the exact FP32
// product here); the AVX-512 RZ tile needs the per-row/column largest
// exponents for its overflow screen (plainSeqRZ), which prepRanges32
// computes from the nominal exponents (an upper bound of ⌊log2|x|⌋).
//
// Block FMA with a finite F (a100, ada: TF32 L = 4, F = 24; h100, b200:
// TF32 L = 8, F = 25; any model with FP32 inputs and a finite F that
// truncFits): fasttrunc.go's integer path, fed with the FP32 values and
// the model's nominal exponents (max(field, 1) − 127, noExp for zeros).
// Its argument needs: the products exact in float64 (above: ≤ 48 bits;
// TF32 products ≤ 22); the scale 2^(F − e_max) and 2^(e_max − F) normal
// float64 powers (e_max ∈ [−252, 254] from products, [−126, 127] from c,
// F ≤ 50: exponents within ±310); each scaled term exact — its magnitude
// is between 2^(−298 − 254) and 2^(F+2), inside float64's normal range —
// and below 2^(F+2), so that its conversion to int64 truncates toward zero
// exactly and the L + 1 terms sum exactly below 2^53 (truncFits); then
// S·2^(e_max − F) is exact and rounded once (RZ overflow: redone by the
// reference path, fasttrunc.go). These are the BF16 inputs' conditions
// (BF16 has FP32's exponent range); nothing in the path depends on the
// significand width beyond the exactness of the product. The AVX-512 4×8
// tile computes the same lane by lane (exponent lanes +127: the FP32
// field).
//
// Not covered (the reference path): exact block FMA with FP32/TF32 inputs
// (ascend-910b3: FP32 significands make the exact-sum spread test fail for
// almost every block), flush-to-zero, FP16 output, windowed and late-c
// models; the AMD presets have no FP32 inputs.

// fastKind32 is fastKindFor for FP32 and TF32 inputs.
func fastKind32(k *kernel) fastKind {
	o := k.os
	if o.p != 24 || o.emin != -126 || o.emax != 127 || o.ftz || k.ftz || k.fp16in || k.window != 0 || k.lateC || k.info == nil || k.info.table != nil {
		return fastNone
	}
	switch {
	case k.kind == Sequential && o.mode == fp.RNE:
		return fastSeqRNE32
	case k.kind == Sequential && o.mode == fp.RZ:
		return fastSeqRZ32
	case k.kind == BlockFMA && k.F != Exact && (o.mode == fp.RNE || o.mode == fp.RZ) && truncFits(k.F, k.L):
		return fastTruncBlock
	}
	return fastNone
}

// load32 is load for FP32/TF32 patterns: A row-major and B transposed as
// patterns (pa32, pb32: the reference fallback) and exact values (a64,
// b64), the rows/columns with Inf or NaN marked, and for the truncated
// block path the nominal exponents (ea, eb).
func (f *fastCall) load32(a []uint32, la Layout, b []uint32, lb Layout) {
	mm, k, n, sc := f.mm, f.k, f.n, f.sc
	sc.pa32 = grow(sc.pa32, mm*k)
	sc.pb32 = grow(sc.pb32, n*k)
	gatherT(a, la, mm, k, sc.pa32, false)
	gatherT(b, lb, k, n, sc.pb32, true)
	sc.rowSp = grow(sc.rowSp, mm)
	sc.colSp = grow(sc.colSp, n)
	sc.a64 = grow(sc.a64, mm*k)
	sc.b64 = grow(sc.b64, n*k)
	mask := ^uint32(0)
	if f.info.tf32 {
		mask = ^uint32(1<<13 - 1)
	}
	var ea, eb []int32
	if f.fastKnd == fastTruncBlock {
		sc.ea = grow(sc.ea, mm*k)
		sc.eb = grow(sc.eb, n*k)
		ea, eb = sc.ea, sc.eb
	}
	conv32(sc.pa32, sc.rowSp, sc.a64, ea, mm, k, mask)
	conv32(sc.pb32, sc.colSp, sc.b64, eb, n, k, mask)
}

// conv32 converts rows of k FP32 patterns p (and-ed with mask) to their
// values v, sets sp[r] when row r holds Inf or NaN (whose values are set
// to 0), and, if e is not nil, sets e to the nominal exponents
// (max(field, 1) − 127; noExp for zeros and specials).
func conv32(p []uint32, sp []bool, v []float64, e []int32, rows, k int, mask uint32) {
	for r := 0; r < rows; r++ {
		row, o := p[r*k:(r+1)*k], v[r*k:(r+1)*k]
		row = row[:len(o)]
		var s uint32
		for t, x := range row {
			x &= mask
			o[t] = float64(math.Float32frombits(x))
			s |= x&0x7f800000 + 0x00800000 // carries into bit 31 for an all-ones field
		}
		sp[r] = s&0x80000000 != 0
		if sp[r] {
			for t, x := range row { // rare: zero the specials' values
				if x&0x7f800000 == 0x7f800000 {
					o[t] = 0
				}
			}
		}
		if e == nil {
			continue
		}
		er := e[r*k : (r+1)*k][:len(o)]
		for t, x := range row {
			x &= mask
			ex := max(int32(x>>23&0xff), 1) - 127
			if x<<1 == 0 || x&0x7f800000 == 0x7f800000 {
				ex = noExp
			}
			er[t] = ex
		}
	}
}

// addRNE32 returns RNE_fp32(x + y), the model's sequential RNE step, for
// an FP32 value x (possibly ±Inf) and an exact finite product y (see the
// header comment: one float64 rounding, then float32 unless the float64
// sum is an FP32 midpoint or below 2^−126 in magnitude).
func addRNE32(x, y float64) float64 {
	s := x + y
	b := math.Float64bits(s)
	if b&(1<<29-1) == 1<<28 || b>>52&0x7ff < 1023-126 {
		return addRNE32Slow(x, y)
	}
	return float64(float32(s))
}

// addRNE32Slow is kernel.add2 for FP32 RNE output: the zero rules, the
// sum rounded to odd at 53 bits, then rounded to FP32.
func addRNE32Slow(x, y float64) float64 {
	if math.IsInf(x, 0) {
		return x
	}
	if x == 0 && y == 0 {
		if math.Signbit(x) && math.Signbit(y) {
			return x
		}
		return 0
	}
	s := sumRO(x, y)
	if s == 0 {
		return 0
	}
	return float64(float32(s))
}

// runSeqRNE32 runs fp32-rne with FP32/TF32 inputs: the AVX-512 8×16 tiles
// of fastseq.go where available, else 2×2 tiles in Go; the elements of
// rows/columns with Inf or NaN and the edges take elemSeqRNE32.
func (f *fastCall) runSeqRNE32(res []uint32) {
	if useAVX512 && f.k > 0 && f.mm >= 8 && f.n >= 16 {
		f.prepSeq8x16() // float32 panels from a64, b64 (exact)
		f.runTiles(8, 16, res, f.plainTiles(), (*fastCall).seqAVXRNE, (*fastCall).elemSeqRNE32)
		return
	}
	f.runTiles(2, 2, res, f.plainTiles(), (*fastCall).seqRNE32x2x2, (*fastCall).elemSeqRNE32)
}

// elemSeqRNE32 computes element (i, j) of fp32-rne alone.
func (f *fastCall) elemSeqRNE32(i, j int) uint32 { return f.elemSeq(i, j, addRNE32) }

// seqRNE32x2x2 computes the 2×2 outputs at (i, j) of fp32-rne (no Inf/NaN
// inputs or c; i and j even): four independent chains in increasing k.
func (f *fastCall) seqRNE32x2x2(res []uint32, i, j int) {
	k, n := f.k, f.n
	a, b := f.sc.a64, f.sc.b64
	x0 := a[i*k : (i+1)*k]
	x1 := a[(i+1)*k : (i+2)*k][:len(x0)]
	y0 := b[j*k : (j+1)*k][:len(x0)]
	y1 := b[(j+1)*k : (j+2)*k][:len(x0)]
	r0, r1 := i*n+j, (i+1)*n+j
	c00, c01, c10, c11 := f.outC[r0], f.outC[r0+1], f.outC[r1], f.outC[r1+1]
	for t, u0 := range x0 {
		u1, v0, v1 := x1[t], y0[t], y1[t]
		c00 = addRNE32(c00, float64(u0*v0))
		c01 = addRNE32(c01, float64(u0*v1))
		c10 = addRNE32(c10, float64(u1*v0))
		c11 = addRNE32(c11, float64(u1*v1))
	}
	res[r0], res[r0+1], res[r1], res[r1+1] = toBits(c00), toBits(c01), toBits(c10), toBits(c11)
}

// prepRanges32 sets rowHL and colHL (the pairs hi, lo of prepRanges) from
// the FP32 values: hi the largest nominal exponent of a nonzero element
// (≥ ⌊log2|x|⌋, what plainSeqRZ needs), lo the smallest exponent of a
// lowest set bit.
func (f *fastCall) prepRanges32() {
	sc := f.sc
	sc.rowHL = grow(sc.rowHL, 2*f.mm)
	sc.colHL = grow(sc.colHL, 2*f.n)
	rng := func(v []float64, out []int32) {
		hi, lo := int32(-hlBias), int32(hlBias)
		for _, x := range v {
			if x == 0 {
				continue
			}
			b := math.Float64bits(x)
			e := int32(b>>52&0x7ff) - 1023
			hi = max(hi, e)
			lo = min(lo, e-52+int32(bits.TrailingZeros64(b|1<<52)))
		}
		out[0], out[1] = hi, lo
	}
	k := f.k
	for i := 0; i < f.mm; i++ {
		rng(sc.a64[i*k:(i+1)*k], sc.rowHL[2*i:2*i+2])
	}
	for j := 0; j < f.n; j++ {
		rng(sc.b64[j*k:(j+1)*k], sc.colHL[2*j:2*j+2])
	}
}

// runSeqRZ32 runs fp32-rz with FP32/TF32 inputs: the AVX-512 tiles of
// fastseq.go (screened by plainSeqRZ with prepRanges32's exponents) where
// available, else four-column chains of addRZ in Go.
func (f *fastCall) runSeqRZ32(res []uint32) {
	if useAVX512 {
		f.prepRanges32()
		if f.runSeqAVX(res, true) {
			return
		}
	}
	f.runTiles(1, 4, res, f.plainTiles(), (*fastCall).seqRZ1x4, (*fastCall).elemSeqRZ)
}
