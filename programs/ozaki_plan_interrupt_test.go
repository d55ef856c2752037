package programs

import (
	"slices"
	"testing"
)

// An Ozaki run interrupted while its plan computes the scales or ESC's
// block tables (passes over A and B, ~0.14 s each at 4096² under load)
// stops there: ADP's (GPU and DaVinci) and Ozaki-II's.
func TestOzakiInterruptedPlanPasses(t *testing.T) {
	small := []string{"program.m=256", "program.n=256", "program.k=256", "program.numerics=sampled"}
	ii := []string{"program.method=ozaki-ii", "program.precision="}
	for _, c := range []struct {
		phase   string
		sets    []string
		davinci bool
		want    string
	}{
		{"ozaki.RowMaxUntil", nil, false, "stopped computing ADP's plan"},
		{"ozaki.ColMaxUntil", nil, false, "stopped computing ADP's plan"},
		{"ozaki.rowBlocks", nil, false, "stopped computing ADP's plan"},
		{"ozaki.colBlocks", nil, false, "stopped computing ADP's plan"},
		{"ozaki.RowMaxUntil", ii, false, "stopped computing the scales"},
		{"ozaki.ColMaxUntil", ii, false, "stopped computing the scales"},
		{"ozaki.colBlocks", nil, true, "stopped computing ADP's plan"},
	} {
		file := "examples/b200-ozaki.yaml"
		if c.davinci {
			file = "examples/ascend-910a-ozaki.yaml"
		}
		expectPhaseStop(t, file, c.phase, append(slices.Clone(small), c.sets...), c.want)
	}
}
