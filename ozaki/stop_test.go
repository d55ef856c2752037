package ozaki

import (
	"errors"
	"math/rand"
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/stopwork"
)

// The passes over A and B of a plan (line maxima, ESC's block tables) ask
// their stop about once every stopwork.Every elements, before the first, give
// the values of their stop-less forms, and end at a true; MakePlan then
// returns ErrStopped.
func TestPlanPassesStop(t *testing.T) {
	const rows, cols = 512, 384
	rng := rand.New(rand.NewSource(5))
	a := make([]float64, rows*cols)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	asks := 0
	count := func() bool { asks++; return false }
	wantAsks := rows*cols/stopwork.Every + 1
	mu, ok := RowMaxUntil(a, rows, cols, count)
	if !ok || !slices.Equal(mu, RowMax(a, rows, cols)) || asks < wantAsks-1 || asks > wantAsks+1 {
		t.Errorf("RowMaxUntil: ok %v, %d asks (want ~%d), same values %v", ok, asks, wantAsks, slices.Equal(mu, RowMax(a, rows, cols)))
	}
	asks = 0
	mu, ok = ColMaxUntil(a, rows, cols, count)
	if !ok || !slices.Equal(mu, ColMax(a, rows, cols)) || asks < wantAsks-1 || asks > wantAsks+1 {
		t.Errorf("ColMaxUntil: ok %v, %d asks (want ~%d)", ok, asks, wantAsks)
	}
	asks = 0
	if tb, ok := rowBlocks(a, rows, cols, 32, count); !ok || !slices.Equal(tb.Max, RowBlocks(a, rows, cols, 32).Max) || asks < wantAsks-1 || asks > wantAsks+1 {
		t.Errorf("rowBlocks: ok %v, %d asks (want ~%d)", ok, asks, wantAsks)
	}
	asks = 0
	if tb, ok := colBlocks(a, rows, cols, 32, count); !ok || !slices.Equal(tb.Min, ColBlocks(a, rows, cols, 32).Min) || asks < wantAsks-1 || asks > wantAsks+1 {
		t.Errorf("colBlocks: ok %v, %d asks (want ~%d)", ok, asks, wantAsks)
	}
	for name, pass := range map[string]func(stop func() bool) bool{
		"RowMaxUntil": func(s func() bool) bool { _, ok := RowMaxUntil(a, rows, cols, s); return ok },
		"ColMaxUntil": func(s func() bool) bool { _, ok := ColMaxUntil(a, rows, cols, s); return ok },
		"rowBlocks":   func(s func() bool) bool { _, ok := rowBlocks(a, rows, cols, 32, s); return ok },
		"colBlocks":   func(s func() bool) bool { _, ok := colBlocks(a, rows, cols, 32, s); return ok },
	} {
		n := 0
		if pass(func() bool { n++; return n == 3 }) || n != 3 {
			t.Errorf("%s: went on after its stop said true (%d asks)", name, n)
		}
	}
	n := 0
	_, err := MakePlan(a, a, rows, cols, cols, Config{Mode: Dynamic, Bits: 53, Stop: func() bool { n++; return n == 2 }})
	if !errors.Is(err, ErrStopped) {
		t.Errorf("MakePlan stopped on its second ask: %v", err)
	}
}
