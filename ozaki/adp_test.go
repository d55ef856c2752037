package ozaki

import (
	"errors"
	"math"
	"math/rand"
	"testing"
)

func randMat(rng *rand.Rand, r, c int) []float64 {
	x := make([]float64, r*c)
	for i := range x {
		x[i] = rng.Float64()
	}
	return x
}

// BenchmarkGEMM1024S7 times the golden GEMM (GEMMTile over the whole
// matrix) for m = n = k = 1024 with 7 slices (triangular, 28 products).
func BenchmarkGEMM1024S7(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const n = 1024
	A, B := randMat(rng, n, n), randMat(rng, n, n)
	p, err := MakePlan(A, B, n, n, n, Config{Bits: 55, Mode: Fixed})
	if err != nil || p.Slices != 7 {
		b.Fatal(err, p.Slices)
	}
	pa, pb := p.Digits(A, B)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		GEMMTile(&p, pa, pb, 0, n, 0, n)
	}
}

// BenchmarkPlanDigits1024 times ADP's scan + ESC (block 8) and the slicing
// for m = n = k = 1024.
func BenchmarkPlanDigits1024(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const n = 1024
	A, B := randMat(rng, n, n), randMat(rng, n, n)
	for i := 0; i < b.N; i++ {
		p, _ := MakePlan(A, B, n, n, n, Config{Bits: 53, Mode: Dynamic})
		p.Digits(A, B)
	}
}

// TestGradeA: U(0,1) inputs, Bits 53 in Dynamic mode: the largest
// componentwise error |C−AB|/(u·(|A||B|)) stays below the linear bound
// 2n+2 for n = 32…256; so does native FP64 (plain loop). The measured
// values are logged. The mean error of native FP64 grows with n (loose
// √n check); the emulation's error is dominated by the O(s) roundings of the
// recombination and stays about flat, which is within (not against) √n.
func TestGradeA(t *testing.T) {
	rng := rand.New(rand.NewSource(2024))
	var emuMean, natMean []float64
	for _, n := range []int{32, 64, 128, 256} {
		A, B := randMat(rng, n, n), randMat(rng, n, n)
		ref, abs := RefGEMM(A, B, n, n, n)
		c, p, err := GEMM(A, B, nil, 1, 0, n, n, n, Config{Bits: 53, Mode: Dynamic})
		if err != nil || p.Fallback {
			t.Fatal(err, p.Reason)
		}
		e := ComponentwiseStats(ref, c, abs)
		nat := ComponentwiseStats(ref, NativeGEMM(A, B, nil, 1, 0, n, n, n), abs)
		t.Logf("n=%4d slices=%d ESC=%d: emulated max %.3f mean %.3f | native max %.3f mean %.3f (units of u·|A||B|, bound 2n+2=%d)",
			n, p.Slices, p.ESC, e.Max, e.Mean, nat.Max, nat.Mean, 2*n+2)
		if e.Max > float64(2*n+2) || nat.Max > float64(2*n+2) || e.Skipped != 0 {
			t.Errorf("n=%d: not Grade A: %+v %+v", n, e, nat)
		}
		emuMean, natMean = append(emuMean, e.Mean), append(natMean, nat.Mean)
	}
	last := len(natMean) - 1
	if r := natMean[last] / natMean[0]; r < 1.2 || r > 8*math.Sqrt(8) {
		t.Errorf("native mean error ratio n=256/n=32 = %.2f, expected about √8", r)
	}
	if r := emuMean[last] / emuMean[0]; r > 2*math.Sqrt(8) {
		t.Errorf("emulated mean error grows faster than √n: ratio %.2f", r)
	}
}

