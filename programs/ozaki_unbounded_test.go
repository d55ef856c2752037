package programs

import (
	"strings"
	"testing"
)

// Forced precision on inputs the coarse ESC cannot bound reports
// esc_bounded false and no esc value, and its decision says so, as
// dynamic's does (it reported esc 1 and "forced: 55 bits (ESC 1)").
func TestOzakiForcedUnboundedESC(t *testing.T) {
	for _, prec := range []string{"forced", "dynamic"} {
		// testdata/ozaki/disjoint-*.npy: A's nonzeros in columns 0–7,
		// B's in rows 8–15 (k = 16).
		res, err := runOzaki(t, "", "program.m=2", "program.k=16", "program.n=2", "program.numerics=full",
			"program.inputs.a=../../testdata/ozaki/disjoint-a.npy", "program.inputs.b=../../testdata/ozaki/disjoint-b.npy",
			"program.precision="+prec, "program.esc_block=16")
		if err != nil {
			t.Fatal(err)
		}
		prog := res.Report.Program
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
