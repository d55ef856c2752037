package fp

import (
	"math"
	"math/bits"
)

// Options controls a narrowing conversion. The zero value is IEEE 754
// behaviour with round-to-nearest-even: subnormals kept, overflow to ±Inf
// (or to ±max for the modes that round toward zero), NaN stays NaN.
//
// Overflow with Saturate=false ("IEEE mode"): RNE and RNA give ±Inf; RZ
// gives ±max; RD gives +max for positive and −Inf for negative values; RU
// gives +Inf for positive and −max for negative values; RO gives ±max (like
// RZ, which is the IEEE-style reading of round-to-odd: the truncated
// significand is all ones, hence already odd). E4M3 has no infinity: where
// another format would produce ±Inf (including an ±Inf input), E4M3 gives
// its NaN S.1111.111 (the OCP "non-saturating" mode).
//
// NaN inputs in IEEE mode become quiet NaNs with the input's sign; the
// payload keeps the most significant payload bits that fit (the fraction is
// truncated, then the quiet bit — the top fraction bit — is set). E4M3 has a
// single NaN per sign. Integer formats map NaN to 0.
//
// Saturate=true (the Ascend default): overflow and ±Inf become ±max finite
// for every rounding mode, and NaN becomes the all-zero pattern (+0).
//
// FlushSubnormals: a result that is subnormal after rounding (rounded with
// the format's subnormal precision, i.e. the value that would be stored
// without flushing is nonzero and below MinNormal) becomes a zero with the
// sign of the input. Tininess is therefore detected after rounding: a value
// just below MinNormal that rounds up to MinNormal is kept. Directed modes
// flush too (RU of a tiny positive value gives +0, not the min subnormal).
type Options struct {
	Round           Rounding
	FlushSubnormals bool // subnormal results become ±0 (sign kept)
	Saturate        bool // overflow and ±Inf → ±max finite, NaN → 0 (all-zero pattern)
}

// Ascend returns the options of the Ascend conversion units by default: the
// given rounding mode with saturation (70000 → 65504, +Inf → 65504, NaN → 0)
// and subnormals kept.
func Ascend(r Rounding) Options { return Options{Round: r, Saturate: true} }

// FromFloat64 returns the bit pattern of x rounded once (from its exact
// value, no double rounding) to format f, in the low bits of the result.
// TF32 is returned as an FP32 pattern whose low 13 bits are zero; INT8 as
// the two's complement byte (0..255); INT32 as uint32(int32). An invalid
// format or rounding mode yields 0.
func FromFloat64(x float64, f Format, o Options) uint32 {
	b := math.Float64bits(x)
	neg := b>>63 != 0
	e := int(b>>52) & 0x7ff
	m := b & (1<<52 - 1)
	switch e {
	case 0x7ff:
		if m != 0 {
			return nanTo(neg, m<<12, f, o)
		}
		return infTo(neg, f, o)
	case 0:
		if m == 0 {
			return zeroTo(neg, f)
		}
		return roundTo(neg, m, -1074, f, o)
	}
	return roundTo(neg, m|1<<52, e-1075, f, o)
}

// FromFloat32 returns the bit pattern of x rounded to format f; see
// FromFloat64 for the encoding. A float32 NaN keeps its payload bits in the
// same way (FP32→FP32 returns the pattern unchanged apart from quieting).
func FromFloat32(x float32, f Format, o Options) uint32 {
	b := math.Float32bits(x)
	neg := b>>31 != 0
	e := int(b>>23) & 0xff
	m := uint64(b & (1<<23 - 1))
	switch e {
	case 0xff:
		if m != 0 {
			return nanTo(neg, m<<41, f, o)
		}
		return infTo(neg, f, o)
	case 0:
		if m == 0 {
			return zeroTo(neg, f)
		}
		return roundTo(neg, m, -149, f, o)
	}
	return roundTo(neg, m|1<<23, e-150, f, o)
}

// Quantize returns x rounded to format f and widened back to float64.
func Quantize(x float64, f Format, o Options) float64 {
	return ToFloat64(FromFloat64(x, f, o), f)
}

// patterned reports whether f's values have 32-bit patterns, which the
// conversions here make and read: every declared format but FP64 (it
// passed Valid, and Quantize(1.5, FP64) returned 0; a numerics review).
func (f Format) patterned() bool { return f.Valid() && f != FP64 }

