package accuracy

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// gemm32 sets c (m×n, zero) to a·b as gemmRows defines it, by gonum's
// blas32.Gemm: on amd64 its kernels (SSE assembly: a multiply, then an
// add; k in increasing order in every block; a zero A element skipped)
// compute exactly that, in parallel and several times faster
// (TestGEMMMatchesRows holds them equal bit for bit).
func gemm32(m, k, n int, a, b, c []float32) {
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas32.General{Rows: m, Cols: k, Stride: k, Data: a},
		blas32.General{Rows: k, Cols: n, Stride: n, Data: b},
		0, blas32.General{Rows: m, Cols: n, Stride: n, Data: c})
}

// gemm64 is gemm32 in float64 (gemmRows), by gonum's blas64.Gemm.
func gemm64(m, k, n int, a, b, c []float64) {
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas64.General{Rows: m, Cols: k, Stride: k, Data: a},
		blas64.General{Rows: k, Cols: n, Stride: n, Data: b},
		0, blas64.General{Rows: m, Cols: n, Stride: n, Data: c})
}
