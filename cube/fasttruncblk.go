// The 2×2 block bodies of the truncated block-FMA fast path for the block
// lengths of the presets (L = 4: v100; 8: t4, a100, ada; 16: h100, b200).
// The three functions are identical but for the array length: fixed-size
// arrays let the compiler drop every bounds check of the inner loops.
// truncBlkN (fasttrunc.go) is the same for any length.

package cube

import "math"

// truncBlk4 is one full block of L = 4 products of a 2×2 tile (see
// trunc2x2): pa, pb hold the pair-interleaved values of the block (rows i,
// i+1 / columns j, j+1), qa, qb their exponents; m_rc enter as the exponents
// of the accumulators c_rc. It returns the truncated integer sums S_rc
// (c's term included) and the block exponents e_max (≥ noExpLim: the caller
// checks that the block has a nonzero term).
func truncBlk4(pa, pb *[8]float64, qa, qb *[8]int32, m00, m01, m10, m11, F int32, c00, c01, c10, c11 float64) (S00, S01, S10, S11 int64, o00, o01, o10, o11 int32) {
	for t := 0; t < 8; t += 2 {
		u0, u1, v0, v1 := qa[t], qa[t+1], qb[t], qb[t+1]
		m00, m01 = max(m00, u0+v0), max(m01, u0+v1)
		m10, m11 = max(m10, u1+v0), max(m11, u1+v1)
	}
	s00 := math.Float64frombits(uint64(F+1023-m00) << 52)
	s01 := math.Float64frombits(uint64(F+1023-m01) << 52)
	s10 := math.Float64frombits(uint64(F+1023-m10) << 52)
	s11 := math.Float64frombits(uint64(F+1023-m11) << 52)
	S00, S01, S10, S11 = int64(c00*s00), int64(c01*s01), int64(c10*s10), int64(c11*s11)
	for t := 0; t < 8; t += 2 {
		u0, u1, v0, v1 := pa[t], pa[t+1], pb[t], pb[t+1]
		S00 += int64(u0 * v0 * s00)
		S01 += int64(u0 * v1 * s01)
		S10 += int64(u1 * v0 * s10)
		S11 += int64(u1 * v1 * s11)
	}
	return S00, S01, S10, S11, m00, m01, m10, m11
}

// truncBlk8 is one full block of L = 8 products of a 2×2 tile (see
// trunc2x2): pa, pb hold the pair-interleaved values of the block (rows i,
// i+1 / columns j, j+1), qa, qb their exponents; m_rc enter as the exponents
// of the accumulators c_rc. It returns the truncated integer sums S_rc
// (c's term included) and the block exponents e_max (≥ noExpLim: the caller
// checks that the block has a nonzero term).
func truncBlk8(pa, pb *[16]float64, qa, qb *[16]int32, m00, m01, m10, m11, F int32, c00, c01, c10, c11 float64) (S00, S01, S10, S11 int64, o00, o01, o10, o11 int32) {
	for t := 0; t < 16; t += 2 {
		u0, u1, v0, v1 := qa[t], qa[t+1], qb[t], qb[t+1]
		m00, m01 = max(m00, u0+v0), max(m01, u0+v1)
		m10, m11 = max(m10, u1+v0), max(m11, u1+v1)
	}
	s00 := math.Float64frombits(uint64(F+1023-m00) << 52)
	s01 := math.Float64frombits(uint64(F+1023-m01) << 52)
	s10 := math.Float64frombits(uint64(F+1023-m10) << 52)
	s11 := math.Float64frombits(uint64(F+1023-m11) << 52)
	S00, S01, S10, S11 = int64(c00*s00), int64(c01*s01), int64(c10*s10), int64(c11*s11)
	for t := 0; t < 16; t += 2 {
		u0, u1, v0, v1 := pa[t], pa[t+1], pb[t], pb[t+1]
		S00 += int64(u0 * v0 * s00)
		S01 += int64(u0 * v1 * s01)
		S10 += int64(u1 * v0 * s10)
		S11 += int64(u1 * v1 * s11)
	}
	return S00, S01, S10, S11, m00, m01, m10, m11
}

// truncBlk16 is one full block of L = 16 products of a 2×2 tile (see
// trunc2x2): pa, pb hold the pair-interleaved values of the block (rows i,
// i+1 / columns j, j+1), qa, qb their exponents; m_rc enter as the exponents
// of the accumulators c_rc. It returns the truncated integer sums S_rc
// (c's term included) and the block exponents e_max (≥ noExpLim: the caller
// checks that the block has a nonzero term).
func truncBlk16(pa, pb *[32]float64, qa, qb *[32]int32, m00, m01, m10, m11, F int32, c00, c01, c10, c11 float64) (S00, S01, S10, S11 int64, o00, o01, o10, o11 int32) {
	for t := 0; t < 32; t += 2 {
		u0, u1, v0, v1 := qa[t], qa[t+1], qb[t], qb[t+1]
		m00, m01 = max(m00, u0+v0), max(m01, u0+v1)
		m10, m11 = max(m10, u1+v0), max(m11, u1+v1)
	}
	s00 := math.Float64frombits(uint64(F+1023-m00) << 52)
	s01 := math.Float64frombits(uint64(F+1023-m01) << 52)
	s10 := math.Float64frombits(uint64(F+1023-m10) << 52)
	s11 := math.Float64frombits(uint64(F+1023-m11) << 52)
	S00, S01, S10, S11 = int64(c00*s00), int64(c01*s01), int64(c10*s10), int64(c11*s11)
	for t := 0; t < 32; t += 2 {
		u0, u1, v0, v1 := pa[t], pa[t+1], pb[t], pb[t+1]
		S00 += int64(u0 * v0 * s00)
		S01 += int64(u0 * v1 * s01)
		S10 += int64(u1 * v0 * s10)
		S11 += int64(u1 * v1 * s11)
	}
	return S00, S01, S10, S11, m00, m01, m10, m11
}
