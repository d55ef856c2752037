package programs

import (
	"math"
	"math/big"
	"testing"
)

// DGEMM's error is measured against the exact product rounded once to
// FP64, as ozaki's FP64 C is (checked here with math/big): against an FP64
// GEMM summed in FP64, whose own error is the size of the one measured,
// max_rel read 41 % low (a review found it: 2.4e-13 for 4.1e-13).
func TestDGEMMErrorExactReference(t *testing.T) {
	f, err := ReadFile("examples/a100-dgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Overrides: mustSets(t, "program.m=37", "program.k=101", "program.n=29", "program.numerics=full", "program.inputs.seed=3")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := outputsF64(res)
	const m, k, n = 37, 101, 29
	maxRel := 0.0
	for i := range m {
		for j := range n {
			s := new(big.Float).SetPrec(4096)
			for l := range k {
				s.Add(s, new(big.Float).SetPrec(4096).Mul(big.NewFloat(a[i*k+l]), big.NewFloat(b[l*n+j])))
			}
			ref, _ := s.Float64()
			if ref != 0 {
				maxRel = max(maxRel, math.Abs(c[i*n+j]-ref)/math.Abs(ref))
			}
		}
	}
	e := res.Report.Error
	if e.Reference != "exact (a long accumulator, rounded once to fp64)" || math.Abs(e.MaxRel-maxRel) > 1e-9*maxRel {
		t.Errorf("error against %q: max_rel %g, the exact reference's %g", e.Reference, e.MaxRel, maxRel)
	}
}

// outputsF64 returns res's float64 outputs A, B and C.
func outputsF64(res *Result) (a, b, c []float64) {
	for _, o := range res.Outputs {
		switch o.Name {
		case "A":
			a = o.F64
		case "B":
			b = o.F64
		case "C":
			c = o.F64
		}
	}
	return a, b, c
}
