package machines

import (
	"strings"
	"testing"
)

// A core clock whose period the simulated time's whole picoseconds would
// move by more than MaxPeriodRounding is refused, saying the clock it
// would run at; every clock up to 10 GHz passes. (700 GHz ran at 1 THz: an
// A100 HGEMM at 130 % of its peak, found by a review.)
func TestCoreClockRounding(t *testing.T) {
	for _, c := range []struct {
		f    Frequency
		want string
	}{
		{700e9, "would round to 1 ps: a 1THz clock, 42.9 % off"},
		{600e9, "would round to 2 ps: a 500GHz clock, 16.7 % off"},
		{1e12, ""}, {500e9, ""}, {1.41e9, ""}, {2.6e9, ""}, {12e9, ""}, {1e6, ""},
		{2e12, "must be in [1MHz, 1THz]"},
	} {
		got := CoreClockProblem(c.f)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want %q", c.f, got, c.want)
		}
	}
	for f := Frequency(1e6); f <= 10e9; f *= 1.0007 {
		if msg := CoreClockProblem(f); msg != "" {
			t.Fatalf("%v: %s", f, msg)
		}
	}
}
