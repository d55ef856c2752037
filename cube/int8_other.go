//go:build !amd64

package cube

// useAVX2Int8 is false: the AVX2 tile exists on amd64 only.
var useAVX2Int8 = false

// int8Block4x16 is never called without useAVX2Int8.
func int8Block4x16(a *int32, astride int, b *int32, bstride int, kp int, c *int32, init bool) {
	panic("cube: int8Block4x16 without AVX2")
}
