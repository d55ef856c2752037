//go:build !amd64

package cube

// seqTile8x16 is never called without useAVX512.
func seqTile8x16(ap *float32, bp *float32, c *uint32, res *uint32, n, k int, rz bool) {
	panic("cube: seqTile8x16 without AVX-512")
}
