package machines

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-viper/mapstructure/v2"
)

// unit is a suffix and the factor it stands for.
type unit struct {
	suffix string
	factor int64
}

// Units are matched case-insensitively (gB/s, kib), longest first, so
// "KiB" is not read as "B" after a number "1Ki" — but for a lowercase b,
// a bit (Gb/s), which splitUnit refuses.
var sizeUnits = []unit{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

var freqUnits = []unit{{"THz", 1e12}, {"GHz", 1e9}, {"MHz", 1e6}, {"kHz", 1e3}, {"Hz", 1}}

var bwUnits = []unit{
	{"TiB/s", 1 << 40}, {"GiB/s", 1 << 30}, {"MiB/s", 1 << 20}, {"KiB/s", 1 << 10},
	{"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"KB/s", 1e3}, {"B/s", 1},
}

// splitUnit separates s into a trimmed number and the factor of its unit
// suffix (1 when there is none). The number must be a plain decimal:
// digits, an optional fraction and an optional exponent of at most three
// digits (no sign, no hex, no Inf/NaN).
func splitUnit(s string, units []unit) (num string, factor int64, err error) {
	t := strings.TrimSpace(s)
	factor = 1
	// Longest suffixes first: every list above is ordered so that no
	// suffix is a suffix of an earlier one.
	for _, u := range units {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			written := t[len(t)-len(u.suffix):]
			t = strings.TrimSpace(t[:len(t)-len(u.suffix)])
			if i := strings.IndexByte(u.suffix, 'B'); i >= 0 && written[i] == 'b' {
				// Gb/s, Mb: bits, as network ports are quoted — read as
				// bytes they would be 8 times too many.
				hint := ""
				if v, err := strconv.ParseFloat(t, 64); err == nil && isDecimal(t) {
					hint = fmt.Sprintf(" (%s%s = %s%s)", t, written, strconv.FormatFloat(v/8, 'g', -1, 64), u.suffix)
				}
				return "", 0, fmt.Errorf("%q: a lowercase b is a bit, and davinci-sim counts bytes (B): divide by 8%s", s, hint)
			}
			if i := strings.IndexByte(u.suffix, 'M'); i == 0 && written[0] == 'm' {
				// mHz: milli, a thousandth, not mega (case aside, the
				// units are read in any case: ghz, kib).
				return "", 0, fmt.Errorf("%q: a lowercase m is milli (a thousandth): write %s%s", s, t, u.suffix)
			}
			factor = u.factor
			break
		}
	}
	if !isDecimal(t) {
		if len(t) > 1 && t[0] == '-' && isDecimal(t[1:]) {
			return "", 0, fmt.Errorf("%q is negative: the quantity cannot be below 0", s)
		}
		if strings.IndexFunc(t, unicode.IsLetter) >= 0 {
			// Letters no unit accounts for (1EiB, fast): the units
			// there are. (Else the number is what is wrong: 1..2KiB.)
			suffixes := make([]string, len(units))
			for i, u := range units {
				suffixes[i] = u.suffix
			}
			return "", 0, fmt.Errorf("%q is not a number with an optional unit (%s)", s, strings.Join(suffixes, ", "))
		}
		return "", 0, fmt.Errorf("%q is not a number with an optional unit", s)
	}
	return t, factor, nil
}

// isDecimal reports whether t is digits[.digits][e[+-]ddd].
func isDecimal(t string) bool {
	i, n := 0, len(t)
	digits := func() int {
		j := i
		for i < n && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		return i - j
	}
	intDigits := digits()
	fracDigits := 0
	if i < n && t[i] == '.' {
		i++
		fracDigits = digits()
	}
	if intDigits+fracDigits == 0 {
		return false
	}
	if i < n && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < n && (t[i] == '+' || t[i] == '-') {
			i++
		}
		if e := digits(); e == 0 || e > 3 {
			return false
		}
	}
	return i == n
}

// ParseSize parses a byte count: a plain integer ("1048576") or a number
// with a unit: B, KiB, MiB, GiB, TiB (powers of two) or KB, MB, GB, TB
// (powers of ten), with optional space before the unit ("64 KiB"). A
// fractional number is accepted when the result is a whole number of bytes
// ("1.5MiB").
func ParseSize(s string) (Size, error) { return parseSize(s, false) }

// ParseSizeDown is ParseSize for a bound, where a fraction of a byte does
// not matter: the size rounds down to whole bytes ("1.4GiB", 1503238553.6
// bytes, is 1503238553; --max-memory).
func ParseSizeDown(s string) (Size, error) { return parseSize(s, true) }

