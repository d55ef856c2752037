package cube

import (
	"math/bits"

	"github.com/davinci-sim/davinci-sim/fp"
)

// AVX-512 tiles of the exact block-FMA fast path (F = Exact: mi100,
// ascend-910a, ascend-910b3 with FP16/BF16 inputs; the proof is in
// fast.go). They sit next to the truncated path's tiles because they share
// its panels (prepTile4x8), its CPU check (useAVX512) and its assembly file.
//
// exactTile4x8 computes a 4×8 tile of C lane for lane as elemExact does:
// per block, the float64 sum P = −0 + Σ a·b (VFMADD231PD: the products are
// exact and, when the block passes the exponent-spread test, so is every
// partial sum, so the fused and the separate operations give the same
// P, signed zeros included), then c + P rounded to odd at 53 bits (TwoSum
// and the sumRO adjustment of the last bit, in vector form) and rounded
// once to FP32 with the mode embedded in the instruction (VCVTPD2PS
// {rn-sae} or {rz-sae}): the round-to-odd lemma makes that the one
// rounding of the exact c + P. The exponent-spread test runs per lane
// (sa[i, blk] + sb[j, blk] ≤ lim); an element with a block that fails it,
// or whose accumulator becomes infinite (|x| ≥ 2^128 under RZ, where the
// instruction would give ±MaxFloat32; ±Inf under RNE), is recomputed by
// elemExact, which handles both (kernel.blockFMA for the block, an
// infinite c kept).

// exactTileFn is exactTile4x8 (a variable so that tests can count the
// calls).
var exactTileFn = exactTile4x8

// runExactAVX runs the exact block path with the AVX-512 tiles and
// reports whether it did (not without AVX-512 or for calls smaller than a
// tile). prepBlocks must have run.
func (f *fastCall) runExactAVX(res []uint32) bool {
	if !useAVX512 || f.k == 0 || f.mm < 4 || f.n < 8 {
		return false
	}
	f.prepTile4x8(false)
	f.prepExact4x8()
	f.runTiles(4, 8, res, f.plainTiles(), (*fastCall).exactAVX, (*fastCall).elemExact)
	return true
}

// prepExact4x8 lays the exponent spreads out as the tiles read them:
// sa4[(g·nb + blk)·4 + r] is sa of row 4g+r, sb8[(p·nb + blk)·8 + l] sb
// of column 8p+l.
func (f *fastCall) prepExact4x8() {
	sc, nb := f.sc, f.nb
	nq, no := f.mm/4, f.n/8
	sc.sa4, sc.sb8 = grow(sc.sa4, nq*nb*4), grow(sc.sb8, no*nb*8)
	panel(sc.sa, sc.sa4, nq, 4, nb, 0)
	panel(sc.sb, sc.sb8, no, 8, nb, 0)
}

// exactAVX computes the 4×8 tile at (i, j) (no Inf/NaN inputs or c; i a
// multiple of 4, j of 8, k > 0) with the AVX-512 routine and recomputes
// the elements it returns in the redo mask with elemExact.
func (f *fastCall) exactAVX(res []uint32, i, j int) {
	k, n, nb, sc := f.k, f.n, f.nb, f.sc
	ga, gb := i/4*k*4, j/8*k*8
	sa, sb := i/4*nb*4, j/8*nb*8
	// The routine reads and writes rows i..i+3, columns j..j+7 of C with
	// stride n, and the whole panels: check the bounds here.
	_, _ = f.outC[(i+3)*n+j+7], res[(i+3)*n+j+7]
	_, _ = sc.a4[ga+4*k-1], sc.b8[gb+8*k-1]
	_, _ = sc.sa4[sa+4*nb-1], sc.sb8[sb+8*nb-1]
	bad := exactTileFn(&sc.a4[ga], &sc.sa4[sa], &sc.b8[gb], &sc.sb8[sb], &f.outC[i*n+j], &res[i*n+j],
		n, k, f.L, int(f.lim), f.kern.os.mode == fp.RZ)
	for ; bad != 0; bad &= bad - 1 {
		b := bits.TrailingZeros32(bad)
		r, c := i+b/8, j+b%8
		res[r*n+c] = f.elemExact(r, c)
	}
}
