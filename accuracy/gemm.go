package accuracy

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

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

// ReferenceGEMM64 is ReferenceGEMM for float64 operands.
func ReferenceGEMM64(m, k, n int, a, b []float64) []float64 {
	if CheckGEMM(m, k, n, len(a), len(b)) != nil {
		return nil
	}
	c := make([]float64, m*n)
	if m == 0 || n == 0 || k == 0 {
		return c
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas64.General{Rows: m, Cols: k, Stride: k, Data: a},
		blas64.General{Rows: k, Cols: n, Stride: n, Data: b},
		0, blas64.General{Rows: m, Cols: n, Stride: n, Data: c})
	return c
}

// CPUSGEMM returns C = A·B computed in float32 by gonum's blas32.Gemm (the
// CPU FP32 baseline; its summation order is gonum's). It returns nil when
// the shapes do not match the slices.
func CPUSGEMM(m, k, n int, a, b []float32) []float32 {
	if CheckGEMM(m, k, n, len(a), len(b)) != nil {
		return nil
	}
	c := make([]float32, m*n)
	if m == 0 || n == 0 || k == 0 {
		return c
	}
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas32.General{Rows: m, Cols: k, Stride: k, Data: a},
		blas32.General{Rows: k, Cols: n, Stride: n, Data: b},
		0, blas32.General{Rows: m, Cols: n, Stride: n, Data: c})
	return c
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
