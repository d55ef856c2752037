package ozaki

import (
	"strings"
	"testing"
)

// TestForcedUnboundedESC: forced precision on inputs the coarse ESC cannot
// bound (A's nonzeros in columns 0–7, B's in rows 8–15, block 16) keeps its
// slices but says the ESC is unbounded instead of giving its meaningless
// value ("forced: 55 bits (ESC 1)" before), as dynamic does.
func TestForcedUnboundedESC(t *testing.T) {
	m, k, n := 2, 16, 2
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := 0; i < m; i++ {
		for l := 0; l < 8; l++ {
			a[i*k+l] = 1.5
		}
	}
	for l := 8; l < k; l++ {
		for j := 0; j < n; j++ {
			b[l*n+j] = 2.5
		}
	}
	p, err := MakePlan(a, b, m, k, n, Config{Bits: 55, Mode: Forced, ESCBlock: 16})
	if err != nil {
		t.Fatal(err)
	}
	if p.Bounded || p.Fallback || p.Slices != 7 || !strings.Contains(p.Reason, "ESC unbounded") || strings.Contains(p.Reason, "ESC 1") {
		t.Fatalf("bounded %v, fallback %v, slices %d, reason %q", p.Bounded, p.Fallback, p.Slices, p.Reason)
	}
	d, err := MakePlan(a, b, m, k, n, Config{Bits: 55, Mode: Dynamic, ESCBlock: 16, Fallback: true})
	if err != nil || !d.Fallback || !strings.Contains(d.Reason, "ESC unbounded") {
		t.Fatalf("dynamic: %v, fallback %v, reason %q", err, d.Fallback, d.Reason)
	}
}
