// AVX/FMA3 tile of the FP64 FMA chains (MMADFP64): a 4×8 tile of C over
// all k terms (fp64Tile4x8 in fp64_amd64.go has the arguments).
//
// Registers (lanes = columns, float64):
//   Y0-Y7    accumulators: row r's columns 0-3 in Y(2r), 4-7 in Y(2r+1)
//            (eight independent chains of four lanes)
//   Y8, Y9   B[t][0..3], B[t][4..7]
//   Y10-Y13  A[r][t] broadcast, rows 0-3
//
// GPRs: AX a (advanced a term at a time), R8 lda, R9 3·lda, BX b, DX ldb,
// CX terms left, R10 c, R11 ldc, R12 3·ldc.
//
// Each VFMADD231PD b, a, acc (Go operand order; Intel: vfmadd231pd acc,
// a, b) is, lane by lane, the VFMADD231SD that math.FMA(a, b, acc)
// compiles to: one IEEE-754 fused multiply-add in the default rounding
// (nearest even, no flush), a NaN result chosen from the operands in the
// same order.

#include "textflag.h"

// func fp64Tile4x8(a *float64, lda int, b *float64, ldb int, c *byte, ldc int, k int, init bool)
TEXT ·fp64Tile4x8(SB), NOSPLIT, $0-57
	MOVQ a+0(FP), AX
	MOVQ lda+8(FP), R8
	LEAQ (R8)(R8*2), R9
	MOVQ b+16(FP), BX
	MOVQ ldb+24(FP), DX
	MOVQ c+32(FP), R10
	MOVQ ldc+40(FP), R11
	LEAQ (R11)(R11*2), R12
	MOVQ k+48(FP), CX
	CMPB init+56(FP), $0
	JNE  zero
	VMOVUPD (R10), Y0
	VMOVUPD 32(R10), Y1
	VMOVUPD (R10)(R11*1), Y2
	VMOVUPD 32(R10)(R11*1), Y3
	VMOVUPD (R10)(R11*2), Y4
	VMOVUPD 32(R10)(R11*2), Y5
	VMOVUPD (R10)(R12*1), Y6
	VMOVUPD 32(R10)(R12*1), Y7
	JMP     check

zero:
	// +0 (the chains' start when init: math.FMA's acc of 0).
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

check:
	TESTQ CX, CX
	JZ    store

loop:
	VMOVUPD      (BX), Y8
	VMOVUPD      32(BX), Y9
	VBROADCASTSD (AX), Y10
	VBROADCASTSD (AX)(R8*1), Y11
	VBROADCASTSD (AX)(R8*2), Y12
	VBROADCASTSD (AX)(R9*1), Y13
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         $8, AX
	ADDQ         DX, BX
	DECQ         CX
	JNZ          loop

store:
	VMOVUPD Y0, (R10)
	VMOVUPD Y1, 32(R10)
	VMOVUPD Y2, (R10)(R11*1)
	VMOVUPD Y3, 32(R10)(R11*1)
	VMOVUPD Y4, (R10)(R11*2)
	VMOVUPD Y5, 32(R10)(R11*2)
	VMOVUPD Y6, (R10)(R12*1)
	VMOVUPD Y7, 32(R10)(R12*1)
	VZEROUPPER
	RET
