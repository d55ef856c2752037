package accuracy

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestReferenceGEMMHand(t *testing.T) {
	// A (2×3) = [1 2 3; 4 5 6], B (3×2) = [7 8; 9 10; 11 12].
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{7, 8, 9, 10, 11, 12}
	want := []float64{58, 64, 139, 154}
	c := ReferenceGEMM(2, 3, 2, a, b)
	c32 := CPUSGEMM(2, 3, 2, a, b)
	for i := range want {
		if c[i] != want[i] || float64(c32[i]) != want[i] {
			t.Fatalf("C = %v / %v, want %v", c, c32, want)
		}
	}
}

// The FP64 reference keeps what float32 accumulation loses.
func TestReferenceIsFP64(t *testing.T) {
	a := []float32{1, 1e-8}
	b := []float32{1, 1}
	ref := ReferenceGEMM(1, 2, 1, a, b)
	sg := CPUSGEMM(1, 2, 1, a, b)
	if ref[0] != 1+float64(float32(1e-8)) {
		t.Fatalf("reference %v", ref[0])
	}
	if sg[0] != 1 {
		t.Fatalf("SGEMM %v, want 1 (FP32 accumulation)", sg[0])
	}
}

func TestGEMMRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m, k, n := 33, 70, 17
	a := make([]float32, m*k)
	b := make([]float32, k*n)
	for i := range a {
		a[i] = float32(rng.Float64()*2 - 1)
	}
	for i := range b {
		b[i] = float32(rng.Float64()*2 - 1)
	}
	ref := ReferenceGEMM(m, k, n, a, b)
	// Naive FP64 triple loop (products and sums of float32 inputs in
	// float64 are not exact, but agree with BLAS to ~1e-15).
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				s += float64(a[i*k+p]) * float64(b[p*n+j])
			}
			if math.Abs(s-ref[i*n+j]) > 1e-13 {
				t.Fatalf("C[%d,%d] = %v, naive %v", i, j, ref[i*n+j], s)
			}
		}
	}
	met := Compare32(ref, CPUSGEMM(m, k, n, a, b))
	if met.RelFro == 0 || met.RelFro > 1e-6 || met.Bits < 20 {
		t.Fatalf("SGEMM vs FP64: %v", met)
	}
	t.Logf("SGEMM %dx%dx%d vs FP64: %v", m, k, n, met)
}

func TestGEMMBadShapes(t *testing.T) {
	if ReferenceGEMM(2, 2, 2, make([]float32, 3), make([]float32, 4)) != nil ||
		CPUSGEMM(2, 2, 2, make([]float32, 4), make([]float32, 5)) != nil ||
		ReferenceGEMM(-1, 2, 2, nil, nil) != nil ||
		ReferenceGEMM64(1<<40, 1<<40, 1, nil, nil) != nil {
		t.Fatal("bad shapes accepted")
	}
	if err := CheckGEMM(2, 3, 4, 6, 11); err == nil {
		t.Fatal("CheckGEMM accepted a short B")
	}
	// Empty dimensions are valid.
	if c := ReferenceGEMM(2, 0, 3, nil, nil); len(c) != 6 || c[5] != 0 {
		t.Fatalf("k = 0: %v", c)
	}
	if c := CPUSGEMM(0, 4, 3, nil, make([]float32, 12)); c == nil || len(c) != 0 {
		t.Fatalf("m = 0: %v", c)
	}
}
