package ozaki

import (
	"math"
	"math/big"
	"math/bits"
	"runtime"
	"sync"
)

// Superaccumulator geometry: 32-bit limbs in int64 words (headroom for 2^30
// unnormalised additions), limb 0 weighs 2^accBase. Products of two float64
// have their lowest bit at or above 2^−2148 and are below 2^2048; the limbs
// reach 2^(accBase + 32·accLimbs) = 2^2204, room for 2^156 products.
const (
	accBase  = -2148
	accLimbs = 136
	accFlush = 1 << 30
)

// Superacc is an exact accumulator of sums of products of float64 values:
// a fixed-point integer with 32-bit limbs covering 2^−2148 … 2^2204, so no
// product is ever rounded (unlike TwoProduct via FMA, it stays exact when
// products underflow). The zero value is an empty sum (0).
type Superacc struct {
	limb   [accLimbs]int64
	adds   int
	lo, hi int // touched limb range [lo, hi]
	used   bool
}

// AddProduct adds x·y exactly. x and y must be finite.
func (s *Superacc) AddProduct(x, y float64) {
	mx, qx, nx := parts(math.Float64bits(x))
	my, qy, ny := parts(math.Float64bits(y))
	if mx == 0 || my == 0 {
		return
	}
	s.add(productWords(mx, my, qx+qy), nx != ny)
}

// parts returns the finite float64 of bits b as m·2^q (m < 2^53, q ≥
// −1074, the lowest bit of a float64) and whether it is negative: the
// significand with its implicit bit (none for a subnormal) and the
// exponent of its lowest bit, read from the bits (math.Frexp, IsInf and
// IsNaN had taken a third of an exact reference's time). A subnormal's
// q is −1074, so that the product of two is above limb 0.
func parts(b uint64) (m uint64, q int, neg bool) {
	e := int(b>>52) & 0x7FF
	m = b & (1<<52 - 1)
	if e == 0 {
		return m, -1074, b>>63 != 0
	}
	return m | 1<<52, e - 1075, b>>63 != 0
}

// expBits are a float64's exponent bits: all set for ±Inf and NaN.
const expBits = 0x7FF << 52

// limbWords is a product placed in the accumulator: its bits from limb L
// on, 32 a limb.
type limbWords struct {
	L int
	p [5]int64
}

// productWords returns mx·my·2^q (mx, my < 2^53, q the sum of two
// exponents parts returns) as the limbs it adds to.
func productWords(mx, my uint64, q int) limbWords {
	hi, lo := bits.Mul64(mx, my) // < 2^106
	pos := q - accBase
	L, r := pos/32, uint(pos%32)
	w0 := lo << r
	w1 := hi << r
	w2 := uint64(0)
	if r > 0 {
		w1 |= lo >> (64 - r)
		w2 = hi >> (64 - r)
	}
	const m32 = 1<<32 - 1
	return limbWords{L, [5]int64{int64(w0 & m32), int64(w0 >> 32), int64(w1 & m32), int64(w1 >> 32), int64(w2 & m32)}}
}

// add adds the product w (subtracts it where neg).
func (s *Superacc) add(w limbWords, neg bool) {
	L := w.L
	limb := s.limb[L : L+5 : L+5]
	if neg {
		for i, v := range w.p {
			limb[i] -= v
		}
	} else {
		for i, v := range w.p {
			limb[i] += v
		}
	}
	if !s.used {
		s.lo, s.hi, s.used = L, L+4, true
	} else {
		s.lo, s.hi = min(s.lo, L), max(s.hi, L+4)
	}
	s.adds++
	if s.adds >= accFlush {
		s.normalize()
	}
}

// normalize propagates carries so that every limb but the top one is in
// [0, 2^32); the top limb carries the sign.
func (s *Superacc) normalize() {
	s.adds = 0
	if !s.used {
		return
	}
	for i := s.lo; i < accLimbs-1; i++ {
		c := s.limb[i] >> 32
		if c == 0 && i >= s.hi {
			break
		}
		s.limb[i] -= c << 32
		s.limb[i+1] += c
		s.hi = max(s.hi, i+1)
	}
}