// TestGEMMAccuracySigned: signed inputs with an exponent spread and zeros,
// Dynamic 53 bits with exact (block 1) and default ESC: componentwise error
// within 2k+2 units of u·|A||B|; skipped (|A||B| = 0) entries are exact.
func TestGEMMAccuracySigned(t *testing.T) {
	rng := rand.New(rand.NewSource(77))
	const m, k, n = 20, 70, 30
	A, B := spreadMat(rng, m, k, 30, 6), spreadMat(rng, k, n, 30, 6)
	for j := 0; j < k; j++ {
		A[3*k+j] = 0 // zero row
	}
	ref, abs := RefGEMM(A, B, m, k, n)
	for _, blk := range []int{1, 0} {
		c, p, err := GEMM(A, B, nil, 1, 0, m, k, n, Config{Bits: 53, Mode: Dynamic, ESCBlock: blk})
		if err != nil || p.Fallback {
			t.Fatal(err, p.Reason)
		}
		st := ComponentwiseStats(ref, c, abs)
		t.Logf("block %d: ESC %d slices %d: %+v", p.ESCBlock, p.ESC, p.Slices, st)
		if st.Max > 2*k+2 || st.ZeroBoundWrong != 0 {
			t.Errorf("block %d: %+v", blk, st)
		}
	}
}

// TestOrderInvariance: permuting k (A's columns and B's rows alike) leaves
// the emulated C bit-identical for a fixed slice count (Fixed mode) and for
// Dynamic mode with exact ESC (block 1), as long as k fits one chunk; the
// native loop generally changes.
func TestOrderInvariance(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	const m, k, n = 12, 90, 14
	A, B := spreadMat(rng, m, k, 40, 7), spreadMat(rng, k, n, 40, 7)
	perm := rng.Perm(k)
	PA, PB := make([]float64, m*k), make([]float64, k*n)
	for l, pl := range perm {
		for i := 0; i < m; i++ {
			PA[i*k+l] = A[i*k+pl]
		}
		copy(PB[l*n:l*n+n], B[pl*n:pl*n+n])
	}
	for _, cfg := range []Config{{Bits: 55, Mode: Fixed}, {Bits: 53, Mode: Dynamic, ESCBlock: 1}, {Bits: 80, Mode: Forced, Products: Square}} {
		c1, p1, _ := GEMM(A, B, nil, 1, 0, m, k, n, cfg)
		c2, p2, _ := GEMM(PA, PB, nil, 1, 0, m, k, n, cfg)
		if p1.Slices != p2.Slices {
			t.Fatalf("%v: slices %d vs %d", cfg.Mode, p1.Slices, p2.Slices)
		}
		sameBits(t, cfg.Mode.String(), c1, c2)
	}
	n1, n2 := NativeGEMM(A, B, nil, 1, 0, m, k, n), NativeGEMM(PA, PB, nil, 1, 0, m, k, n)
	diff := 0
	for x := range n1 {
		if n1[x] != n2[x] {
			diff++
		}
	}
	t.Logf("native FP64: %d of %d outputs change under the permutation", diff, m*n)
}

// test2Seed returns a seed whose Test 2 matrices have no bumped row or
// column (so the required bits are exactly 54 + 2b).
func test2Seed(n, b int) int64 {
	for seed := int64(1); ; seed++ {
		A, B := Test2(n, b, seed)
		if !ScaleRows(A, n, n)[0].Bumped && !ScaleCols(B, n, n)[0].Bumped {
			return seed
		}
	}
}

func maxRel(ref, got []float64) float64 {
	e := 0.0
	for x := range ref {
		if r := math.Abs(got[x]-ref[x]) / math.Abs(ref[x]); r > e || r != r {
			e = r
		}
	}
	return e
}

