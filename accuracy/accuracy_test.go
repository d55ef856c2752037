package accuracy

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-15*math.Max(1, math.Abs(b)) }

func TestHandComputed(t *testing.T) {
	ref := []float64{1, 2, 0, -4}
	got := []float64{1.5, 2, 0.5, -4}
	// d = (0.5, 0, 0.5, 0): ‖d‖² = 0.5, ‖ref‖² = 21.
	m := Compare64(ref, got)
	want := Metrics{
		RelFro:  math.Sqrt(0.5 / 21),
		MaxRel:  math.Inf(1), // element 2: 0.5 against a reference of 0
		MRED:    0.5 / 3,     // (0.5 + 0 + 0) over the three nonzero references
		MaxErr:  1,           // element 2: 0.5 / (0 + 0.5)
		Bits:    0.5 * math.Log2(42),
		N:       4,
		ZeroRef: 1, ZeroRefDiffers: 1,
	}
	if !near(m.RelFro, want.RelFro) || m.MaxRel != want.MaxRel || !near(m.MRED, want.MRED) ||
		m.MaxErr != want.MaxErr || !near(m.Bits, want.Bits) || m.N != 4 || m.NonFinite != 0 ||
		m.ZeroRef != 1 || m.ZeroRefDiffers != 1 {
		t.Fatalf("got %+v, want %+v", m, want)
	}
	// Symmetric error without the zero element: max(0.5/2.5, 0, 0) = 0.2.
	m = Compare32([]float64{1, 2, -4}, []float32{1.5, 2, -4})
	if !near(m.MaxErr, 0.2) || !near(m.MRED, 0.5/3) || !near(m.RelFro, math.Sqrt(0.25/21)) {
		t.Fatalf("got %+v", m)
	}
	// A relative error of 2^-10 everywhere gives exactly 10 bits.
	m = Compare64([]float64{1, -2, 4}, []float64{1 + 0x1p-10, -2 - 0x1p-9, 4 - 0x1p-8})
	if m.Bits != 10 || m.MaxRel != 0x1p-10 || m.MRED != 0x1p-10 {
		t.Fatalf("got %+v", m)
	}
}

func TestEqualIsZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	ref := make([]float64, 1000)
	got := make([]float32, len(ref))
	for i := range ref {
		got[i] = float32(rng.NormFloat64())
		ref[i] = float64(got[i])
	}
	ref[3], got[3] = 0, 0
	for _, m := range []Metrics{Compare32(ref, got), Compare64(ref, ref)} {
		if m.RelFro != 0 || m.MaxRel != 0 || m.MRED != 0 || m.MaxErr != 0 || m.Bits != MaxBits || m.N != 1000 {
			t.Fatalf("equal inputs: %+v", m)
		}
	}
	// All zero, and empty: exact, and no nonzero reference for MRED.
	for _, m := range []Metrics{Compare64([]float64{0, 0}, []float64{0, math.Copysign(0, -1)}), Compare64(nil, nil)} {
		if m.RelFro != 0 || m.MaxErr != 0 || m.Bits != MaxBits || m.MaxRel != 0 || !math.IsNaN(m.MRED) ||
			m.ZeroRef != m.N || m.ZeroRefDiffers != 0 {
			t.Fatalf("zeros: %+v", m)
		}
	}
	// A nonzero result against a zero reference.
	m := Compare64([]float64{0}, []float64{1e-30})
	if !math.IsInf(m.RelFro, 1) || m.MaxErr != 1 || !math.IsInf(m.MaxRel, 1) || !math.IsNaN(m.MRED) || m.Bits != 0 ||
		m.ZeroRef != 1 || m.ZeroRefDiffers != 1 {
		t.Fatalf("zero reference: %+v", m)
	}
}

// A reference of exactly 0 where the result is not (a review: hgemm's
// C[0] = 2^-10 where the exact product is 0 reported max_rel and mred of
// the other element alone, and max_rel 0 with rel_fro +Inf for that one
// element): max_rel is +Inf, mred is over the nonzero references and says
// how many, and a result equal to a zero reference is exact.
func TestZeroReference(t *testing.T) {
	m := Compare64([]float64{0, 2, 0}, []float64{0x1p-10, 2 + 0x1p-9, 0})
	if !math.IsInf(m.MaxRel, 1) || m.MRED != 0x1p-10 || m.ZeroRef != 2 || m.ZeroRefDiffers != 1 || m.N != 3 ||
		!near(m.RelFro, math.Sqrt(0x1p-20+0x1p-18)/2) || m.MaxErr != 1 {
		t.Fatalf("zero reference, nonzero result: %+v", m)
	}
	// Equal zeros: exact elements, left out of MRED's mean.
	m = Compare64([]float64{0, 2, 0}, []float64{0, 2 + 0x1p-9, math.Copysign(0, -1)})
	if m.MaxRel != 0x1p-10 || m.MRED != 0x1p-10 || m.ZeroRef != 2 || m.ZeroRefDiffers != 0 {
		t.Fatalf("zero reference, zero result: %+v", m)
	}
	// Every reference 0 and every result 0 (an underflowed product, and a
	// CPU SGEMM as underflowed): exact, with no MRED.
	m = Compare32([]float64{0, 0, 0}, []float32{0, 0, 0})
	if m.RelFro != 0 || m.Bits != MaxBits || !math.IsNaN(m.MRED) || m.MaxRel != 0 || m.ZeroRef != 3 {
		t.Fatalf("all zero: %+v", m)
	}
	// A non-finite result against a zero reference: infinitely wrong, but
	// not in MRED's elements; against a nonzero one, MRED too.
	m = Compare64([]float64{0, 2}, []float64{math.Inf(1), 2 + 0x1p-9})
	if !math.IsInf(m.RelFro, 1) || !math.IsInf(m.MaxRel, 1) || m.MRED != 0x1p-10 || m.ZeroRefDiffers != 1 {
		t.Fatalf("Inf against 0: %+v", m)
	}
	m = Compare64([]float64{0, 2}, []float64{0, math.Inf(1)})
	if !math.IsInf(m.MRED, 1) || m.ZeroRefDiffers != 0 {
		t.Fatalf("Inf against 2: %+v", m)
	}
	// The accumulator agrees.
	var acc Accumulator
	acc.Add(0, 0x1p-10)
	acc.Add(3, 3)
	if a := acc.Metrics(); !math.IsInf(a.MaxRel, 1) || a.MRED != 0 || a.ZeroRef != 1 || a.ZeroRefDiffers != 1 {
		t.Fatalf("accumulator: %+v", a)
	}
}

