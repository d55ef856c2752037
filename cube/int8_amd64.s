// AVX2 tile of the INT8 products (MMADInt8): a 4×16 block of C over all
// kp pairs of k (int8Block4x16 in int8_amd64.go has the arguments).
//
// Registers (lanes = columns, int32):
//   Y0-Y7    accumulators: row r's columns 0-7 in Y(2r), 8-15 in Y(2r+1)
//   Y8, Y9   B's pair p, columns 0-7 and 8-15 (int16 pairs)
//   Y10      A[r]'s pair p broadcast
//   Y11      a product
//
// GPRs: SI row 0 of A, R10-R12 rows 1-3, AX the pair's offset in a row of
// A, DI B's pair p, R9 bstride, CX pairs left, DX c.
//
// VPMADDWD multiplies the signed 16-bit halves lane by lane and adds each
// lane's two products into a signed 32-bit lane: A[r][2p]·B[2p][l] +
// A[r][2p+1]·B[2p+1][l], exact (INT8 values: at most 2·2^14). VPADDD adds
// modulo 2^32, as 32-bit accumulators wrap: the order of the additions
// does not change the result.

#include "textflag.h"

// func int8Block4x16(a *int32, astride int, b *int32, bstride int, kp int, c *int32, init bool)
TEXT ·int8Block4x16(SB), NOSPLIT, $0-49
	MOVQ a+0(FP), SI
	MOVQ astride+8(FP), R8
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	MOVQ b+16(FP), DI
	MOVQ bstride+24(FP), R9
	MOVQ kp+32(FP), CX
	MOVQ c+40(FP), DX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	XORQ AX, AX
	TESTQ CX, CX
	JZ   done

loop:
	VMOVDQU (DI), Y8
	VMOVDQU 32(DI), Y9
	VPBROADCASTD (SI)(AX*1), Y10
	VPMADDWD Y8, Y10, Y11
	VPADDD   Y11, Y0, Y0
	VPMADDWD Y9, Y10, Y11
	VPADDD   Y11, Y1, Y1
	VPBROADCASTD (R10)(AX*1), Y10
	VPMADDWD Y8, Y10, Y11
	VPADDD   Y11, Y2, Y2
	VPMADDWD Y9, Y10, Y11
	VPADDD   Y11, Y3, Y3
	VPBROADCASTD (R11)(AX*1), Y10
	VPMADDWD Y8, Y10, Y11
	VPADDD   Y11, Y4, Y4
	VPMADDWD Y9, Y10, Y11
	VPADDD   Y11, Y5, Y5
	VPBROADCASTD (R12)(AX*1), Y10
	VPMADDWD Y8, Y10, Y11
	VPADDD   Y11, Y6, Y6
	VPMADDWD Y9, Y10, Y11
	VPADDD   Y11, Y7, Y7
	ADDQ $4, AX
	ADDQ R9, DI
	DECQ CX
	JNZ  loop

done:
	MOVBLZX init+48(FP), AX
	TESTQ AX, AX
	JNZ   store
	VPADDD (DX), Y0, Y0
	VPADDD 32(DX), Y1, Y1
	VPADDD 64(DX), Y2, Y2
	VPADDD 96(DX), Y3, Y3
	VPADDD 128(DX), Y4, Y4
	VPADDD 160(DX), Y5, Y5
	VPADDD 192(DX), Y6, Y6
	VPADDD 224(DX), Y7, Y7

store:
	VMOVDQU Y0, (DX)
	VMOVDQU Y1, 32(DX)
	VMOVDQU Y2, 64(DX)
	VMOVDQU Y3, 96(DX)
	VMOVDQU Y4, 128(DX)
	VMOVDQU Y5, 160(DX)
	VMOVDQU Y6, 192(DX)
	VMOVDQU Y7, 224(DX)
	VZEROUPPER
	RET
