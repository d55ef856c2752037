// AVX-512 body of the late-c fast path (TruncatedLateC, mi300): a 4×8
// tile of C over all blocks of k (see fastlatec.go for the model and the
// proof, and lateCTile4x8 in fastlatec_amd64.go for the data layout). It
// is the truncated block-FMA tile (fasttrunc_amd64.s) with c kept out of
// e_dot and of the integer sum, and added late: per row and block,
//   X   = S·2^(e_dot−F)                     (VCVTQQ2PD exact, ×2^k exact)
//   c_q = floor(c·2^−u_c)·2^u_c, u_c = max(e_dot, e_c) − F
//                                            (VRNDSCALEPD toward −∞, exact)
//   C   = round(c_q + X)                     (TwoSum, round to odd at 53
//                                            bits as sumRO, then VCVTPD2PS
//                                            {rn-sae} or {rz-sae})
// the scalar arithmetic of lateCEnd lane for lane. Lanes whose block has
// no nonzero product take the IEEE sum c + (−0 + Σ a·b) (c itself when
// c ≠ 0, the zero-sign rule when c = ±0) by a masked blend; lanes whose
// result is infinite (|x| ≥ 2^128 under RZ, where the instruction would
// give ±MaxFloat32; ±Inf under RNE) are returned in the redo mask (the
// model stops there; the later blocks compute garbage in those lanes).
//
// Registers (lanes = the 8 columns j..j+7):
//   Z0-Z3    c of rows 0-3 (FP32 values held as float64)
//   Z4-Z7    scale 2^(F−e_dot) of rows 0-3; in the epilogue c·2^−u_c, c_q
//   Z8-Z11   int64 sums S of rows 0-3; in the epilogue X
//   Y12-Y15  int32 e_dot + 127 of the block, rows 0-3
//   Z16-Z18  temporaries
//   Z19 Z20 Z30 Z31  zero-block results c + Σ(−0 + a·b) of rows 0-3
//   Z21 F+1023+127, Z22 2046<<52, Z23 abs mask, Z24 2^128 (int64/float64 lanes)
//   Y25 0xff, Y26 0x7fffffff, Y27 1, Y28 noExp, Y29 noExpLim (int32 lanes)
//   K1-K4    lanes of rows 0-3 whose block has no nonzero product
//   K5       temporary (infinite block results, round to odd)
//
// GPRs: AX a (row-quad panel), BX b (column panel), SI ea panel, DI eb
// panel, DX terms left, R8 L, R9 the redo mask, CX, R10-R13 temporaries.

#include "textflag.h"

DATA lcOne<>+0(SB)/8, $1
GLOBL lcOne<>(SB), RODATA|NOPTR, $8

// EXPC sets the int32 exponent lanes M from the FP32 lanes Y: the
// model's nominal exponent max(e, −126) biased by +127 (the biased
// exponent field, 1 for subnormals), noExp for ±0. Clobbers K5.
#define EXPC(Y, M) \
	VPSRLD    $23, Y, M \
	VPANDD    Y25, M, M \
	VPMAXSD   Y27, M, M \
	VPTESTNMD Y26, Y, K5 \
	VMOVDQA32 Y28, K5, M

// EXPT is one term of the e_dot pass for one row: M = max(M, ea + eb),
// eb in Y16.
#define EXPT(off, M) \
	VPADDD.BCST off(SI), Y16, Y17 \
	VPMAXSD     Y17, M, M

// SCALE builds the scale lanes SC = 2^(F−M) from the bits and clears S;
// KZ marks the lanes with M < noExpLim (no nonzero product).
#define SCALE(SC, S, M, KZ) \
	VPCMPD    $1, Y29, M, KZ \
	VPMOVSXDQ M, SC \
	VPSUBQ    SC, Z21, SC \
	VPSLLQ    $52, SC, SC \
	VPXORQ    S, S, S

// PROD is one term of the product pass for one row: S += trunc(a·b·SC),
// b in Z16.
#define PROD(off, SC, S) \
	VMULPD.BCST off(AX), Z16, Z17 \
	VMULPD      SC, Z17, Z17 \
	VCVTTPD2QQ  Z17, Z17 \
	VPADDQ      Z17, S, S

// ZTERM is one term of the zero-block sum of one row: H += a·b, b in Z16.
#define ZTERM(off, H) \
	VMULPD.BCST off(R11), Z16, Z17 \
	VADDPD      Z17, H, H

