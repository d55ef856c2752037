package programs

import (
	"math"
	"testing"

	"github.com/davinci-sim/davinci-sim/accuracy"
)

// The error histogram counts an element equal to its reference — the same
// infinity, or NaN against NaN — as exact, as the metrics do (it counted
// them nonfinite: Inf − Inf is NaN), and only a mismatch involving a
// non-finite value as nonfinite.
func TestEmulatedHistogramNonFinite(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	ref := []float32{inf, -inf, nan, 1, 1, inf, 0}
	got := []float32{inf, -inf, nan, 1, inf, -inf, 0}
	h := errorHistogram(ref, got, 4)
	if h["exact"] != int64(5) || h["nonfinite"] != int64(2) || h["elements"] != len(ref) {
		t.Errorf("histogram %v: want 5 exact (±Inf, NaN, 1, 0 equal), 2 nonfinite", h)
	}
	// The metrics agree: the same 5 have no error.
	m := accuracy.Compare32(accuracy.Widen(ref[:4]), got[:4])
	if m.RelFro != 0 || m.MaxErr != 0 {
		t.Errorf("metrics of the equal elements %+v: want exact", m)
	}
}
