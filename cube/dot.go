package cube

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/davinci-sim/davinci-sim/fp"
)

// kernel is a model resolved for one input and output format: everything the
// per-element loop needs, without map look-ups.
type kernel struct {
	kind   Kind
	L, F   int
	window int // > 0: products dealt to blocks per window (FormatParams.Window)
	run    int
	lateC  bool
	seq32  bool    // Sequential, plain FP32 RNE output, products exact in FP32: native float32 adds
	cos    outSpec // rounding of the late c addition
	frac   int     // input fraction bits
	os     outSpec
	fp16in bool // FP16 output: c is rounded to FP16 RNE first
	c16    outSpec
	ftz    bool
	pw32   bool // Pairwise with FP16/FP8 inputs: the tree in float32 arithmetic (pairwise)
	// absorb: an infinite c or block result stays the result whatever
	// finite products follow (BlockFMA without lateC, Sequential: c is a
	// term of one exact sum, or of one rounded addition, with finite
	// products). Not so for Pairwise, TruncatedLateC and lateC, which round
	// a sum of products before adding c: a block of finite inputs can give
	// the other infinity (products or block sums overflow), and c + s is
	// then NaN.
	absorb bool
	info   *fmtInfo
}

// kernel resolves the model for the formats.
func (m Model) kernel(in, out fp.Format) (*kernel, error) {
	p, err := m.ParamsFor(in, out)
	if err != nil {
		return nil, err
	}
	info, err := formatInfo(in)
	if err != nil {
		return nil, err
	}
	k := &kernel{kind: m.Kind, L: p.L, F: p.F, window: p.Window, run: p.Run, frac: info.frac, ftz: m.FlushSubnormals, info: info}
	if m.Kind > TruncatedLateC {
		return nil, fmt.Errorf("cube: model %q: unknown kind %d", m.Name, m.Kind)
	}
	if m.Kind == Sequential {
		k.L = 1 << 30 // one call runs the whole chain (rounding after every product)
	}
	if p.LateC {
		if m.Kind != BlockFMA {
			return nil, fmt.Errorf("cube: model %q: LateC applies to the block-fma kind only", m.Name)
		}
		k.lateC = true
	}
	k.absorb = (m.Kind == BlockFMA && !k.lateC) || m.Kind == Sequential
	if (m.Kind == TruncatedLateC) && p.F == Exact {
		return nil, fmt.Errorf("cube: model %q: the late-c kind needs a finite F", m.Name)
	}
	switch out {
	case fp.FP32:
		k.os = outSpec{p: 24, emin: -126, emax: 127, mode: m.RoundFP32, ftz: m.FlushSubnormals}
		if p.OutMant > 0 {
			k.os.p = p.OutMant + 1
		}
	case fp.FP16:
		k.os = outSpec{p: 11, emin: -14, emax: 15, mode: m.RoundFP16, ftz: m.FlushSubnormals}
		k.fp16in = true
		k.c16 = outSpec{p: 11, emin: -14, emax: 15, mode: fp.RNE}
	default:
		return nil, fmt.Errorf("cube: output format %v not supported (want fp32 or fp16)", out)
	}
	k.cos = k.os
	k.cos.mode = p.CRound
	// FP16/FP8 products (≤ 22 significant bits, exponent ≥ −48) are exact
	// FP32 values, so acc + p in float32 arithmetic is the one RNE rounding.
	k.seq32 = m.Kind == Sequential && out == fp.FP32 && k.os.mode == fp.RNE && !k.os.ftz && k.os.p == 24 &&
		(in == fp.FP16 || in == fp.E4M3 || in == fp.E5M2)
	k.pw32 = m.Kind == Pairwise && (in == fp.FP16 || in == fp.E4M3 || in == fp.E5M2)
	if int(k.os.mode) >= len(fp.Roundings()) || int(k.cos.mode) >= len(fp.Roundings()) {
		return nil, fmt.Errorf("cube: model %q: invalid rounding mode %d", m.Name, k.os.mode)
	}
	return k, nil
}

