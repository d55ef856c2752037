package programs

import (
	"strings"
	"testing"
)

// Forced precision on inputs the coarse ESC cannot bound reports
// esc_bounded false and no esc value, and its decision says so, as
// dynamic's does (it reported esc 1 and "forced: 55 bits (ESC 1)").
func TestOzakiForcedUnboundedESC(t *testing.T) {
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
	for _, prec := range []string{"forced", "dynamic"} {
		prog := runOzakiNPY(t, a, b, m, k, n, "program.precision="+prec, "program.esc_block=16").Report.Program
		if _, ok := prog["esc"]; ok || prog["esc_bounded"] != false || !strings.Contains(prog["decision"].(string), "ESC unbounded") {
			t.Errorf("%s: esc %v, esc_bounded %v, decision %q", prec, prog["esc"], prog["esc_bounded"], prog["decision"])
		}
	}
	// A bounded ESC is reported as before.
	prog := runOzakiNPY(t, []float64{1, 1}, []float64{1, 1}, 1, 2, 1, "program.precision=forced").Report.Program
	if prog["esc"] == nil || prog["esc_bounded"] != nil {
		t.Errorf("bounded: esc %v, esc_bounded %v", prog["esc"], prog["esc_bounded"])
	}
}
