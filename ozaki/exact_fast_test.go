package ozaki

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// bigDots is Σ x[l]·y[l] (and Σ |x[l]||y[l]|) summed in math/big at a
// precision that holds every such sum of float64 products exactly, then
// rounded once to float64: a reference independent of Superacc.
func bigDots(x, y []float64) (ref, abs float64) {
	const prec = 5000
	s, sa := new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec)
	p := new(big.Float).SetPrec(prec)
	for l := range x {
		p.Mul(new(big.Float).SetPrec(prec).SetFloat64(x[l]), new(big.Float).SetPrec(prec).SetFloat64(y[l]))
		s.Add(s, p)
		sa.Add(sa, p.Abs(p))
	}
	ref, _ = s.Float64()
	abs, _ = sa.Float64()
	return ref + 0, abs + 0
}

// randomFloat returns a float64 of random sign and significand whose
// exponent is drawn from [lo, hi] (below −1022: a subnormal or zero).
func randomFloat(rng *rand.Rand, lo, hi int) float64 {
	v := math.Ldexp(1+rng.Float64(), lo+rng.Intn(hi-lo+1))
	if rng.Intn(2) == 0 {
		v = -v
	}
	return v
}

// TestDotAndAbsAgainstBig compares DotAndAbs, ExactDot, AbsDot and
// ScaledDot (α = β = 1, c = 0) with sums in math/big, bit for bit: random
// vectors over the whole float64 range, subnormals and cancellation among
// them, results in the subnormal range and near overflow (Float64's
// fallback to math/big), and exact ties between float64s.
func TestDotAndAbsAgainstBig(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	check := func(name string, x, y []float64) {
		t.Helper()
		wantRef, wantAbs := bigDots(x, y)
		ref, abs := DotAndAbs(x, y)
		sref, sabs := ScaledDot(x, y, 1, 1, 0)
		for _, c := range []struct {
			what      string
			got, want float64
		}{{"DotAndAbs ref", ref, wantRef}, {"DotAndAbs abs", abs, wantAbs}, {"ExactDot", ExactDot(x, y), wantRef},
			{"AbsDot", AbsDot(x, y), wantAbs}, {"ScaledDot ref", sref, wantRef}, {"ScaledDot abs", sabs, wantAbs}} {
			if math.Float64bits(c.got) != math.Float64bits(c.want) {
				t.Fatalf("%s: %s = %v (%#x), want %v (%#x); x %v y %v", name, c.what, c.got, math.Float64bits(c.got), c.want, math.Float64bits(c.want), x, y)
			}
		}
	}
	ranges := [][2]int{{-1, 1}, {-1074, 1023}, {-1100, -1000}, {-560, -500}, {480, 520}, {-30, 30}}
	for it := 0; it < 3000; it++ {
		r := ranges[it%len(ranges)]
		k := 1 + rng.Intn(40)
		x, y := make([]float64, k), make([]float64, k)
		for l := range x {
			x[l], y[l] = randomFloat(rng, r[0], r[1]), randomFloat(rng, r[0], r[1])
			if rng.Intn(10) == 0 {
				x[l] = 0
			}
		}
		if k > 1 && rng.Intn(3) == 0 { // cancellation: the last product undoes the first
			x[k-1], y[k-1] = -x[0], y[0]
		}
		check("random", x, y)
	}
	// Ties and their neighbours, at every scale: 1 + 2^−53 is halfway
	// between 1 and its successor (to even: 1), 1 + 3·2^−53 halfway
	// between the successor and the next (to even: up), and a bit far
	// below either breaks the tie.
	for _, sc := range []int{0, -600, -1000, -1021, -1022, -1030, -1060, 500, 900, 1000} {
		s := math.Ldexp(1, sc)
		for _, tail := range []float64{0, 0x1p-300, -0x1p-300, 0x1p-80} {
			check("tie", []float64{s, s, s}, []float64{1, 0x1p-53, tail})
			check("tie", []float64{s, s, s}, []float64{1, 3 * 0x1p-53, tail})
			check("tie", []float64{-s, s, s}, []float64{1, 0x1p-53, tail})
		}
	}
	// Sums at the top of the range and past it (±Inf).
	big := math.MaxFloat64
	check("max", []float64{big, big}, []float64{1, 0x1p-54})
	check("over", []float64{big, big}, []float64{1, 0x1p-53})
	check("over", []float64{big, big}, []float64{1, 1})
	check("over", []float64{-big, -big}, []float64{1, 1})
	check("zero", []float64{1, -1}, []float64{0.5, 0.5})
	check("tiny", []float64{math.SmallestNonzeroFloat64, 3}, []float64{0.5, math.SmallestNonzeroFloat64})
	// Entries that are ±Inf or NaN: the IEEE values, as ExactDot's.
	for _, v := range [][2][]float64{{{1, math.Inf(1)}, {2, 3}}, {{math.NaN(), 1}, {1, 1}}, {{math.Inf(1), 1}, {0, 1}}} {
		ref, abs := DotAndAbs(v[0], v[1])
		wr, wa := ExactDot(v[0], v[1]), AbsDot(v[0], v[1])
		if math.Float64bits(ref) != math.Float64bits(wr) && !(ref != ref && wr != wr) || math.Float64bits(abs) != math.Float64bits(wa) && !(abs != abs && wa != wa) {
			t.Fatalf("non-finite %v: %v %v, want %v %v", v, ref, abs, wr, wa)
		}
	}
}
