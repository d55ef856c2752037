//go:build amd64

package cube

// pairTile8x16 computes the 8×16 tile of C of the pairwise path (see
// pairAVX): from the FP32 patterns c (rows i..i+7, columns j..j+15, row
// stride n), flushed with mask (ftz32), nb full blocks of four products
// per element, acc = ftz32(acc + ((p0 + p1) + (p2 + p3))), written to res
// with the same layout. ap is the row-octet panel (ap[8t + r] = A[i+r, t]),
// bp the column panel (bp[16t + l] = B[t, j+l]).
//
//go:noescape
func pairTile8x16(ap *float32, bp *float32, c *uint32, res *uint32, n, nb int, mask uint32)
