// Package ozaki is the golden numerical model of Ozaki scheme I with
// ESC/ADP: FP64 GEMM emulated with exact INT8 slice products (full contract
// in progress).
package ozaki
