package programs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// The LU golden model's conversion of the matrix to the trailing format
// (some 5 s at n = 16384) asks the run's context: interrupted there, it
// stops there, saying so.
func TestLUGoldenInterruptedConverting(t *testing.T) {
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, trailing := range []string{"fp16", "fp32"} {
		p := LUParams{N: 4 * 128, NB: 128, NFused: 1, NFusion: 16, Trailing: trailing}
		p.defaults()
		p.chooseTiling(m)
		p.fusedFromL1(m)
		if err := p.validate("t.yaml", m); err != nil {
			t.Fatal(err)
		}
		pl, err := newLUPlan("t.yaml", p, m)
		if err != nil {
			t.Fatal(err)
		}
		mat := newLUMatrix(p.N, 1)
		if err := mat.fill(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx := newPhaseStop("programs.(*luGolden).load")
		g, err := luGoldenRun(ctx, pl, mat)
		if !ctx.asked {
			t.Errorf("%s: the conversion never asked the run's context (%v)", trailing, err)
			continue
		}
		if !errors.Is(err, context.Canceled) || g != nil || !strings.Contains(err.Error(), "converting the matrix") {
			t.Errorf("%s: %v; want the interruption while converting the matrix", trailing, err)
		}
	}
}
