package isa

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Constructors. Each returns one instruction exactly as the assembler builds
// it from the corresponding mnemonic (see ASM.md); they do not validate, so
// generators that yield instructions straight into a Stream pay nothing.
// Use Validate, a Builder or Check to verify them.

// Nop returns a no-operation on the scalar unit ("nop").
func Nop() Instr { return Instr{Op: OpNop, Pipe: S} }

// Step marks the start of step k of a CTA's main loop of n steps (Grid.Steps):
// a consumer may skip the steps from the one it marks up to a later one, To
// (StepCursor), when from ≤ k, To ≤ to < n and To−k is a multiple of
// period — the steps' instructions repeat with that period, addresses
// aside, and each step in [from, to) is followed by such a one (to ≤
// from: none may be skipped). A consumer that stands a skipped step for
// the one before the marker needs that one in [from, to) too. It takes
// no time and is not counted as an instruction. M is k, N is n, K the
// period, Rows from and Cols to.
func Step(k, n, period, from, to int) Instr {
	return Instr{Op: OpStep, Pipe: S, M: k, N: n, K: period, Rows: from, Cols: to}
}

// SyncAll is the chip-wide barrier between kernel phases ("sync_all").
func SyncAll() Instr { return Instr{Op: OpSyncAll, Pipe: S} }

// Alloc marks buf[off, off+size) live under name ("alloc BUF off= size= name=").
func Alloc(buf Buffer, off, size int64, name string) Instr {
	return Instr{Op: OpAlloc, Pipe: S, Region: Region{Buf: buf, Offset: off, Size: size, Name: NameRegion(name)}}
}

// Free marks the live region called name dead ("free name=").
func Free(name string) Instr {
	return Instr{Op: OpFree, Pipe: S, Region: Region{Name: NameRegion(name)}}
}

// FreeIn marks the live region of buf called name dead ("free BUF name=").
func FreeIn(buf Buffer, name string) Instr {
	return Instr{Op: OpFree, Pipe: S, Region: Region{Buf: buf, Name: NameRegion(name)}}
}

// FreeAt marks the live region of buf starting at off dead ("free BUF off=").
func FreeAt(buf Buffer, off int64) Instr {
	return Instr{Op: OpFree, Pipe: S, Region: Region{Buf: buf, Offset: off}}
}

// Scalar is cycles of scalar-unit work ("scalar cycles=").
func Scalar(cycles int64) Instr { return Instr{Op: OpScalar, Pipe: S, Cycles: cycles} }

// SetFlag raises flag (src, dst, id) once src's earlier work is done ("set_flag SRC DST ID").
func SetFlag(src, dst Pipe, id int) Instr {
	return Instr{Op: OpSetFlag, Pipe: src, SrcPipe: src, DstPipe: dst, FlagID: id}
}

// WaitFlag blocks dst until flag (src, dst, id) is raised ("wait_flag SRC DST ID").
func WaitFlag(src, dst Pipe, id int) Instr {
	return Instr{Op: OpWaitFlag, Pipe: dst, SrcPipe: src, DstPipe: dst, FlagID: id}
}

// Barrier drains pipe p, or every pipe for ALL ("pipe_barrier P").
func Barrier(p Pipe) Instr { return Instr{Op: OpBarrier, Pipe: p} }

// Copy is a contiguous copy of bytes bytes on pipe (MTE2: GM→L1/UB, MTE3:
// UB→GM/L1) ("mte2.copy gm= l1= bytes=").
func Copy(pipe Pipe, dst, src Operand, bytes int64) Instr {
	return Instr{Op: OpCopy, Pipe: pipe, Dst: dst, Src: src, NBurst: 1, BurstLen: bytes}
}

// Copy2D is a strided copy of nburst bursts of burstLen bytes
// ("mte2.copy gm= ub= nburst= len= src_stride= dst_stride=").
func Copy2D(pipe Pipe, dst, src Operand, nburst int, burstLen, srcStride, dstStride int64) Instr {
	return Instr{Op: OpCopy, Pipe: pipe, Dst: dst, Src: src, NBurst: nburst, BurstLen: burstLen,
		SrcStride: srcStride, DstStride: dstStride}
}

// CopyGM2L1 copies bytes bytes from GM to L1 on MTE2.
func CopyGM2L1(gm, l1, bytes int64) Instr {
	return Copy(MTE2, Operand{L1, l1}, Operand{GM, gm}, bytes)
}

// CopyGM2UB copies bytes bytes from GM to UB on MTE2.
func CopyGM2UB(gm, ub, bytes int64) Instr {
	return Copy(MTE2, Operand{UB, ub}, Operand{GM, gm}, bytes)
}

