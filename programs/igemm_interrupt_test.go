package programs

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// igemm on a DaVinci machine draws its INT8 inputs hearing the run's
// context, as the GPU igemm does (genInt8).
func TestDaVinciIGEMMDrawInterrupted(t *testing.T) {
	f := mustRead(t, "examples/a100-igemm.yaml")
	ctx := newPhaseStop("programs.genInt8")
	_, err := Execute(f, Options{Machine: "ascend-910a", Overrides: mustSets(t, "program.m=256", "program.n=256", "program.k=256", "program.numerics=full")}, RunHooks{Context: ctx})
	if !ctx.asked {
		t.Fatalf("the draw never asked the run's context (%v)", err)
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped drawing the inputs") {
		t.Errorf("%v; want the interruption while drawing the inputs", err)
	}
}
