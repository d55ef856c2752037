package programs

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// The LU golden model's conversion of the matrix to the trailing format
// (some 5 s at n = 16384) asks the run's context: interrupted there, it
// stops there, saying so.
func TestLUGoldenInterruptedConverting(t *testing.T) {
	for _, trailing := range []string{"fp16", "fp32"} {
		pl, mat := goldenLUSetup(t, LUParams{N: 4 * 128, NB: 128, NFused: 1, NFusion: 16, Trailing: trailing})
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
