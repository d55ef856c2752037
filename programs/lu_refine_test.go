package programs

import (
	"context"
	"math"
	"testing"
)

// The host's refinement time holds the work the refinement did: x0 and its
// residual, then per step one LU solve and one product with A — an IR
// iteration one step, a GMRES cycle of k inner steps k + 1 (its update's
// solve and the residual after it). Each step costs what timing_iterations'
// steps cost at numerics off, so GMRES(1) on lu-fused-small (two cycles
// of one inner step: 4 steps) takes 5 of them, IR's two iterations 3.
func TestLURefineTimedSteps(t *testing.T) {
	base := "kind: lu-fused\nn: 512\nnb: 128\n"
	refine := func(sets ...string) (float64, *luRefineResult) {
		t.Helper()
		res, err := runLU(t, base, sets...)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		sec := hpl(t, res)
		var steps *luRefineResult
		if it := sec.RefinementIterations; it != nil {
			steps = &luRefineResult{Iterations: *it, History: sec.Refinement.Solved.History}
		}
		return sec.HostStagesSeconds["refine"], steps
	}
	one, _ := refine("program.numerics=off", "program.refinement.timing_iterations=1")
	step := one / 2 // x0 and one step
	for _, c := range []struct {
		method string
		steps  func(r *luRefineResult) int
	}{
		{"ir", func(r *luRefineResult) int { return r.Iterations }},
		{"gmres", func(r *luRefineResult) int { return r.Iterations + len(r.History) - 1 }}, // (one history entry a cycle)
	} {
		got, r := refine("program.refinement.method="+c.method, "program.refinement.restart=1")
		if r == nil || r.Iterations < 1 {
			t.Fatalf("%s: no refinement iterations (%+v)", c.method, r)
		}
		want := float64(1+c.steps(r)) * step
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s (%d iterations, %d residuals): refine %.6g s, want %.6g (%d steps of %.6g s)", c.method, r.Iterations, len(r.History), got, want, 1+c.steps(r), step)
		}
	}
	// At numerics off GMRES's timing_iterations inner steps take a step
	// more each cycle of restart.
	for _, c := range []struct {
		method         string
		iters, restart int
		wantStepsTimed int
	}{{"ir", 3, 30, 3}, {"gmres", 3, 30, 4}, {"gmres", 5, 2, 8}} {
		if got := luTimedSteps(LURefinement{Method: c.method, TimingIterations: c.iters, Restart: c.restart}, nil); got != c.wantStepsTimed {
			t.Errorf("%s, %d iterations, restart %d: %d steps timed, want %d", c.method, c.iters, c.restart, got, c.wantStepsTimed)
		}
	}
}

// The per-iteration samples count HPL's flops — each panel's triangular
// solve nb²·m, not the 2nb²·m of the GEMM by the inverse the kernels run —
// so that they add up to the factorization's 2/3·n³ and the
// measured/theoretical ratios are HPL's.
func TestLUIterationFlopsSumToHPL(t *testing.T) {
	for _, c := range []struct{ n, nb int }{{1024, 256}, {32768, 256}, {640, 128}, {256, 256}} {
		sum := 0.0
		for i := 0; i < c.n/c.nb; i++ {
			sum += luIterationFlops(float64(c.n-(i+1)*c.nb), float64(c.nb))
		}
		if want := luFactorFlops(float64(c.n)); math.Abs(sum-want) > 1e-12*want {
			t.Errorf("n %d, nb %d: iterations' flops sum to %.10g, want 2/3·n³ = %.10g", c.n, c.nb, sum, want)
		}
	}
}

// The scaled residual divides by FP64's unit roundoff 2⁻⁵³ (HPL's ε):
// recomputed here from its definition on a solve perturbed by hand.
func TestLUScaledResidualEpsilon(t *testing.T) {
	a := newLUMatrix(64, 7)
	if err := a.fill(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := a.B()
	x := make([]float64, a.n)
	for i := range x {
		x[i] = 1e-3 * float64(i%5)
	}
	r := make([]float64, a.n)
	got := residual(a, b, x, r, a.NormInf())
	row := make([]float64, a.n)
	rn, xn, bn, an := 0.0, 0.0, 0.0, 0.0
	for i := 0; i < a.n; i++ {
		a.Row(i, row)
		s, abs := 0.0, 0.0
		for j, v := range row {
			s += float64(v * x[j])
			abs += math.Abs(v)
		}
		rn = math.Max(rn, math.Abs(b[i]-s))
		xn, bn, an = math.Max(xn, math.Abs(x[i])), math.Max(bn, math.Abs(b[i])), math.Max(an, abs)
	}
	want := rn / ((an*xn + bn) * float64(a.n) * math.Ldexp(1, -53))
	if math.Abs(got-want) > 1e-12*want {
		t.Errorf("scaled residual %.10g, want %.10g (ε = 2⁻⁵³)", got, want)
	}
}
