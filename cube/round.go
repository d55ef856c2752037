package cube

import (
	"math"
	"math/bits"

	"github.com/davinci-sim/davinci-sim/fp"
)

// NaNBits is the FP32 pattern every model returns for a NaN result (the
// NVIDIA tensor cores' canonical NaN, FACTS.md §3).
const NaNBits uint32 = 0x7FFFFFFF

// outSpec describes the final (or block-result) rounding: precision p
// (hidden bit included), normal exponent range, mode, flush-to-zero.
type outSpec struct {
	p          int
	emin, emax int
	mode       fp.Rounding
	ftz        bool
}

// cancelled returns the zero an exact cancellation of nonzero terms gives
// in rounding mode o.mode: −0 rounding toward −∞, +0 otherwise (IEEE 754
// §6.3).
func (o *outSpec) cancelled() float64 {
	if o.mode == fp.RD {
		return math.Copysign(0, -1)
	}
	return 0
}

// intToF64 returns S·2^u as a float64: exact when |S| < 2^53, otherwise
// rounded to odd at 53 bits. Rounding to odd at 53 ≥ p+2 bits and then
// rounding once more to p bits gives the same result as rounding the exact
// value once, for every rounding mode (the classic round-to-odd lemma).
func intToF64(S int64, u int) float64 {
	neg := S < 0
	m := uint64(S)
	if neg {
		m = -m
	}
	if m >= 1<<53 {
		sh := bits.Len64(m) - 53
		lost := m & (1<<sh - 1)
		m >>= sh
		if lost != 0 {
			m |= 1
		}
		u += sh
	}
	x := float64(m) * pow2(u)
	if neg {
		x = -x
	}
	return x
}

// sumRO returns x+y rounded to odd at float64 precision (exact when the sum
// is representable). x and y must be finite.
func sumRO(x, y float64) float64 {
	s := x + y
	// TwoSum error term (Knuth): s + e == x + y exactly.
	bv := s - x
	av := s - bv
	e := (x - av) + (y - bv)
	if e == 0 || math.IsInf(s, 0) {
		return s
	}
	b := math.Float64bits(s)
	if b&1 == 0 {
		// s is even: the exact sum lies strictly between s and its neighbour
		// in the direction of e; round to odd picks that neighbour.
		// (s ≠ 0 here: a float64 sum that rounds to zero is exact.)
		if (e > 0) == (s > 0) {
			b++ // away from zero
		} else {
			b-- // toward zero
		}
		s = math.Float64frombits(b)
	}
	return s
}

// round rounds the finite or infinite x once to the spec. Overflow gives ±Inf
// in every mode (the NVIDIA behaviour, FACTS.md §3: even under RZ).
func (o *outSpec) round(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	if o.p == 24 && o.emin == -126 && o.emax == 127 {
		switch {
		case o.ftz && math.Abs(x) < 0x1p-126:
			// Below the normal range: flushed before rounding (as the
			// general path: an x that would round up to 2^−126 too).
			return math.Copysign(0, x)
		case o.mode == fp.RNE:
			return float64(float32(x))
		case o.mode == fp.RZ:
			return roundRZ32(x)
		}
	}
	return o.roundAny(x)
}

// roundAny is round for any spec: the significand scaled to an integer,
// rounded by the mode, scaled back.
func (o *outSpec) roundAny(x float64) float64 {
	neg := x < 0
	a := math.Abs(x)
	_, k := math.Frexp(a)
	e := k - 1
	if e < o.emin {
		if o.ftz {
			return math.Copysign(0, x)
		}
		e = o.emin
	}
	qe := e - (o.p - 1)
	y := math.Ldexp(a, -qe)
	t := math.Trunc(y)
	fr := y - t
	inc := false
	switch o.mode {
	case fp.RNE:
		inc = fr > 0.5 || (fr == 0.5 && math.Mod(t, 2) == 1)
	case fp.RNA:
		inc = fr >= 0.5
	case fp.RU:
		inc = fr > 0 && !neg
	case fp.RD:
		inc = fr > 0 && neg
	case fp.RO:
		inc = fr > 0 && math.Mod(t, 2) == 0
	}
	if inc {
		t++
	}
	r := math.Ldexp(t, qe)
	if r >= math.Ldexp(1, o.emax+1) {
		r = math.Inf(1)
	}
	if o.ftz && r < math.Ldexp(1, o.emin) {
		r = 0
	}
	if neg {
		r = -r
	}
	return r
}

// toBits returns the FP32 pattern of a rounded result (NaN → NaNBits).
func toBits(x float64) uint32 {
	if math.IsNaN(x) {
		return NaNBits
	}
	return math.Float32bits(float32(x))
}

// pow2 returns 2^u exactly (without math.Ldexp's generality in the normal
// range).
func pow2(u int) float64 {
	if u >= -1022 && u <= 1023 {
		return math.Float64frombits(uint64(u+1023) << 52)
	}
	return math.Ldexp(1, u)
}
