//go:build !amd64

package accuracy

// gemm32 sets c (m×n, zero) to a·b as gemmRows defines it. gonum's
// kernels are plain Go here, which the compiler fuses into FMAs (arm64
// always): another sum than amd64's, so the definition runs instead.
func gemm32(m, k, n int, a, b, c []float32) { gemmRows(k, n, a, b, c) }

// gemm64 is gemm32 in float64 (gemmRows).
func gemm64(m, k, n int, a, b, c []float64) { gemmRows(k, n, a, b, c) }