// CopyUB2GM copies bytes bytes from UB to GM on MTE3.
func CopyUB2GM(ub, gm, bytes int64) Instr {
	return Copy(MTE3, Operand{GM, gm}, Operand{UB, ub}, bytes)
}

// CopyUB2L1 copies bytes bytes from UB to L1 on MTE3.
func CopyUB2L1(ub, l1, bytes int64) Instr {
	return Copy(MTE3, Operand{L1, l1}, Operand{UB, ub}, bytes)
}

// Load moves a rows×cols matrix of dtype from L1 (row-major, stride bytes
// between rows; with transpose the L1 matrix is its cols×rows transpose)
// into fractal layout at dstOff in dst (L0A or L0B) on MTE1
// ("mte1.load l0a= l1= rows= cols= stride= dtype= [transpose]").
func Load(dst Buffer, dstOff, l1 int64, rows, cols int, stride int64, dtype fp.Format, transpose bool) Instr {
	return Instr{Op: OpLoad, Pipe: MTE1, Dst: Operand{dst, dstOff}, Src: Operand{L1, l1},
		Rows: rows, Cols: cols, RowStride: stride, In: dtype, Transpose: transpose}
}

// Mmad computes C (L0C at c, m×n of out) = A (L0A at a, m×k of in) · B (L0B
// at b, k×n of in) + (init ? 0 : C) on M
// ("m.mmad c= a= b= m= k= n= in= out= init|acc").
func Mmad(c, a, b int64, m, k, n int, in, out fp.Format, init bool) Instr {
	return Instr{Op: OpMmad, Pipe: M, Dst: Operand{L0C, c}, Src: Operand{L0A, a}, Src1: Operand{L0B, b},
		M: m, K: k, N: n, In: in, Out: out, Init: init}
}

// L0CCopy writes the fractal rows×cols tile at l0c (type in) row-major to
// dst (UB, or GM on FIXP) with stride bytes between rows, converting to out
// with round and sat, on pipe FIXP or V
// ("fixp.l0c ub= l0c= rows= cols= stride= in= out= round= [sat]").
func L0CCopy(pipe Pipe, dst Operand, l0c int64, rows, cols int, stride int64, in, out fp.Format, round fp.Rounding, sat bool) Instr {
	return Instr{Op: OpL0CCopy, Pipe: pipe, Dst: dst, Src: Operand{L0C, l0c}, Rows: rows, Cols: cols,
		RowStride: stride, In: in, Out: out, Round: round, Saturate: sat}
}

// Vector is the general vector instruction on UB: dst = op(src0, src1 or
// scalar) over repeat repeats of mask elements (0: a full repeat) of type in,
// writing type out with round and sat (VCast). VecBinary, VecScalar,
// VecAbs, VecDup and VecCast are its common forms.
func Vector(op VecOp, dst, src0, src1 int64, in, out fp.Format, scalar float64, round fp.Rounding, sat bool, repeat, mask int) Instr {
	return Instr{Op: OpVector, Pipe: V, VOp: op, Dst: Operand{UB, dst}, Src: Operand{UB, src0}, Src1: Operand{UB, src1},
		In: in, Out: out, Round: round, Saturate: sat, Scalar: scalar, Repeat: repeat, Mask: mask}
}

// VecBinary is dst = src0 op src1 over repeat full repeats of dtype in UB, op
// one of VAdd, VSub, VMul, VMax, VMin ("v.add dst= src0= src1= dtype= repeat=").
func VecBinary(op VecOp, dst, src0, src1 int64, dtype fp.Format, repeat int) Instr {
	return Instr{Op: OpVector, Pipe: V, VOp: op, Dst: Operand{UB, dst}, Src: Operand{UB, src0},
		Src1: Operand{UB, src1}, In: dtype, Out: dtype, Repeat: repeat}
}

// VecScalar is dst = src0 op scalar, op VMuls or VAdds
// ("v.muls dst= src0= scalar= dtype= repeat=").
func VecScalar(op VecOp, dst, src0 int64, scalar float64, dtype fp.Format, repeat int) Instr {
	return Instr{Op: OpVector, Pipe: V, VOp: op, Dst: Operand{UB, dst}, Src: Operand{UB, src0},
		Scalar: scalar, In: dtype, Out: dtype, Repeat: repeat}
}

// VecAbs is dst = |src0| ("v.abs dst= src0= dtype= repeat=").
func VecAbs(dst, src0 int64, dtype fp.Format, repeat int) Instr {
	return Instr{Op: OpVector, Pipe: V, VOp: VAbs, Dst: Operand{UB, dst}, Src: Operand{UB, src0},
		In: dtype, Out: dtype, Repeat: repeat}
}

