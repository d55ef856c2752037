package programs

import (
	"strings"
	"testing"
)

// igemm at numerics sampled (the simulation timing only) compares the
// golden model's sampled tiles with the exact sums, as the other kinds'
// sampled runs do, and says so; its error block was one that compared
// nothing (bits 0, elements counted) on both the GPU and DaVinci.
func TestIGEMMSampledError(t *testing.T) {
	for _, machine := range []string{"a100", "ascend-910a"} {
		f, err := ReadFile("examples/a100-igemm.yaml")
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, Options{Machine: machine, Numerics: NumericsSampled,
			Overrides: mustSets(t, "program.m=256", "program.k=300", "program.n=256", "program.check=false")}, RunHooks{})
		if err != nil {
			t.Fatalf("%s: %v", machine, err)
		}
		e := res.Report.Error
		if e == nil || !e.Sampled || e.Bits != 31 || e.MaxErr != 0 || e.Elements == 0 {
			t.Errorf("%s: error %+v, want the sampled tiles' (exact: bits 31)", machine, e)
		}
		if !strings.Contains(strings.Join(res.Report.Notes, "\n"), "computed by the golden model (INT32 sums") {
			t.Errorf("%s: notes %q", machine, res.Report.Notes)
		}
	}
}