// Dot computes one d = a·b + c with the model: a and b hold input bit
// patterns of format in (TF32 as FP32 patterns), c is an FP32 bit pattern
// (for FP16 output, c is first rounded to FP16 RNE as on the GPUs), and the
// result is returned as the FP32 bit pattern of the output (an FP16 result
// widened to FP32). K = len(a) may be any length: products are taken in
// blocks of L in increasing k, the last block possibly shorter. A NaN result
// is NaNBits.
func (m Model) Dot(in fp.Format, a, b []uint32, c uint32, out fp.Format) (uint32, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("cube: Dot: len(a) = %d differs from len(b) = %d", len(a), len(b))
	}
	k, err := m.kernel(in, out)
	if err != nil {
		return 0, err
	}
	var bufA, bufB [64]dec
	pa, pb := bufA[:0], bufB[:0]
	if len(a) > len(bufA) {
		pa, pb = make([]dec, 0, len(a)), make([]dec, 0, len(a))
	}
	for i := range a {
		pa = append(pa, k.info.decode(a[i]))
		pb = append(pb, k.info.decode(b[i]))
	}
	return k.dot(pa, pb, c, true), nil
}

// dot computes one output element from decoded inputs; c is an FP32 pattern.
// checkInputs = false asserts that no input is Inf or NaN (MMAD knows this
// per row and column) and skips the scan.
func (k *kernel) dot(pa, pb []dec, c uint32, checkInputs bool) uint32 {
	cd := decodeF32(c)
	cv := float64(math.Float32frombits(c))
	if cd.cls == clsFinite && k.fp16in {
		cv = k.c16.round(cv)
		cd = decodeF32(math.Float32bits(float32(cv)))
	}
	special := false // an Inf or NaN input
	for i := 0; checkInputs && i < len(pa); i++ {
		if pa[i].cls|pb[i].cls != 0 {
			special = true
			break
		}
	}
	if cd.cls == clsNaN || (k.absorb && (special || cd.cls == clsInf)) {
		return specialResult(pa, pb, cd)
	}
	// From here on, for the kinds that do not absorb, c may be ±Inf and
	// (special) inputs Inf or NaN: the blocks are evaluated in order, and
	// an infinite accumulator meets each block's result.
	if k.ftz && cd.sig != 0 && abs32(cd.sig) < 1<<23 {
		cv = math.Copysign(0, cv)
	}
	if k.window > 0 {
		return toBits(k.windowed(pa, pb, cv, special))
	}
	acc := cv
	n := len(pa)
	for s := 0; s < n; s += k.L {
		e := s + k.L
		if e > n {
			e = n
		}
		switch k.kind {
		case BlockFMA:
			if k.lateC {
				acc = roundAdd(&k.cos, acc, k.blockAny(pa[s:e], pb[s:e], negZero, special))
			} else {
				acc = k.blockFMA(pa[s:e], pb[s:e], acc)
			}
		case Sequential:
			acc = k.sequential(pa[s:e], pb[s:e], acc)
		case Pairwise:
			acc = k.pairwise(pa[s:e], pb[s:e], acc, special)
		case TruncatedLateC:
			acc = k.truncLateC(pa[s:e], pb[s:e], acc)
		}
		if math.IsNaN(acc) || (k.absorb && math.IsInf(acc, 0)) {
			break // NaN stays NaN; absorbing kinds: finite products cannot change an infinite accumulator
		}
	}
	return toBits(acc)
}