// VecDup fills dst with scalar ("v.dup dst= scalar= dtype= repeat=").
func VecDup(dst int64, scalar float64, dtype fp.Format, repeat int) Instr {
	return Instr{Op: OpVector, Pipe: V, VOp: VDup, Dst: Operand{UB, dst}, Scalar: scalar,
		In: dtype, Out: dtype, Repeat: repeat}
}

// VecCast converts src0 (from) to dst (to) with round and sat
// ("v.cast dst= src0= from= to= round= [sat] repeat=").
func VecCast(dst, src0 int64, from, to fp.Format, round fp.Rounding, sat bool, repeat int) Instr {
	return Instr{Op: OpVector, Pipe: V, VOp: VCast, Dst: Operand{UB, dst}, Src: Operand{UB, src0},
		In: from, Out: to, Round: round, Saturate: sat, Repeat: repeat}
}

// WithMask returns a vector instruction restricted to the first mask
// elements of each repeat ("mask=").
func (in Instr) WithMask(mask int) Instr { in.Mask = mask; return in }

// WithRepStrides returns a vector instruction with per-repeat byte strides
// for the destination and the sources ("dst_stride= src_stride="; 0 = a
// full repeat).
func (in Instr) WithRepStrides(dst, src int64) Instr {
	in.DstRepStr, in.SrcRepStr = dst, src
	return in
}

// Builder collects a validated instruction sequence. Every method validates
// its instruction like the assembler does; the first invalid instruction is
// dropped and remembered, and later ones are still collected so that one
// pass reports the first problem (see Err).
type Builder struct {
	instrs []Instr
	err    error
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{} }

// Add validates in and appends it.
func (b *Builder) Add(in Instr) {
	if err := Validate(in); err != nil {
		if b.err == nil {
			b.err = fmt.Errorf("instruction %d: %w", len(b.instrs), err)
		}
		return
	}
	b.instrs = append(b.instrs, in)
}

// Err returns the first validation error, or nil.
func (b *Builder) Err() error { return b.err }

// Instrs returns the collected instructions (the Builder's own slice).
func (b *Builder) Instrs() []Instr { return b.instrs }

// Len returns the number of collected instructions.
func (b *Builder) Len() int { return len(b.instrs) }

// Stream returns a Stream over the collected instructions.
func (b *Builder) Stream() Stream { return Slice(b.instrs) }

// Reset empties the Builder, keeping its capacity.
func (b *Builder) Reset() { b.instrs, b.err = b.instrs[:0], nil }

// Nop appends Nop().
func (b *Builder) Nop() { b.Add(Nop()) }

// SyncAll appends SyncAll().
func (b *Builder) SyncAll() { b.Add(SyncAll()) }

// Alloc appends Alloc(buf, off, size, name).
func (b *Builder) Alloc(buf Buffer, off, size int64, name string) { b.Add(Alloc(buf, off, size, name)) }

// Free appends Free(name).
func (b *Builder) Free(name string) { b.Add(Free(name)) }

// FreeAt appends FreeAt(buf, off).
func (b *Builder) FreeAt(buf Buffer, off int64) { b.Add(FreeAt(buf, off)) }

// Scalar appends Scalar(cycles).
func (b *Builder) Scalar(cycles int64) { b.Add(Scalar(cycles)) }

// SetFlag appends SetFlag(src, dst, id).
func (b *Builder) SetFlag(src, dst Pipe, id int) { b.Add(SetFlag(src, dst, id)) }

// WaitFlag appends WaitFlag(src, dst, id).
func (b *Builder) WaitFlag(src, dst Pipe, id int) { b.Add(WaitFlag(src, dst, id)) }

// Barrier appends Barrier(p).
func (b *Builder) Barrier(p Pipe) { b.Add(Barrier(p)) }

// Copy appends Copy(pipe, dst, src, bytes).
func (b *Builder) Copy(pipe Pipe, dst, src Operand, bytes int64) { b.Add(Copy(pipe, dst, src, bytes)) }

// Copy2D appends Copy2D(pipe, dst, src, nburst, burstLen, srcStride, dstStride).
func (b *Builder) Copy2D(pipe Pipe, dst, src Operand, nburst int, burstLen, srcStride, dstStride int64) {
	b.Add(Copy2D(pipe, dst, src, nburst, burstLen, srcStride, dstStride))
}

// Shape is in without its addresses and source line: two CTAs of a grid
// whose streams have equal shapes do the same work at other places.
func (in Instr) Shape() Instr {
	in.Dst.Addr, in.Src.Addr, in.Src1.Addr, in.Line = 0, 0, 0, 0
	return in
}
