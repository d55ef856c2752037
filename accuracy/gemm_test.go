package accuracy

import (
	"encoding/binary"
	"hash/fnv"
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

// gemm32 and gemm64 (gonum's kernels on amd64) compute exactly what
// gemmRows define, bit for bit — in gonum's parallel
// blocked path (m, n past its block of 64, k over several) too; and the
// test tells a sum whose products are fused into the additions from it.
func TestGEMMMatchesRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sh := range [][3]int{{1, 1, 1}, {3, 17, 5}, {33, 70, 17}, {130, 200, 150}} {
		m, k, n := sh[0], sh[1], sh[2]
		a, b := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = float32(rng.Float64()*2 - 1)
			if i%29 == 0 {
				a[i] = 0
			}
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		b[0] = float32(math.Inf(1)) // B[0][0], met by A[0][0] = 0: skipped (0·∞ would be NaN)
		got32, want32 := make([]float32, m*n), make([]float32, m*n)
		gemm32(m, k, n, a, b, got32)
		gemmRows(k, n, a, b, want32)
		a64, b64 := widen(a), widen(b)
		for i := range a64 {
			a64[i] *= 1 + 1e-9*float64(i%7) // not exact in FP32: the products round in FP64
		}
		got64, want64 := make([]float64, m*n), make([]float64, m*n)
		gemm64(m, k, n, a64, b64, got64)
		gemmRows(k, n, a64, b64, want64)
		if math.IsNaN(float64(want32[0])) || math.IsNaN(want64[0]) {
			t.Fatalf("%v: C[0][0] is NaN: A[0][0] = 0 was not skipped", sh)
		}
		fused := 0
		for i := range got32 {
			if math.Float32bits(got32[i]) != math.Float32bits(want32[i]) {
				t.Fatalf("%v: float32 C[%d] = %g, the definition gives %g", sh, i, got32[i], want32[i])
			}
			if math.Float64bits(got64[i]) != math.Float64bits(want64[i]) {
				t.Fatalf("%v: float64 C[%d] = %g, the definition gives %g", sh, i, got64[i], want64[i])
			}
			r, c := i/n, i%n
			acc := 0.0
			for l := 0; l < k; l++ {
				if a64[r*k+l] != 0 {
					acc = math.FMA(a64[r*k+l], b64[l*n+c], acc)
				}
			}
			if math.Float64bits(acc) != math.Float64bits(want64[i]) {
				fused++
			}
		}
		if k >= 70 && fused == 0 {
			t.Fatalf("%v: FMA chains gave every element the definition gives: the test could not tell them apart", sh)
		}
	}
}

// The baselines are the same bits on every platform: hashes of CPUSGEMM's
// and ReferenceGEMM64's outputs for fixed inputs, recorded on amd64 (gonum)
// and equal on arm64 under qemu (gemmRows), where gonum's
// fused kernels had given others.
func TestGEMMBaselinesGolden(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	m, k, n := 40, 300, 70
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(rng.Float64()*2 - 1)
	}
	for i := range b {
		b[i] = float32(rng.Float64()*2 - 1)
	}
	a64 := widen(a)
	for i := range a64 {
		a64[i] += 0x1p-40 * rng.Float64() // beyond FP32: the FP64 products round
	}
	h := fnv.New64a()
	for _, v := range CPUSGEMM(m, k, n, a, b) {
		binary.Write(h, binary.LittleEndian, math.Float32bits(v))
	}
	h32 := h.Sum64()
	h.Reset()
	for _, v := range ReferenceGEMM64(m, k, n, a64, widen(b)) {
		binary.Write(h, binary.LittleEndian, math.Float64bits(v))
	}
	if h64 := h.Sum64(); h32 != 0xe81431a93cbfcb81 || h64 != 0xd638bb4de98a48d5 {
		t.Fatalf("hashes %#x (CPUSGEMM), %#x (ReferenceGEMM64), want %#x, %#x", h32, h64, uint64(0xe81431a93cbfcb81), uint64(0xd638bb4de98a48d5))
	}
}
