package cube

import "encoding/binary"

// MMADInt8 is the integer cube operation C (m×n INT32) = A (m×k INT8) ·
// B (k×n INT8) + (init ? 0 : C) on fractal tiles (A and B in 16×32 blocks
// of bytes, C in 16×16 blocks of little-endian 32-bit words). The sums are
// exact in 32-bit two's complement: the accumulators wrap, so the order of
// the additions does not change the result (no rounding, no model choice —
// the same on every machine).
func MMADInt8(m, k, n int, a, b, c []byte, init bool) {
	pk := LayoutLen(1, k, Fractal, 8) / 16 // A's padded columns
	pn := LayoutLen(1, n, Fractal, 8) / 16 // B's padded columns
	pc := (n + 15) / 16 * 16               // C's padded columns
	// Unpack to row-major int32 once: O(mk + kn) index computations
	// instead of O(mnk).
	av := make([]int32, m*k)
	for i := 0; i < m; i++ {
		for x := 0; x < k; x++ {
			av[i*k+x] = int32(int8(a[FractalIndex(i, x, pk, 8)]))
		}
	}
	bv := make([]int32, k*n)
	for x := 0; x < k; x++ {
		for j := 0; j < n; j++ {
			bv[x*n+j] = int32(int8(b[FractalIndex(x, j, pn, 8)]))
		}
	}
	acc := make([]int32, n)
	for i := 0; i < m; i++ {
		clear(acc)
		for x, ax := range av[i*k : i*k+k] {
			if ax == 0 {
				continue
			}
			for j, bx := range bv[x*n : x*n+n] {
				acc[j] += ax * bx
			}
		}
		for j := 0; j < n; j++ {
			ci := FractalIndex(i, j, pc, 32) * 4
			v := acc[j]
			if !init {
				v += int32(binary.LittleEndian.Uint32(c[ci:]))
			}
			binary.LittleEndian.PutUint32(c[ci:], uint32(v))
		}
	}
}
