package sim

import (
	"fmt"
	"math"
	"math/bits"
)

// Clock converts cycles of one clock domain to time and back. Its Period is an integer number of
// picoseconds, so a clock's frequency is rounded to the nearest representable period: for example
// 1.8 GHz (555.555… ps) becomes a 556 ps period, an effective 1.798561 GHz. A model at "1.8 GHz"
// therefore runs 0.08% slow against the nominal frequency: after 1e6 cycles it is at 556 µs
// instead of 555.556 µs (0.444 µs of drift per million cycles). The drift is deterministic and the
// same in every run; reports should use Clock.Hz (the effective frequency) when converting cycle
// counts to rates, so that cycles and time stay consistent.
//
// The zero Clock is invalid (its conversions divide by zero); use NewClock or set Period >= 1.
type Clock struct {
	// Period is the length of one cycle (>= 1 ps).
	Period Time
}

// NewClock returns the clock of frequency hz, with period round(1e12/hz) ps. It returns an error if
// hz is not a finite positive number, or if the rounded period is not at least 1 ps (hz above
// 2 THz) or does not fit in a Time.
func NewClock(hz float64) (Clock, error) {
	if math.IsNaN(hz) || math.IsInf(hz, 0) || hz <= 0 {
		return Clock{}, fmt.Errorf("sim: clock frequency %v Hz: must be a finite positive number", hz)
	}
	p := math.Round(1e12 / hz)
	if p < 1 {
		return Clock{}, fmt.Errorf("sim: clock frequency %v Hz: period rounds to %v ps, must be at least 1 ps", hz, p)
	}
	if p >= float64(MaxTime) {
		return Clock{}, fmt.Errorf("sim: clock frequency %v Hz: period too long", hz)
	}
	return Clock{Period: Time(p)}, nil
}

// Hz returns the effective frequency 1e12/Period, which may differ from the frequency passed to
// NewClock because the period is rounded to whole picoseconds.
func (c Clock) Hz() float64 { return 1e12 / float64(c.Period) }

// Cycles returns the duration of n cycles, n·Period, saturated to MaxTime (and -MaxTime-1) when it
// does not fit in a Time (see Add).
func (c Clock) Cycles(n int64) Time {
	if n >= 0 {
		hi, lo := bits.Mul64(uint64(n), uint64(c.Period))
		if hi != 0 || lo > uint64(MaxTime) {
			return MaxTime
		}
		return Time(lo)
	}
	if n < int64(-MaxTime/c.Period) {
		return -MaxTime - 1
	}
	return Time(n) * c.Period
}

// ToCycles returns the number of whole cycles in t, floor(t / Period) (rounding toward minus
// infinity also for negative t).
func (c Clock) ToCycles(t Time) int64 {
	q := t / c.Period
	if t%c.Period != 0 && t < 0 {
		q--
	}
	return int64(q)
}

// CeilCycles returns ceil(t / Period): the number of cycles needed to cover t.
func (c Clock) CeilCycles(t Time) int64 {
	q := t / c.Period
	if t%c.Period != 0 && t > 0 {
		q++
	}
	return int64(q)
}

// NextEdge returns the first clock edge at or after t: the smallest multiple of Period >= t.
func (c Clock) NextEdge(t Time) Time { return Time(c.CeilCycles(t)) * c.Period }
