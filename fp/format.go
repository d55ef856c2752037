// Package fp implements the number formats of matrix engines (FP32, FP16,
// BF16, TF32, FP8 E4M3/E5M2, INT8, INT32) and bit-exact conversions between
// them with every rounding mode the hardware families use.
package fp

// Format names a number format. Values of narrow formats travel as their bit
// pattern in the low bits of a uint32 (TF32 is stored in an FP32 container).
type Format uint8

// The supported formats.
const (
	FP32  Format = iota // IEEE binary32
	FP16                // IEEE binary16
	BF16                // bfloat16: 1-8-7
	TF32                // 1-8-10, stored in the high 19 bits of an FP32 pattern
	E4M3                // OCP FP8 E4M3 (no infinities, one NaN pattern per sign)
	E5M2                // OCP FP8 E5M2 (IEEE-like)
	INT8                // two's complement 8-bit integer
	INT32               // two's complement 32-bit integer
	// FP64 is IEEE binary64. Its values travel as float64 (math.Float64bits
	// for the pattern), not as uint32 patterns: the pattern conversions of
	// this package (FromFloat64, ToFloat64 …) do not take it, and Formats
	// leaves it out.
	FP64
	// NumFormats is the number of formats: arrays indexed by Format have
	// this length.
	NumFormats
)

var formatNames = [...]string{"fp32", "fp16", "bf16", "tf32", "e4m3", "e5m2", "int8", "int32", "fp64"}

// String returns the lower-case name used in files and on the command line.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "format?"
}

// Formats returns every format whose values travel as uint32 patterns (all
// but FP64), in declaration order.
func Formats() []Format {
	out := make([]Format, FP64)
	for i := range out {
		out[i] = Format(i)
	}
	return out
}

// ParseFormat returns the format with the given name (case-insensitive;
// "fp8-e4m3"/"fp8_e4m3" style aliases accepted for the FP8 formats).
func ParseFormat(s string) (Format, bool) {
	switch lower(s) {
	case "fp32", "float32", "f32":
		return FP32, true
	case "fp16", "float16", "f16", "half":
		return FP16, true
	case "bf16", "bfloat16":
		return BF16, true
	case "tf32":
		return TF32, true
	case "e4m3", "fp8-e4m3", "fp8_e4m3", "fp8e4m3":
		return E4M3, true
	case "e5m2", "fp8-e5m2", "fp8_e5m2", "fp8e5m2":
		return E5M2, true
	case "int8", "s8":
		return INT8, true
	case "int32", "s32":
		return INT32, true
	case "fp64", "float64", "f64", "double":
		return FP64, true
	}
	return 0, false
}

// Rounding names a rounding mode.
type Rounding uint8

// The rounding modes. The Ascend names are RINT=RNE, ROUND=RNA, TRUNC=RZ,
// FLOOR=RD, CEIL=RU, ODD=RO.
const (
	RNE Rounding = iota // to nearest, ties to even
	RNA                 // to nearest, ties away from zero
	RZ                  // toward zero (truncate)
	RD                  // toward −∞ (floor)
	RU                  // toward +∞ (ceil)
	RO                  // to odd (sticky into the last bit)
	numRoundings
)

var roundingNames = [...]string{"rne", "rna", "rz", "rd", "ru", "ro"}

// String returns the lower-case name of the mode.
func (r Rounding) String() string {
	if int(r) < len(roundingNames) {
		return roundingNames[r]
	}
	return "rounding?"
}

// Roundings returns every rounding mode in declaration order.
func Roundings() []Rounding {
	out := make([]Rounding, numRoundings)
	for i := range out {
		out[i] = Rounding(i)
	}
	return out
}

// ParseRounding accepts the IEEE-style names (rne, rna, rz, rd, ru, ro) and
// the Ascend names (rint, round, trunc, floor, ceil, odd, none=rint).
func ParseRounding(s string) (Rounding, bool) {
	switch lower(s) {
	case "rne", "rn", "rint", "none", "nearest-even":
		return RNE, true
	case "rna", "round", "nearest-away":
		return RNA, true
	case "rz", "trunc", "toward-zero":
		return RZ, true
	case "rd", "floor", "down":
		return RD, true
	case "ru", "ceil", "up":
		return RU, true
	case "ro", "odd":
		return RO, true
	}
	return 0, false
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
