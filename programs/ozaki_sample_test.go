package programs

import (
	"strings"
	"testing"
)

// Numerics full beyond the exact reference's budget measures the error on
// distinct outputs of C (sampleOutputs) and says so in a note, on GPU
// machines and on DaVinci: 64×64×16 with a budget of 2^15 products is
// 2048 of the 4096 outputs.
func TestOzakiFullSampledNote(t *testing.T) {
	defer func(b int64) { ozakiExactBudget = b }(ozakiExactBudget)
	ozakiExactBudget = 1 << 15
	sets := []string{"program.m=64", "program.n=64", "program.k=16", "program.numerics=full", "program.beta=2"}
	for _, davinci := range []bool{false, true} {
		var res *Result
		if davinci {
			res = runOzaki910(t, sets...)
		} else {
			var err error
			if res, err = runOzaki(t, "b200", sets...); err != nil {
				t.Fatal(err)
			}
			if res.Failure != nil {
				t.Fatal(res.Failure)
			}
		}
		want := "error from 2048 of the 4096 outputs (distinct, drawn by the inputs' seed): the exact reference's budget, 2^15 products"
		found := false
		for _, n := range res.Report.Notes {
			found = found || strings.Contains(n, want)
		}
		if !found {
			t.Errorf("davinci %v: no note %q in %q", davinci, want, res.Report.Notes)
		}
		if e := res.Report.Error; e == nil || e.Elements != 2048 {
			t.Errorf("davinci %v: error %+v; want 2048 elements", davinci, e)
		}
		if el := res.Report.Program["componentwise_error"].(map[string]any)["elements"]; el != 2048 {
			t.Errorf("davinci %v: componentwise elements %v; want 2048", davinci, el)
		}
	}
	// Within the budget: every output, no note.
	ozakiExactBudget = 1 << 16
	res, err := runOzaki(t, "b200", sets...)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Report.Notes {
		if strings.HasPrefix(n, "error from ") {
			t.Errorf("within the budget: note %q", n)
		}
	}
	if e := res.Report.Error; e == nil || e.Elements != 4096 {
		t.Errorf("within the budget: error %+v; want 4096 elements", e)
	}
}
