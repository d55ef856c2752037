package arch

import (
	"errors"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
)

// A skip whose time would take the run past the simulated range fails the
// chip with sim.ErrTimeOverflow (bad input: exit 2) instead of adding it:
// a skipped float beyond the range had converted to a negative time, and
// an A100 HGEMM at a 1 MHz clock reported −7.3e6 s with exit 0 (found by
// a review). A skip within it is added, rounded to the picosecond.
func TestSkipShiftBounded(t *testing.T) {
	for _, c := range []struct {
		now, before sim.Time
		ps          float64
		ok          bool
	}{
		{5, 0, 10.4, true}, {5, 7, 1e6, true},
		{5, 0, 1e300, false}, {5, 0, 9.3e18, false},
		{sim.MaxTime - 100, 0, 99, true}, {sim.MaxTime - 100, 0, 100, false}, {sim.MaxTime / 2, sim.MaxTime / 2, 2, false}, {sim.MaxTime / 2, sim.MaxTime / 4, 1e6, true},
	} {
		chip := &Chip{eng: sim.NewEngine()}
		ff := &fastForward{shift: c.before}
		got, ok := chip.addShift(ff, c.now, c.ps, "kernel k's skipped waves")
		if ok != c.ok {
			t.Errorf("now %v, shift %v, skip %g ps: ok %v, want %v", c.now, c.before, c.ps, ok, c.ok)
			continue
		}
		if !ok {
			if err := chip.failed; err == nil || !errors.Is(err, sim.ErrTimeOverflow) || ff.shift != c.before {
				t.Errorf("now %v, skip %g ps: failed with %v, shift %v", c.now, c.ps, err, ff.shift)
			}
			continue
		}
		if want := sim.Time(c.ps + 0.5); got != want || ff.shift != c.before+want || chip.failed != nil {
			t.Errorf("now %v, skip %g ps: %v (shift %v), want %v", c.now, c.ps, got, ff.shift, want)
		}
	}
}
