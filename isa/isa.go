// Package isa defines the instruction set of the simulated cores — the
// DaVinci AI core's, which the GPU kinds run on their lanes too (issue, copy,
// load, matrix, vector, store: arch/gpu): the instructions, named after the
// hardware pipes that execute them, a Go builder for program generators, a
// text assembly format that parses and prints with exact round-trip, and the
// static checks run before a program starts.
//
// Semantics, shared by the builder, the assembler and the core model (arch):
//
//   - Every instruction executes on one pipe (Instr.Pipe). The scalar unit
//     issues a core's instructions in program order into bounded per-pipe
//     queues; each pipe executes its queue in order; pipes run concurrently.
//   - set_flag(src, dst, id) sits in src's queue and raises the flag when every
//     earlier src instruction has completed; wait_flag(src, dst, id) sits in
//     dst's queue and blocks dst until the flag is raised, then lowers it.
//     Flags count (two sets allow two waits).
//   - pipe_barrier(P) sits in P's queue and blocks P until every earlier P
//     instruction has completed (DMA pipes keep several transfers in flight);
//     pipe_barrier(ALL) blocks the scalar unit until all pipes are drained.
//   - sync_all is a chip-wide barrier, as between two kernel launches: the
//     core drains all its pipes, then waits until every core running the
//     program has reached the same sync_all.
//   - alloc/free mark buffer regions live or dead for occupancy accounting
//     and static checks; they take effect when the scalar unit reaches them.
//   - Addresses are byte offsets into the named buffer; GM is one flat byte
//     address space shared by all cores.
//
// Data layouts: copies move bytes as they are (2-D strided). MTE1 loads turn
// a row-major matrix in L1 into the cube's fractal layout in L0A/L0B (see
// package cube's FractalIndex: 16×16 blocks, row-major over blocks and inside
// a block; padded to multiples of 16 with zeros). MMAD reads fractal A (m×k)
// and B (k×n) and accumulates into fractal C (m×n, FP32 or FP16) in L0C. The
// L0C copy writes C back row-major with a row stride, converting FP32→FP16
// on the way when asked.
package isa

import "github.com/davinci-sim/davinci-sim/fp"

// Pipe names an execution pipe of the AI core.
type Pipe uint8

// The pipes of a DaVinci AI core.
const (
	S    Pipe = iota // scalar unit: issue, loop and address arithmetic
	MTE2             // GM→L1, GM→UB
	MTE1             // L1→L0A, L1→L0B
	M                // cube (MMAD)
	V                // vector unit on UB
	MTE3             // UB→GM, UB→L1
	FIXP             // L0C→UB/GM on machines with a FixPipe
	NumPipes
	// ALL is only valid as the operand of pipe_barrier.
	ALL Pipe = 255
)

var pipeNames = [...]string{"S", "MTE2", "MTE1", "M", "V", "MTE3", "FIXP"}

// String returns the pipe's hardware name.
func (p Pipe) String() string {
	if p == ALL {
		return "ALL"
	}
	if int(p) < len(pipeNames) {
		return pipeNames[p]
	}
	return "PIPE?"
}

// ParsePipe returns the pipe with the given name (case-insensitive).
func ParsePipe(s string) (Pipe, bool) {
	for i, n := range pipeNames {
		if equalFold(n, s) {
			return Pipe(i), true
		}
	}
	if equalFold(s, "ALL") {
		return ALL, true
	}
	return 0, false
}

// Buffer names a memory: global memory or one of a core's buffers.
type Buffer uint8

// The memories of the machine.
const (
	GM Buffer = iota
	L1
	L0A
	L0B
	L0C
	UB
	NumBuffers
)

var bufferNames = [...]string{"GM", "L1", "L0A", "L0B", "L0C", "UB"}

// String returns the buffer's name.
func (b Buffer) String() string {
	if int(b) < len(bufferNames) {
		return bufferNames[b]
	}
	return "BUF?"
}

// ParseBuffer returns the buffer with the given name (case-insensitive).
func ParseBuffer(s string) (Buffer, bool) {
	for i, n := range bufferNames {
		if equalFold(n, s) {
			return Buffer(i), true
		}
	}
	return 0, false
}

// Op is an instruction opcode.
type Op uint8

// The opcodes.
const (
	OpNop      Op = iota
	OpAlloc       // S: mark Region live
	OpFree        // S: mark Region dead
	OpScalar      // S: Cycles of scalar work (loop/address arithmetic)
	OpSetFlag     // on SrcPipe: raise flag (SrcPipe, DstPipe, FlagID)
	OpWaitFlag    // on DstPipe: wait for and lower flag (SrcPipe, DstPipe, FlagID)
	OpBarrier     // on Instr.Pipe (or ALL): wait for earlier instructions to complete
	OpCopy        // MTE2/MTE3: 2-D strided byte copy Src→Dst
	OpLoad        // MTE1: row-major matrix in L1 → fractal in L0A/L0B
	OpMmad        // M: C (L0C) = A (L0A) · B (L0B) + (Init ? 0 : C)
	OpL0CCopy     // FIXP or V: fractal C in L0C → row-major in UB/GM, optional conversion
	OpVector      // V: element-wise vector operation on UB (see VecOp)
	OpSyncAll     // S: chip-wide barrier — drain this core, then wait for every core of the program (a kernel boundary)
	OpStep        // S: a CTA's main-loop step begins (Step; only in streams from Grid.Steps)
	numOps
)

var opNames = [...]string{"nop", "alloc", "free", "scalar", "set_flag", "wait_flag", "pipe_barrier",
	"copy", "load", "mmad", "l0c_copy", "vector", "sync_all", "step"}

