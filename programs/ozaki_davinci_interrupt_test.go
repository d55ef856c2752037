package programs

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A DaVinci Ozaki run interrupted while drawing its inputs (A, B, or C0)
// stops there, as the GPU's does (ozakiInputsFor).
func TestOzakiDaVinciInterruptedDrawing(t *testing.T) {
	for _, sets := range [][]string{nil, {"program.beta=0.5"}} {
		f, err := ReadFile("examples/ascend-910a-ozaki.yaml")
		if err != nil {
			t.Fatal(err)
		}
		ctx := newPhaseStop("programs.genFloat64Until")
		all := append([]string{"program.m=64", "program.n=64", "program.k=64", "program.numerics=sampled"}, sets...)
		_, err = Execute(f, Options{Overrides: mustSets(t, all...)}, RunHooks{Context: ctx})
		if !ctx.asked {
			t.Errorf("%v: never asked the run's context (%v)", sets, err)
			continue
		}
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped drawing the inputs") {
			t.Errorf("%v: %v; want the interruption while drawing the inputs", sets, err)
		}
	}
}
