package programs

import (
	"fmt"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// runLU executes an lu-fused program given as YAML through Execute.
func runLU(t *testing.T, yaml string, sets ...string) (*Result, error) {
	t.Helper()
	f, err := Parse("lu.yaml", ".", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ovs, err := machines.ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	return Execute(f, Options{Overrides: ovs}, RunHooks{})
}

func hpl(t *testing.T, res *Result) map[string]any {
	t.Helper()
	sec, ok := res.Report.Sections["hplmxp"].(map[string]any)
	if !ok {
		t.Fatal("no hplmxp section")
	}
	return sec
}

// The factors computed by the simulated machine equal the golden model's
// bit for bit, with and without fusion and look-ahead, for both trailing
// precisions, and refinement passes.
func TestLUMatchesGolden(t *testing.T) {
	cases := []struct {
		fused, fusion int
		la            bool
		trailing      string
	}{
		{1, 0, true, "fp32"},
		{1, 0, false, "fp32"},
		{2, 8, true, "fp32"},
		{3, 12, false, "fp32"},
		{2, 8, true, "fp16"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("F%d_la%v_%s", c.fused, c.la, c.trailing), func(t *testing.T) {
			y := fmt.Sprintf("kind: lu-fused\nn: 256\nnb: 64\nn_fused: %d\nn_fusion: %d\nlook_ahead: %v\ntrailing: %s\ncheck: true\nseed: 3\n",
				c.fused, c.fusion, c.la, c.trailing)
			res, err := runLU(t, y)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failure != nil {
				t.Fatal(res.Failure)
			}
			s := hpl(t, res)
			if s["golden_mismatches"] != 0 {
				t.Fatalf("mismatches %v", s["golden_mismatches"])
			}
			if s["passed"] != true {
				t.Fatalf("refinement did not pass: %v", s["refinement"])
			}
		})
	}
}
