package programs

import (
	"slices"
	"testing"
)

// An Ozaki-I run interrupted while its plan computes the line maxima says
// it stopped computing the scales, not the ESC (which is ADP's next pass,
// and no pass of fixed precision's at all); in the ESC's passes, the ESC.
func TestOzakiPlanInterruptNamesThePhase(t *testing.T) {
	small := []string{"program.m=256", "program.n=256", "program.k=256", "program.numerics=sampled"}
	fixed := []string{"program.precision=fixed"}
	dynamic := []string{"program.precision=dynamic"}
	for _, c := range []struct {
		phase string
		sets  []string
		want  string
	}{
		{"ozaki.RowMaxUntil", nil, "stopped computing ADP's plan (the scales)"},
		{"ozaki.ColMaxUntil", dynamic, "stopped computing ADP's plan (the scales)"},
		{"ozaki.RowMaxUntil", fixed, ": stopped computing the scales"},
		{"ozaki.rowBlocks", nil, "stopped computing ADP's plan (the ESC)"},
		{"ozaki.colBlocks", dynamic, "stopped computing ADP's plan (the ESC)"},
		{"ozaki.escTables.func1", nil, "stopped computing ADP's plan (the ESC)"},
	} {
		expectPhaseStop(t, "examples/b200-ozaki.yaml", c.phase, append(slices.Clone(small), c.sets...), c.want)
	}
}
