package sim

import (
	"strconv"
)

// Time is simulated time (or a duration) in integer picoseconds. Floating point is never used to
// advance time.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond       = 1000 * Picosecond
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// MaxTime is the largest representable time (about 106 days of simulated time).
const MaxTime Time = 1<<63 - 1

// String formats t exactly, in the largest unit not exceeding |t| with as many decimals as needed
// and trailing zeros removed: "0s", "556ps", "1.5ns", "1.234567µs", "2ms", "-3s".
func (t Time) String() string {
	if t == 0 {
		return "0s"
	}
	var buf [32]byte
	b := buf[:0]
	u := uint64(t)
	if t < 0 {
		b = append(b, '-')
		u = -u // two's complement magnitude, correct for MinInt64 too
	}
	unit, name := uint64(1), "ps"
	switch {
	case u >= uint64(Second):
		unit, name = uint64(Second), "s"
	case u >= uint64(Millisecond):
		unit, name = uint64(Millisecond), "ms"
	case u >= uint64(Microsecond):
		unit, name = uint64(Microsecond), "µs"
	case u >= uint64(Nanosecond):
		unit, name = uint64(Nanosecond), "ns"
	}
	b = strconv.AppendUint(b, u/unit, 10)
	if frac := u % unit; frac != 0 {
		// Number of decimal digits of the unit (3, 6, 9 or 12).
		digits := 0
		for x := unit; x > 1; x /= 10 {
			digits++
		}
		var fb [12]byte
		for i := digits - 1; i >= 0; i-- {
			fb[i] = byte('0' + frac%10)
			frac /= 10
		}
		end := digits
		for end > 0 && fb[end-1] == '0' {
			end--
		}
		b = append(b, '.')
		b = append(b, fb[:end]...)
	}
	b = append(b, name...)
	return string(b)
}

// Seconds returns t in seconds as a float64 (for reporting only; never feed it back into time).
func (t Time) Seconds() float64 {
	s := t / Second
	ps := t % Second
	return float64(s) + float64(ps)*1e-12
}
