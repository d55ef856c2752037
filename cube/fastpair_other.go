//go:build !amd64

package cube

// pairTile8x16 is never called without useAVX512.
func pairTile8x16(ap *float32, bp *float32, c *uint32, res *uint32, n, nb int, mask uint32) {
	panic("cube: pairTile8x16 without AVX-512")
}
