package mem

import "testing"

// BenchmarkL2GEMMWalk walks the L2 directory as a wave of GEMM blocks
// does: 148 blocks (8 row blocks × 19 column blocks, the swizzle of the
// GPU GEMM generator), each looking up its 128-row A tile and 128-row B
// tile per k-step, on a 25 MiB, 16-way L2 with 128-byte lines: 800 sets,
// not a power of two (as the A100's 1280 and the B200's and H100's 1600).
// One op is one wave's k-step: 296 tile lookups of 128 rows.
func BenchmarkL2GEMMWalk(b *testing.B) { benchGEMMWalk(b, true, 128, 16) }

// BenchmarkL2GEMMWalkModulo is BenchmarkL2GEMMWalk with the sets indexed
// by the sector number modulo the sets (no hashing), as the NVIDIA files'
// L2s are.
func BenchmarkL2GEMMWalkModulo(b *testing.B) { benchGEMMWalk(b, false, 128, 16) }

// BenchmarkL2GEMMWalkTags is BenchmarkL2GEMMWalkModulo with NVIDIA's tags:
// 32-byte lines, four a tag (16 times the tags: 12800 sets; each B tile
// row spans two tags).
func BenchmarkL2GEMMWalkTags(b *testing.B) { benchGEMMWalk(b, false, 32, 4) }

func benchGEMMWalk(b *testing.B, hash bool, line, perTag int) {
	const (
		m, n, k = 16384, 16384, 7 * 16384
		bm, bn  = 128, 256
		bk      = 128
		blocks  = 148
	)
	c := NewL2(25<<20, line, perTag, 16)
	if hash {
		c.HashSets()
	}
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

// BenchmarkL2GEMMWalkLLC walks the directories as an MI300X-like wave of
// GEMM blocks does: 304 blocks spread over 8 private 4 MiB L2s (hashed,
// 128 sets each: most tile rows miss), each span looked up again in a
// 256 MiB LLC (8192 sets, 320 KiB of sets and a where index of MiBs: the
// host's caches miss). Half-precision 8192³: rows of 16 KiB (8 sectors);
// 256×256 blocks, k-steps of 64 elements (one 128-byte line per row).
// One op is one wave's k-step: 608 tile lookups of 256 rows.
func BenchmarkL2GEMMWalkLLC(b *testing.B) { benchGEMMWalkLLC(b, 16) }

// BenchmarkL2GEMMWalkLLCTags is BenchmarkL2GEMMWalkLLC with a tag a line
// (16 times the tags and sets).
func BenchmarkL2GEMMWalkLLCTags(b *testing.B) { benchGEMMWalkLLC(b, 1) }

func benchGEMMWalkLLC(b *testing.B, perTag int) {
	const (
		m, n, k = 8192, 8192, 8192
		es      = 2
		bm, bn  = 256, 256
		bk      = 64
		blocks  = 304
	)
	var l2s [8]*L2
	for i := range l2s {
		l2s[i] = NewL2(4<<20, 128, perTag, 16)
		l2s[i].HashSets()
	}
	llc := NewL2(256<<20, 128, perTag, 16)
	llc.HashSets()
	gmA, gmB := int64(0), int64(m)*k*es
	kt := 0
	walk := func(c *L2, addr int64, rows int, rowBytes, stride int64) {
		c.Access2D(addr, rows, rowBytes, stride)
		llc.Access2D(addr, rows, rowBytes, stride)
	}
	for b.Loop() {
		for x := 0; x < blocks; x++ {
			bi, bj := x%(m/bm), x/(m/bm)
			c := l2s[x%8]
			walk(c, gmA+(int64(bi*bm)*k+int64(kt*bk))*es, bm, bk*es, k*es)
			walk(c, gmB+(int64(kt*bk)*n+int64(bj*bn))*es, bk, bn*es, n*es)
		}
		if kt++; kt*bk >= k {
			kt = 0
		}
	}
}

// BenchmarkL2StrideRows walks the L2 directory as a DaVinci fused-LU
// kernel does at a large share (the 256-NPU point: a 111104-column fp16
// trailing matrix): 32 cores each looking up a tile of 128 rows of 512
// bytes, the rows 222208 bytes apart — 27 sectors and 1 KiB, not a whole
// number of sectors —, on the 910A's 32 MiB, 16-way L2 with 512-byte lines
// sixteen a tag; 96 tiles in turn, most rows hits (as the kernels' are).
// One op is one round of the 32 cores' tiles.
func BenchmarkL2StrideRows(b *testing.B) {
	const (
		ld       = 111104 * 2 // bytes between rows
		rows     = 128
		rowBytes = 512
		cores    = 32
	)
	c := NewL2(32<<20, 512, 16, 16)
	tile := 0
	for b.Loop() {
		for x := range cores {
			t := int64(tile+x) % 96
			c.Access2D((t%16)*rows*ld+(t/16)*rowBytes, rows, rowBytes, ld)
		}
		tile += cores
	}
}
