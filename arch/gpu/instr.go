package gpu

import (
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// Constructors of the GPU core's block-level instructions: each stands for
// the run of hardware instructions a block's warps issue for it (see the
// package doc). They are the shared isa.Instr record with the core's lanes
// and buffers.

// CopyToShared is the asynchronous copy of a tile into shared memory
// (cp.async, or one TMA bulk copy): rows of rowBytes bytes from global
// memory at gm (gmStride apart) to shared memory at smem (smemStride apart).
func CopyToShared(smem, gm int64, rows int, rowBytes, smemStride, gmStride int64) isa.Instr {
	return isa.Copy2D(LaneCopy, isa.Operand{Buf: BufShared, Addr: smem}, isa.Operand{Buf: BufGM, Addr: gm},
		rows, rowBytes, gmStride, smemStride)
}

// CopyToRegisters is the run of global loads (buffer_load, LDG) of a tile
// into registers: rows of rowBytes bytes from global memory at gm
// (gmStride apart) to registers at rf (rfStride apart).
func CopyToRegisters(rf, gm int64, rows int, rowBytes, rfStride, gmStride int64) isa.Instr {
	return isa.Copy2D(LaneCopy, isa.Operand{Buf: BufRegs, Addr: rf}, isa.Operand{Buf: BufGM, Addr: gm},
		rows, rowBytes, gmStride, rfStride)
}

// StoreToShared is the run of shared-memory stores (ds_write, STS) of a
// tile from registers at rf (rfStride apart) to shared memory at smem
// (smemStride apart).
func StoreToShared(smem, rf int64, rows int, rowBytes, rfStride, smemStride int64) isa.Instr {
	return isa.Copy2D(LaneStore, isa.Operand{Buf: BufShared, Addr: smem}, isa.Operand{Buf: BufRegs, Addr: rf},
		rows, rowBytes, rfStride, smemStride)
}

// LoadMatrix is the ldmatrix run that loads a rows×cols tile of f, stored
// row-major in shared memory at smem with stride bytes between rows, into
// register fragments at rf (transposed when the stored tile is its
// cols×rows transpose).
func LoadMatrix(rf, smem int64, rows, cols int, stride int64, f fp.Format, transpose bool) isa.Instr {
	return isa.Instr{Op: isa.OpLoad, Pipe: LaneLoad, Dst: isa.Operand{Buf: BufRegs, Addr: rf},
		Src: isa.Operand{Buf: BufShared, Addr: smem}, Rows: rows, Cols: cols, RowStride: stride, In: f, Transpose: transpose}
}

// LoadFromGlobal is the run of global loads that fill register fragments
// straight from global memory (WMMA's load_matrix_sync from a global
// pointer, no shared-memory staging): a rows×cols tile of f, row-major at
// gm with stride bytes between rows, into fragments at rf, on the copy
// lane.
func LoadFromGlobal(rf, gm int64, rows, cols int, stride int64, f fp.Format) isa.Instr {
	return isa.Instr{Op: isa.OpLoad, Pipe: LaneCopy, Dst: isa.Operand{Buf: BufRegs, Addr: rf},
		Src: isa.Operand{Buf: BufGM, Addr: gm}, Rows: rows, Cols: cols, RowStride: stride, In: f}
}

// MMA is the run of tensor-core instructions of one k-tile: C (m×n of out,
// registers at c) = A (m×k of in, at a) · B (k×n, at b) + (init ? 0 : C),
// k processed in increasing order. WithWarpTiles sets what the warps
// compute when an edge tile is smaller than the CTA's warp tiles.
func MMA(c, a, b int64, m, k, n int, in, out fp.Format, init bool) isa.Instr {
	return isa.Instr{Op: isa.OpMmad, Pipe: LaneMatrix, Dst: isa.Operand{Buf: BufRegs, Addr: c},
		Src: isa.Operand{Buf: BufRegs, Addr: a}, Src1: isa.Operand{Buf: BufRegs, Addr: b},
		M: m, K: k, N: n, In: in, Out: out, Init: init}
}

// MMAShared is the run of matrix instructions of one k-tile that read A
// and B from shared memory (Hopper wgmma SS, Blackwell tcgen05): A (m×k
// of in, row-major at a, aStride bytes between rows), B (k×n at b,
// bStride), C (m×n of out) at c in registers (wgmma) or tensor memory
// (tcgen05: set Dst.Buf to BufAcc) = A·B + (init ? 0 : C). The strides
// travel in SrcStride (A) and RowStride (B).
func MMAShared(c, a, aStride, b, bStride int64, m, k, n int, in, out fp.Format, init bool) isa.Instr {
	i := MMA(c, a, b, m, k, n, in, out, init)
	i.Src.Buf, i.Src1.Buf = BufShared, BufShared
	i.SrcStride, i.RowStride = aStride, bStride
	return i
}

// Pair operands (Blackwell cta_group::2): bit pairBit of a shared-memory
// address marks a B operand split by columns between the two CTAs of a
// cluster; bits pairColsShift… hold the columns rank 0 holds.
const (
	pairBit       = int64(1) << 48
	pairColsShift = 32
	pairOffMask   = int64(1)<<pairColsShift - 1
)

// PairOperand is the address of an MMA's B operand that the two CTAs of a
// cta_group::2 pair (isa.Grid.Cluster = 2) hold half each: the tile's
// first cols0 columns at offset off of rank 0's shared memory, the rest
// at the same offset of rank 1's, rows the instruction's B stride apart
// in both — tcgen05.mma's shared-memory descriptors name the same offset
// in the two CTAs. Each CTA's MMA reads all of B and its own rows of A.
func PairOperand(off int64, cols0 int) int64 {
	return pairBit | int64(cols0)<<pairColsShift | off&pairOffMask
}

// FMA is the CUDA cores' run of FP32 FMAs of one k-step of a SIMT GEMM:
// C (m×n FP32, registers at c) = A (m×k) · B (k×n) + (init ? 0 : C), each
// output a chain of FMAs in increasing k.
func FMA(c, a, b int64, m, k, n int, init bool) isa.Instr {
	in := MMA(c, a, b, m, k, n, fp.FP32, fp.FP32, init)
	in.Pipe = LaneVector
	return in
}

// StoreAccumulators is the epilogue store of an accumulator tile (rows ×
// cols of in, registers at rf) to global memory at gm, row-major with
// stride bytes between rows, converted to out with round and sat.
func StoreAccumulators(gm, rf int64, rows, cols int, stride int64, in, out fp.Format, round fp.Rounding, sat bool) isa.Instr {
	return isa.Instr{Op: isa.OpL0CCopy, Pipe: LaneStore, Dst: isa.Operand{Buf: BufGM, Addr: gm},
		Src: isa.Operand{Buf: BufRegs, Addr: rf}, Rows: rows, Cols: cols, RowStride: stride,
		In: in, Out: out, Round: round, Saturate: sat}
}

// WithWarpTiles returns the MMA or FMA run in computing rows × cols (the
// CTA's whole warp tiles; CUTLASS's warps all run their MMAs on an edge
// tile and mask the store): its time counts them, its result the m×n it
// names. On an element-wise run (Elementwise, Scale, Convert) over an
// accumulator tile it sets the rows × cols elements the threads compute —
// each its whole fragment, in or out of bounds —: its time, vector
// repeats and energy count them (where more than its own), its result the
// elements it names.
func WithWarpTiles(in isa.Instr, rows, cols int) isa.Instr {
	in.Rows, in.Cols = rows, cols
	return in
}