// TestTest2 (Demmel's Test 2, n = 64). Without fallback (Forced, 103 bits =
// 13 slices, capacity W = 103): the max relative error is O(u) while
// 2b ≤ W − 54 and grows like 2^(2b−W) after. With Dynamic + Fallback and a
// cap M: the plan falls back iff 54 + 2b > M, and the error stays O(u).
func TestTest2(t *testing.T) {
	const n = 64
	for _, b := range []int{0, 5, 20, 24, 25, 30, 40, 50} {
		seed := test2Seed(n, b)
		A, B := Test2(n, b, seed)
		ref, _ := RefGEMM(A, B, n, n, n)
		c, p, err := GEMM(A, B, nil, 1, 0, n, n, n, Config{Bits: 103, Mode: Forced})
		if err != nil || p.Fallback || p.Capacity != 103 || p.ESC != 2*b+1 {
			t.Fatal(err, p.Reason, p.ESC)
		}
		e := maxRel(ref, c)
		t.Logf("b=%2d forced 103 bits: max rel error %.3g = 2^%.1f", b, e, math.Log2(e))
		switch {
		case 2*b <= p.Capacity-54 && e > 8*Unit:
			t.Errorf("b=%d: error %g not O(u) although 2b ≤ W−54", b, e)
		case 2*b >= p.Capacity-54+10 && e < 0x1p-48:
			t.Errorf("b=%d: error %g did not grow", b, e)
		}
		for _, M := range []int{55, 80, 103, 160} {
			c, p, err := GEMM(A, B, nil, 1, 0, n, n, n, Config{Bits: 53, Mode: Dynamic, MaxBits: M, Fallback: true})
			if err != nil {
				t.Fatal(err)
			}
			if p.Fallback != (54+2*b > M) {
				t.Errorf("b=%d M=%d: fallback %v (ESC %d, %s)", b, M, p.Fallback, p.ESC, p.Reason)
			}
			if e := maxRel(ref, c); e > 64*Unit {
				t.Errorf("b=%d M=%d: error %g with fallback on", b, M, e)
			}
		}
	}
}

// TestExtremeInputs: huge and subnormal entries never panic and give the
// documented results: Infs are produced only by the final scaling and are
// not sticky; subnormal sums are exact when the slices hold them and round
// correctly (RNE) in the final scaling.
func TestExtremeInputs(t *testing.T) {
	cfg := Config{Bits: 53, Mode: Dynamic}
	run := func(a, b []float64, m, k, n int) []float64 {
		t.Helper()
		c, p, err := GEMM(a, b, nil, 1, 0, m, k, n, cfg)
		if err != nil || p.Fallback {
			t.Fatal(err, p.Reason)
		}
		return c
	}
	h := 0x1.8p1023 // Infs come from the final scaling only
	// Native overflows in the middle (Inf is sticky); the emulation does not.
	if c := run([]float64{h, h, -h}, []float64{1, 1, 1}, 1, 3, 1); c[0] != h {
		t.Errorf("non-sticky Inf: %v", c[0])
	}
	if c := NativeGEMM([]float64{h, h, -h}, []float64{1, 1, 1}, nil, 1, 0, 1, 3, 1); !math.IsInf(c[0], 1) {
		t.Errorf("native: %v", c[0])
	}
	if c := run([]float64{h, h}, []float64{1, 1}, 1, 2, 1); !math.IsInf(c[0], 1) {
		t.Errorf("overflow: %v", c[0])
	}
	// 2^1000·2^-1000 − 2^-1000·2^1000 = 0 needs W ≈ 53 + 4000 bits. Capped at
	// 200 bits (no fallback) the slicing truncates toward −∞: 2^-1000 in
	// B's column (scale 2^1001) becomes 0, −2^-1000 in A's row becomes
	// −2^(σ+1−8s) = −2^794, and the product −2^1794 overflows: −Inf, the
	// documented capped result. With Fallback the native DGEMM gives 0.
	ca, cb := []float64{0x1p1000, -0x1p-1000}, []float64{0x1p-1000, 0x1p1000}
	if c := run(ca, cb, 1, 2, 1); !math.IsInf(c[0], -1) {
		t.Errorf("capped cancellation: %v, want -Inf", c[0])
	}
	if c, p, _ := GEMM(ca, cb, nil, 1, 0, 1, 2, 1, Config{Bits: 53, Mode: Dynamic, Fallback: true}); !p.Fallback || c[0] != 0 {
		t.Errorf("fallback cancellation: %v %+v", c[0], p)
	}
	const tiny = 0x1p-1074
	if c := run([]float64{tiny, 3 * tiny}, []float64{1, 1}, 1, 2, 1); c[0] != 4*tiny {
		t.Errorf("subnormal sum: %v", c[0])
	}
	if c := run([]float64{tiny}, []float64{0.5}, 1, 1, 1); c[0] != 0 || math.Signbit(c[0]) {
		t.Errorf("half of the smallest subnormal (tie to even): %v", c[0])
	}
	if c := run([]float64{tiny}, []float64{0.75}, 1, 1, 1); c[0] != tiny {
		t.Errorf("0.75 of the smallest subnormal: %v", c[0])
	}
	// A row that mixes 2^1023 and 2^-1074: the ESC asks for ~2100 bits, so
	// Dynamic caps (no fallback) or falls back; neither panics.
	a := []float64{0x1p1023, tiny, 1, -tiny}
	b := []float64{1, 0x1p1000, 1, 1}
	for _, fb := range []bool{false, true} {
		c, p, err := GEMM(a, b, nil, 1, 0, 1, 4, 1, Config{Bits: 53, Mode: Dynamic, Fallback: fb})
		if err != nil || p.Fallback != fb || p.Capped == fb || (!fb && p.Slices != MaxSlices) {
			t.Fatalf("fallback %v: %v %+v", fb, err, p)
		}
		// Capped: B's column holds 2^1000, so its entries 1 fall below the
		// 26 slices (scale 2^1001, LSB 2^794) and become 0: the result is 0
		// although AB ≈ 2^1023. The fallback gives the native value.
		want := 0.0
		if fb {
			want = NativeGEMM(a, b, nil, 1, 0, 1, 4, 1)[0]
		}
		if c[0] != want {
			t.Errorf("fallback %v: %v, want %v", fb, c[0], want)
		}
	}
	// Fixed mode: random full-range finite values, no panic.
	rng := rand.New(rand.NewSource(4))
	x := interesting(rng, 64)
	if _, _, err := GEMM(x, x, nil, 1, 0, 8, 8, 8, Config{Bits: 200, Mode: Fixed}); err != nil {
		t.Fatal(err)
	}
}