// zeroTo encodes a signed zero.
func zeroTo(neg bool, f Format) uint32 {
	if !f.patterned() {
		return 0
	}
	s := &specs[f]
	if !s.float || !neg {
		return 0
	}
	return 1 << s.signShift
}

// maxTo encodes ±max finite.
func maxTo(neg bool, s *spec) uint32 {
	if !s.float {
		if neg {
			return intPattern(s.intMin, s)
		}
		return intPattern(s.intMax, s)
	}
	frac := uint32(s.maxSig) & (1<<(s.p-1) - 1)
	v := uint32(s.emax+s.bias)<<(uint(s.p-1)+s.fracShift) | frac<<s.fracShift
	if neg {
		v |= 1 << s.signShift
	}
	return v
}

// infTo encodes an infinite input (or an overflow that rounds to infinity).
func infTo(neg bool, f Format, o Options) uint32 {
	if !f.patterned() {
		return 0
	}
	s := &specs[f]
	if o.Saturate || !s.float {
		return maxTo(neg, s)
	}
	if !s.hasInf {
		return nanPattern(neg, s, 0)
	}
	v := uint32(1<<s.ebits-1) << (uint(s.p-1) + s.fracShift)
	if neg {
		v |= 1 << s.signShift
	}
	return v
}

// nanPattern encodes a quiet NaN whose payload are the top bits of the
// left-aligned payload pl (bit 63 is the source's quiet bit).
func nanPattern(neg bool, s *spec, pl uint64) uint32 {
	m := uint(s.p - 1)
	var frac uint32
	if s.hasInf {
		frac = uint32(pl>>(64-m)) | 1<<(m-1)
	} else {
		frac = 1<<m - 1 // E4M3: S.1111.111
	}
	v := uint32(1<<s.ebits-1)<<(m+s.fracShift) | frac<<s.fracShift
	if neg {
		v |= 1 << s.signShift
	}
	return v
}

// nanTo encodes a NaN input with left-aligned fraction pl.
func nanTo(neg bool, pl uint64, f Format, o Options) uint32 {
	if !f.patterned() {
		return 0
	}
	s := &specs[f]
	if o.Saturate || !s.float {
		return 0
	}
	return nanPattern(neg, s, pl)
}

// roundBits splits mant·2^exp at bit position shift (>0): the kept integer
// part and the round and sticky bits of the discarded part.
func roundBits(mant uint64, shift int) (sig uint64, rb, st bool) {
	switch {
	case shift <= 0:
		return mant << uint(-shift), false, false
	case shift < 64:
		return mant >> uint(shift), mant>>uint(shift-1)&1 != 0, mant&(1<<uint(shift-1)-1) != 0
	case shift == 64:
		return 0, mant>>63 != 0, mant&(1<<63-1) != 0
	}
	return 0, false, mant != 0
}

// increment reports whether a truncated magnitude sig must be bumped by one
// unit under mode r. RO is handled by the caller (sig |= 1 when inexact).
func increment(r Rounding, neg bool, sig uint64, rb, st bool) bool {
	switch r {
	case RNE:
		return rb && (st || sig&1 != 0)
	case RNA:
		return rb
	case RD:
		return neg && (rb || st)
	case RU:
		return !neg && (rb || st)
	}
	return false
}

// roundTo rounds the nonzero finite value (−1)^neg·mant·2^exp (mant < 2^63)
// to format f.
func roundTo(neg bool, mant uint64, exp int, f Format, o Options) uint32 {
	if !f.patterned() || o.Round >= numRoundings {
		return 0
	}
	s := &specs[f]
	if !s.float {
		return roundInt(neg, mant, exp, s, o.Round)
	}
	p := s.p
	e := exp + bits.Len64(mant) - 1 // exponent of the leading bit
	if e < s.emin {
		e = s.emin
	}
	q := e - (p - 1) // exponent of the last kept bit
	sig, rb, st := roundBits(mant, q-exp)
	if rb || st {
		if o.Round == RO {
			sig |= 1
		} else if increment(o.Round, neg, sig, rb, st) {
			sig++
			if sig == 1<<p {
				sig >>= 1
				q++
			}
		}
	}
	if sig == 0 {
		return zeroTo(neg, f)
	}
	var be uint32 // biased exponent
	if sig >= 1<<(p-1) {
		e = q + p - 1
		if e > s.emax || (e == s.emax && sig > s.maxSig) {
			return overflowTo(neg, s, f, o)
		}
		be = uint32(e + s.bias)
	} else if o.FlushSubnormals {
		return zeroTo(neg, f)
	}
	v := be<<(uint(p-1)+s.fracShift) | uint32(sig&(1<<(p-1)-1))<<s.fracShift
	if neg {
		v |= 1 << s.signShift
	}
	return v
}

