package accuracy

import "fmt"

// maxElems bounds matrix sizes so that m·k etc. cannot overflow int.
const maxElems = 1 << 40

// CheckGEMM validates the shape of a row-major product C(m×n) = A(m×k)·B(k×n)
// against the operand lengths.
func CheckGEMM(m, k, n, lenA, lenB int) error {
	if m < 0 || k < 0 || n < 0 {
		return fmt.Errorf("accuracy: negative GEMM dimension m=%d k=%d n=%d", m, k, n)
	}
	if m > maxElems || k > maxElems || n > maxElems ||
		(k > 0 && (m > maxElems/k || n > maxElems/k)) || (n > 0 && m > maxElems/n) {
		return fmt.Errorf("accuracy: GEMM m=%d k=%d n=%d too large", m, k, n)
	}
	if lenA != m*k {
		return fmt.Errorf("accuracy: A has %d elements, want m·k = %d", lenA, m*k)
	}
	if lenB != k*n {
		return fmt.Errorf("accuracy: B has %d elements, want k·n = %d", lenB, k*n)
	}
	return nil
}

// ReferenceGEMM returns C = A·B in FP64 via gonum's blas64.Gemm: A is m×k,
// B is k×n, both row-major float32 (widened exactly), C is m×n row-major.
// It returns nil when the shapes do not match the slices (see CheckGEMM).
func ReferenceGEMM(m, k, n int, a, b []float32) []float64 {
	if CheckGEMM(m, k, n, len(a), len(b)) != nil {
		return nil
	}
	return ReferenceGEMM64(m, k, n, widen(a), widen(b))
}

// ReferenceGEMM64 is ReferenceGEMM for float64 operands: each C[i][j] the
// sum over k in increasing order of the rounded products A[i][k]·B[k][j]
// (a zero A[i][k] skipped), as gonum's blas64.Gemm computes it on amd64 —
// on every platform (gemm64, which the Go compiler may not fuse into
// FMAs: arm64's gonum does, and gave other references there).
func ReferenceGEMM64(m, k, n int, a, b []float64) []float64 {
	if CheckGEMM(m, k, n, len(a), len(b)) != nil {
		return nil
	}
	c := make([]float64, m*n)
	if m == 0 || n == 0 || k == 0 {
		return c
	}
	gemm64(m, k, n, a, b, c)
	return c
}

// CPUSGEMM returns C = A·B computed in float32 (the CPU FP32 baseline):
// each C[i][j] the float32 sum over k in increasing order of the float32
// products A[i][k]·B[k][j], each rounded before it is added (a zero
// A[i][k] skipped) — gonum's blas32.Gemm on amd64, the same on every
// platform (gemm32; an FMA-fused sum, as arm64's gonum computes, is
// another baseline). It returns nil when the shapes do not match the
// slices.
func CPUSGEMM(m, k, n int, a, b []float32) []float32 {
	if CheckGEMM(m, k, n, len(a), len(b)) != nil {
		return nil
	}
	c := make([]float32, m*n)
	if m == 0 || n == 0 || k == 0 {
		return c
	}
	gemm32(m, k, n, a, b, c)
	return c
}

// gemmRows is CPUSGEMM's definition (T float32) and ReferenceGEMM64's
// (T float64), row by row: C[i][:] += A[i][l]·B[l][:] for l in increasing
// order, each product rounded to T before the addition (the explicit
// conversion forbids fusing them), a zero A[i][l] skipped (so a 0·∞ in B
// does not turn C into NaN, as in gonum). gemm32 and gemm64 run it where
// gonum's assembly does not compute exactly this.
func gemmRows[T float32 | float64](k, n int, a, b, c []T) {
	for i := 0; i < len(c)/n; i++ {
		crow := c[i*n : i*n+n]
		for l, v := range a[i*k : i*k+k] {
			if v == 0 {
				continue
			}
			for j, w := range b[l*n : l*n+n] {
				crow[j] += T(v * w)
			}
		}
	}
}

func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// Widen returns x converted exactly to float64.
func Widen(x []float32) []float64 { return widen(x) }
