//go:build amd64

package cube

import "golang.org/x/sys/cpu"

// useFMA3 selects fp64Tile4x8, the AVX tile of the FP64 chains: it needs
// AVX (256-bit vectors, with an OS that saves them, which cpu.X86 checks)
// and FMA3. Tests turn it off to test the Go chains on the same machine.
var useFMA3 = cpu.X86.HasAVX && cpu.X86.HasFMA

// fp64Tile4x8 runs the FMA chains of the 4×8 tile of C at c (rows ldc
// bytes apart, FP64 little-endian) over k ≥ 1 terms: for t = 0..k−1,
// C[r][l] = fma(A[r][t], B[t][l], C[r][l]), from C (init: +0). a is A's
// first row (rows lda bytes apart, four of them), b B's first row (rows
// ldb bytes apart, eight columns each).
//
//go:noescape
func fp64Tile4x8(a *float64, lda int, b *float64, ldb int, c *byte, ldc, k int, init bool)