// overflowTo encodes a finite value whose rounded magnitude exceeds max.
func overflowTo(neg bool, s *spec, f Format, o Options) uint32 {
	if o.Saturate {
		return maxTo(neg, s)
	}
	switch o.Round {
	case RNE, RNA:
		return infTo(neg, f, o)
	case RU:
		if !neg {
			return infTo(neg, f, o)
		}
	case RD:
		if neg {
			return infTo(neg, f, o)
		}
	}
	return maxTo(neg, s)
}

// roundInt rounds (−1)^neg·mant·2^exp to an integer with mode r and
// saturates to the range of the integer format.
func roundInt(neg bool, mant uint64, exp int, s *spec, r Rounding) uint32 {
	var mag uint64
	if exp >= 0 {
		if bits.Len64(mant)+exp > 40 {
			return maxTo(neg, s)
		}
		mag = mant << uint(exp)
	} else {
		sig, rb, st := roundBits(mant, -exp)
		if rb || st {
			if r == RO {
				sig |= 1
			} else if increment(r, neg, sig, rb, st) {
				sig++
			}
		}
		mag = sig
	}
	if mag > 1<<40 {
		return maxTo(neg, s)
	}
	v := int64(mag)
	if neg {
		v = -v
	}
	if v < s.intMin {
		v = s.intMin
	} else if v > s.intMax {
		v = s.intMax
	}
	return intPattern(v, s)
}

// intPattern encodes an in-range integer as the format's two's complement
// pattern (INT8: 0..255).
func intPattern(v int64, s *spec) uint32 {
	if s.bits == 8 {
		return uint32(uint8(int8(v)))
	}
	return uint32(int32(v))
}

// decode splits the pattern b of float format s into its fields.
func decode(b uint32, s *spec) (neg bool, be int, frac uint32) {
	m := uint(s.p - 1)
	neg = b>>s.signShift&1 != 0
	be = int(b >> (m + s.fracShift) & (1<<s.ebits - 1))
	frac = b >> s.fracShift & (1<<m - 1)
	return
}

// ToFloat64 returns the exact value of the pattern b in format f. NaNs keep
// their sign and payload (left-aligned in the float64 fraction). Bits above
// the format's width are ignored (TF32: the low 13 bits are ignored). An
// invalid format, or FP64 (no 32-bit pattern holds it), yields NaN.
func ToFloat64(b uint32, f Format) float64 {
	if !f.patterned() {
		return math.NaN()
	}
	s := &specs[f]
	switch f {
	case FP32:
		return float64(math.Float32frombits(b)) // exact; NaN payload kept (quieted)
	case INT8:
		return float64(int8(b))
	case INT32:
		return float64(int32(b))
	}
	neg, be, frac := decode(b, s)
	m := uint(s.p - 1)
	var sign uint64
	if neg {
		sign = 1 << 63
	}
	top := 1<<s.ebits - 1
	if be == top && (s.hasInf || frac == 1<<m-1) {
		if frac == 0 {
			return math.Float64frombits(sign | 0x7ff<<52)
		}
		return math.Float64frombits(sign | 0x7ff<<52 | uint64(frac)<<(52-m))
	}
	var v float64
	if be == 0 {
		v = math.Ldexp(float64(frac), s.emin-int(m))
	} else {
		v = math.Ldexp(float64(frac|1<<m), be-s.bias-int(m))
	}
	if neg {
		v = -v
	}
	return v
}