// String returns the opcode's name.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op?"
}

// VecOp is the operation of an OpVector instruction.
type VecOp uint8

// The vector operations. Binary ops read Src and Src1; unary ops read Src;
// scalar ops (Muls, Adds) combine Src with Instr.Scalar; Dup writes Scalar;
// Cast converts Src (type In) to Dst (type Out) with Round and Saturate.
const (
	VAdd VecOp = iota
	VSub
	VMul
	VMuls
	VAdds
	VMax
	VMin
	VAbs
	VDup
	VCast
	numVecOps
)

var vecOpNames = [...]string{"add", "sub", "mul", "muls", "adds", "max", "min", "abs", "dup", "cast"}

// String returns the vector op's name.
func (v VecOp) String() string {
	if int(v) < len(vecOpNames) {
		return vecOpNames[v]
	}
	return "vop?"
}

// ParseVecOp returns the vector op with the given name.
func ParseVecOp(s string) (VecOp, bool) {
	for i, n := range vecOpNames {
		if equalFold(n, s) {
			return VecOp(i), true
		}
	}
	return 0, false
}

// Operand is a location: a buffer and a byte address in it.
type Operand struct {
	Buf  Buffer
	Addr int64
}

// Region is a named, allocated range of a buffer.
type Region struct {
	Buf    Buffer
	Name   RegionName // (interned: an instruction holds no pointer)
	Offset int64
	Size   int64
}

// Instr is one instruction. Which fields are meaningful depends on Op; the
// zero value of an unused field is ignored. The struct is a plain value so
// that streams of millions of instructions cost no allocation each.
type Instr struct {
	Op   Op
	Pipe Pipe // executing pipe (for OpBarrier: the pipe drained, or ALL)
	// OpSetFlag/OpWaitFlag: the pipe pair (the event id: FlagID). Here, and
	// Transpose (OpLoad geometry, below), beside Op and Pipe so that the
	// one-byte fields share words: every instruction is copied several
	// times on its way to a lane (264 bytes before, 248, now 232 with the
	// region's name interned: RegionName).
	SrcPipe, DstPipe Pipe
	Transpose        bool
	Line             int // 1-based source line for diagnostics (0 when built in Go)

	// Operands. OpCopy: Dst ← Src. OpLoad: Dst (L0A/L0B) ← Src (L1).
	// OpMmad: Dst = C in L0C, Src = A in L0A, Src1 = B in L0B.
	// OpL0CCopy: Dst (UB/GM) ← Src (L0C). OpVector: Dst ← op(Src, Src1).
	Dst, Src, Src1 Operand

	// OpCopy geometry: NBurst bursts of BurstLen bytes; burst i reads
	// Src.Addr+i·SrcStride and writes Dst.Addr+i·DstStride (strides are
	// start-to-start in bytes). A contiguous copy has NBurst = 1.
	NBurst    int
	BurstLen  int64
	SrcStride int64
	DstStride int64

	// OpLoad / OpL0CCopy geometry: a Rows×Cols matrix whose row-major side
	// has RowStride bytes between row starts. For OpLoad with Transpose the
	// L1 source holds the Cols×Rows transpose (row-major, RowStride) and the
	// destination receives its transpose (Transpose: above).
	Rows, Cols int
	RowStride  int64

	// OpMmad shape: C (M×N) += A (M×K) · B (K×N); Init starts from zero.
	M, K, N int
	Init    bool

	// Types: In is the element type read (OpLoad, OpMmad inputs, OpVector,
	// OpL0CCopy source), Out the type written (OpMmad accumulator,
	// OpL0CCopy/VCast destination). Round and Saturate apply to conversions.
	In, Out  fp.Format
	Round    fp.Rounding
	Saturate bool

	// TimingOnly marks an instruction that is timed but has no data effect,
	// even in functional runs: isa.Grid.TimingOnly for one instruction of
	// a DaVinci core's stream. A generator uses it for a pass whose
	// operations the vector ISA does not compute (INT16, INT64, bit
	// operations) and whose values it supplies itself, and says so in its
	// report. The assembler has no syntax for it: generators set it.
	TimingOnly bool

	// WithNext (GPU lanes) starts the next instruction of the same lane
	// together with this one, as one transfer: the warps issue both before
	// either completes, as they do a pipeline stage's A and B copies or a
	// k-step's fragment loads. The members of such a group follow each
	// other in the lane's queue and are of one kind (copies over one path,
	// or loads into registers from one buffer); the lane starts them once the last is
	// issued, runs their bytes (or cycles) as one flow and lands them
	// together. Generators set it; the assembler has no syntax for it.
	WithNext bool

	// OpVector: Repeat iterations, each over Mask elements (0 = a full
	// 256-byte repeat of type In); operand r starts at Addr + r·stride with
	// the per-repeat strides below (bytes; 0 = 256).
	VOp       VecOp
	Repeat    int
	Mask      int
	DstRepStr int64
	SrcRepStr int64
	Scalar    float64

	// OpSetFlag/OpWaitFlag: the event id (the pipe pair: above).
	FlagID int

	// OpScalar: cycles of scalar work.
	Cycles int64

	// OpAlloc/OpFree: the region (OpFree matches by Name, or by Buf+Offset
	// when Name is empty).
	Region Region
}

// Queue returns the pipe (a kind's lane) whose queue the instruction goes
// to: a set_flag's source pipe, a wait_flag's destination pipe, else Pipe.
func (in *Instr) Queue() Pipe {
	switch in.Op {
	case OpSetFlag:
		return in.SrcPipe
	case OpWaitFlag:
		return in.DstPipe
	}
	return in.Pipe
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
