//go:build amd64

package cube

// seqTile8x16 computes the 8×16 tile of C of the sequential FP32 paths
// (see seqAVX): from the FP32 patterns c (rows i..i+7, columns j..j+15,
// row stride n), acc = round(acc + a·b) for t = 0..k−1 in increasing
// order, rounding to nearest even (rz false) or toward zero (rz true),
// written to res with the same layout. ap is the row-octet panel
// (ap[8t + r] = A[i+r, t]), bp the column panel (bp[16t + l] = B[t, j+l]).
//
//go:noescape
func seqTile8x16(ap *float32, bp *float32, c *uint32, res *uint32, n, k int, rz bool)
