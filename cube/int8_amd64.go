//go:build amd64

package cube

import "golang.org/x/sys/cpu"

// useAVX2Int8 selects int8Block4x16, the AVX2 tile of the INT8 products
// (VPMADDWD). Tests turn it off to test the Go pairs on the same machine.
var useAVX2Int8 = cpu.X86.HasAVX2

// int8Block4x16 computes a 4×16 block of C (INT32, wrapping) from kp
// pairs of k: for p = 0..kp−1 and each row r and column l,
// C[r][l] += A[r][2p]·B[2p][l] + A[r][2p+1]·B[2p+1][l], from C (init: 0).
// a is row 0 of A packed in pairs (int16 A[r][2p] in the low half of word
// p, A[r][2p+1] in the high half), its rows astride bytes apart; b is pair
// 0 of B's 16 columns packed alike (word l of pair p: B[2p][l] low,
// B[2p+1][l] high), its pairs bstride bytes apart; c the block's first
// row, its rows 64 bytes apart (a fractal tile's 16 columns of 32 bits).
//
//go:noescape
func int8Block4x16(a *int32, astride int, b *int32, bstride int, kp int, c *int32, init bool)