// TestInfNaNRouting: Forced and Dynamic route Inf/NaN to the native DGEMM
// (cfg.Native) before any ESC or slicing, whatever Fallback says; Fixed
// mode does not scan, treats the non-finite entries as 0 and does not panic.
func TestInfNaNRouting(t *testing.T) {
	A := []float64{1, 2, math.Inf(-1), 4}
	B := []float64{1, math.NaN(), 3, 4}
	One := []float64{1, 0, 0, 1}
	for _, mode := range []Mode{Forced, Dynamic} {
		for _, ab := range [][2][]float64{{A, One}, {One, B}} {
			called := false
			cfg := Config{Bits: 53, Mode: mode, Native: func(a, b, c0 []float64, al, be float64, m, k, n int) []float64 {
				called = true
				return NativeGEMM(a, b, c0, al, be, m, k, n)
			}}
			c, p, err := GEMM(ab[0], ab[1], nil, 1, 0, 2, 2, 2, cfg)
			if err != nil || !p.Fallback || !p.InfNaN || p.ESCDone || p.Slices != 0 || !called {
				t.Fatalf("%v: %v %+v called=%v", mode, err, p, called)
			}
			sameBits(t, "native", NativeGEMM(ab[0], ab[1], nil, 1, 0, 2, 2, 2), c)
		}
	}
	c, p, err := GEMM(A, One, nil, 1, 0, 2, 2, 2, Config{Bits: 53, Mode: Fixed})
	if err != nil || p.Fallback || p.InfNaN {
		t.Fatal(err, p)
	}
	want, _, _ := GEMM([]float64{1, 2, 0, 4}, One, nil, 1, 0, 2, 2, 2, Config{Bits: 53, Mode: Fixed})
	sameBits(t, "fixed with Inf as 0", want, c)
}

