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
	mx, qx := splitLow(x)
	my, qy := splitLow(y)
	if mx == 0 || my == 0 {
		return
	}
	neg := (mx < 0) != (my < 0)
	if mx < 0 {
		mx = -mx
	}
	if my < 0 {
		my = -my
	}
	hi, lo := bits.Mul64(uint64(mx), uint64(my)) // < 2^106
	pos := qx + qy - accBase
	L, r := pos/32, uint(pos%32)
	w0 := lo << r
	w1 := hi << r
	w2 := uint64(0)
	if r > 0 {
		w1 |= lo >> (64 - r)
		w2 = hi >> (64 - r)
	}
	const m32 = 1<<32 - 1
	p := [5]int64{int64(w0 & m32), int64(w0 >> 32), int64(w1 & m32), int64(w1 >> 32), int64(w2 & m32)}
	if neg {
		for i := range p {
			s.limb[L+i] -= p[i]
		}
	} else {
		for i := range p {
			s.limb[L+i] += p[i]
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

// splitLow is split with q at least −1074, the lowest bit of a float64
// (split keeps a subnormal's m normalised, its q below −1074, which put the
// product of two subnormals below limb 0): m shifted right, exactly.
func splitLow(x float64) (m int64, q int) {
	m, q = split(x)
	if q < -1074 {
		m, q = m>>(-1074-q), -1074
	}
	return m, q
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

// Big returns the exact sum as a big.Float (precision large enough to be
// exact).
func (s *Superacc) Big() *big.Float {
	s.normalize()
	neg := s.used && s.limb[accLimbs-1] < 0
	var mag [accLimbs]int64
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
func (s *Superacc) Float64() float64 {
	if !s.used {
		return 0
	}
	f, _ := s.Big().Float64()
	return f + 0 // −0 → +0
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
	y = y[:len(x)]
	nonFinite := !finite(alpha) || !finite(beta) || !finite(c)
	for l := range x {
		if !finite(x[l]) || !finite(y[l]) {
			nonFinite = true
			break
		}
		s.AddProduct(x[l], y[l])
		sa.AddProduct(math.Abs(x[l]), math.Abs(y[l]))
	}
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
