package crt

import (
	"errors"
	"testing"

	"github.com/davinci-sim/davinci-sim/ozaki"
)

// Ozaki-II's plan stopped in its line maxima says so: an
// ozaki.StoppedError in the scales, ErrStopped.
func TestPlanStoppedInTheScales(t *testing.T) {
	const m, k, n = 64, 2048, 64
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range a {
		a[i] = float64(i%7) - 3
	}
	copy(b, a)
	for _, at := range []int{1, 2, 3, 4} {
		asks := 0
		_, err := MakePlan(a, b, m, k, n, Config{Moduli: 14, Stop: func() bool { asks++; return asks == at }})
		var se *ozaki.StoppedError
		if !errors.As(err, &se) || se.Phase != "the scales" || !errors.Is(err, ErrStopped) {
			t.Errorf("stopped at ask %d: %v; want a StoppedError in the scales, ErrStopped", at, err)
		}
	}
}
