// Package crt is the golden numerical model of Ozaki scheme II: an FP64
// GEMM emulated with exact INT8 GEMMs of residues modulo several coprime
// moduli and a Chinese-remainder reconstruction (the contract is stated in
// full in a later revision of this comment).
package crt
