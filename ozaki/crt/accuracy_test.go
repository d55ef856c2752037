package crt

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/davinci-sim/davinci-sim/ozaki"
)

// errBound returns, per entry, the §5 bound on |C − AB| in units of
// u·(|A||B|)_ij: Σ_l (2^(σ_i−bA−1)|B_lj| + |A_il|2^(τ_j−bB−1) +
// 2^(σ_i+τ_j−bA−bB−2)) plus the final rounding u·(|AB| + that).
func errBound(p *Plan, a, b, abs []float64) []float64 {
	m, k, n := p.M, p.K, p.N
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		ea := math.Ldexp(1, p.ScalesA[i].Sigma-p.BitsA-1)
		for j := 0; j < n; j++ {
			eb := math.Ldexp(1, p.ScalesB[j].Sigma-p.BitsB-1)
			d := 0.0
			for l := 0; l < k; l++ {
				d += ea*math.Abs(b[l*n+j]) + math.Abs(a[i*k+l])*eb + ea*eb
			}
			d *= 1 + 1e-9
			out[i*n+j] = (d + ozaki.Unit*(abs[i*n+j]+d)) / (ozaki.Unit * abs[i*n+j])
		}
	}
	return out
}

// TestAccuracyTable: U(0,1) and U(−1,1), m = n = 64, k = 256, N = 8 … 20:
// componentwise max and mean error in units of u·(|A||B|)_ij against the
// exact ozaki.RefGEMM, logged next to Ozaki-I (Fixed) at the same bits
// (BitsFor) and native FP64. Every entry is within the §5 bound; the error
// falls about 2^3.85 per modulus until the final rounding (≤ 0.5 u·|C|)
// dominates.
func TestAccuracyTable(t *testing.T) {
	const m, k, n = 64, 256, 64
	rng := rand.New(rand.NewSource(15))
	for _, dist := range []string{"U(0,1)", "U(-1,1)"} {
		A, B := randMat(rng, m, k), randMat(rng, k, n)
		if dist == "U(-1,1)" {
			for x := range A {
				A[x] = 2*A[x] - 1
			}
			for x := range B {
				B[x] = 2*B[x] - 1
			}
		}
		ref, abs := ozaki.RefGEMM(A, B, m, k, n)
		nat := ozaki.ComponentwiseStats(ref, ozaki.NativeGEMM(A, B, nil, 1, 0, m, k, n), abs)
		t.Logf("%s, m=n=%d k=%d, errors in u·(|A||B|)_ij; native FP64: max %.3g mean %.3g", dist, m, k, nat.Max, nat.Mean)
		t.Logf("%3s %5s %11s %11s | %-16s %11s %11s", "N", "bits", "II max", "II mean", "Ozaki-I (Fixed)", "I max", "I mean")
		prev := math.Inf(1)
		var maxes []float64
		for N := 8; N <= 20; N++ {
			c, p, err := GEMM(A, B, nil, 1, 0, m, k, n, Config{Moduli: N})
			if err != nil {
				t.Fatal(err)
			}
			e := ozaki.ComponentwiseStats(ref, c, abs)
			bound := errBound(&p, A, B, abs)
			for x := range c {
				if got := math.Abs(c[x]-ref[x]) / (ozaki.Unit * abs[x]); got > bound[x] {
					t.Fatalf("%s N=%d entry %d: error %g u > bound %g u", dist, N, x, got, bound[x])
				}
			}
			c1, p1, err := ozaki.GEMM(A, B, nil, 1, 0, m, k, n, ozaki.Config{Bits: p.Bits, Mode: ozaki.Fixed})
			if err != nil {
				t.Fatal(err)
			}
			e1 := ozaki.ComponentwiseStats(ref, c1, abs)
			t.Logf("%3d %5d %11.4g %11.4g | s=%-2d (%3d bits) %11.4g %11.4g", N, p.Bits, e.Max, e.Mean,
				p1.Slices, p1.Capacity, e1.Max, e1.Mean)
			if e.Max > prev+0.5 || e.Skipped != 0 {
				t.Errorf("%s N=%d: max error %g after %g", dist, N, e.Max, prev)
			}
			prev = e.Max
			maxes = append(maxes, e.Max)
		}
		for x := 0; x+2 < len(maxes); x++ {
			if maxes[x+2] > 8 && maxes[x+2] > maxes[x]/16 { // both above the final-rounding floor
				t.Errorf("%s: N=%d→%d error %g → %g, expected a fall of ≈ 2^7.7", dist, 8+x, 10+x, maxes[x], maxes[x+2])
			}
		}
		if last := maxes[len(maxes)-1]; last > 0.51 {
			t.Errorf("%s N=20: max error %g u, want the final rounding only", dist, last)
		}
	}
}

