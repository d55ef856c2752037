//go:build !amd64

package cube

// lateCTile4x8 is never called without useAVX512.
func lateCTile4x8(ap *float64, eap *int32, bp *float64, ebp *int32, c *float64, res *uint32, n, k, L, F int, rz bool) (bad uint32) {
	panic("cube: lateCTile4x8 without AVX-512")
}