// TestConfigErrors: bad settings return errors, never panic.
func TestConfigErrors(t *testing.T) {
	a := []float64{1, 2, 3, 4}
	for _, c := range []struct {
		cfg  Config
		want error
	}{
		{Config{Bits: 0}, ErrBits}, {Config{Bits: 201}, ErrBits}, {Config{Bits: -5, Mode: Dynamic}, ErrBits},
		{Config{Bits: 53, Mode: Dynamic, MaxBits: 201}, ErrBits}, {Config{Bits: 53, ESCBlock: -1}, ErrConfig},
		{Config{Bits: 53, Mode: Mode(7)}, ErrConfig}, {Config{Bits: 53, Products: ProductSet(3)}, ErrConfig},
		{Config{Bits: 53, Chunk: 18725}, ErrConfig},
	} {
		if _, _, err := GEMM(a, a, nil, 1, 0, 2, 2, 2, c.cfg); !errors.Is(err, c.want) {
			t.Errorf("%+v: err %v, want %v", c.cfg, err, c.want)
		}
	}
	if _, _, err := GEMM(a, a, nil, 1, 0, 3, 2, 2, Config{Bits: 53}); !errors.Is(err, ErrShape) {
		t.Errorf("shape: %v", err)
	}
	if _, _, err := GEMM(a, a, nil, 1, 2, 2, 2, 2, Config{Bits: 53}); !errors.Is(err, ErrShape) {
		t.Errorf("missing C0: %v", err)
	}
}

// TestEpilogue: C = α·P + β·C0 with the documented roundings; zero rows and
// columns of the product give exactly α·0 + β·C0.
func TestEpilogue(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	const m, k, n = 5, 9, 6
	A, B := spreadMat(rng, m, k, 10, 0), spreadMat(rng, k, n, 10, 0)
	for l := 0; l < k; l++ {
		A[1*k+l] = 0 // row 1 zero
		B[l*n+4] = 0 // column 4 zero
	}
	C0 := spreadMat(rng, m, n, 10, 0)
	alpha, beta := -1.5, 0.3
	cfg := Config{Bits: 53, Mode: Dynamic}
	P, _, _ := GEMM(A, B, nil, 1, 0, m, k, n, cfg)
	C, _, _ := GEMM(A, B, C0, alpha, beta, m, k, n, cfg)
	for x := range C {
		want := float64(alpha*P[x]) + float64(beta*C0[x])
		if x/n == 1 || x%n == 4 {
			if P[x] != 0 || math.Signbit(P[x]) {
				t.Fatalf("zero line output %v", P[x])
			}
			want = float64(alpha*0) + float64(beta*C0[x])
		}
		if math.Float64bits(C[x]) != math.Float64bits(want) {
			t.Fatalf("element %d: %v want %v", x, C[x], want)
		}
	}
}

// TestTilesAndWorkers: sampled tiles and any worker count give the bits of
// the full GEMM.
func TestTilesAndWorkers(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	const m, k, n = 40, 150, 300
	A, B := spreadMat(rng, m, k, 20, 5), spreadMat(rng, k, n, 20, 5)
	full, p, err := GEMM(A, B, nil, 1, 0, m, k, n, Config{Bits: 53, Mode: Dynamic, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := p.Digits(A, B)
	for _, w := range []int{1, 2, 5} {
		p.Workers = w
		for _, tile := range [][4]int{{0, m, 0, n}, {7, 9, 130, 140}, {39, 1, 299, 1}, {0, 1, 0, 300}} {
			got := GEMMTile(&p, pa, pb, tile[0], tile[1], tile[2], tile[3])
			for i := 0; i < tile[1]; i++ {
				sameBits(t, "tile", full[(tile[0]+i)*n+tile[2]:(tile[0]+i)*n+tile[2]+tile[3]], got[i*tile[3]:(i+1)*tile[3]])
			}
		}
	}
}