// magnitude returns the sum's magnitude as normalised limbs (each in
// [0, 2^32)) and its sign.
func (s *Superacc) magnitude() (mag [accLimbs]int64, neg bool) {
	s.normalize()
	neg = s.used && s.limb[accLimbs-1] < 0
	copy(mag[:], s.limb[:])
	if neg { // two's complement negation of the normalised limbs
		for i := range mag {
			mag[i] = -mag[i]
		}
		for i := 0; i < accLimbs-1; i++ {
			c := mag[i] >> 32
			mag[i] -= c << 32
			mag[i+1] += c
		}
	}
	return mag, neg
}

// Big returns the exact sum as a big.Float (precision large enough to be
// exact).
func (s *Superacc) Big() *big.Float {
	mag, neg := s.magnitude()
	buf := make([]byte, 4*accLimbs)
	for i := 0; i < accLimbs; i++ {
		v := uint32(mag[i])
		o := 4 * (accLimbs - 1 - i)
		buf[o], buf[o+1], buf[o+2], buf[o+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	z := new(big.Int).SetBytes(buf)
	if neg {
		z.Neg(z)
	}
	f := new(big.Float).SetInt(z)
	return f.SetMantExp(f, accBase)
}

// Float64 returns the sum correctly rounded to float64 (round to nearest,
// ties to even, including the subnormal range and overflow to ±Inf). An
// exact zero sum is +0.
//
// Where the result is a normal float64 it is formed from the limbs: the
// sum's top 64 bits t, with a 1 ORed into the lowest where any bit below
// them is set (a sticky bit 11 places below the rounding position, so
// that RNE of t to 53 bits is RNE of the sum), converted by float64(t) —
// Go rounds integer conversions to nearest even — and scaled by its
// exponent, exactly (math.Ldexp of a normal result). Elsewhere (results
// near the subnormal range, where the scaling would round again, or near
// overflow) it takes math/big (Big), as it did for every sum until
// 2026-12-04 (a quarter of an exact reference's time, with its
// allocations).
func (s *Superacc) Float64() float64 {
	if !s.used {
		return 0
	}
	mag, neg := s.magnitude()
	h := accLimbs - 1
	for h >= 0 && mag[h] == 0 {
		h--
	}
	if h < 0 {
		return 0
	}
	limb := func(i int) uint64 {
		if i < 0 {
			return 0
		}
		return uint64(mag[i])
	}
	hi, low := limb(h), limb(h-1)<<32|limb(h-2) // the top 96 bits: hi·2^64 + low
	lz := uint(bits.LeadingZeros64(hi))         // 32 … 63
	t := hi<<lz | low>>(64-lz)
	sticky := low<<lz != 0
	for i := h - 3; i >= 0 && !sticky; i-- {
		sticky = mag[i] != 0
	}
	if sticky {
		t |= 1
	}
	// The sum is (t + a fraction of its lowest bit)·2^e.
	e := 64 - int(lz) + 32*(h-2) + accBase
	if e < -1085 || e > 950 {
		f, _ := s.Big().Float64()
		return f + 0 // −0 → +0
	}
	f := math.Ldexp(float64(t), e) // (t ≥ 2^63: a normal result, scaled exactly)
	if neg {
		f = -f
	}
	return f
}

// ExactDot returns Σ x[l]·y[l] correctly rounded (RNE) to float64, computed
// exactly internally (Superacc). x and y have the same length. Where an
// entry is ±Inf or NaN there is no exact sum: it returns the IEEE value
// (NonFiniteDot).
func ExactDot(x, y []float64) float64 {
	var s Superacc
	y = y[:len(x)]
	for l := range x {
		if !finite(x[l]) || !finite(y[l]) {
			return NonFiniteDot(x, y)
		}
		s.AddProduct(x[l], y[l])
	}
	return s.Float64()
}

// AbsDot returns Σ |x[l]|·|y[l]| computed exactly and rounded to nearest
// (the |A||B| of the componentwise error bound); where an entry is ±Inf or
// NaN, the IEEE value (+Inf, or NaN for a NaN or Inf·0).
func AbsDot(x, y []float64) float64 {
	var s Superacc
	y = y[:len(x)]
	for l := range x {
		if !finite(x[l]) || !finite(y[l]) {
			ax, ay := make([]float64, len(x)), make([]float64, len(x))
			for i := range x {
				ax[i], ay[i] = math.Abs(x[i]), math.Abs(y[i])
			}
			return NonFiniteDot(ax, ay)
		}
		s.AddProduct(math.Abs(x[l]), math.Abs(y[l]))
	}
	return s.Float64()
}

// DotAndAbs returns ExactDot(x, y) and AbsDot(x, y) from one pass: each
// product's magnitude is found once and added to both sums (the exact
// reference of an output and its componentwise bound).
func DotAndAbs(x, y []float64) (ref, abs float64) {
	var s, sa Superacc
	if !s.addDots(&sa, x, y) {
		return ExactDot(x, y), AbsDot(x, y)
	}
	return s.Float64(), sa.Float64()
}

// addDots adds Σ x[l]·y[l] to s and Σ |x[l]|·|y[l]| to sa, or returns
// false, leaving them part way, where an entry of x or y is ±Inf or NaN.
// y is at least as long as x. (Both sums in one loop, their limb range
// and count kept in locals: the exact reference of an ozaki GEMM's
// outputs had taken as long as its simulation.)
func (s *Superacc) addDots(sa *Superacc, x, y []float64) bool {
	y = y[:len(x)]
	if s.adds+len(x) >= accFlush || sa.adds+len(x) >= accFlush {
		// (Never from DotAndAbs or ScaledDot below 2^30 products.)
		for l := range x {
			if !finite(x[l]) || !finite(y[l]) {
				return false
			}
			s.AddProduct(x[l], y[l])
			sa.AddProduct(math.Abs(x[l]), math.Abs(y[l]))
		}
		return true
	}
	lo, hi, n := accLimbs, -1, 0
	for l := range x {
		bx, by := math.Float64bits(x[l]), math.Float64bits(y[l])
		if bx&expBits == expBits || by&expBits == expBits {
			return false
		}
		mx, qx, nx := parts(bx)
		my, qy, ny := parts(by)
		if mx == 0 || my == 0 {
			continue
		}
		w := productWords(mx, my, qx+qy)
		L := w.L
		d, da := s.limb[L:L+5:L+5], sa.limb[L:L+5:L+5]
		if nx != ny {
			d[0] -= w.p[0]
			d[1] -= w.p[1]
			d[2] -= w.p[2]
			d[3] -= w.p[3]
			d[4] -= w.p[4]
		} else {
			d[0] += w.p[0]
			d[1] += w.p[1]
			d[2] += w.p[2]
			d[3] += w.p[3]
			d[4] += w.p[4]
		}
		da[0] += w.p[0]
		da[1] += w.p[1]
		da[2] += w.p[2]
		da[3] += w.p[3]
		da[4] += w.p[4]
		lo, hi = min(lo, L), max(hi, L)
		n++
	}
	if n > 0 {
		for _, a := range [2]*Superacc{s, sa} {
			if !a.used {
				a.lo, a.hi, a.used = lo, hi+4, true
			} else {
				a.lo, a.hi = min(a.lo, lo), max(a.hi, hi+4)
			}
			a.adds += n
		}
	}
	return true
}

// finite reports whether v is neither ±Inf nor NaN.
func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

// NonFiniteDot returns the value IEEE arithmetic gives Σ x[l]·y[l] when an
// entry of x or y is ±Inf or NaN, whatever the order of the sum: NaN if a
// NaN, an Inf·0 or both +Inf and −Inf products occur, else the signed
// infinity of the infinite products (the finite products, exactly summed,
// stay finite and do not change it). With every entry finite it returns
// 0. y is at least as long as x.
func NonFiniteDot(x, y []float64) float64 {
	pos, neg := false, false
	for l := range x {
		if finite(x[l]) && finite(y[l]) {
			continue
		}
		switch p := x[l] * y[l]; {
		case p != p:
			return math.NaN()
		case p > 0:
			pos = true
		default:
			neg = true
		}
	}
	switch {
	case pos && neg:
		return math.NaN()
	case pos:
		return math.Inf(1)
	case neg:
		return math.Inf(-1)
	}
	return 0
}

// RefGEMM returns the correctly rounded product ref = A·B and abs = |A||B|
// (each entry exact then rounded once) for A m×k and B k×n row-major, on
// GOMAXPROCS goroutines. An output whose row of A or column of B holds
// ±Inf or NaN gets the IEEE values (ExactDot, AbsDot).
func RefGEMM(a, b []float64, m, k, n int) (ref, abs []float64) {
	ref, abs = make([]float64, m*n), make([]float64, m*n)
	workers := max(1, min(runtime.GOMAXPROCS(0), m))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			col, acol := make([]float64, k), make([]float64, k)
			for j := w; j < n; j += workers {
				for l := 0; l < k; l++ {
					col[l] = b[l*n+j]
					acol[l] = math.Abs(col[l])
				}
				for i := 0; i < m; i++ {
					row := a[i*k : i*k+k]
					ref[i*n+j] = ExactDot(row, col)
					abs[i*n+j] = AbsDot(row, acol)
				}
			}
		}(w)
	}
	wg.Wait()
	return ref, abs
}

