package programs

import (
	"math"
	"math/big"
	"testing"
)

// bigScaledRef returns, at every output of C = αAB + βC0 (A m×k, B k×n,
// C0 m×n row-major; c0 nil: β = 0), the exact value rounded once and the
// bound |α||A||B| + |β||C0| (exact, rounded once), with math/big alone.
func bigScaledRef(a, b, c0 []float64, alpha, beta float64, m, k, n int) (ref, bound []float64) {
	const prec = 8000
	nf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s, sa := nf(0), nf(0)
			for l := 0; l < k; l++ {
				p := nf(a[i*k+l])
				p.Mul(p, nf(b[l*n+j]))
				s.Add(s, p)
				sa.Add(sa, new(big.Float).Abs(p))
			}
			s.Mul(s, nf(alpha))
			sa.Mul(sa, nf(math.Abs(alpha)))
			if c0 != nil {
				bc := nf(beta)
				bc.Mul(bc, nf(c0[i*n+j]))
				s.Add(s, bc)
				sa.Add(sa, new(big.Float).Abs(bc))
			}
			r, _ := s.Float64()
			bd, _ := sa.Float64()
			ref, bound = append(ref, r), append(bound, bd)
		}
	}
	return ref, bound
}

// Ozaki's componentwise error with α ≠ 1 or β ≠ 0 is measured against the
// exact αAB + βC0 rounded once, by |α||A||B| + |β||C0|: its max_u and
// mean_u equal math/big's figures for C (b200, Ozaki-I and -II, and the
// Ascend 910A's DaVinci run), and stay Grade A (the epilogue's own
// roundings are not in the reference: against RN(RN(AB)·α) + RN(β·C0) by
// u·|α||A||B|, α = 1, β = 1000 read 129.7 and α = 0.1, β = 1000 read 0).
func TestOzakiScaledComponentwise(t *testing.T) {
	const m, k, n = 16, 16, 16
	in := Inputs{Distribution: DistUniform, Seed: 1}
	a, b := genFloat64(in, 1, m, k), genFloat64(in, 2, k, n)
	c0 := genFloat64(in, 3, m, n)
	for _, c := range []struct {
		alpha, beta float64
		extra       []string
	}{
		{1, 0, nil}, {1, 1000, nil}, {0.1, 0, nil}, {0.1, 1000, nil}, {-3, 1e-3, nil}, {1, -1, nil},
		{0.1, 1000, []string{"program.method=ozaki-ii", "program.precision="}},
		{0.1, 1000, []string{"davinci"}},
	} {
		sets := []string{"program.m=16", "program.n=16", "program.k=16", "program.numerics=full",
			"program.alpha=" + big.NewFloat(c.alpha).Text('g', 17), "program.beta=" + big.NewFloat(c.beta).Text('g', 17)}
		var res *Result
		if len(c.extra) == 1 && c.extra[0] == "davinci" {
			res = runOzaki910(t, sets...)
		} else {
			var err error
			if res, err = runOzaki(t, "b200", append(sets, c.extra...)...); err != nil {
				t.Fatal(err)
			}
			if res.Failure != nil {
				t.Fatal(res.Failure)
			}
		}
		var cz []float64
		if c.beta != 0 {
			cz = c0
		}
		ref, bound := bigScaledRef(a, b, cz, c.alpha, c.beta, m, k, n)
		got := res.Outputs[0].F64
		maxU, sum := 0.0, 0.0
		for x := range ref {
			e := math.Abs(got[x]-ref[x]) / bound[x] / 0x1p-53
			maxU, sum = max(maxU, e), sum+e
		}
		cw := res.Report.Program["componentwise_error"].(map[string]any)
		gotMax, gotMean := cw["max_u"].(float64), cw["mean_u"].(float64)
		if math.Abs(gotMax-maxU) > 1e-12*maxU || math.Abs(gotMean-sum/float64(len(ref))) > 1e-12*maxU {
			t.Errorf("α = %g, β = %g %v: max_u %.6g, mean_u %.6g; math/big gives %.6g, %.6g", c.alpha, c.beta, c.extra, gotMax, gotMean, maxU, sum/float64(len(ref)))
		}
		if gotMax > 4 {
			t.Errorf("α = %g, β = %g %v: max_u %.6g, not Grade A at k = 16", c.alpha, c.beta, c.extra, gotMax)
		}
		if el := cw["elements"].(int); el != m*n {
			t.Errorf("α = %g, β = %g %v: elements %d, want %d", c.alpha, c.beta, c.extra, el, m*n)
		}
	}
}