func maxRel(ref, got []float64) float64 {
	e := 0.0
	for x := range ref {
		e = max(e, math.Abs(got[x]-ref[x])/math.Abs(ref[x]))
	}
	return e
}

// TestTest2Span (Demmel's Test 2, n = 64, exponent span parameter b: every
// row and column holds entries from 2^−b to 2^b): Ozaki-II's per-line
// scaling keeps about W − 2b bits of the smallest terms, so its max relative
// error grows like 2^(2b−W) once 2b is past the few spare bits, and more
// moduli only shift the curve; Ozaki-I with ADP (Dynamic, 53 bits) adds
// slices (ESC = 2b + 1) and stays O(u).
func TestTest2Span(t *testing.T) {
	const n = 64
	mods := []int{14, 18, 24}
	head := fmt.Sprintf("%3s", "b")
	for _, N := range mods {
		head += fmt.Sprintf(" | II N=%2d (%2d bits)", N, BitsFor(N, n))
	}
	t.Log(head + " | Ozaki-I dynamic (slices)")
	first := map[int]float64{}
	for _, b := range []int{0, 1, 2, 4, 8, 12, 16, 24, 32} {
		A, B := ozaki.Test2(n, b, int64(1000+b))
		ref, _ := ozaki.RefGEMM(A, B, n, n, n)
		line := fmt.Sprintf("%3d", b)
		for _, N := range mods {
			c, _, err := GEMM(A, B, nil, 1, 0, n, n, n, Config{Moduli: N})
			if err != nil {
				t.Fatal(err)
			}
			e := maxRel(ref, c)
			line += fmt.Sprintf(" | %8.3g = 2^%6.1f", e, math.Log2(e))
			if b == 0 {
				first[N] = e
				if e > 4*ozaki.Unit {
					t.Errorf("N=%d b=0: error %g not O(u)", N, e)
				}
			}
			if W := BitsFor(N, n); 2*b >= W-53+12 && e < 0x1p-48 {
				t.Errorf("N=%d b=%d: error %g did not grow", N, b, e)
			}
		}
		c1, p1, err := ozaki.GEMM(A, B, nil, 1, 0, n, n, n, ozaki.Config{Bits: 53, Mode: ozaki.Dynamic})
		if err != nil || p1.Fallback {
			t.Fatal(err, p1.Reason)
		}
		e1 := maxRel(ref, c1)
		line += fmt.Sprintf(" | %8.3g (s=%d)", e1, p1.Slices)
		if e1 > 4*ozaki.Unit {
			t.Errorf("Ozaki-I dynamic b=%d: %g", b, e1)
		}
		t.Log(line)
	}
}

// TestExtremeInputs: huge values overflow only in the final rounding (not
// sticky); subnormal products are exact and round once (ties to even);
// zero rows and columns give exact zeros; lines mixing 2^1023 and 2^−1074
// do not panic but lose their small entries (§5), here the whole product.
func TestExtremeInputs(t *testing.T) {
	run := func(a, b []float64, m, k, n int) []float64 {
		t.Helper()
		c, p, err := GEMM(a, b, nil, 1, 0, m, k, n, Config{Moduli: 16})
		if err != nil || p.Fallback {
			t.Fatal(err, p.Reason)
		}
		return c
	}
	h := 0x1.8p1023
	if c := run([]float64{h, h, -h}, []float64{1, 1, 1}, 1, 3, 1); c[0] != h {
		t.Errorf("non-sticky overflow: %v", c[0])
	}
	if c := run([]float64{h, h}, []float64{1, 1}, 1, 2, 1); !math.IsInf(c[0], 1) {
		t.Errorf("overflow: %v", c[0])
	}
	if c := run([]float64{-h, -h}, []float64{1, 1}, 1, 2, 1); !math.IsInf(c[0], -1) {
		t.Errorf("negative overflow: %v", c[0])
	}
	const tiny = 0x1p-1074
	if c := run([]float64{tiny, 3 * tiny}, []float64{1, 1}, 1, 2, 1); c[0] != 4*tiny {
		t.Errorf("subnormal sum: %v", c[0])
	}
	if c := run([]float64{tiny}, []float64{0.5}, 1, 1, 1); c[0] != 0 || math.Signbit(c[0]) {
		t.Errorf("half the smallest subnormal (tie to even): %v", c[0])
	}
	if c := run([]float64{-tiny}, []float64{0.25}, 1, 1, 1); c[0] != 0 || !math.Signbit(c[0]) {
		t.Errorf("negative underflow: %v, want -0", c[0])
	}
	if c := run([]float64{tiny}, []float64{0.75}, 1, 1, 1); c[0] != tiny {
		t.Errorf("0.75 of the smallest subnormal: %v", c[0])
	}
	if c := run([]float64{0, 0, 1, 2}, []float64{5, 0, 7, 0}, 2, 2, 2); c[0] != 0 || c[1] != 0 || c[2] != 19 || c[3] != 0 || math.Signbit(c[0]) {
		t.Errorf("zeros: %v", c)
	}
	a := []float64{0x1p1023, tiny, 1, -tiny}
	b := []float64{1, 0x1p1000, 1, 1}
	// B's column holds 2^1000, so its entries 1 are 2^−1000 below the column
	// maximum, far under the budget: B' = 0 there, and the dominant term
	// 2^1023·1 is lost entirely; the tiny·2^1000 terms are lost in A's row.
	// The result is 0 although AB ≈ 2^1023 (§5: no ESC guards Ozaki-II).
	if c := run(a, b, 1, 4, 1); c[0] != 0 || math.Signbit(c[0]) {
		t.Errorf("wide row: %v, want the documented 0", c[0])
	}
	rng := rand.New(rand.NewSource(4))
	x := make([]float64, 64)
	for i := range x {
		for x[i] = interesting(rng); math.IsInf(x[i], 0) || math.IsNaN(x[i]); x[i] = interesting(rng) {
		}
	}
	if _, _, err := GEMM(x, x, nil, 1, 0, 8, 8, 8, Config{Moduli: 24}); err != nil {
		t.Fatal(err)
	}
}