func TestNonFinite(t *testing.T) {
	ref := []float64{1, 2, math.Inf(1), math.NaN()}
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		got := []float32{bad, 2, float32(math.Inf(1)), float32(math.NaN())}
		m := Compare32(ref, got)
		if !math.IsInf(m.RelFro, 1) || !math.IsInf(m.MaxRel, 1) || !math.IsInf(m.MRED, 1) || m.MaxErr != 1 ||
			m.Bits != 0 || m.NonFinite != 3 {
			t.Fatalf("result %v: %+v", bad, m)
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	}
	// Matching infinities and NaNs are not errors.
	m := Compare32(ref, []float32{1, 2, float32(math.Inf(1)), float32(math.NaN())})
	if m.RelFro != 0 || m.MaxErr != 0 || m.NonFinite != 2 {
		t.Fatalf("matching non-finite: %+v", m)
	}
	// Finite but huge: the difference overflows float64.
	m = Compare64([]float64{math.MaxFloat64}, []float64{-math.MaxFloat64})
	if !math.IsInf(m.RelFro, 1) || m.MaxErr != 1 {
		t.Fatalf("overflowing difference: %+v", m)
	}
	m = Compare64([]float64{math.MaxFloat64}, []float64{math.MaxFloat64 / 2})
	if !near(m.MaxErr, 1.0/3) || !near(m.MaxRel, 0.5) {
		t.Fatalf("huge values: %+v", m)
	}
	// A reference whose norm exceeds MaxFloat64 (α = 1e308 in an FP64
	// GEMM): RelFro is the ratio of the norms, not 0 for an infinite ‖ref‖.
	big := []float64{1e308, -1e308, 1e308, math.Inf(1)}
	off := []float64{1e308 * (1 + 0x1p-40), -1e308, 1e308, math.Inf(1)}
	m = Compare64(big, off)
	if want := (off[0] - big[0]) / big[0] / math.Sqrt(3); math.Abs(m.RelFro/want-1) > 1e-12 || m.NonFinite != 1 {
		t.Fatalf("reference norm beyond MaxFloat64: %+v, want rel_fro %g", m, want)
	}
}

func TestLengthMismatch(t *testing.T) {
	if _, err := Compare([]float64{1}, nil); !errors.Is(err, ErrLength) {
		t.Fatalf("err = %v", err)
	}
	m := Compare32([]float64{1, 2}, []float32{1})
	if m.N != -1 || !math.IsInf(m.RelFro, 1) || m.Bits != 0 {
		t.Fatalf("mismatch: %+v", m)
	}
}

func TestJSON(t *testing.T) {
	in := Metrics{RelFro: 1.5e-7, MaxRel: math.Inf(1), MRED: math.NaN(), MaxErr: 0.25, Bits: 22.6, N: 7, NonFinite: 1, ZeroRef: 2, ZeroRefDiffers: 1}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"rel_fro":1.5e-7,"max_rel":"+Inf","mred":"NaN","max_err":0.25,"bits":22.6,"n":7,"non_finite":1,"zero_ref":2,"zero_ref_differs":1}`
	if string(b) != want {
		t.Fatalf("json %s, want %s", b, want)
	}
	var out Metrics
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.RelFro != in.RelFro || !math.IsInf(out.MaxRel, 1) || !math.IsNaN(out.MRED) || out.N != 7 || out.ZeroRef != 2 || out.ZeroRefDiffers != 1 {
		t.Fatalf("round trip %+v", out)
	}
	if err := json.Unmarshal([]byte(`{"rel_fro":"x"}`), &out); err == nil {
		t.Fatal("bad number accepted")
	}
}

func TestBitsOf(t *testing.T) {
	for _, c := range []struct{ rel, bits float64 }{{0, 64}, {0x1p-100, 64}, {0x1p-24, 24}, {1, 0}, {3, 0}, {math.NaN(), 0}, {math.Inf(1), 0}} {
		if got := BitsOf(c.rel); got != c.bits {
			t.Errorf("BitsOf(%v) = %v, want %v", c.rel, got, c.bits)
		}
	}
}