// ToFloat32 returns the value of the pattern b in format f as a float32.
// It is exact for every format except INT32, which is rounded to nearest
// even (|v| > 2^24). NaNs keep sign and payload.
func ToFloat32(b uint32, f Format) float32 {
	switch f {
	case FP32:
		return math.Float32frombits(b)
	case TF32:
		return math.Float32frombits(b &^ (1<<13 - 1))
	case BF16:
		return BF16ToF32(uint16(b))
	case FP16:
		return F16ToF32(uint16(b))
	case INT8:
		return float32(int8(b))
	case INT32:
		return float32(int32(b))
	}
	if !f.patterned() {
		return float32(math.NaN())
	}
	s := &specs[f]
	neg, be, frac := decode(b, s)
	m := uint(s.p - 1)
	var sign uint32
	if neg {
		sign = 1 << 31
	}
	top := 1<<s.ebits - 1
	if be == top && (s.hasInf || frac == 1<<m-1) {
		return math.Float32frombits(sign | 0xff<<23 | frac<<(23-m))
	}
	// FP8 values are exact in float64 and in float32.
	return float32(ToFloat64(b, f))
}

// RoundFloat64ToFloat32 rounds x to float32 once with mode r (IEEE
// overflow, subnormals kept, NaN payload truncated and quieted).
func RoundFloat64ToFloat32(x float64, r Rounding) float32 {
	if r == RNE {
		return float32(x)
	}
	return math.Float32frombits(FromFloat64(x, FP32, Options{Round: r}))
}

// F32ToF16 rounds x to FP16 with mode r (IEEE overflow, subnormals kept,
// NaN payload truncated and quieted). RNE takes a branch-light fast path.
func F32ToF16(x float32, r Rounding) uint16 {
	if r != RNE {
		b := math.Float32bits(x)
		e := int(b>>23) & 0xff
		if e >= 113 && e < 142 && r < numRoundings { // normal result, no overflow possible
			m := b & 0x7fffff
			h := uint32(e-112)<<10 | m>>13
			if m&0x1fff != 0 {
				if r == RO {
					h |= 1
				} else if increment(r, b>>31 != 0, uint64(h), m&0x1000 != 0, m&0xfff != 0) {
					h++ // a carry into the exponent field is the correct result
				}
			}
			return uint16(b>>16)&0x8000 | uint16(h)
		}
		return uint16(FromFloat32(x, FP16, Options{Round: r}))
	}
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	e := int(b>>23) & 0xff
	m := b & 0x7fffff
	switch {
	case e >= 113 && e < 143: // FP16 normal range (carry into Inf is correct for RNE)
		h := uint32(e-112)<<10 | m>>13
		if m&0x1000 != 0 && (m&0x2fff != 0) {
			h++
		}
		return sign | uint16(h)
	case e >= 143:
		if e == 0xff && m != 0 {
			return sign | 0x7e00 | uint16(m>>13)
		}
		return sign | 0x7c00
	case e < 102: // below 2^-25: rounds to zero
		return sign
	}
	// FP16 subnormal result: value = (m|2^23)·2^(e−150), quantum 2^−24.
	mant := m | 1<<23
	sh := uint(126 - e) // 14..24
	h := mant >> sh
	rb := mant >> (sh - 1) & 1
	st := mant & (1<<(sh-1) - 1)
	if rb != 0 && (st != 0 || h&1 != 0) {
		h++
	}
	return sign | uint16(h)
}

// F32ToBF16 rounds x to BF16 with mode r (IEEE overflow, subnormals kept).
func F32ToBF16(x float32, r Rounding) uint16 {
	if r == RNE {
		b := math.Float32bits(x)
		if b&0x7fffffff > 0x7f800000 { // NaN: truncate payload, quiet
			return uint16(b>>16) | 0x40
		}
		b += 0x7fff + (b >> 16 & 1)
		return uint16(b >> 16)
	}
	return uint16(FromFloat32(x, BF16, Options{Round: r}))
}

// F16ToF32 widens an FP16 pattern exactly (NaN sign and payload kept, a
// signalling NaN stays signalling).
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	e := uint32(h>>10) & 0x1f
	m := uint32(h & 0x3ff)
	switch e {
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | m<<13)
	case 0:
		if m == 0 {
			return math.Float32frombits(sign)
		}
		n := uint32(bits.Len32(m)) // 1..10; value = 1.f·2^(n−25)
		return math.Float32frombits(sign | (n+102)<<23 | (m<<(24-n))&0x7fffff)
	}
	return math.Float32frombits(sign | (e+112)<<23 | m<<13)
}

// BF16ToF32 widens a BF16 pattern exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
