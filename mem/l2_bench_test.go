package mem

import "testing"

// BenchmarkL2GEMMWalk walks the L2 directory as a wave of GEMM blocks
// does: 148 blocks (8 row blocks × 19 column blocks, the swizzle of the
// GPU GEMM generator), each looking up its 128-row A tile and 128-row B
// tile per k-step, on a 25 MiB, 16-way L2 with 128-byte lines: 800 sets,
// not a power of two (as the A100's 1280 and the B200's and H100's 1600).
// One op is one wave's k-step: 296 tile lookups of 128 rows.
func BenchmarkL2GEMMWalk(b *testing.B) {
	const (
		m, n, k = 16384, 16384, 7 * 16384
		bm, bn  = 128, 256
		bk      = 128
		blocks  = 148
	)
	c := NewL2(25<<20, 128, 16)
	c.HashSets()
	gmA, gmB := int64(0), int64(m)*k
	kt := 0
	for b.Loop() {
		for x := 0; x < blocks; x++ {
			bi, bj := x%8, x/8
			c.Access2D(gmA+int64(bi*bm)*k+int64(kt*bk), bm, bk, k)
			c.Access2D(gmB+int64(kt*bk)*n+int64(bj*bn), bk, bn, n)
		}
		if kt++; kt*bk >= k {
			kt = 0
		}
	}
}