// Unit is u = 2^−53, the FP64 unit roundoff.
const Unit = 0x1p-53

// ErrorStats summarises componentwise errors |got−ref| / (u·(|A||B|)_ij).
type ErrorStats struct {
	Max, Mean float64 // over the counted entries, in units of u·(|A||B|)_ij
	// Count is the number of entries counted: those with a finite
	// (|A||B|)_ij > 0, and those with (|A||B|)_ij = 0 whose got differs
	// from ref (ZeroBoundWrong).
	Count int
	// Skipped counts the entries with (|A||B|)_ij = 0 and got = ref: an
	// exact zero (every product 0, or all of them below the float64 range
	// together), no error and no bound to measure it by; not counted.
	Skipped int
	// ZeroBoundWrong counts the entries with (|A||B|)_ij = 0 whose got
	// differs from ref (which is then 0). They are counted with an infinite
	// error: the bound is 0 in float64, and against the exact |A||B|
	// (below 2^−1075, or 0) any nonzero difference is at least 2^54·u of it.
	ZeroBoundWrong int
	// NonFinite counts the entries whose reference is ±Inf or NaN (an Inf
	// or NaN in the row of A or the column of B, or an exact sum beyond the
	// float64 range); they are not counted. NonFiniteDiffer counts those
	// whose got is not the same value (NaN matches NaN).
	NonFinite, NonFiniteDiffer int
	// BoundOverflow counts the entries with a finite reference and a
	// finite result whose (|A||B|)_ij is beyond the float64 range (+Inf):
	// the bound cannot be represented, so they are not counted. (A result
	// that is ±Inf or NaN where the reference is finite is counted, with
	// an infinite error, whatever its bound.)
	BoundOverflow int
}

