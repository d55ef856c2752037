package ozaki

import (
	"math"
	"testing"
)

// TestComponentwiseStatsTinyBound: an exact result whose |A||B| is below
// 2^−1021 (u·|A||B| underflows to 0) has no error, and an inexact one its
// finite error in u, not +Inf (0/0 or x/0 before).
func TestComponentwiseStatsTinyBound(t *testing.T) {
	x := 0x1p-1060
	if st := ComponentwiseStats([]float64{x}, []float64{x}, []float64{x}); st.Max != 0 || st.Mean != 0 || st.Count != 1 {
		t.Fatalf("exact: %+v", st)
	}
	// One subnormal ulp (2^−1074) off a bound of 2^−1060: 2^−14 of it, 2^39 u.
	if st := ComponentwiseStats([]float64{x}, []float64{x + 0x1p-1074}, []float64{x}); st.Max != 0x1p39 || st.Count != 1 {
		t.Fatalf("inexact: %+v", st)
	}
}

// TestComponentwiseStatsNonFinite: a reference that is ±Inf or NaN is
// counted apart (the same value: no error; another: NonFiniteDiffer), a
// bound beyond the float64 range too, and a zero bound with a wrong result
// counts as an infinite error.
func TestComponentwiseStatsNonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	ref := []float64{inf, -inf, nan, inf, 1e308, 0, 0, 1}
	got := []float64{inf, -inf, nan, 1, 1e308, 0, 0x1p-1074, 1}
	abs := []float64{inf, inf, inf, inf, inf, 0, 0, 1}
	st := ComponentwiseStats(ref, got, abs)
	want := ErrorStats{Max: inf, Mean: inf, Count: 2, Skipped: 1, ZeroBoundWrong: 1, NonFinite: 4, NonFiniteDiffer: 1, BoundOverflow: 1}
	if st != want {
		t.Fatalf("got %+v, want %+v", st, want)
	}
	// Only the same infinities: nothing counted, no error.
	if st := ComponentwiseStats([]float64{inf}, []float64{inf}, []float64{inf}); st.Count != 0 || st.Max != 0 || st.NonFinite != 1 || st.NonFiniteDiffer != 0 {
		t.Fatalf("same infinity: %+v", st)
	}
}

// A result that is ±Inf or NaN where the reference is finite is infinitely
// wrong, its bound overflowing or not: it was counted as a bound overflow
// and left out (max_u 0 beside an +Inf C).
func TestComponentwiseNonFiniteResultFiniteReference(t *testing.T) {
	inf := math.Inf(1)
	st := ComponentwiseStats([]float64{0, 1, 2}, []float64{inf, math.NaN(), 2}, []float64{inf, inf, inf})
	if st.Count != 2 || !math.IsInf(st.Max, 1) || st.BoundOverflow != 1 {
		t.Errorf("%+v: want the two non-finite results counted with +Inf, the finite one a bound overflow", st)
	}
}