// TestInfNaNRouting: Inf or NaN in A or B sets InfNaN and Fallback and
// routes to Config.Native (bits of ozaki.NativeGEMM by default); no
// residues are made.
func TestInfNaNRouting(t *testing.T) {
	A := []float64{1, 2, math.Inf(-1), 4}
	B := []float64{1, math.NaN(), 3, 4}
	One := []float64{1, 0, 0, 1}
	for _, ab := range [][2][]float64{{A, One}, {One, B}} {
		called := false
		cfg := Config{Moduli: 14, Native: func(a, b, c0 []float64, al, be float64, m, k, n int) []float64 {
			called = true
			return ozaki.NativeGEMM(a, b, c0, al, be, m, k, n)
		}}
		c, p, err := GEMM(ab[0], ab[1], nil, 1, 0, 2, 2, 2, cfg)
		if err != nil || !p.Fallback || !p.InfNaN || !called || p.Basis != nil {
			t.Fatalf("%v %+v called=%v", err, p, called)
		}
		sameBits(t, "native", ozaki.NativeGEMM(ab[0], ab[1], nil, 1, 0, 2, 2, 2), c)
		if ra, rb := p.Residues(ab[0], ab[1]); ra != nil || rb != nil {
			t.Error("residues of a fallback plan")
		}
		c, _, _ = GEMM(ab[0], ab[1], nil, 1, 0, 2, 2, 2, Config{Moduli: 14})
		sameBits(t, "default native", ozaki.NativeGEMM(ab[0], ab[1], nil, 1, 0, 2, 2, 2), c)
	}
}

// TestConfigErrors: bad shapes, moduli counts, chunks, workers and depths
// return errors (never panic).
func TestConfigErrors(t *testing.T) {
	A, B := []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}
	for _, tc := range []struct {
		m, k, n int
		cfg     Config
		want    error
	}{
		{2, 2, 2, Config{Moduli: 0}, ErrModuli},
		{2, 2, 2, Config{Moduli: 25}, ErrModuli},
		{3, 2, 2, Config{Moduli: 8}, ErrShape},
		{-1, 2, 2, Config{Moduli: 8}, ErrShape},
		{2, 2, 2, Config{Moduli: 8, Chunk: -1}, ErrConfig},
		{2, 2, 2, Config{Moduli: 8, Chunk: 131072}, ErrConfig},
		{2, 2, 2, Config{Moduli: 8, Workers: -2}, ErrConfig},
		{1, 200, 1, Config{Moduli: 1}, ErrDepth},
	} {
		a, b := A, B
		if tc.k == 200 {
			a, b = make([]float64, 200), make([]float64, 200)
		}
		if _, _, err := GEMM(a, b, nil, 1, 0, tc.m, tc.k, tc.n, tc.cfg); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc, err, tc.want)
		}
	}
	if _, _, err := GEMM(A, B, []float64{1}, 1, 2, 2, 2, 2, Config{Moduli: 8}); !errors.Is(err, ErrShape) {
		t.Errorf("short C0: %v", err)
	}
	// α, β go through ozaki.Epilogue.
	c0 := []float64{1, 1, 1, 1}
	c, _, err := GEMM(A, B, c0, 3, 0.5, 2, 2, 2, Config{Moduli: 16})
	if err != nil || c[0] != 3*7+0.5 || c[3] != 3*22+0.5 {
		t.Errorf("epilogue: %v %v", c, err)
	}
}