// ComponentwiseStats computes ErrorStats of got against ref with the bound
// denominators absAB (all of the same length). An entry with got = ref has
// no error (the same infinity included); a NaN or infinite error counts as
// +Inf. The error is formed as (|got−ref| / (|A||B|)_ij)·2^53, so it stays
// exact where u·(|A||B|)_ij would underflow (|A||B| below 2^−1021).
func ComponentwiseStats(ref, got, absAB []float64) ErrorStats {
	var st ErrorStats
	sum := 0.0
	for x := range ref {
		same := got[x] == ref[x] || (got[x] != got[x] && ref[x] != ref[x])
		switch r, b := ref[x], absAB[x]; {
		case math.IsInf(r, 0) || r != r:
			st.NonFinite++
			if !same {
				st.NonFiniteDiffer++
			}
			continue
		case (math.IsInf(b, 0) || b != b) && !math.IsInf(got[x], 0) && got[x] == got[x]:
			st.BoundOverflow++
			continue
		case b == 0 && same:
			st.Skipped++
			continue
		}
		e := 0.0
		switch {
		case same:
		case math.IsInf(got[x], 0) || got[x] != got[x]:
			e = math.Inf(1) // (a finite reference: infinitely wrong, whatever the bound)
		case absAB[x] == 0:
			st.ZeroBoundWrong++
			e = math.Inf(1)
		default:
			e = math.Abs(got[x]-ref[x]) / absAB[x] / Unit
			if e != e {
				e = math.Inf(1)
			}
		}
		st.Count++
		sum += e
		st.Max = max(st.Max, e)
	}
	if st.Count > 0 {
		st.Mean = sum / float64(st.Count)
	}
	return st
}

