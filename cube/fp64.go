package cube

import (
	"encoding/binary"
	"math"
)

// FP64Scratch is the working memory of the FP64 matrix operation (A and
// B decoded into float64s), kept across calls so that they allocate
// nothing once it has grown to their size. The zero value is ready for
// use; one FP64Scratch serves one goroutine at a time.
type FP64Scratch struct {
	a []float64 // A row-major: m×k, then zero rows up to a multiple of 4
	b []float64 // B row-major: k×np, np = n rounded up to 8 (zero columns)
}

// MMAD is the FP64 matrix operation C (m×n) = A (m×k) · B (k×n) +
// (init ? 0 : C) with s's working memory, every output a chain of fused
// multiply-adds in increasing k from C[i][j] (init: +0), one rounding per
// step: acc = math.FMA(A[i][x], B[x][j], acc) — an IEEE-754 FMA chain.
// C is a fractal tile (16×16 blocks of little-endian 64-bit words, its
// padding left as it is); A and B are each in layout la (lb): Fractal, or
// RowMajor with its rows lda (ldb) bytes apart — a tile read where it
// lies, with the same result bit for bit.
//
// The outputs are independent, so the order in which they are computed
// does not change them: the chains run four rows by eight columns at a
// time, with AVX and FMA3 (amd64) as VFMADD231PD on four-lane vectors —
// each lane's FMA the scalar VFMADD231SD of math.FMA, operands in the
// same roles, so the same bits, NaN payloads included — else as math.FMA
// two rows by two columns at a time.
func (s *FP64Scratch) MMAD(m, k, n int, a []byte, la Layout, lda int, b []byte, lb Layout, ldb int, c []byte, init bool) {
	if m <= 0 || n <= 0 {
		return
	}
	k = max(k, 0)
	mp, np := (m+3)&^3, (n+7)&^7
	s.a = growFloat64s(s.a, mp*k)
	s.b = growFloat64s(s.b, k*np)
	fp64Rows(s.a, k, a, la, lda, m, k)
	clear(s.a[m*k:])
	fp64Rows(s.b, np, b, lb, ldb, k, n)
	if useFMA3 && k > 0 {
		fp64ChainsFMA3(m, k, n, s.a, s.b, np, c, init)
		return
	}
	fp64Chains(m, k, n, s.a, s.b, np, c, init)
}

// fp64Rows decodes the r×cols FP64 matrix src (layout l; row-major, rows
// ld bytes apart) into dst row-major, its rows ldd elements apart, the
// ldd − cols elements after each row cleared.
func fp64Rows(dst []float64, ldd int, src []byte, l Layout, ld, r, cols int) {
	nbc := (cols + 15) / 16 // a fractal tile's blocks across
	for i := 0; i < r; i++ {
		out := dst[i*ldd:][:ldd]
		clear(out[cols:])
		if l != Fractal {
			row := src[i*ld:][:cols*8]
			for x := range out[:cols] {
				out[x] = math.Float64frombits(binary.LittleEndian.Uint64(row[x*8:]))
			}
			continue
		}
		base := ((i/16)*nbc*256 + (i%16)*16) * 8 // (i, 0)
		for x0 := 0; x0 < cols; x0 += 16 {
			run := src[base+x0*16*8:][:min(16, cols-x0)*8] // (i, x0) … in one block's row
			for x := range len(run) / 8 {
				out[x0+x] = math.Float64frombits(binary.LittleEndian.Uint64(run[x*8:]))
			}
		}
	}
}

// fp64ChainsFMA3 is C (fractal FP64, n columns) = A · B + (init ? 0 : C)
// for A row-major (m×k, rows up to a multiple of 4 present) and B
// row-major (k×n, rows ldb elements apart, columns up to a multiple of 8
// present), k > 0, in fp64Tile4x8 tiles: in place on C's fractal tile (a
// 4×8 tile lies in one 16×16 block, its rows 128 bytes apart), or — a
// tile past C's last row or column — on a copy of its part of C, of which
// that part is stored back (C's padding is left as it was).
func fp64ChainsFMA3(m, k, n int, a, b []float64, ldb int, c []byte, init bool) {
	nbn := (n + 15) / 16
	for i := 0; i < m; i += 4 {
		_ = a[(i+4)*k-1] // the tile's four rows of A
		ap := &a[i*k]
		for j := 0; j < n; j += 8 {
			_ = b[(k-1)*ldb+j+7] // the tile's eight columns of B's last row
			off := fp64CIndex(i, j, nbn)
			if i+4 <= m && j+8 <= n {
				_ = c[off+3*128+63] // the tile's last byte
				fp64Tile4x8(ap, k*8, &b[j], ldb*8, &c[off], 128, k, init)
				continue
			}
			var t [4 * 8 * 8]byte // rows 64 bytes apart
			rows, cols := min(4, m-i), min(8, n-j)
			for r := range rows {
				copy(t[r*64:][:cols*8], c[off+r*128:][:cols*8])
			}
			fp64Tile4x8(ap, k*8, &b[j], ldb*8, &t[0], 64, k, init)
			for r := range rows {
				copy(c[off+r*128:][:cols*8], t[r*64:][:cols*8])
			}
		}
	}
}

// fp64Chains is fp64ChainsFMA3 in Go (any k ≥ 0, A's and B's padding
// unused): each output the FMA chain of FP64Scratch.MMAD, two rows by two
// columns at a time (an odd last row or column computed again and not
// stored).
func fp64Chains(m, k, n int, a, b []float64, ldb int, c []byte, init bool) {
	nbn := (n + 15) / 16
	load := func(i, j int) float64 {
		if init {
			return 0
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(c[fp64CIndex(i, j, nbn):]))
	}
	store := func(i, j int, v float64) {
		binary.LittleEndian.PutUint64(c[fp64CIndex(i, j, nbn):], math.Float64bits(v))
	}
	for i := 0; i < m; i += 2 {
		i1 := min(i+1, m-1)
		a0, a1 := a[i*k:][:k], a[i1*k:][:k]
		for j := 0; j < n; j += 2 {
			j1 := min(j+1, n-1)
			c00, c01, c10, c11 := load(i, j), load(i, j1), load(i1, j), load(i1, j1)
			for x, x0 := range a0 {
				x1 := a1[x]
				row := b[x*ldb:][:ldb]
				y0, y1 := row[j], row[j1]
				c00 = math.FMA(x0, y0, c00)
				c01 = math.FMA(x0, y1, c01)
				c10 = math.FMA(x1, y0, c10)
				c11 = math.FMA(x1, y1, c11)
			}
			store(i, j, c00)
			if j1 != j {
				store(i, j1, c01)
			}
			if i1 != i {
				store(i1, j, c10)
				if j1 != j {
					store(i1, j1, c11)
				}
			}
		}
	}
}

// fp64CIndex is the byte offset of FP64 element (i, j) in a fractal tile
// nbn blocks across: FractalIndex(i, j, 16·nbn, 64)·8.
func fp64CIndex(i, j, nbn int) int {
	return (((i/16)*nbn+j/16)*256 + (i%16)*16 + j%16) * 8
}

func growFloat64s(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