// LATE sets Z16 to c_q + X rounded to odd at 53 bits, X = S·2^(M−F) and
// c_q = floor(c·2^−u_c)·2^u_c, u_c = max(M, e_c) − F (S and SC are
// overwritten with X and c_q).
#define LATE(C, SC, S, M) \
	VCVTQQ2PD      S, S \
	VPSUBQ         SC, Z22, Z17 \
	VMULPD         Z17, S, S \
	VCVTPD2PS      C, Y16 \
	EXPC(Y16, Y17) \
	VPMAXSD        M, Y17, Y17 \
	VPMOVSXDQ      Y17, Z17 \
	VPSUBQ         Z17, Z21, Z17 \
	VPSLLQ         $52, Z17, Z17 \
	VMULPD         Z17, C, SC \
	VRNDSCALEPD    $9, SC, SC \
	VPSUBQ         Z17, Z22, Z17 \
	VMULPD         Z17, SC, SC \
	VADDPD         S, SC, Z16 \
	VSUBPD         SC, Z16, Z17 \
	VSUBPD         Z17, Z16, Z18 \
	VSUBPD         Z18, SC, Z18 \
	VSUBPD         Z17, S, Z17 \
	VADDPD         Z17, Z18, Z17 \
	VPTESTMQ       Z23, Z17, K5 \
	VPTESTNMQ.BCST lcOne<>(SB), Z16, K5, K5 \
	VPXORQ         Z17, Z16, Z18 \
	VPSRAQ         $63, Z18, Z18 \
	VPORQ.BCST     lcOne<>(SB), Z18, Z18 \
	VPADDQ         Z18, Z16, K5, Z16

// FINISH blends the zero-block results H into C (lanes KZ) and adds the
// lanes with an infinite result (K5, outside KZ) to the redo mask at bit
// offset sh.
#define FINISH(C, KZ, H, sh) \
	VMOVAPD H, KZ, C \
	KANDNW  K5, KZ, K5 \
	KMOVW   K5, R10 \
	SHLQ    $sh, R10 \
	ORQ     R10, R9

// EPIRZ ends the block of one row, RZ rounding: C = RZ32(x); |x| ≥ 2^128
// is an infinite result in the model.
#define EPIRZ(C, SC, S, M, KZ, H, sh) \
	LATE(C, SC, S, M) \
	VCVTPD2PS.RZ_SAE Z16, Y18 \
	VANDPD           Z23, Z16, Z17 \
	VCMPPD           $0x1d, Z24, Z17, K5 \
	VCVTPS2PD        Y18, C \
	FINISH(C, KZ, H, sh)

// EPIRN ends the block of one row, RNE rounding: C = RNE32(x), infinite
// when |C| ≥ 2^128.
#define EPIRN(C, SC, S, M, KZ, H, sh) \
	LATE(C, SC, S, M) \
	VCVTPD2PS.RN_SAE Z16, Y18 \
	VCVTPS2PD        Y18, C \
	VANDPD           Z23, C, Z17 \
	VCMPPD           $0x1d, Z24, Z17, K5 \
	FINISH(C, KZ, H, sh)

// func lateCTile4x8(ap *float64, eap *int32, bp *float64, ebp *int32, c *float64, res *uint32, n, k, L, F int, rz bool) (bad uint32)
TEXT ·lateCTile4x8(SB), NOSPLIT, $0-92
	// Constants.
	MOVQ         F+72(FP), R10
	ADDQ         $(1023+127), R10
	VPBROADCASTQ R10, Z21
	MOVQ         $(2046<<52), R10
	VPBROADCASTQ R10, Z22
	MOVQ         $0x7fffffffffffffff, R10
	VPBROADCASTQ R10, Z23
	MOVQ         $0x47f0000000000000, R10 // 2^128
	VPBROADCASTQ R10, Z24
	MOVL         $0xff, R10
	VPBROADCASTD R10, Y25
	MOVL         $0x7fffffff, R10
	VPBROADCASTD R10, Y26
	MOVL         $1, R10
	VPBROADCASTD R10, Y27
	MOVL         $-1048576, R10 // noExp = −1<<20
	VPBROADCASTD R10, Y28
	MOVL         $-524288, R10 // noExpLim = −1<<19
	VPBROADCASTD R10, Y29

	// c rows (stride n).
	MOVQ    c+32(FP), R10
	MOVQ    n+48(FP), R11
	SHLQ    $3, R11
	VMOVUPD (R10), Z0
	VMOVUPD (R10)(R11*1), Z1
	VMOVUPD (R10)(R11*2), Z2
	LEAQ    (R10)(R11*2), R10
	VMOVUPD (R10)(R11*1), Z3

	MOVQ  ap+0(FP), AX
	MOVQ  eap+8(FP), SI
	MOVQ  bp+16(FP), BX
	MOVQ  ebp+24(FP), DI
	MOVQ  k+56(FP), DX
	MOVQ  L+64(FP), R8
	XORQ  R9, R9
	TESTQ DX, DX
	JZ    store