// blockAny is blockFMA for any c and, when special, inputs that may be Inf
// or NaN: a block with an infinite c or an Inf/NaN input gives
// specialResult's ±Inf or NaN (c and the products are one exact sum, so
// finite products cannot change an infinite term).
func (k *kernel) blockAny(pa, pb []dec, c float64, special bool) float64 {
	if math.IsNaN(c) {
		return c
	}
	if math.IsInf(c, 0) || (special && hasSpecial(pa, pb)) {
		switch specialResult(pa, pb, decodeF32(math.Float32bits(float32(c)))) {
		case NaNBits:
			return math.NaN()
		case 0xff800000:
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	return k.blockFMA(pa, pb, c)
}

// hasSpecial reports whether an input is Inf or NaN.
func hasSpecial(pa, pb []dec) bool {
	for i := range pa {
		if pa[i].cls|pb[i].cls != 0 {
			return true
		}
	}
	return false
}

// windowed is the BlockFMA accumulation with FormatParams.Window > 0: per
// window of k.window products, the runs of k.run products are dealt
// round-robin to k.window/k.L blocks, which are chained in order (each
// rounded block result is the next block's c). Without lateC the chain
// starts from the incoming accumulator; with lateC it starts from zero and
// the window's result is added to the accumulator with one k.cos rounding.
// Without lateC, inputs and acc are finite (dot handles specials first);
// with lateC, acc may be ±Inf and, when special, inputs Inf or NaN.
func (k *kernel) windowed(pa, pb []dec, acc float64, special bool) float64 {
	nb := k.window / k.L
	var bufA, bufB [64]dec
	qa, qb := bufA[:0], bufB[:0]
	if k.L > len(bufA) {
		qa, qb = make([]dec, 0, k.L), make([]dec, 0, k.L)
	}
	n := len(pa)
	for w := 0; w < n; w += k.window {
		e := min(w+k.window, n)
		t := acc
		if k.lateC {
			t = negZero
		}
		for j := 0; j < nb; j++ {
			qa, qb = qa[:0], qb[:0]
			for r := w + j*k.run; r < e; r += nb * k.run {
				re := min(r+k.run, e)
				qa = append(qa, pa[r:re]...)
				qb = append(qb, pb[r:re]...)
			}
			if len(qa) == 0 {
				continue
			}
			if special {
				t = k.blockAny(qa, qb, t, true)
			} else {
				t = k.blockFMA(qa, qb, t)
			}
			if math.IsNaN(t) || (!special && math.IsInf(t, 0)) {
				// The chained blocks of a window are block FMAs: finite
				// products cannot change an infinite t (Inf/NaN inputs
				// can: blockAny).
				break
			}
		}
		if k.lateC {
			acc = roundAdd(&k.cos, acc, t)
		} else {
			acc = t
		}
		if math.IsNaN(acc) || (!k.lateC && math.IsInf(acc, 0)) {
			// Without lateC the chain absorbs an infinite acc; with lateC
			// a later window's finite inputs can give the other infinity.
			break
		}
	}
	return acc
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// specialResult handles NaN and infinite inputs: NaN if any input is NaN, a
// product is ∞·0, or infinities of both signs meet; otherwise ±Inf. It
// looks at no finite product, so it is the result only where finite
// products cannot give an infinity of their own (kernel.absorb, one block
// FMA: blockAny) or c is NaN. Inputs are not flushed (FlushSubnormals is
// Pairwise's, which evaluates Inf·subnormal in kernel.pairwise).
func specialResult(pa, pb []dec, cd dec) uint32 {
	var pos, neg bool
	if cd.cls == clsNaN {
		return NaNBits
	}
	if cd.cls == clsInf {
		pos, neg = !cd.neg, cd.neg
	}
	for i := range pa {
		x, y := pa[i], pb[i]
		if x.cls == clsNaN || y.cls == clsNaN {
			return NaNBits
		}
		if x.cls != clsInf && y.cls != clsInf {
			continue
		}
		if (x.cls == clsFinite && x.sig == 0) || (y.cls == clsFinite && y.sig == 0) {
			return NaNBits
		}
		if x.neg != y.neg {
			neg = true
		} else {
			pos = true
		}
	}
	switch {
	case pos && neg:
		return NaNBits
	case neg:
		return 0xff800000
	}
	return 0x7f800000
}

// zeroSign returns the sign of an all-zero sum: negative only when c and
// every product are negative zeros (IEEE addition of zeros, RNE/RZ).
func zeroSign(pa, pb []dec, cneg bool) float64 {
	neg := cneg
	for i := range pa {
		if pa[i].neg == pb[i].neg {
			neg = false
			break
		}
	}
	if neg {
		return math.Copysign(0, -1)
	}
	return 0
}

// blockFMA computes one block: the products of pa·pb and c (a finite value
// representable in FP32), aligned to e_max, truncated to F fractional bits
// (or exact), summed exactly and rounded once.
func (k *kernel) blockFMA(pa, pb []dec, c float64) float64 {
	cd := decodeF32(math.Float32bits(float32(c)))
	const none = math.MinInt32
	emax := none
	if cd.sig != 0 {
		emax = int(cd.exp)
	}
	for i := range pa {
		if pa[i].sig != 0 && pb[i].sig != 0 {
			if e := int(pa[i].exp) + int(pb[i].exp); e > emax {
				emax = e
			}
		}
	}
	if emax == none {
		return zeroSign(pa, pb, cd.neg)
	}
	f2 := 2 * k.frac
	var S int64
	var u int
	if k.F == Exact {
		// Exact: the unit is the smallest lsb among the nonzero terms.
		u = math.MaxInt32
		if cd.sig != 0 {
			u = int(cd.exp) - 23
		}
		for i := range pa {
			if pa[i].sig != 0 && pb[i].sig != 0 {
				if q := int(pa[i].exp) + int(pb[i].exp) - f2; q < u {
					u = q
				}
			}
		}
		// Each term is < 2^(emax+2); the sum of n+1 terms < 2^(emax+2+len(n+1)).
		if emax+2+bits.Len(uint(len(pa)+1))-u > 62 {
			return k.os.round(k.blockWide(pa, pb, cd))
		}
		if cd.sig != 0 {
			S = int64(cd.sig) << uint(int(cd.exp)-23-u)
		}
		for i := range pa {
			if pa[i].sig != 0 && pb[i].sig != 0 {
				M := int64(pa[i].sig) * int64(pb[i].sig)
				S += M << uint(int(pa[i].exp)+int(pb[i].exp)-f2-u)
			}
		}
	} else {
		u = emax - k.F
		if cd.sig != 0 {
			S = alignTrunc(int64(cd.sig), int(cd.exp)-23-u)
		}
		// A product's shift is d = (e − e_max) + (F − 2·frac). Shift left by
		// max(F − 2·frac, 0) first so that the data-dependent part is a
		// right shift (≥ 0) of the magnitude, done without branches; zero
		// products contribute 0.
		gl, gr := k.F-f2, 0
		if gl < 0 {
			gl, gr = 0, -gl
		}
		for i := range pa {
			M := int64(pa[i].sig) * int64(pb[i].sig) << uint(gl)
			sh := uint(min(emax-int(pa[i].exp)-int(pb[i].exp)+gr, 63))
			sgn := M >> 63
			mag := (M ^ sgn) - sgn
			S += ((mag >> sh) ^ sgn) - sgn
		}
	}
	if S == 0 {
		if k.os.mode == fp.RD {
			return math.Copysign(0, -1)
		}
		return 0
	}
	return k.os.round(intToF64(S, u))
}

// alignTrunc returns M·2^d truncated toward zero (magnitude truncation).
func alignTrunc(M int64, d int) int64 {
	if d >= 0 {
		return M << uint(d)
	}
	if d <= -63 {
		return 0
	}
	if M < 0 {
		return -((-M) >> uint(-d))
	}
	return M >> uint(-d)
}

// blockWide is the exact block sum through the wide accumulator.
func (k *kernel) blockWide(pa, pb []dec, cd dec) float64 {
	var w wide
	f2 := 2 * k.frac
	if cd.sig != 0 {
		w.add(uint64(abs32(cd.sig)), int(cd.exp)-23, cd.sig < 0)
	}
	for i := range pa {
		if pa[i].sig != 0 && pb[i].sig != 0 {
			M := int64(pa[i].sig) * int64(pb[i].sig)
			neg := M < 0
			if neg {
				M = -M
			}
			w.add(uint64(M), int(pa[i].exp)+int(pb[i].exp)-f2, neg)
		}
	}
	return w.float()
}

// product returns the exact product of two finite decoded inputs as a
// float64 (exact: at most 48 significant bits, exponent ≥ −298).
func (k *kernel) product(x, y dec) float64 {
	if x.sig == 0 || y.sig == 0 {
		if x.neg != y.neg {
			return math.Copysign(0, -1)
		}
		return 0
	}
	p, e := float64(int64(x.sig)*int64(y.sig)), int(x.exp)+int(y.exp)-2*k.frac
	if e >= -1022 && e <= 960 {
		// An exact integer below 2^62 times a normal power of two: exact,
		// as Ldexp, without its decomposition.
		return p * math.Float64frombits(uint64(e+1023)<<52)
	}
	return math.Ldexp(p, e)
}

// add2 returns round(x + y) for the kernel's output spec with IEEE signed
// zero rules (RNE/RZ: x + (−x) = +0).
func (k *kernel) add2(x, y float64) float64 {
	if x == 0 && y == 0 {
		if math.Signbit(x) && math.Signbit(y) {
			return x
		}
		return 0
	}
	s := sumRO(x, y)
	if s == 0 {
		if k.os.mode == fp.RD {
			return math.Copysign(0, -1)
		}
		return 0
	}
	return k.os.round(s)
}

// sequential: one FMA per product, rounding after each.
func (k *kernel) sequential(pa, pb []dec, acc float64) float64 {
	if k.seq32 {
		a := float32(acc)
		f2 := 2 * k.frac
		for i := range pa {
			p := float32(float64(int64(pa[i].sig)*int64(pb[i].sig)) * pow2(int(pa[i].exp)+int(pb[i].exp)-f2))
			if p == 0 { // keep IEEE signed-zero rules for zero products
				a = float32(k.add2(float64(a), k.product(pa[i], pb[i])))
				continue
			}
			a = a + p
		}
		return float64(a)
	}
	for i := range pa {
		acc = k.add2(acc, k.product(pa[i], pb[i]))
	}
	return acc
}

// pairwise: CDNA2. Products rounded to FP32 (flushed), a pairwise tree of
// rounded additions over the block (padded with zeros to a power of two),
// then c + s. c may be ±Inf and, when special, inputs Inf or NaN: the
// products and sums are then IEEE's (Inf·0 and Inf + −Inf give NaN, a
// flushed subnormal input is a zero).
func (k *kernel) pairwise(pa, pb []dec, c float64, special bool) float64 {
	if k.pw32 && len(pa) <= 64 && !special {
		return k.pairwise32(pa, pb, c)
	}
	var buf [64]float64
	n := 1
	for n < len(pa) {
		n <<= 1
	}
	t := buf[:0]
	if n > len(buf) {
		t = make([]float64, 0, n)
	}
	lim := int32(1) << k.frac
	p32 := outSpec{p: 24, emin: -126, emax: 127, mode: fp.RNE, ftz: k.ftz}
	for i := range pa {
		x, y := pa[i], pb[i]
		if k.ftz { // subnormal inputs flushed
			if abs32(x.sig) < lim {
				x.sig = 0
			}
			if abs32(y.sig) < lim {
				y.sig = 0
			}
		}
		if special && x.cls|y.cls != 0 {
			t = append(t, specialProduct(x, y))
			continue
		}
		t = append(t, p32.round(k.product(x, y)))
	}
	for len(t) < n {
		t = append(t, 0)
	}
	for len(t) > 1 {
		h := len(t) / 2
		for i := 0; i < h; i++ {
			t[i] = roundAdd(&p32, t[2*i], t[2*i+1])
		}
		t = t[:h]
	}
	return roundAdd(&k.os, c, t[0])
}

// pairwise32 is pairwise for FP16 and FP8 inputs (kernel.pw32), at most 64
// products.
func (k *kernel) pairwise32(pa, pb []dec, c float64) float64 {
	lim := int32(1) << k.frac
	n := 1
	for n < len(pa) {
		n <<= 1
	}
	// FP16 and FP8 products are exact FP32 values, multiples of the
	// inputs' smallest subnormal squared (g: 2^−48 for FP16); so is
	// every sum of the tree rounded to FP32 (below 2^24·g a sum is
	// exact, above it the FP32 ulp is a multiple of g), so no sum is
	// subnormal and nothing is flushed: a float32 addition is the
	// RNE rounding (and signed zeros follow IEEE as roundAdd's do).
	var t [64]float32
	for i := range pa {
		x, y := pa[i], pb[i]
		if k.ftz { // subnormal inputs flushed
			if abs32(x.sig) < lim {
				x.sig = 0
			}
			if abs32(y.sig) < lim {
				y.sig = 0
			}
		}
		t[i] = float32(k.product(x, y)) // exact
	}
	for h := n / 2; h >= 1; h /= 2 {
		for i := 0; i < h; i++ {
			t[i] = t[2*i] + t[2*i+1]
		}
	}
	return roundAdd(&k.os, c, float64(t[0]))
}

// specialProduct is the IEEE product of x and y when one is Inf or NaN
// (a zero has sig 0: flushed subnormals included): NaN for a NaN or Inf·0,
// else ±Inf.
func specialProduct(x, y dec) float64 {
	if x.cls == clsNaN || y.cls == clsNaN || (x.cls == clsFinite && x.sig == 0) || (y.cls == clsFinite && y.sig == 0) {
		return math.NaN()
	}
	if x.neg != y.neg {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// roundAdd returns o.round(x + y) for finite or infinite x, y (NaN if
// either is NaN).
func roundAdd(o *outSpec, x, y float64) float64 {
	if math.IsInf(x, 0) || math.IsInf(y, 0) {
		s := x + y
		if math.IsNaN(s) {
			return math.NaN()
		}
		return s
	}
	if x == 0 && y == 0 {
		if math.Signbit(x) && math.Signbit(y) {
			return x
		}
		return 0
	}
	s := sumRO(x, y)
	if s == 0 {
		return o.cancelled()
	}
	return o.round(s)
}

// truncLateC: CDNA3. Products aligned to their largest exponent e_dot and
// truncated to F fractional bits, summed exactly; c rounded toward −∞ to F
// fractional bits below 2^max(e_dot, e_c); one final rounding. A product
// of magnitude ≥ 2^128 is ±Inf; c may be ±Inf and inputs Inf or NaN (IEEE
// products and sum: Inf·0 and Inf + −Inf give NaN).
func (k *kernel) truncLateC(pa, pb []dec, c float64) float64 {
	const none = math.MinInt32
	edot := none
	f2 := 2 * k.frac
	pinf, ninf := math.IsInf(c, 1), math.IsInf(c, -1)
	nan := false
	for i := range pa {
		if pa[i].sig != 0 && pb[i].sig != 0 {
			e := int(pa[i].exp) + int(pb[i].exp)
			if e > edot {
				edot = e
			}
			M := int64(pa[i].sig) * int64(pb[i].sig)
			mag := M
			if mag < 0 {
				mag = -mag
			}
			if bits.Len64(uint64(mag))+e-f2 > 128 { // |product| ≥ 2^128
				if M < 0 {
					ninf = true
				} else {
					pinf = true
				}
			}
		} else if pa[i].cls|pb[i].cls != 0 { // an Inf or NaN input (sig 0)
			v := specialProduct(pa[i], pb[i])
			nan = nan || math.IsNaN(v)
			pinf = pinf || v > 0
			ninf = ninf || v < 0
		}
	}
	switch {
	case nan || (pinf && ninf):
		return math.NaN()
	case pinf:
		return math.Inf(1)
	case ninf:
		return math.Inf(-1)
	}
	cd := decodeF32(math.Float32bits(float32(c)))
	if edot == none {
		if cd.sig == 0 {
			return zeroSign(pa, pb, cd.neg)
		}
		return k.os.round(c)
	}
	ud := edot - k.F
	var Sd int64
	for i := range pa {
		if pa[i].sig != 0 && pb[i].sig != 0 {
			M := int64(pa[i].sig) * int64(pb[i].sig)
			Sd += alignTrunc(M, int(pa[i].exp)+int(pb[i].exp)-f2-ud)
		}
	}
	x := intToF64(Sd, ud)
	if cd.sig != 0 {
		eref := edot
		if int(cd.exp) > eref {
			eref = int(cd.exp)
		}
		uc := eref - k.F
		d := int(cd.exp) - 23 - uc
		var Cq int64
		switch {
		case d >= 0:
			Cq = int64(cd.sig) << uint(d)
		case d <= -63:
			if cd.sig < 0 {
				Cq = -1
			}
		default:
			Cq = int64(cd.sig) >> uint(-d) // arithmetic shift: floor (toward −∞)
		}
		x = sumRO(x, intToF64(Cq, uc))
	}
	if x == 0 {
		return k.os.cancelled()
	}
	return k.os.round(x)
}
