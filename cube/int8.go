package cube

import (
	"encoding/binary"
	"sync"
	"unsafe"
)

// MMADInt8 is the integer cube operation C (m×n INT32) = A (m×k INT8) ·
// B (k×n INT8) + (init ? 0 : C) on fractal tiles (A and B in 16×32 blocks
// of bytes, C in 16×16 blocks of little-endian 32-bit words). The sums are
// exact in 32-bit two's complement: the accumulators wrap, so the order of
// the additions does not change the result (no rounding, no model choice —
// the same on every machine).
//
// Its working memory comes from a pool; a caller that makes many calls
// from one goroutine can keep an Int8Scratch instead.
func MMADInt8(m, k, n int, a, b, c []byte, init bool) {
	s := int8Pool.Get().(*Int8Scratch)
	s.MMADInt8(m, k, n, a, b, c, init)
	int8Pool.Put(s)
}

var int8Pool = sync.Pool{New: func() any { return new(Int8Scratch) }}

// Int8Scratch is the working memory of the INT8 cube operation, kept
// across calls so that they allocate nothing once it has grown to their
// size. The zero value is ready for use; one Int8Scratch serves one
// goroutine at a time.
type Int8Scratch struct {
	a  []byte  // A row-major (m×k), from a fractal A
	b  []byte  // B row-major (k×n), from a fractal B
	bp []int64 // B's columns in pairs (packInt8Pairs)
	// A's rows and B's columns as int16 pairs of k (int8Blocks)
	ap, bw []int32
}

// MMADInt8 is the package's MMADInt8 (fractal A, B and C) with s's
// working memory.
func (s *Int8Scratch) MMADInt8(m, k, n int, a, b, c []byte, init bool) {
	s.MMAD(m, k, n, a, Fractal, 0, b, Fractal, 0, c, init)
}

// MMAD is MMADInt8 with A and B each in layout la (lb): Fractal, or
// RowMajor with its rows lda (ldb) bytes apart — a tile read where it
// lies, without a copy into the fractal layout. C is fractal, as in
// MMADInt8, and so is the result: MMADInt8's on the same matrices laid out
// as fractal tiles, bit for bit.
func (s *Int8Scratch) MMAD(m, k, n int, a []byte, la Layout, lda int, b []byte, lb Layout, ldb int, c []byte, init bool) {
	if m <= 0 || n <= 0 {
		return
	}
	if la == Fractal {
		s.a = growBytes(s.a, m*k)
		a, lda = fractalToRows(s.a, a, m, k), k
	}
	if lb == Fractal {
		s.b = growBytes(s.b, k*n)
		b, ldb = fractalToRows(s.b, b, k, n), n
	}
	if k > maxPairK {
		int8Plain(m, k, n, a, lda, b, ldb, c, init)
		return
	}
	if useAVX2Int8 {
		s.int8Blocks(m, k, n, a, lda, b, ldb, c, init)
		return
	}
	np := (n + 1) / 2
	if cap(s.bp) < np*k {
		s.bp = make([]int64, np*k)
	}
	s.bp = s.bp[:np*k]
	packInt8Pairs(s.bp, b, ldb, k, n)
	int8Pairs(m, k, n, a, lda, s.bp, c, init)
}

// fractalToRows copies the r×c INT8 matrix held as a fractal tile in src
// into dst row-major (r·c bytes), a block's row (32 bytes) at a time, and
// returns dst.
func fractalToRows(dst, src []byte, r, c int) []byte {
	pc := LayoutLen(1, c, Fractal, 8) / 16 // the tile's padded columns
	for i := 0; i < r; i++ {
		row := dst[i*c : i*c+c]
		base := (i/16)*pc*16 + (i%16)*32 // (i, 0) in the fractal layout
		for x := 0; x < c; x += 32 {
			copy(row[x:min(x+32, c)], src[base+x*16:])
		}
	}
	return dst
}

