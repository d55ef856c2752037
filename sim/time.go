package sim

import (
	"errors"
	"math"
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

// MaxTime is the largest representable time (about 106 days of simulated time). The checked
// arithmetic below (Add, CeilPS, Clock.Cycles) saturates at MaxTime, and the engine refuses to
// schedule an event at MaxTime, so a result that does not fit stops the run with ErrTimeOverflow
// instead of wrapping around.
const MaxTime Time = 1<<63 - 1

// ErrTimeOverflow is wrapped by the error a run stops with when a time does not fit in a Time:
// a cost (latency, cycle count, transfer at a tiny bandwidth) too large to simulate.
var ErrTimeOverflow = errors.New("simulated time exceeds the int64 picosecond range (about 106 days)")

// Add returns a+b, saturated to [-MaxTime-1, MaxTime] instead of wrapping around. Cost models
// add durations with it so that an overflowing sum becomes MaxTime, which Engine.At refuses.
func Add(a, b Time) Time {
	s := a + b
	if (s > a) != (b > 0) { // the sum moved the wrong way: it overflowed
		if b > 0 {
			return MaxTime
		}
		return -MaxTime - 1
	}
	return s
}

// CeilPS returns ceil(ps) picoseconds, saturated to MaxTime for values that do not fit (and for
// NaN); negative values become 0. Cost models convert floating-point durations with it instead
// of Time(math.Ceil(x)), whose result Go leaves unspecified when x is out of range.
func CeilPS(ps float64) Time {
	c := math.Ceil(ps)
	switch {
	case c >= float64(MaxTime) || math.IsNaN(c): // float64(MaxTime) rounds up to 2^63
		return MaxTime
	case c <= 0:
		return 0
	}
	return Time(c)
}

// CeilCount returns ceil(x) as an int64 count (of cycles, steps, …), saturated to MaxInt64 for
// values that do not fit and for NaN; negative values become 0. Clock.Cycles of the saturated
// count is MaxTime.
func CeilCount(x float64) int64 {
	c := math.Ceil(x)
	switch {
	case c >= math.MaxInt64 || math.IsNaN(c): // float64(MaxInt64) rounds up to 2^63
		return math.MaxInt64
	case c <= 0:
		return 0
	}
	return int64(c)
}

// Saturated reports whether t is MaxTime, the value checked arithmetic returns for a time that
// does not fit: a cost model that sees it reports ErrTimeOverflow.
func Saturated(t Time) bool { return t >= MaxTime }

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
	return float64(s) + float64(float64(ps)*1e-12)
}
