package cube

import (
	"math"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Sequential FP32 fast paths (see fast.go for why they are exact).

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

func (f *fastCall) runSeqRNE(res []uint32) {
	f.sc.rowHL, f.sc.colHL = f.sc.rowHL[:0], f.sc.colHL[:0]
	f.prepRanges()
	if f.info.frac != 7 {
		f.sc.rowHL = nil
	}
	// Row pairs of A and column quads of B interleaved (element t of the
	// group at [t][r]): one pointer per operand in the tile loop.
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
		acc += v * y[t]
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
		c00 += u0 * v[0]
		c10 += u1 * v[0]
		c01 += u0 * v[1]
		c11 += u1 * v[1]
		if t == never { // never true: splits the block, see above
			schedBarrier()
		}
		c02 += u0 * v[2]
		c12 += u1 * v[2]
		c03 += u0 * v[3]
		c13 += u1 * v[3]
	}
	res[r0], res[r0+1], res[r0+2], res[r0+3] = math.Float32bits(c00), math.Float32bits(c01), math.Float32bits(c02), math.Float32bits(c03)
	res[r1], res[r1+1], res[r1+2], res[r1+3] = math.Float32bits(c10), math.Float32bits(c11), math.Float32bits(c12), math.Float32bits(c13)
}

// runSeqRZ computes the RZ chains four columns at a time (independent
// chains, so their latencies overlap).
func (f *fastCall) runSeqRZ(res []uint32) {
	k, n := f.k, f.n
	for i := 0; i < f.mm; i++ {
		j := 0
		for ; j+4 <= n; j += 4 {
			if f.special(i, j) || f.special(i, j+1) || f.special(i, j+2) || f.special(i, j+3) {
				for c := j; c < j+4; c++ {
					res[i*n+c] = f.elemSeqRZ(i, c)
				}
				continue
			}
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
		for ; j < n; j++ {
			res[i*n+j] = f.elemSeqRZ(i, j)
		}
	}
}

// elemSeqRZ: acc = RZ(acc + a·b) per product, the product exact in float64.
func (f *fastCall) elemSeqRZ(i, j int) uint32 {
	if f.special(i, j) {
		return f.ref(i, j)
	}
	k := f.k
	x := f.sc.a64[i*k : (i+1)*k]
	y := f.sc.b64[j*k : (j+1)*k][:len(x)]
	acc := f.outC[i*f.n+j]
	for t, v := range x {
		acc = addRZ(acc, float64(v*y[t]))
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
