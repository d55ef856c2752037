package ozaki

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// bigScaled is α·Σ x·y + β·c and |α|·Σ|x||y| + |β||c| with math/big alone
// (8000 bits: exact for finite float64 inputs), each rounded once.
func bigScaled(x, y []float64, alpha, beta, c float64) (ref, abs float64) {
	nf := func(v float64) *big.Float { return new(big.Float).SetPrec(8000).SetFloat64(v) }
	s, sa := nf(0), nf(0)
	for l := range x {
		p := nf(x[l])
		p.Mul(p, nf(y[l]))
		s.Add(s, p)
		sa.Add(sa, new(big.Float).Abs(p))
	}
	s.Mul(s, nf(alpha))
	sa.Mul(sa, nf(math.Abs(alpha)))
	bc := nf(beta)
	bc.Mul(bc, nf(c))
	s.Add(s, bc)
	sa.Add(sa, bc.Abs(bc))
	ref, _ = s.Float64()
	abs, _ = sa.Float64()
	return ref + 0, abs
}

// ScaledDot is α·Σ x·y + β·c exact then rounded once (and its bound), as
// math/big computes it: on wide exponents (subnormal products and α·S
// below 2^−1074, sums beyond 2^1024 that α brings back), on β·c cancelling
// α·S all but its last bits, and on α = 0 or c = 0. The epilogue's
// roundings (RN(α·RN(S)) + RN(β·c)) differ on some of them.
func TestScaledDotExact(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	wide := func(lo, hi int) float64 {
		return math.Ldexp(rng.Float64()+0.5, lo+rng.Intn(hi-lo+1)) * float64(1-2*rng.Intn(2))
	}
	epilogueDiffers := 0
	for it := 0; it < 3000; it++ {
		k := 1 + rng.Intn(8)
		x, y := make([]float64, k), make([]float64, k)
		var alpha, beta, c float64
		switch it % 4 {
		case 0: // every range
			for l := range x {
				x[l], y[l] = wide(-1070, 1020), wide(-1070, 1020)
			}
			alpha, beta, c = wide(-1070, 1020), wide(-600, 600), wide(-1070, 1020)
		case 1: // ordinary values, β·c cancelling α·S
			for l := range x {
				x[l], y[l] = wide(-4, 4), wide(-4, 4)
			}
			alpha, beta = wide(-4, 4), 1
			c = -alpha * ExactDot(x, y)
		case 2: // S beyond float64, α bringing it back; or tiny
			for l := range x {
				x[l], y[l] = wide(900, 1023), wide(900, 1023)
			}
			alpha, beta, c = wide(-1074, -900), wide(-10, 10), wide(-10, 10)
		case 3: // α = 0, or c = 0
			for l := range x {
				x[l], y[l] = wide(-20, 20), wide(-20, 20)
			}
			alpha, beta, c = 0, wide(-20, 20), wide(-20, 20)
			if it%8 == 3 {
				alpha, c = wide(-20, 20), 0
			}
		}
		ref, abs := ScaledDot(x, y, alpha, beta, c)
		wr, wa := bigScaled(x, y, alpha, beta, c)
		if math.Float64bits(ref) != math.Float64bits(wr) || math.Float64bits(abs) != math.Float64bits(wa) {
			t.Fatalf("x %v y %v α %g β %g c %g: ScaledDot %g, %g; math/big %g, %g", x, y, alpha, beta, c, ref, abs, wr, wa)
		}
		p := []float64{ExactDot(x, y)}
		Epilogue(p, alpha, beta, []float64{c})
		if p[0] != ref {
			epilogueDiffers++
		}
	}
	if epilogueDiffers == 0 {
		t.Error("the epilogue's roundings never differ from the exact value: the cases test nothing")
	}
}

// With α = 1 and β = 0 (or c = 0), ScaledDot is ExactDot and AbsDot.
func TestScaledDotUnscaled(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for it := 0; it < 200; it++ {
		x, y := make([]float64, 5), make([]float64, 5)
		for l := range x {
			x[l], y[l] = rng.NormFloat64()*math.Ldexp(1, rng.Intn(200)-100), rng.NormFloat64()
		}
		ref, abs := ScaledDot(x, y, 1, 0, rng.NormFloat64())
		if ref != ExactDot(x, y) || abs != AbsDot(x, y) {
			t.Fatalf("%v %v: %g, %g; want %g, %g", x, y, ref, abs, ExactDot(x, y), AbsDot(x, y))
		}
	}
}

// Inf or NaN in x, y, α, β or c: IEEE's values of α·ExactDot + β·c and
// |α|·AbsDot + |β·c|.
func TestScaledDotNonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		x, y             []float64
		alpha, beta, c   float64
		wantRef, wantAbs float64
	}{
		{[]float64{inf, 1}, []float64{1, 1}, 2, 1, 3, inf, inf},
		{[]float64{inf, 1}, []float64{1, 1}, -2, 1, 3, -inf, inf},
		{[]float64{1, 1}, []float64{1, 1}, 2, 1, -inf, -inf, inf},
		{[]float64{inf, 1}, []float64{1, 1}, 1, 1, -inf, nan, inf},
		{[]float64{nan, 1}, []float64{1, 1}, 1, 0, 0, nan, nan},
		{[]float64{inf, 1}, []float64{1, 1}, 0, 1, 1, nan, nan},
	} {
		ref, abs := ScaledDot(c.x, c.y, c.alpha, c.beta, c.c)
		same := func(a, b float64) bool { return a == b || (a != a && b != b) }
		if !same(ref, c.wantRef) || !same(abs, c.wantAbs) {
			t.Errorf("%v·%v, α %g β %g c %g: %g, %g; want %g, %g", c.x, c.y, c.alpha, c.beta, c.c, ref, abs, c.wantRef, c.wantAbs)
		}
	}
}

// Products of two subnormals (lowest bits down to 2^−2148) are summed
// exactly: split kept a subnormal's mantissa normalised, which indexed
// below the accumulator's limb 0 (a panic).
func TestExactDotSubnormalProducts(t *testing.T) {
	tiny := math.SmallestNonzeroFloat64
	for _, c := range []struct{ x, y []float64 }{
		{[]float64{tiny}, []float64{tiny}},
		{[]float64{tiny, 3 * tiny, 1}, []float64{-tiny, 0x1p-1030, 0x1p-1074}},
		{[]float64{0x1p-1030, 1e-310}, []float64{1e-320, -0x1p-1040}},
	} {
		got := ExactDot(c.x, c.y)
		want, _ := bigScaled(c.x, c.y, 1, 0, 0)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%v·%v: %g; want %g", c.x, c.y, got, want)
		}
		s := new(Superacc)
		for l := range c.x {
			s.AddProduct(c.x[l], c.y[l])
		}
		nf := func(v float64) *big.Float { return new(big.Float).SetPrec(8000).SetFloat64(v) }
		exact := nf(0)
		for l := range c.x {
			p := nf(c.x[l])
			exact.Add(exact, p.Mul(p, nf(c.y[l])))
		}
		if s.Big().Cmp(exact) != 0 {
			t.Errorf("%v·%v: Superacc holds %g; want %g", c.x, c.y, s.Big(), exact)
		}
	}
}
