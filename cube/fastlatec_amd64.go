//go:build amd64

package cube

// lateCTile4x8 computes the 4×8 tile of C at (i, j) of the late-c path
// over all k terms (see lateCAVX for the arguments; the panels are the
// truncated path's, prepTile4x8) and returns the redo mask: bit 8r + l set
// when element (i+r, j+l) reached an infinite block result.
//
//go:noescape
func lateCTile4x8(ap *float64, eap *int32, bp *float64, ebp *int32, c *float64, res *uint32, n, k, L, F int, rz bool) (bad uint32)
