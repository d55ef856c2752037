package ozaki

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// TestMaxChunkWorstCase: all digits −128 (each product +2^14), pairs
// concatenated slices of length L = MaxChunk(pairs): the int64 sum fits
// INT32; at L+1 it would not (an INT32 accumulator would wrap), and
// DiagonalProducts refuses that chunk. The 7-pair case is run through
// DiagonalProducts at the bound.
func TestMaxChunkWorstCase(t *testing.T) {
	for pairs := 1; pairs <= MaxSlices; pairs++ {
		L := MaxChunk(pairs)
		at := int64(pairs) * int64(L) * (-128) * (-128)
		over := int64(pairs) * int64(L+1) * (-128) * (-128)
		if at > math.MaxInt32 || over <= math.MaxInt32 || int64(int32(over)) == over {
			t.Fatalf("pairs %d: L=%d at %d over %d", pairs, L, at, over)
		}
		// The most negative sum (−128·127 per product) is smaller in size.
		if neg := int64(pairs) * int64(L) * (-128) * 127; neg < math.MinInt32 {
			t.Fatalf("pairs %d: negative worst case %d", pairs, neg)
		}
	}
	if MaxChunk(1) != 131071 || MaxChunk(7) != 18724 {
		t.Fatalf("MaxChunk(1)=%d MaxChunk(7)=%d", MaxChunk(1), MaxChunk(7))
	}
	const s = 7
	L := MaxChunk(s)
	pa, pb := newPlanes(s, L), newPlanes(s, L)
	for p := 0; p < s; p++ {
		for l := 0; l < L; l++ {
			pa[p][l], pb[p][l] = -128, -128
		}
	}
	D := DiagonalProducts(pa, pb, 1, L, 1, Triangular, 0, L, s+1) // diagonal s+1 has s pairs
	if want := int64(s) * int64(L) << 14; int64(D[0]) != want {
		t.Fatalf("D = %d, want %d", D[0], want)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("DiagonalProducts accepted a chunk above MaxChunk")
			}
		}()
		pa2, pb2 := newPlanes(s, L+1), newPlanes(s, L+1)
		DiagonalProducts(pa2, pb2, 1, L+1, 1, Triangular, 0, L+1, s+1)
	}()
}

// TestChunksRule: k itself when it fits, else the largest multiple of 64
// under MaxChunk(s).
func TestChunksRule(t *testing.T) {
	for _, c := range []struct {
		k, s int
		set  ProductSet
		want int
	}{{1024, 7, Triangular, 1024}, {18724, 7, Triangular, 18724}, {18725, 7, Triangular, 18688},
		{1 << 20, 7, Square, 18688}, {1 << 20, 26, Triangular, 4992}, {0, 7, Triangular, 0}, {131071, 1, Triangular, 131071}} {
		if got := Chunks(c.k, c.s, c.set); got != c.want {
			t.Errorf("Chunks(%d,%d,%v) = %d, want %d", c.k, c.s, c.set, got, c.want)
		}
	}
	if Triangular.Count(7) != 28 || Square.Count(7) != 49 || Triangular.Count(8) != 36 || len(Triangular.Pairs(7, 8)) != 7 || len(Square.Pairs(7, 14)) != 1 {
		t.Error("product set counts")
	}
}

// TestLdexpRounding: Go's math.Ldexp rounds correctly (RNE) into the
// subnormal range and to zero, compared with math/big, including exact ties.
func TestLdexpRounding(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	check := func(x float64, e int) {
		f := new(big.Float).SetFloat64(x)
		f.SetMantExp(f, e)
		want, _ := f.Float64()
		if got := math.Ldexp(x, e); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("Ldexp(%v, %d) = %v, big %v", x, e, got, want)
		}
	}
	for _, c := range []struct {
		x float64
		e int
	}{{1, -1075}, {3, -1075}, {5, -1076}, {1.5, -1075}, {0.75, -1074}, {1, -1076}, {0x1.FFFFFFFFFFFFFp0, -1075}, {-3, -1075}, {1, 1024}, {0x1.FFFFFFFFFFFFFp0, 1023}} {
		check(c.x, c.e)
	}
	for i := 0; i < 200000; i++ {
		x := float64(rng.Int63n(1<<53)+1) * math.Ldexp(1, -rng.Intn(60))
		if rng.Intn(2) == 0 {
			x = -x
		}
		check(x, -1000-rng.Intn(140))
		check(x, rng.Intn(2200)-1100)
	}
}

// bigDot is the slow exact cross-check: Σ x·y in a 5000-bit big.Float.
func bigDot(x, y []float64) float64 {
	sum := new(big.Float).SetPrec(5000)
	p := new(big.Float).SetPrec(5000)
	for l := range x {
		p.Mul(new(big.Float).SetPrec(5000).SetFloat64(x[l]), new(big.Float).SetPrec(5000).SetFloat64(y[l]))
		sum.Add(sum, p)
	}
	f, _ := sum.Float64()
	return f + 0
}

// TestExactDot: the superaccumulator equals the math/big sum rounded once,
// over the whole exponent range (subnormal products, 2^2046-size products,
// heavy cancellation, exact zeros).
func TestExactDot(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.Intn(40)
		x, y := make([]float64, n), make([]float64, n)
		for l := range x {
			switch trial % 4 {
			case 0: // anything finite
				x[l], y[l] = interesting(rng, 13)[12], interesting(rng, 13)[12]
			case 1: // cancellation
				x[l], y[l] = rng.NormFloat64(), rng.NormFloat64()
			case 2: // tiny products
				x[l], y[l] = math.Ldexp(rng.Float64()-0.5, -1000-rng.Intn(70)), math.Ldexp(rng.Float64(), -rng.Intn(80))
			case 3: // huge
				x[l], y[l] = math.Ldexp(rng.Float64()-0.5, 1000+rng.Intn(24)), math.Ldexp(rng.Float64(), rng.Intn(20))
			}
		}
		if trial%4 == 1 && n > 1 { // exact cancellation to zero in part
			x[n-1], y[n-1] = -x[0], y[0]
		}
		want := bigDot(x, y)
		if got := ExactDot(x, y); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d: ExactDot %v, big %v (x=%v y=%v)", trial, got, want, x, y)
		}
	}
	if ExactDot([]float64{1, 1}, []float64{1, -1}) != 0 || math.Signbit(ExactDot([]float64{-1}, []float64{0})) {
		t.Fatal("zero sums")
	}
	if AbsDot([]float64{-2, 3}, []float64{5, -7}) != 31 {
		t.Fatal("AbsDot")
	}
	// Huge cancellation: 2^1000·2^1000 − 2^1000·2^1000 + 2^-1074·2^-50.
	if got := ExactDot([]float64{0x1p1000, -0x1p1000, 0x1p-1074}, []float64{0x1p1000, 0x1p1000, 0x1p1023}); got != 0x1p-51 {
		t.Fatalf("cancellation: %v", got)
	}
}

// TestComponentwiseStats: skipped entries are counted, errors in u·|A||B|.
func TestComponentwiseStats(t *testing.T) {
	st := ComponentwiseStats([]float64{1, 0, 2}, []float64{1 + 0x1p-52, 0, 2}, []float64{1, 0, 4})
	if st.Max != 2 || st.Mean != 1 || st.Count != 2 || st.Skipped != 1 || st.ZeroBoundWrong != 0 {
		t.Fatalf("%+v", st)
	}
}