// maxPairK is the longest k whose sums int8Pairs takes two to a 64-bit
// word: a sum of k products of INT8 values (each of magnitude at most
// 2^14) stays within (-2^31, 2^31) — exact in the low half of the word,
// nothing carried past the high half.
const maxPairK = 1<<17 - 1

// packInt8Pairs writes B's (k×n, row-major, rows ldb bytes apart) columns
// 2p and 2p+1 as the words bp[p·k + x] = B[x][2p] + B[x][2p+1]·2^32 (an
// odd last column alone): one multiplication of such a word by A[i][x]
// makes both products, each in its half.
func packInt8Pairs(bp []int64, b []byte, ldb, k, n int) {
	for x := 0; x < k; x++ {
		row := b[x*ldb:][:n]
		p := 0
		for ; 2*p+1 < n; p++ {
			bp[p*k+x] = int64(int8(row[2*p])) + int64(int8(row[2*p+1]))<<32
		}
		if 2*p < n {
			bp[p*k+x] = int64(int8(row[2*p]))
		}
	}
}

// int8Pairs is C (fractal INT32) = A · B + (init ? 0 : C) for A row-major
// (rows lda bytes apart) and B's columns packed in pairs (packInt8Pairs),
// for k ≤ maxPairK: each word sums S0 + S1·2^32 exactly, S0 and S1 the
// two columns' sums, |S0| < 2^31, so int32(word) is S0 and the rest S1 —
// the exact sums, taken mod 2^32 as 32-bit accumulators would (and C
// added wrapping). It takes C in blocks of 2 rows × 2 pairs (an odd last
// row or pair computed twice and stored once).
func int8Pairs(m, k, n int, a []byte, lda int, bp []int64, c []byte, init bool) {
	pc := (n + 15) / 16 * 16 // C's padded columns
	np := (n + 1) / 2
	store := func(i, p int, w int64) {
		s0 := int64(int32(w))
		s1 := (w - s0) >> 32
		base := ((i/16)*pc + i%16) * 16 // FractalIndex(i, 0, pc, 32)
		for j, v := range [2]int64{s0, s1} {
			j += 2 * p
			if j >= n {
				break
			}
			ci := (base + (j/16)*256 + j%16) * 4 // FractalIndex(i, j, pc, 32)·4
			sum := int32(v)
			if !init {
				sum += int32(binary.LittleEndian.Uint32(c[ci:]))
			}
			binary.LittleEndian.PutUint32(c[ci:], uint32(sum))
		}
	}
	for i := 0; i < m; i += 2 {
		i1 := min(i+1, m-1)
		r0, r1 := a[i*lda:][:k], a[i1*lda:][:k]
		for p := 0; p < np; p += 2 {
			p1 := min(p+1, np-1)
			w00, w01, w10, w11 := dot2x2Pairs(r0, r1, bp[p*k:][:k], bp[p1*k:][:k])
			store(i, p, w00)
			if p1 != p {
				store(i, p1, w01)
			}
			if i1 != i {
				store(i1, p, w10)
				if p1 != p {
					store(i1, p1, w11)
				}
			}
		}
	}
}

// dot2x2Pairs returns the dot products of rows a0, a1 (INT8) with the
// packed column pairs b0, b1 (all as long as a0).
func dot2x2Pairs(a0, a1 []byte, b0, b1 []int64) (w00, w01, w10, w11 int64) {
	n := len(a0)
	a1, b0, b1 = a1[:n], b0[:n], b1[:n]
	for x := range n {
		x0, x1 := int64(int8(a0[x])), int64(int8(a1[x]))
		y0, y1 := b0[x], b1[x]
		w00 += x0 * y0
		w01 += x0 * y1
		w10 += x1 * y0
		w11 += x1 * y1
	}
	return
}

