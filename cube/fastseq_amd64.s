// AVX-512 tile of the sequential FP32 fast paths (fp32-rne, fp32-rz): an
// 8×16 tile of C over all k terms (see fastseq.go for the model, the proof
// and the data layout; seqTile8x16 in fastseq_amd64.go for the arguments).
//
// Registers (lanes = the 16 columns j..j+15, float32):
//   Z0-Z7    accumulators of rows 0-7 (eight independent chains)
//   Z8       B[t, j..j+15]
//   Z9-Z16   A[i+r, t] broadcast, rows 0-7
//
// GPRs: AX a (row-octet panel), BX b (column panel), CX terms left,
// R10-R12 addresses and the row stride.

#include "textflag.h"

// STEP is one term t for all eight rows: acc_r = round(acc_r + a_r·b)
// with the exact product and one rounding in the mode embedded in the
// instruction (mode is RN_SAE or RZ_SAE: register forms only, hence the
// separate broadcasts).
#define STEP(mode) \
	VMOVUPS      (BX), Z8 \
	VBROADCASTSS 0(AX), Z9 \
	VBROADCASTSS 4(AX), Z10 \
	VBROADCASTSS 8(AX), Z11 \
	VBROADCASTSS 12(AX), Z12 \
	VBROADCASTSS 16(AX), Z13 \
	VBROADCASTSS 20(AX), Z14 \
	VBROADCASTSS 24(AX), Z15 \
	VBROADCASTSS 28(AX), Z16 \
	VFMADD231PS.mode Z9, Z8, Z0 \
	VFMADD231PS.mode Z10, Z8, Z1 \
	VFMADD231PS.mode Z11, Z8, Z2 \
	VFMADD231PS.mode Z12, Z8, Z3 \
	VFMADD231PS.mode Z13, Z8, Z4 \
	VFMADD231PS.mode Z14, Z8, Z5 \
	VFMADD231PS.mode Z15, Z8, Z6 \
	VFMADD231PS.mode Z16, Z8, Z7 \
	ADDQ         $32, AX \
	ADDQ         $64, BX

// func seqTile8x16(ap *float32, bp *float32, c *uint32, res *uint32, n, k int, rz bool)
TEXT ·seqTile8x16(SB), NOSPLIT, $0-49
	// c rows (FP32 patterns, stride n).
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

	MOVQ  ap+0(FP), AX
	MOVQ  bp+8(FP), BX
	MOVQ  k+40(FP), CX
	TESTQ CX, CX
	JZ    store
	CMPB  rz+48(FP), $0
	JNE   rzl

rnl:
	STEP(RN_SAE)
	DECQ CX
	JNZ  rnl
	JMP  store

rzl:
	STEP(RZ_SAE)
	DECQ CX
	JNZ  rzl

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