func parseSize(s string, down bool) (Size, error) {
	if i, ok := yamlInteger(s); ok {
		if t := strings.TrimSpace(s); len(t) > 3 && strings.EqualFold(t[:2], "0x") && strings.ContainsRune("bB", rune(t[len(t)-1])) {
			// 0x100000B: the hex digit B (16777227), or 0x100000 bytes?
			if without, ok := parseInteger(t[:len(t)-1], 64); ok {
				return 0, fmt.Errorf("bad size %q: a hexadecimal size ending in B is ambiguous (the digit, or bytes?): write %s for %d bytes, or %d", s, t[:len(t)-1], without, i)
			}
			return 0, fmt.Errorf("bad size %q: a hexadecimal size ending in B is ambiguous (the digit, or bytes?): write %d", s, i)
		}
		return Size(i), nil
	}
	num, factor, err := splitUnit(s, sizeUnits)
	if err != nil {
		return 0, fmt.Errorf("bad size: %w; e.g. 512KiB, 1MiB, 1048576", err)
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("bad size %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(factor))
	n := r.Num()
	if !r.IsInt() {
		if !down {
			return 0, fmt.Errorf("bad size %q: not a whole number of bytes", s)
		}
		n = new(big.Int).Quo(r.Num(), r.Denom()) // (toward zero: a size is ≥ 0)
	}
	if !n.IsInt64() {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return Size(n.Int64()), nil
}

// String prints the size in the largest binary unit that represents it
// with at most three decimals (1MiB, 1.5MiB, 64KiB), unless that needs a
// fraction and a decimal unit fits exactly (32KB rather than 31.25KiB);
// else in bytes (100B). The result parses back to the same size.
func (s Size) String() string {
	v := int64(s)
	if v <= 0 {
		return strconv.FormatInt(v, 10) + "B"
	}
	var bin string
	integral := false
	for _, u := range sizeUnits[:4] {
		if v >= u.factor && (v%u.factor == 0 || (v <= math.MaxInt64/1000 && v*1000%u.factor == 0)) {
			bin = strconv.FormatFloat(float64(v)/float64(u.factor), 'f', -1, 64) + u.suffix
			integral = v%u.factor == 0
			break
		}
	}
	if integral {
		return bin
	}
	for _, u := range sizeUnits[4:8] {
		if v >= u.factor && v%u.factor == 0 {
			return strconv.FormatInt(v/u.factor, 10) + u.suffix
		}
	}
	if bin != "" {
		return bin
	}
	return strconv.FormatInt(v, 10) + "B"
}

// parseScaled parses a non-negative decimal number with a unit factor into
// a float64 that is the correctly rounded value of number × factor.
// yamlInteger reads s, a value without a unit that is not a plain
// decimal, as a file's YAML gives an integer (0x100000, 0o777, 1_048_576),
// where it is one ≥ 0; false for anything else (a unit, a decimal, which
// the units' parsers read).
func yamlInteger(s string) (int64, bool) {
	t := strings.TrimSpace(s)
	if t == "" || isDecimal(t) || strings.ContainsAny(t, ".eE") && !strings.HasPrefix(strings.ToLower(t), "0x") {
		return 0, false
	}
	i, ok := parseInteger(t, 64)
	return i, ok && i >= 0
}

func parseScaled(s string, units []unit, what, example string) (float64, error) {
	if i, ok := yamlInteger(s); ok {
		return float64(i), nil
	}
	num, factor, err := splitUnit(s, units)
	if err != nil {
		return 0, fmt.Errorf("bad %s: %w; e.g. %s", what, err, example)
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("bad %s %q", what, s)
	}
	r.Mul(r, new(big.Rat).SetInt64(factor))
	f, _ := r.Float64()
	if math.IsInf(f, 0) {
		return 0, fmt.Errorf("bad %s %q: too large", what, s)
	}
	return f, nil
}

// formatScaled prints v in the largest decimal unit of units not above it,
// falling back to a plain number when that would not parse back exactly.
// A number of that unit below 1e-4 or from 1e12 on is written with an
// exponent (1e-300B/s, 3e+15TB/s), not as hundreds of digits.
func formatScaled(v float64, units []unit, parse func(string) (float64, error)) string {
	plain := strconv.FormatFloat(v, 'g', -1, 64)
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return plain
	}
	for _, u := range units {
		if u.factor&(u.factor-1) == 0 && u.factor != 1 {
			continue // skip binary units: decimal ones read better here
		}
		if v >= float64(u.factor) || u.factor == 1 {
			m, style := v/float64(u.factor), byte('f')
			if m < 1e-4 || m >= 1e12 {
				style = 'g' // an exponent: 'g' writes one out of this range
			}
			// The fewest digits that read back as v: v/factor need not be
			// exact (1e39 Hz / 1e12 is 9.999999999999999e+26, where
			// 1e+27THz reads back as 1e39 Hz).
			for prec := range 18 {
				if style == 'g' && prec == 0 {
					continue
				}
				s := strconv.FormatFloat(m, style, prec, 64) + u.suffix
				if back, err := parse(s); err == nil && back == v {
					return s
				}
			}
			s := strconv.FormatFloat(m, style, -1, 64) + u.suffix
			if back, err := parse(s); err == nil && back == v {
				return s
			}
			break
		}
	}
	return plain
}

// ParseFrequency parses a clock rate: a plain number of Hz ("1e9") or a
// number with a unit Hz, kHz, MHz, GHz, THz ("1GHz", "1.8 GHz").
func ParseFrequency(s string) (Frequency, error) {
	f, err := parseScaled(s, freqUnits, "frequency", "1GHz, 1.8 GHz, 1e9")
	return Frequency(f), err
}

// String prints the frequency in the largest unit not above it (1GHz,
// 1.8GHz, 800MHz).
func (f Frequency) String() string {
	return formatScaled(float64(f), freqUnits, func(s string) (float64, error) {
		v, err := ParseFrequency(s)
		return float64(v), err
	})
}

// ParseBandwidth parses bytes per second: a plain number ("1228e9") or a
// number with a unit B/s, KB/s, MB/s, GB/s, TB/s (powers of ten) or
// KiB/s, MiB/s, GiB/s, TiB/s ("1.2TB/s", "135GB/s").
func ParseBandwidth(s string) (Bandwidth, error) {
	f, err := parseScaled(s, bwUnits, "bandwidth", "1.2TB/s, 135GB/s, 1228e9")
	return Bandwidth(f), err
}

// String prints the bandwidth in the largest decimal unit not above it
// (1.2TB/s, 135GB/s).
func (b Bandwidth) String() string {
	return formatScaled(float64(b), bwUnits, func(s string) (float64, error) {
		v, err := ParseBandwidth(s)
		return float64(v), err
	})
}

// BytesPerCycle is the bandwidth expressed in bytes per cycle of clock f.
func (b Bandwidth) BytesPerCycle(f Frequency) float64 { return float64(b) / float64(f) }

var (
	sizeType      = reflect.TypeFor[Size]()
	frequencyType = reflect.TypeFor[Frequency]()
	bandwidthType = reflect.TypeFor[Bandwidth]()
)

// DecodeHook returns the mapstructure decode hook for the unit types: Size,
// Frequency and Bandwidth accept YAML numbers or strings with units. It also
// refuses to truncate a fractional number into an integer field (plain
// mapstructure would turn 2.5 into 2) and applies encoding.TextUnmarshaler
// to strings, so other packages' config types can join in.
func DecodeHook() mapstructure.DecodeHookFunc {
	return mapstructure.ComposeDecodeHookFunc(unitHook, mapstructure.TextUnmarshallerHookFunc())
}

func unitHook(from, to reflect.Type, data any) (any, error) {
	switch to {
	case sizeType:
		switch v := data.(type) {
		case string:
			return ParseSize(v)
		default:
			f, ok := number(data)
			if !ok {
				return notUnit(data)
			}
			if i, ok := integer(data); ok && i >= 0 { // (exact: 2^63 − 1 is no float64)
				return Size(i), nil
			}
			switch {
			case f != math.Trunc(f):
				return nil, fmt.Errorf("bad size %v: want a whole number of bytes", data)
			case f < 0:
				return nil, fmt.Errorf("bad size %v: must not be negative", data)
			case f >= math.MaxInt64:
				return nil, fmt.Errorf("bad size %v: too large (at most %d bytes)", data, int64(math.MaxInt64))
			}
			return Size(f), nil
		}
	case frequencyType, bandwidthType:
		var f float64
		var err error
		switch v := data.(type) {
		case string:
			if to == frequencyType {
				var fr Frequency
				fr, err = ParseFrequency(v)
				f = float64(fr)
			} else {
				var bw Bandwidth
				bw, err = ParseBandwidth(v)
				f = float64(bw)
			}
		default:
			var ok bool
			if f, ok = number(data); !ok {
				return notUnit(data)
			}
			if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
				err = fmt.Errorf("bad value %v: want a finite non-negative number", data)
			}
		}
		if err != nil {
			return nil, err
		}
		if to == frequencyType {
			return Frequency(f), nil
		}
		return Bandwidth(f), nil
	}
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if from != nil && (from.Kind() == reflect.Float32 || from.Kind() == reflect.Float64) {
			f, _ := number(data)
			if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, fmt.Errorf("want an integer, got %v", data)
			}
			return int64(f), nil
		}
	}
	return data, nil
}

// number converts any Go numeric value to float64.
func number(data any) (float64, bool) {
	v := reflect.ValueOf(data)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), true
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	}
	return 0, false
}

// integer converts a Go integer value to int64 exactly.
func integer(data any) (int64, bool) {
	v := reflect.ValueOf(data)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Uint() <= math.MaxInt64 {
			return int64(v.Uint()), true
		}
	}
	return 0, false
}

// notUnit rejects values of unit types that are neither numbers nor
// strings (nil passes: it leaves the field zero).
func notUnit(data any) (any, error) {
	if data == nil {
		return nil, nil
	}
	return nil, errors.New("want a number or a string with a unit")
}
