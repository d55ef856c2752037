package sim

import (
	"math"
	"testing"
)

func TestTimeString(t *testing.T) {
	cases := []struct {
		t    Time
		want string
	}{
		{0, "0s"},
		{1, "1ps"},
		{556, "556ps"},
		{999, "999ps"},
		{1000, "1ns"},
		{1500, "1.5ns"},
		{1234, "1.234ns"},
		{1234567, "1.234567µs"},
		{1001, "1.001ns"},
		{2 * Millisecond, "2ms"},
		{Second + 1, "1.000000000001s"},
		{-3 * Second, "-3s"},
		{-1500, "-1.5ns"},
		{MaxTime, "9223372.036854775807s"},
		{Time(math.MinInt64), "-9223372.036854775808s"},
	}
	for _, c := range cases {
		if got := c.t.String(); got != c.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(c.t), got, c.want)
		}
	}
}

func TestTimeSeconds(t *testing.T) {
	if got := (1500 * Millisecond).Seconds(); got != 1.5 {
		t.Errorf("1.5s.Seconds() = %v", got)
	}
	if got := Time(1).Seconds(); got != 1e-12 {
		t.Errorf("1ps.Seconds() = %v", got)
	}
	if got := (-2 * Second).Seconds(); got != -2 {
		t.Errorf("-2s.Seconds() = %v", got)
	}
}

func TestNewClock(t *testing.T) {
	cases := []struct {
		hz     float64
		period Time
	}{
		{1e9, 1000},
		{1.8e9, 556}, // 555.555… rounds up: effective 1.798561 GHz
		{1.5e9, 667}, // 666.666… rounds up
		{2.5e9, 400},
		{3e9, 333}, // 333.333… rounds down
		{1e12, 1},
		{1.5e12, 1}, // 0.666… rounds to 1
		{7, 142857142857},
	}
	for _, c := range cases {
		clk, err := NewClock(c.hz)
		if err != nil {
			t.Fatalf("NewClock(%v): %v", c.hz, err)
		}
		if clk.Period != c.period {
			t.Errorf("NewClock(%v).Period = %d, want %d", c.hz, clk.Period, c.period)
		}
	}
	for _, hz := range []float64{0, -1e9, math.NaN(), math.Inf(1), math.Inf(-1), 2.1e12, 1e-20} {
		if _, err := NewClock(hz); err == nil {
			t.Errorf("NewClock(%v) accepted", hz)
		}
	}
}

func TestClockConversions(t *testing.T) {
	ghz, _ := NewClock(1e9)
	if got := ghz.Cycles(5); got != 5*Nanosecond {
		t.Errorf("1GHz Cycles(5) = %v", got)
	}
	if got := ghz.ToCycles(5999); got != 5 {
		t.Errorf("1GHz ToCycles(5999) = %d", got)
	}
	if got := ghz.CeilCycles(5001); got != 6 {
		t.Errorf("1GHz CeilCycles(5001) = %d", got)
	}
	if got := ghz.CeilCycles(5000); got != 5 {
		t.Errorf("1GHz CeilCycles(5000) = %d", got)
	}
	if got := ghz.NextEdge(5000); got != 5000 {
		t.Errorf("1GHz NextEdge(5000) = %d", got)
	}
	if got := ghz.NextEdge(5001); got != 6000 {
		t.Errorf("1GHz NextEdge(5001) = %d", got)
	}

	c18, _ := NewClock(1.8e9)
	if got := c18.Cycles(1_000_000); got != 556*Microsecond {
		t.Errorf("1.8GHz Cycles(1e6) = %v, want 556µs", got)
	}
	// Drift against the nominal frequency: 1e6 nominal cycles take 555.555…µs, the model 556µs.
	nominal := 1e6 / 1.8e9
	drift := c18.Cycles(1_000_000).Seconds() - nominal
	if math.Abs(drift-0.4444444e-6) > 1e-12 {
		t.Errorf("1.8GHz drift per 1e6 cycles = %v s, want 0.444µs", drift)
	}
	if hz := c18.Hz(); math.Abs(hz-1.798561151e9) > 1 {
		t.Errorf("1.8GHz effective Hz = %v", hz)
	}
	if got := c18.ToCycles(556*3 - 1); got != 2 {
		t.Errorf("1.8GHz ToCycles(1667) = %d", got)
	}
	if got := c18.NextEdge(1000); got != 1112 {
		t.Errorf("1.8GHz NextEdge(1000) = %d", got)
	}

	odd := Clock{Period: 7}
	for tt := Time(-30); tt <= 30; tt++ {
		fl := odd.ToCycles(tt)
		ce := odd.CeilCycles(tt)
		if Time(fl)*7 > tt || Time(fl+1)*7 <= tt {
			t.Errorf("period 7 ToCycles(%d) = %d not floor", tt, fl)
		}
		if Time(ce)*7 < tt || Time(ce-1)*7 >= tt {
			t.Errorf("period 7 CeilCycles(%d) = %d not ceil", tt, ce)
		}
		ne := odd.NextEdge(tt)
		if ne%7 != 0 || ne < tt || ne-7 >= tt {
			t.Errorf("period 7 NextEdge(%d) = %d", tt, ne)
		}
		if tt >= 0 && odd.Cycles(fl) > tt {
			t.Errorf("period 7 Cycles(ToCycles(%d)) > t", tt)
		}
	}
}

func TestCheckedArithmetic(t *testing.T) {
	minT := -MaxTime - 1
	adds := []struct{ a, b, want Time }{
		{1, 2, 3},
		{MaxTime - 1, 1, MaxTime},
		{MaxTime - 1, 2, MaxTime},
		{MaxTime, MaxTime, MaxTime},
		{1 << 62, 1 << 62, MaxTime},
		{-5, 3, -2},
		{minT + 1, -2, minT},
		{minT, -1, minT},
		{5, 0, 5},
	}
	for _, c := range adds {
		if got := Add(c.a, c.b); got != c.want {
			t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	ceils := []struct {
		ps   float64
		want Time
	}{
		{0, 0}, {0.1, 1}, {1, 1}, {-3, 0}, {1e18, 1e18},
		{9.3e18, MaxTime}, {1e300, MaxTime}, {math.Inf(1), MaxTime}, {math.NaN(), MaxTime}, {math.Inf(-1), 0},
		{float64(MaxTime), MaxTime}, // 2^63 exactly: does not fit
	}
	for _, c := range ceils {
		if got := CeilPS(c.ps); got != c.want {
			t.Errorf("CeilPS(%g) = %d, want %d", c.ps, got, c.want)
		}
	}
	ghz := Clock{Period: 1000}
	cycles := []struct {
		n    int64
		want Time
	}{
		{0, 0}, {5, 5000}, {int64(MaxTime / 1000), MaxTime / 1000 * 1000}, {int64(MaxTime/1000) + 1, MaxTime},
		{1e16, MaxTime}, {math.MaxInt64, MaxTime}, {-5, -5000}, {math.MinInt64, minT},
	}
	for _, c := range cycles {
		if got := ghz.Cycles(c.n); got != c.want {
			t.Errorf("1GHz Cycles(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	if !Saturated(MaxTime) || Saturated(MaxTime-1) {
		t.Error("Saturated")
	}
}
