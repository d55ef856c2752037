package ozaki

import "math"

// NegInf is the exponent of zero, a sentinel that behaves as −∞ in the
// exponent arithmetic of ESC. It is so far below every real exponent
// (≥ −1074) that NegInf + x stays below NegInf/2 for every real exponent x
// and NegInf + NegInf still fits in an int32; use IsNegInf, AddExp and MaxExp
// instead of comparing with NegInf directly.
const NegInf = math.MinInt32 / 4

// IsNegInf reports whether the exponent value e stands for −∞, that is,
// whether it is NegInf or a sum involving NegInf (e ≤ NegInf/2).
func IsNegInf(e int) bool { return e <= NegInf/2 }

// AddExp returns a + b with −∞ absorbing: if either is −∞ (IsNegInf), the
// result is exactly NegInf.
func AddExp(a, b int) int {
	if IsNegInf(a) || IsNegInf(b) {
		return NegInf
	}
	return a + b
}

// MaxExp returns the larger of two exponents, −∞ being below all others.
func MaxExp(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Exp returns E(x) = floor(log2|x|) for a finite nonzero x, using the true
// exponent of subnormals (Exp(2^-1074) = −1074), and NegInf for ±0. For ±Inf
// and NaN it returns NegInf as well: callers that may see non-finite values
// must scan for them first (ADP does).
func Exp(x float64) int {
	// From the bits: the biased exponent of a normal number, Frexp's for
	// subnormals (the ESC's block tables take one an element: ColBlocks
	// 4096² 0.35 → 0.16 s, BenchmarkColBlocks).
	bits := math.Float64bits(x)
	switch e := int(bits>>52) & 0x7ff; {
	case e == 0x7ff, bits<<1 == 0: // ±Inf, NaN, ±0
		return NegInf
	case e != 0:
		return e - 1023
	}
	_, e := math.Frexp(x)
	return e - 1
}

// split returns x = m·2^q with |m| < 2^53 an integer (sign included) for a
// finite x. m is not reduced (trailing zeros are kept): q = Exp(x) − 52.
func split(x float64) (m int64, q int) {
	if x == 0 {
		return 0, 0
	}
	f, e := math.Frexp(x) // x = f·2^e, 0.5 ≤ |f| < 1, exact for subnormals
	return int64(f * (1 << 53)), e - 53
}
