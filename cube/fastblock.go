package cube

import (
	"math"
	"math/bits"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Exact-block fast path (F = Exact block FMA; see fast.go for the proof).

// prepBlocks computes the exponent spread H − L of every (row, block) of A
// and (column, block) of B, and the exactness limit 51 − ⌈log2 L⌉.
func (f *fastCall) prepBlocks() {
	f.L = f.kern.L
	f.nb = (f.k + f.L - 1) / f.L
	f.lim = int32(51 - bits.Len(uint(f.L-1)))
	sc := f.sc
	sc.sa = grow(sc.sa, f.mm*f.nb)
	sc.sb = grow(sc.sb, f.n*f.nb)
	spread := func(p []uint16, out []int32) {
		for b := range out {
			hi, lo := int32(math.MinInt32), int32(math.MaxInt32)
			s := b * f.L
			for _, x := range p[s:min(s+f.L, len(p))] {
				if v := f.tab.hl[x]; v != 0 {
					hi = max(hi, int32(v>>16))
					lo = min(lo, int32(v&0xffff))
				}
			}
			if hi < lo {
				out[b] = noSpread
			} else {
				out[b] = hi - lo
			}
		}
	}
	for i := 0; i < f.mm; i++ {
		spread(sc.pa[i*f.k:(i+1)*f.k], sc.sa[i*f.nb:(i+1)*f.nb])
	}
	for j := 0; j < f.n; j++ {
		spread(sc.pb[j*f.k:(j+1)*f.k], sc.sb[j*f.nb:(j+1)*f.nb])
	}
}

// negZero is −0, the identity of IEEE addition: a block's c where none is
// added to it (late c), so that a block of −0 products sums to −0 as every
// other path's (c = +0 made it +0).
var negZero = math.Copysign(0, -1)

func (f *fastCall) runExact(res []uint32) {
	f.runTiles(2, 4, res, f.plainTiles(), (*fastCall).exact2x4, (*fastCall).elemExact)
}

// blockStep returns the rounded block result c + P for element (i, j) and
// block blk (k range [s, e)) given the float64 sum P of its products: the
// fast rounding if the exponent spreads prove P exact, the reference
// blockFMA otherwise. An infinite c is returned unchanged.
func (f *fastCall) blockStep(c, P float64, i, j, blk, s, e int) float64 {
	if math.IsInf(c, 0) {
		return c
	}
	if f.sc.sa[i*f.nb+blk]+f.sc.sb[j*f.nb+blk] <= f.lim {
		x := sumRO(c, P)
		if f.kern.os.mode == fp.RNE {
			return float64(float32(x))
		}
		if x == 0 {
			return x
		}
		return roundRZ32(x)
	}
	sc := f.sc
	f.da = grow(f.da, e-s)
	f.db = grow(f.db, e-s)
	k := f.k
	for t := s; t < e; t++ {
		f.da[t-s] = f.info.table[sc.pa[i*k+t]]
		f.db[t-s] = f.info.table[sc.pb[j*k+t]]
	}
	return f.kern.blockFMA(f.da, f.db, c)
}

func (f *fastCall) elemExact(i, j int) uint32 {
	if f.special(i, j) {
		return f.ref(i, j)
	}
	k, L := f.k, f.L
	x := f.sc.a64[i*k : (i+1)*k]
	y := f.sc.b64[j*k : (j+1)*k][:len(x)]
	acc := f.outC[i*f.n+j]
	for s, blk := 0, 0; s < k; s, blk = s+L, blk+1 {
		e := min(s+L, k)
		P := negZero
		for t := s; t < e; t++ {
			P += float64(x[t] * y[t])
		}
		acc = f.blockStep(acc, P, i, j, blk, s, e)
	}
	return toBits(acc)
}

// exact2x4 computes the 2×4 outputs at (i, j) (no Inf/NaN inputs or c).
// The accumulators live in f.outC; each block's eight product sums come
// from dot2x4.
func (f *fastCall) exact2x4(res []uint32, i, j int) {
	k, n, L := f.k, f.n, f.L
	a, b := f.sc.a64, f.sc.b64
	A0 := a[i*k : (i+1)*k]
	A1 := a[(i+1)*k : (i+2)*k]
	B0 := b[j*k : (j+1)*k]
	B1 := b[(j+1)*k : (j+2)*k]
	B2 := b[(j+2)*k : (j+3)*k]
	B3 := b[(j+3)*k : (j+4)*k]
	r0, r1 := i*n+j, (i+1)*n+j
	c0 := f.outC[r0 : r0+4]
	c1 := f.outC[r1 : r1+4]
	sa0, sa1 := f.sc.sa[i*f.nb:(i+1)*f.nb], f.sc.sa[(i+1)*f.nb:(i+2)*f.nb]
	sb0, sb1 := f.sc.sb[j*f.nb:(j+1)*f.nb], f.sc.sb[(j+1)*f.nb:(j+2)*f.nb]
	sb2, sb3 := f.sc.sb[(j+2)*f.nb:(j+3)*f.nb], f.sc.sb[(j+3)*f.nb:(j+4)*f.nb]
	rz := f.kern.os.mode == fp.RZ
	for s, blk := 0, 0; s < k; s, blk = s+L, blk+1 {
		e := min(s+L, k)
		p00, p01, p02, p03, p10, p11, p12, p13 := dot2x4(A0[s:e], A1[s:e], B0[s:e], B1[s:e], B2[s:e], B3[s:e])
		if max(sa0[blk], sa1[blk])+max(sb0[blk], sb1[blk], sb2[blk], sb3[blk]) <= f.lim {
			if rz {
				c0[0], c0[1], c0[2], c0[3] = addRZ(c0[0], p00), addRZ(c0[1], p01), addRZ(c0[2], p02), addRZ(c0[3], p03)
				c1[0], c1[1], c1[2], c1[3] = addRZ(c1[0], p10), addRZ(c1[1], p11), addRZ(c1[2], p12), addRZ(c1[3], p13)
			} else {
				c0[0], c0[1], c0[2], c0[3] = addRNE(c0[0], p00), addRNE(c0[1], p01), addRNE(c0[2], p02), addRNE(c0[3], p03)
				c1[0], c1[1], c1[2], c1[3] = addRNE(c1[0], p10), addRNE(c1[1], p11), addRNE(c1[2], p12), addRNE(c1[3], p13)
			}
			continue
		}
		c0[0] = f.blockStep(c0[0], p00, i, j, blk, s, e)
		c0[1] = f.blockStep(c0[1], p01, i, j+1, blk, s, e)
		c0[2] = f.blockStep(c0[2], p02, i, j+2, blk, s, e)
		c0[3] = f.blockStep(c0[3], p03, i, j+3, blk, s, e)
		c1[0] = f.blockStep(c1[0], p10, i+1, j, blk, s, e)
		c1[1] = f.blockStep(c1[1], p11, i+1, j+1, blk, s, e)
		c1[2] = f.blockStep(c1[2], p12, i+1, j+2, blk, s, e)
		c1[3] = f.blockStep(c1[3], p13, i+1, j+3, blk, s, e)
	}
	for t := 0; t < 4; t++ {
		res[r0+t], res[r1+t] = toBits(c0[t]), toBits(c1[t])
	}
}

// dot2x4 returns the float64 sums of x_r·y_c (r < 2, c < 4), each started
// at −0 so that an all-(−0) sum stays −0.
func dot2x4(x0, x1, y0, y1, y2, y3 []float64) (p00, p01, p02, p03, p10, p11, p12, p13 float64) {
	p00, p01, p02, p03 = negZero, negZero, negZero, negZero
	p10, p11, p12, p13 = negZero, negZero, negZero, negZero
	x1 = x1[:len(x0)]
	y0, y1, y2, y3 = y0[:len(x0)], y1[:len(x0)], y2[:len(x0)], y3[:len(x0)]
	for t, u0 := range x0 {
		u1 := x1[t]
		p00 += float64(u0 * y0[t])
		p10 += float64(u1 * y0[t])
		p01 += float64(u0 * y1[t])
		p11 += float64(u1 * y1[t])
		p02 += float64(u0 * y2[t])
		p12 += float64(u1 * y2[t])
		p03 += float64(u0 * y3[t])
		p13 += float64(u1 * y3[t])
	}
	return
}

// addRNE returns RNE_fp32(c + p) of the exact sum, for an FP32 value c
// (possibly ±Inf) and a finite float64 p: if the float64 sum is exact
// (TwoSum error 0) it is rounded directly, else through round-to-odd.
func addRNE(c, p float64) float64 {
	s := c + p
	bv := s - c
	if (c-(s-bv))+(p-bv) != 0 { // inexact, or c = ±Inf (NaN error term)
		return addSlow(c, p, fp.RNE)
	}
	return float64(float32(s))
}

// addSlow is the general c + p rounded to FP32 in mode RNE or RZ.
func addSlow(c, p float64, mode fp.Rounding) float64 {
	if math.IsInf(c, 0) {
		return c
	}
	x := sumRO(c, p)
	if mode == fp.RNE {
		return float64(float32(x))
	}
	return roundRZ32(x)
}
