// AVX-512 tile of the pairwise fast path (mi210, L = 4): an 8×16 tile of
// C over the full blocks of k (see fastpair.go for the model and the
// proof, pairTile8x16 in fastpair_amd64.go for the data layout).
//
// The arithmetic is Go's float32 arithmetic lane for lane: VMULPS and
// VADDPS round to nearest even with MXCSR as Go keeps it (RNE, FTZ and
// DAZ off, as for every float32 operation of Go code), and the tree is
// the model's (p0 + p1) + (p2 + p3); ftz32 is VPTESTNMD (lanes whose
// exponent field is zero) and a masked VPANDD with the flush mask
// (0x80000000: the sign; all ones without FTZ).
//
// Registers (lanes = the 16 columns j..j+15, float32):
//   Z0-Z7    accumulators of rows 0-7
//   Z8-Z11   B[t, j..j+15] for the block's four terms
//   Z12-Z15, Z18-Z21  products and tree sums (even rows, odd rows)
//   Z16      0x7f800000 (exponent field), Z17 the flush mask
//   K1, K2   lanes to flush
//
// GPRs: AX a (row-octet panel), BX b (column panel), CX blocks left,
// R10-R12 addresses and the row stride.

#include "textflag.h"

// FLUSH is ftz32 on the lanes of X (mask register K).
#define FLUSH(X, K) \
	VPTESTNMD Z16, X, K \
	VPANDD    Z17, X, K, X

// ROW is one block for one row: the four products a[r, t]·B_t (the a
// broadcast from the panel at offsets o0..o3), the tree, acc + s, the
// flush. T0-T3 are temporaries.
#define ROW(o0, o1, o2, o3, ACC, T0, T1, T2, T3, K) \
	VMULPS.BCST o0(AX), Z8, T0 \
	VMULPS.BCST o1(AX), Z9, T1 \
	VMULPS.BCST o2(AX), Z10, T2 \
	VMULPS.BCST o3(AX), Z11, T3 \
	VADDPS      T1, T0, T0 \
	VADDPS      T3, T2, T2 \
	VADDPS      T2, T0, T0 \
	VADDPS      T0, ACC, ACC \
	FLUSH(ACC, K)

// func pairTile8x16(ap *float32, bp *float32, c *uint32, res *uint32, n, nb int, mask uint32)
TEXT ·pairTile8x16(SB), NOSPLIT, $0-52
	MOVL         $0x7f800000, R10
	VPBROADCASTD R10, Z16
	MOVL         mask+48(FP), R10
	VPBROADCASTD R10, Z17

	// c rows (FP32 patterns, stride n), flushed.
	MOVQ    c+16(FP), R10
	MOVQ    n+32(FP), R11
	SHLQ    $2, R11
	LEAQ    (R11)(R11*2), R12
	VMOVUPS (R10), Z0
	VMOVUPS (R10)(R11*1), Z1
	VMOVUPS (R10)(R11*2), Z2
	VMOVUPS (R10)(R12*1), Z3
	LEAQ    (R10)(R11*4), R10
	VMOVUPS (R10), Z4
	VMOVUPS (R10)(R11*1), Z5
	VMOVUPS (R10)(R11*2), Z6
	VMOVUPS (R10)(R12*1), Z7
	FLUSH(Z0, K1)
	FLUSH(Z1, K2)
	FLUSH(Z2, K1)
	FLUSH(Z3, K2)
	FLUSH(Z4, K1)
	FLUSH(Z5, K2)
	FLUSH(Z6, K1)
	FLUSH(Z7, K2)

	MOVQ  ap+0(FP), AX
	MOVQ  bp+8(FP), BX
	MOVQ  nb+40(FP), CX
	TESTQ CX, CX
	JZ    store

loop:
	VMOVUPS 0(BX), Z8
	VMOVUPS 64(BX), Z9
	VMOVUPS 128(BX), Z10
	VMOVUPS 192(BX), Z11
	ROW(0, 32, 64, 96, Z0, Z12, Z13, Z14, Z15, K1)
	ROW(4, 36, 68, 100, Z1, Z18, Z19, Z20, Z21, K2)
	ROW(8, 40, 72, 104, Z2, Z12, Z13, Z14, Z15, K1)
	ROW(12, 44, 76, 108, Z3, Z18, Z19, Z20, Z21, K2)
	ROW(16, 48, 80, 112, Z4, Z12, Z13, Z14, Z15, K1)
	ROW(20, 52, 84, 116, Z5, Z18, Z19, Z20, Z21, K2)
	ROW(24, 56, 88, 120, Z6, Z12, Z13, Z14, Z15, K1)
	ROW(28, 60, 92, 124, Z7, Z18, Z19, Z20, Z21, K2)
	ADDQ    $128, AX
	ADDQ    $256, BX
	DECQ    CX
	JNZ     loop

store:
	MOVQ    res+24(FP), R10
	VMOVUPS Z0, (R10)
	VMOVUPS Z1, (R10)(R11*1)
	VMOVUPS Z2, (R10)(R11*2)
	VMOVUPS Z3, (R10)(R12*1)
	LEAQ    (R10)(R11*4), R10
	VMOVUPS Z4, (R10)
	VMOVUPS Z5, (R10)(R11*1)
	VMOVUPS Z6, (R10)(R11*2)
	VMOVUPS Z7, (R10)(R12*1)
	VZEROUPPER
	RET
