package ozaki

import (
	"errors"
	"math/rand"
	"slices"
	"testing"
)

// A plan its stop ends says in which pass: the scales (the line maxima)
// or the ESC; either error is ErrStopped. LineMaxima gives RowMax's and
// ColMax's values.
func TestPlanStoppedNamesThePhase(t *testing.T) {
	const m, k, n = 300, 400, 200
	rng := rand.New(rand.NewSource(7))
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	muA, muB, err := LineMaxima(a, b, m, k, n, nil)
	if err != nil || !slices.Equal(muA, RowMax(a, m, k)) || !slices.Equal(muB, ColMax(b, k, n)) {
		t.Errorf("LineMaxima: %v, or not RowMax's and ColMax's values", err)
	}
	// The maxima ask 2 (A) + 2 (B) times, then the ESC's passes.
	for at, want := range map[int]string{1: "the scales", 4: "the scales", 5: "the ESC", 9: "the ESC"} {
		asks := 0
		_, err := MakePlan(a, b, m, k, n, Config{Mode: Dynamic, Bits: 53, Stop: func() bool { asks++; return asks == at }})
		var se *StoppedError
		if !errors.As(err, &se) || se.Phase != want || !errors.Is(err, ErrStopped) {
			t.Errorf("stopped at ask %d: %v; want a StoppedError in %s, ErrStopped", at, err, want)
		}
	}
}
