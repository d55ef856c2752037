//go:build !amd64

package cube

// useFMA3 is false: the AVX tile exists on amd64 only.
var useFMA3 = false

// fp64Tile4x8 is never called without useFMA3.
func fp64Tile4x8(a *float64, lda int, b *float64, ldb int, c *byte, ldc, k int, init bool) {
	panic("cube: fp64Tile4x8 without AVX and FMA3")
}