// int8Plain is C (fractal INT32) = A · B + (init ? 0 : C) for A and B
// row-major (rows lda and ldb bytes apart) in 32-bit accumulators that
// wrap: the path of a k too long for int8Pairs (longer than any MMA
// instruction's).
func int8Plain(m, k, n int, a []byte, lda int, b []byte, ldb int, c []byte, init bool) {
	pc := (n + 15) / 16 * 16 // C's padded columns
	for i := 0; i < m; i++ {
		row := a[i*lda:][:k]
		for j := 0; j < n; j++ {
			var v int32
			for x, ax := range row {
				v += int32(int8(ax)) * int32(int8(b[x*ldb+j]))
			}
			ci := FractalIndex(i, j, pc, 32) * 4
			if !init {
				v += int32(binary.LittleEndian.Uint32(c[ci:]))
			}
			binary.LittleEndian.PutUint32(c[ci:], uint32(v))
		}
	}
}

// int8Blocks is C (fractal INT32) = A · B + (init ? 0 : C) for A and B
// row-major (rows lda and ldb bytes apart) in blocks of 4 rows × 16
// columns of int8Block4x16 (AVX2): A's rows and B's columns packed as
// int16 pairs of k (zeros past k, m and n), each block written in place
// where it lies wholly in C (its four rows in one fractal block row, 64
// bytes apart), else into a block of its own whose part in C is added
// there. Why: the Go pairs (int8Pairs) make 8 products per loop of 4
// multiplications, ~5 of b200 ozaki 1024³ full's 17 s; a VPMADDWD makes
// 16 (BenchmarkInt8MMAD).
func (s *Int8Scratch) int8Blocks(m, k, n int, a []byte, lda int, b []byte, ldb int, c []byte, init bool) {
	kp := (k + 1) / 2
	mp, np := (m+3)/4*4, (n+15)/16*16
	pair := func(lo, hi int8) int32 { return int32(uint32(uint16(int16(lo))) | uint32(uint16(int16(hi)))<<16) }
	s.ap = growInt32(s.ap, mp*kp)
	for i := range mp {
		row := s.ap[i*kp : (i+1)*kp]
		if i >= m {
			clear(row)
			continue
		}
		ar := a[i*lda:][:k]
		for p := range row {
			var hi int8
			if 2*p+1 < k {
				hi = int8(ar[2*p+1])
			}
			row[p] = pair(int8(ar[2*p]), hi)
		}
	}
	s.bw = growInt32(s.bw, kp*np)
	for p := range kp {
		w := s.bw[p*np : (p+1)*np]
		r0 := b[2*p*ldb:][:n]
		var r1 []byte
		if 2*p+1 < k {
			r1 = b[(2*p+1)*ldb:][:n]
		}
		for j := range n {
			var hi int8
			if r1 != nil {
				hi = int8(r1[j])
			}
			w[j] = pair(int8(r0[j]), hi)
		}
		clear(w[n:])
	}
	pc := np // C's padded columns (a multiple of 16)
	var part [64]int32
	for i := 0; i < m; i += 4 {
		for j := 0; j < n; j += 16 {
			ap, bw := &part[0], &part[0] // (k = 0: not read)
			if kp > 0 {
				ap, bw = &s.ap[i*kp], &s.bw[j]
			}
			at := FractalIndex(i, j, pc, 32) * 4
			if i+4 <= m && j+16 <= n {
				int8Block4x16(ap, 4*kp, bw, 4*np, kp, (*int32)(unsafe.Pointer(&c[at])), init)
				continue
			}
			int8Block4x16(ap, 4*kp, bw, 4*np, kp, &part[0], true)
			for r := range min(4, m-i) {
				for l := range min(16, n-j) {
					ci := at + (r*16+l)*4
					v := part[r*16+l]
					if !init {
						v += int32(binary.LittleEndian.Uint32(c[ci:]))
					}
					binary.LittleEndian.PutUint32(c[ci:], uint32(v))
				}
			}
		}
	}
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growBytes(s []byte, n int) []byte {
	if cap(s) < n {
		return make([]byte, n)
	}
	return s[:n]
}
