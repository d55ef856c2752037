package ozaki

import (
	"errors"
	"testing"
)

// TestPlanSlices: Config.Slices fixes the slice count in fixed and forced
// modes, and the plan holds (and its reason says) what they hold — 26
// slices 207 bits, beyond MaxBits — ; dynamic mode and counts outside
// 1..MaxSlices are refused.
func TestPlanSlices(t *testing.T) {
	a, b := []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}
	for _, c := range []struct {
		cfg    Config
		reason string
	}{
		{Config{Slices: 26, Mode: Fixed}, "fixed: 26 slices (207 bits)"},
		{Config{Slices: 3, Bits: 100, Mode: Forced}, "forced: 3 slices (23 bits) (ESC 2)"},
	} {
		p, err := MakePlan(a, b, 2, 2, 2, c.cfg)
		if err != nil || p.Slices != c.cfg.Slices || p.Capacity != Capacity(c.cfg.Slices) || p.Bits != p.Capacity || p.Reason != c.reason {
			t.Errorf("%+v: %v, slices %d, capacity %d, bits %d, reason %q", c.cfg, err, p.Slices, p.Capacity, p.Bits, p.Reason)
		}
	}
	for _, cfg := range []Config{{Slices: 27, Mode: Fixed}, {Slices: -1, Mode: Forced}, {Slices: 7, Bits: 53, Mode: Dynamic}} {
		if _, err := MakePlan(a, b, 2, 2, 2, cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
	}
}
