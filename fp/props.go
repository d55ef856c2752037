package fp

import "math"

// spec holds the encoding parameters of a binary floating-point format.
// A finite value is sig·2^q with sig < 2^p; normal values have exponent
// e in [emin, emax] and significand in [2^(p-1), 2^p).
type spec struct {
	p          int    // precision in bits, hidden bit included
	emin, emax int    // exponent range of normal numbers
	bias       int    // exponent bias
	ebits      uint   // width of the exponent field
	maxSig     uint64 // largest significand at emax (2^p−1, or 2^p−2 for E4M3)
	fracShift  uint   // position of the fraction field (13 for TF32)
	signShift  uint   // position of the sign bit
	hasInf     bool   // format has infinities (false for E4M3)
	float      bool   // false for the integer formats
	intMin     int64  // integer formats: range
	intMax     int64
	bits       int // width of the encoding
	bytes      int // storage bytes per element
}

var specs = [NumFormats]spec{
	FP32:  {p: 24, emin: -126, emax: 127, bias: 127, ebits: 8, maxSig: 1<<24 - 1, signShift: 31, hasInf: true, float: true, bits: 32, bytes: 4},
	FP16:  {p: 11, emin: -14, emax: 15, bias: 15, ebits: 5, maxSig: 1<<11 - 1, signShift: 15, hasInf: true, float: true, bits: 16, bytes: 2},
	BF16:  {p: 8, emin: -126, emax: 127, bias: 127, ebits: 8, maxSig: 1<<8 - 1, signShift: 15, hasInf: true, float: true, bits: 16, bytes: 2},
	TF32:  {p: 11, emin: -126, emax: 127, bias: 127, ebits: 8, maxSig: 1<<11 - 1, fracShift: 13, signShift: 31, hasInf: true, float: true, bits: 19, bytes: 4},
	E4M3:  {p: 4, emin: -6, emax: 8, bias: 7, ebits: 4, maxSig: 1<<4 - 2, signShift: 7, hasInf: false, float: true, bits: 8, bytes: 1},
	E5M2:  {p: 3, emin: -14, emax: 15, bias: 15, ebits: 5, maxSig: 1<<3 - 1, signShift: 7, hasInf: true, float: true, bits: 8, bytes: 1},
	INT8:  {intMin: math.MinInt8, intMax: math.MaxInt8, bits: 8, bytes: 1},
	INT32: {intMin: math.MinInt32, intMax: math.MaxInt32, bits: 32, bytes: 4},
	FP64:  {p: 53, emin: -1022, emax: 1023, bias: 1023, ebits: 11, maxSig: 1<<53 - 1, signShift: 63, hasInf: true, float: true, bits: 64, bytes: 8},
}

func (f Format) spec() *spec {
	if f >= NumFormats {
		return &specs[FP32]
	}
	return &specs[f]
}

// Valid reports whether f is one of the declared formats.
func (f Format) Valid() bool { return f < NumFormats }

// Bits returns the width of the encoding in bits: 32, 16, 16, 19 (TF32; it
// is stored in a 32-bit FP32 container, see Bytes), 8, 8, 8, 32.
func (f Format) Bits() int { return f.spec().bits }

// Bytes returns the storage size of one element in memory (TF32: 4).
func (f Format) Bytes() int { return f.spec().bytes }

// MantBits returns the number of explicitly stored fraction bits (23, 10, 7,
// 10, 3, 2 for the floating formats). For the integer formats it is the
// number of magnitude bits (7 for INT8, 31 for INT32).
func (f Format) MantBits() int {
	s := f.spec()
	if !s.float {
		return s.bits - 1
	}
	return s.p - 1
}

// ExpBits returns the width of the exponent field (0 for integer formats).
func (f Format) ExpBits() int { return int(f.spec().ebits) }

// Bias returns the exponent bias (0 for integer formats).
func (f Format) Bias() int { return f.spec().bias }

// IsFloat reports whether f is a floating-point format.
func (f Format) IsFloat() bool { return f.spec().float }

// HasInf reports whether f encodes infinities (false for E4M3 and integers).
func (f Format) HasInf() bool { return f.spec().hasInf }

// MaxFinite returns the largest finite value (65504 for FP16, 448 for E4M3,
// 57344 for E5M2, 127 for INT8, 2^31−1 for INT32).
func (f Format) MaxFinite() float64 {
	s := f.spec()
	if !s.float {
		return float64(s.intMax)
	}
	return math.Ldexp(float64(s.maxSig), s.emax-s.p+1)
}

// MinNormal returns the smallest positive normal value 2^emin (1 for the
// integer formats).
func (f Format) MinNormal() float64 {
	s := f.spec()
	if !s.float {
		return 1
	}
	return math.Ldexp(1, s.emin)
}

// MinSubnormal returns the smallest positive subnormal value 2^(emin−p+1)
// (1 for the integer formats).
func (f Format) MinSubnormal() float64 {
	s := f.spec()
	if !s.float {
		return 1
	}
	return math.Ldexp(1, s.emin-s.p+1)
}

// Epsilon returns machine epsilon 2^−(p−1), the spacing of values just above
// 1 (the unit roundoff of RNE is half of it); 1 for the integer formats.
func (f Format) Epsilon() float64 {
	s := f.spec()
	if !s.float {
		return 1
	}
	return math.Ldexp(1, 1-s.p)
}
