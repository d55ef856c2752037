//go:build !amd64

package cube

// useAVX512 is false: the AVX-512 tile exists on amd64 only.
var useAVX512 = false

// truncTile4x8 is never called without useAVX512.
func truncTile4x8(ap *float64, eap *int32, bp *float64, ebp *int32, c *float64, res *uint32, n, k, L, F int, rz bool) (bad uint32) {
	panic("cube: truncTile4x8 without AVX-512")
}

// exactTile4x8 is never called without useAVX512.
func exactTile4x8(ap *float64, sap *int32, bp *float64, sbp *int32, c *float64, res *uint32, n, k, L, lim int, rz bool) (bad uint32) {
	panic("cube: exactTile4x8 without AVX-512")
}