block:
	// CX = R12 = terms of this block.
	MOVQ    R8, CX
	CMPQ    DX, CX
	CMOVQLT DX, CX
	SUBQ    CX, DX
	MOVQ    CX, R12

	// e_dot pass, from noExp.
	VMOVDQA32 Y28, Y12
	VMOVDQA32 Y28, Y13
	VMOVDQA32 Y28, Y14
	VMOVDQA32 Y28, Y15
expl:
	VMOVDQU32 (DI), Y16
	EXPT(0, Y12)
	EXPT(4, Y13)
	EXPT(8, Y14)
	EXPT(12, Y15)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       expl

	SCALE(Z4, Z8, Y12, K1)
	SCALE(Z5, Z9, Y13, K2)
	SCALE(Z6, Z10, Y14, K3)
	SCALE(Z7, Z11, Y15, K4)

	// Blocks without nonzero products in some lanes: the IEEE sums
	// c + (−0 + Σ a·b) of every row (c when c ≠ 0), blended in by FINISH.
	KORW         K1, K2, K6
	KORW         K3, K4, K7
	KORTESTW     K6, K7
	JZ           prod
	MOVQ         $0x8000000000000000, R10
	VPBROADCASTQ R10, Z19
	VMOVAPD      Z19, Z20
	VMOVAPD      Z19, Z30
	VMOVAPD      Z19, Z31
	MOVQ         AX, R11
	MOVQ         BX, R13
	MOVQ         R12, CX

zl:
	VMOVUPD (R13), Z16
	ZTERM(0, Z19)
	ZTERM(8, Z20)
	ZTERM(16, Z30)
	ZTERM(24, Z31)
	ADDQ    $32, R11
	ADDQ    $64, R13
	DECQ    CX
	JNZ     zl
	VADDPD  Z19, Z0, Z19
	VADDPD  Z20, Z1, Z20
	VADDPD  Z30, Z2, Z30
	VADDPD  Z31, Z3, Z31

	// No lane has a nonzero product (zero rows of A, as in padded
	// tiles): the sums are the results; skip the product pass.
	KANDB    K1, K2, K6
	KANDB    K3, K4, K7
	KANDB    K6, K7, K6
	KORTESTB K6, K6
	JCC      prod
	VMOVAPD  Z19, Z0
	VMOVAPD  Z20, Z1
	VMOVAPD  Z30, Z2
	VMOVAPD  Z31, Z3
	MOVQ     R11, AX
	MOVQ     R13, BX
	JMP      next

prod:
	// Product pass.
	MOVQ R12, CX

prodl:
	VMOVUPD (BX), Z16
	PROD(0, Z4, Z8)
	PROD(8, Z5, Z9)
	PROD(16, Z6, Z10)
	PROD(24, Z7, Z11)
	ADDQ    $32, AX
	ADDQ    $64, BX
	DECQ    CX
	JNZ     prodl

	CMPB rz+80(FP), $0
	JEQ  rne
	EPIRZ(Z0, Z4, Z8, Y12, K1, Z19, 0)
	EPIRZ(Z1, Z5, Z9, Y13, K2, Z20, 8)
	EPIRZ(Z2, Z6, Z10, Y14, K3, Z30, 16)
	EPIRZ(Z3, Z7, Z11, Y15, K4, Z31, 24)
	JMP  next

rne:
	EPIRN(Z0, Z4, Z8, Y12, K1, Z19, 0)
	EPIRN(Z1, Z5, Z9, Y13, K2, Z20, 8)
	EPIRN(Z2, Z6, Z10, Y14, K3, Z30, 16)
	EPIRN(Z3, Z7, Z11, Y15, K4, Z31, 24)

next:
	TESTQ DX, DX
	JNZ   block

store:
	// The accumulators are FP32 values: the conversion is exact.
	MOVQ      res+40(FP), R10
	MOVQ      n+48(FP), R11
	SHLQ      $2, R11
	VCVTPD2PS Z0, Y16
	VMOVUPS   Y16, (R10)
	VCVTPD2PS Z1, Y16
	VMOVUPS   Y16, (R10)(R11*1)
	VCVTPD2PS Z2, Y16
	VMOVUPS   Y16, (R10)(R11*2)
	LEAQ      (R10)(R11*2), R10
	VCVTPD2PS Z3, Y16
	VMOVUPS   Y16, (R10)(R11*1)
	MOVL      R9, bad+88(FP)
	VZEROUPPER
	RET
