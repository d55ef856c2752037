//go:build amd64

package cube

import "golang.org/x/sys/cpu"

// useAVX512 selects the AVX-512 tile of the truncated block-FMA fast path
// (truncTile4x8). It needs AVX-512 F (512-bit vectors, mask registers),
// DQ (VCVTTPD2QQ, VCVTQQ2PD) and VL (the same on 256-bit vectors), and an
// OS that saves the ZMM and mask state, which cpu.X86 checks. Tests turn
// it off to test the pure-Go tiles on the same machine.
var useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL

// truncTile4x8 computes the 4×8 tile of C at (i, j) over all k terms (see
// truncAVX for the arguments) and returns the redo mask: bit 8r + l set
// when element (i+r, j+l) reached an infinite block result.
//
//go:noescape
func truncTile4x8(ap *float64, eap *int32, bp *float64, ebp *int32, c *float64, res *uint32, n, k, L, F int, rz bool) (bad uint32)

// exactTile4x8 computes the 4×8 tile of C at (i, j) of the exact block
// FMA over all k terms (see exactAVX for the arguments) and returns the
// redo mask: bit 8r + l set when element (i+r, j+l) had a block failing
// the exactness test or reached an infinite block result.
//
//go:noescape
func exactTile4x8(ap *float64, sap *int32, bp *float64, sbp *int32, c *float64, res *uint32, n, k, L, lim int, rz bool) (bad uint32)