// Componentwise returns the largest and the mean componentwise error
// |got−ref| / (u·(|A||B|)_ij), u = 2^−53, over the entries
// ComponentwiseStats counts.
func Componentwise(ref, got, absAB []float64) (max, mean float64) {
	st := ComponentwiseStats(ref, got, absAB)
	return st.Max, st.Mean
}

// scaledPrec is a big.Float precision that holds α·S + β·c exactly: S (a
// Superacc sum) has its bits in [2^−2148, 2^2204), α·S in [2^−3222,
// 2^3228), β·c in [2^−2148, 2^2048), so the sum spans under 6460 bits.
const scaledPrec = 6600

// ScaledDot returns ref = α·Σ x[l]·y[l] + β·c computed exactly and rounded
// once (RNE) to float64, and abs = |α|·Σ |x[l]||y[l]| + |β||c|, also exact
// then rounded once: the reference and the componentwise bound of an
// output of C = αAB + βC0 (unlike Epilogue, which rounds α·P, β·c and the
// sum). x and y have the same length. Where x, y, α, β or c holds ±Inf or
// NaN there is no exact value: it returns the IEEE values of α·ExactDot +
// β·c and |α|·AbsDot + |β·c| in FP64.
func ScaledDot(x, y []float64, alpha, beta, c float64) (ref, abs float64) {
	var s, sa Superacc
	nonFinite := !finite(alpha) || !finite(beta) || !finite(c) || !s.addDots(&sa, x, y)
	if nonFinite {
		return float64(alpha*ExactDot(x, y)) + float64(beta*c), float64(math.Abs(alpha)*AbsDot(x, y)) + math.Abs(beta*c)
	}
	return scaledSum(&s, alpha, beta, c), scaledSum(&sa, math.Abs(alpha), math.Abs(beta), math.Abs(c))
}

// scaledSum returns α·S + β·c (S s's sum, all finite) exactly, rounded once
// to float64 (±Inf beyond its range); an exact zero is +0.
func scaledSum(s *Superacc, alpha, beta, c float64) float64 {
	z := new(big.Float).SetPrec(scaledPrec)
	if s.used && alpha != 0 {
		z.Mul(s.Big(), new(big.Float).SetFloat64(alpha))
	}
	if beta != 0 && c != 0 {
		w := new(big.Float).SetPrec(scaledPrec).SetFloat64(beta)
		z.Add(z, w.Mul(w, new(big.Float).SetFloat64(c)))
	}
	f, _ := z.Float64()
	return f + 0 // −0 → +0
}
