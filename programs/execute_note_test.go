package programs

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/sim"
)

// A skip's note says what it measured — a stationary skip its waves'
// count, the windows' agreement and noise — and warns where the checked
// waves' L2 hits moved away from the measured ones (the skipped waves'
// bytes stand for the measured hits).
func TestFastForwardNote(t *testing.T) {
	s := arch.FastForwardSkip{Grid: "k", Waves: 6, WaveCTAs: 216, FromCTA: 1944, Period: 2974 * sim.Microsecond, Spread: sim.Microsecond,
		Shift: 6 * 2974 * sim.Microsecond, TailPeriod: 2974 * sim.Microsecond, Checked: true, Hits: 0.877, TailHits: 0.782}
	if n := fastForwardNote(s); strings.Contains(n, "stationary") || strings.Contains(n, "may be off") || !strings.Contains(n, "spread") {
		t.Errorf("plain skip: %s", n)
	}
	s.Stationary, s.Measured, s.Noise, s.Tail, s.HitsMoved = true, 8, 3*sim.Nanosecond, 5, true
	n := fastForwardNote(s)
	for _, want := range []string{"measuring 8 waves", "stationary", "4 waves checked", "L2 hit fraction was 0.782 against the measured waves' 0.877", "may be off"} {
		if !strings.Contains(n, want) {
			t.Errorf("stationary skip whose hits moved: no %q in %s", want, n)
		}
	}
}
