package isa

import (
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/fp"
)

// VectorRepeatBytes is the default number of bytes of type In that one full
// vector repeat reads from each source operand (the DaVinci family's 256; a
// machine sets its own, core.vector.bytes_per_repeat, through
// Limits.VectorRepeatBytes).
const VectorRepeatBytes = 256

// FractalSide is the side of the cube's fractal blocks: L0A/L0B/L0C tiles are
// padded to multiples of 16 rows and 16 columns.
const FractalSide = 16

// numRoundings is the number of rounding modes declared in package fp.
var numRoundings = fp.Rounding(len(fp.Roundings()))

// Names are the names a machine kind gives lanes (Instr.Pipe and the flag
// pipes) and buffers (operand and region buffers): instructions of every
// kind share this instruction record, and print with their kind's names. A
// nil *Names, or an index beyond a list, prints DaVinci's names.
type Names struct {
	Lanes   []string
	Buffers []string
}

func (n *Names) lane(p Pipe) string {
	if n != nil && int(p) < len(n.Lanes) {
		return n.Lanes[p]
	}
	return p.String()
}

func (n *Names) buffer(b Buffer) string {
	if n != nil && int(b) < len(n.Buffers) {
		return n.Buffers[b]
	}
	return b.String()
}

// Mnemonic returns the assembly mnemonic of an instruction ("mte2.copy",
// "v.add", …). It never fails: unknown combinations get a descriptive name.
func Mnemonic(in Instr) string { return (*Names)(nil).Mnemonic(in) }

// Mnemonic is Mnemonic with the lane names of n.
func (n *Names) Mnemonic(in Instr) string {
	pipeLower := func(p Pipe) string { return lowerASCII(n.lane(p)) }
	switch in.Op {
	case OpNop, OpAlloc, OpFree, OpScalar, OpSetFlag, OpWaitFlag, OpBarrier, OpSyncAll, OpStep:
		return in.Op.String()
	case OpCopy:
		return pipeLower(in.Pipe) + ".copy"
	case OpLoad:
		return pipeLower(in.Pipe) + ".load"
	case OpMmad:
		return pipeLower(in.Pipe) + ".mmad"
	case OpL0CCopy:
		return pipeLower(in.Pipe) + ".l0c"
	case OpVector:
		return pipeLower(in.Pipe) + "." + in.VOp.String()
	}
	return in.Op.String()
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func onChip(b Buffer) bool { return b > GM && b < NumBuffers }

func validPipe(p Pipe) bool { return p < NumPipes }

func pad16(x int) int64 { return (int64(x) + FractalSide - 1) / FractalSide * FractalSide }

// Amount returns the bytes an instruction moves (copies, loads, L0C
// write-backs) or reads (vector sources), and its flops (MMAD: 2·m·n·k;
// vector: one per element and repeat, a repeat covering repeatBytes bytes;
// 0: VectorRepeatBytes).
func (in *Instr) Amount(repeatBytes int) (bytes int64, flops float64) {
	switch in.Op {
	case OpCopy:
		return int64(in.NBurst) * in.BurstLen, 0
	case OpLoad:
		if in.In.Valid() {
			return int64(in.Rows) * int64(in.Cols) * int64(in.In.Bytes()), 0
		}
	case OpL0CCopy:
		if in.Out.Valid() {
			return int64(in.Rows) * int64(in.Cols) * int64(in.Out.Bytes()), 0
		}
	case OpMmad:
		return 0, 2 * float64(in.M) * float64(in.N) * float64(in.K)
	case OpVector:
		if in.In.Valid() {
			n := int64(in.VecElems(repeatBytes)) * int64(in.Repeat)
			return n * int64(in.In.Bytes()), float64(n)
		}
	}
	return 0, 0
}

// VecElems returns the number of elements one repeat of a vector
// instruction processes on a machine whose repeats cover repeatBytes bytes
// (0: VectorRepeatBytes): Mask when 0 < Mask < full, else a full repeat of
// type In.
func (in Instr) VecElems(repeatBytes int) int {
	if !in.In.Valid() {
		return 0
	}
	full := repeatOr(repeatBytes) / in.In.Bytes()
	if in.Mask > 0 && in.Mask < full {
		return in.Mask
	}
	return full
}

// vecStrides returns the effective per-repeat strides of a vector
// instruction: 0 means a full repeat (256 bytes for the sources; for the
// destination 256 bytes of type Out, i.e. the full repeat's element count
// times Out's size).
func (in Instr) vecStrides(repeatBytes int) (dst, src int64) {
	repeatBytes = repeatOr(repeatBytes)
	dst, src = in.DstRepStr, in.SrcRepStr
	full := int64(repeatBytes / in.In.Bytes())
	if dst == 0 {
		dst = full * int64(in.vecOut().Bytes())
	}
	if src == 0 {
		src = int64(repeatBytes)
	}
	return
}

// repeatOr returns repeatBytes, or VectorRepeatBytes when it is not positive.
func repeatOr(repeatBytes int) int {
	if repeatBytes <= 0 {
		return VectorRepeatBytes
	}
	return repeatBytes
}

// vecOut is the type a vector instruction writes.
func (in Instr) vecOut() fp.Format {
	if in.VOp == VCast {
		return in.Out
	}
	return in.In
}

// vectorTypes are the element types of vector arithmetic.
func vectorType(f fp.Format) bool {
	return f == fp.FP32 || f == fp.FP16 || f == fp.BF16 || f == fp.INT32
}

// castType reports whether f may be a source or destination of v.cast.
func castType(f fp.Format) bool {
	return f.Valid() && f != fp.TF32
}

// l0cType reports whether f may be stored in L0C (the accumulator types).
func l0cType(f fp.Format) bool { return f == fp.FP32 || f == fp.FP16 || f == fp.INT32 }

// mmadOut reports whether the cube can accumulate inputs of type in into out.
func mmadOut(in, out fp.Format) bool {
	if in == fp.INT8 {
		return out == fp.INT32
	}
	return in.Valid() && in != fp.INT32 && (out == fp.FP32 || out == fp.FP16)
}

// Validate checks one instruction on its own: pipe and buffers valid for the
// opcode, sizes and counts positive, addresses non-negative, types known and
// legal for the operation. It is the check the parser and the Builder apply
// to every instruction; machine limits (capacities, flag ids, FixPipe, cube
// types) and region rules are Check's job. Errors read "mnemonic: problem".
func Validate(in Instr) error {
	if err := validate(&in); err != "" {
		return fmt.Errorf("%s: %s", Mnemonic(in), err)
	}
	return nil
}

func negAddr(ops ...Operand) string {
	for _, o := range ops {
		if o.Addr < 0 {
			return fmt.Sprintf("negative %s address %d", o.Buf, o.Addr)
		}
	}
	return ""
}

func validate(in *Instr) string {
	switch in.Op {
	case OpStep:
		if in.Pipe != S {
			return fmt.Sprintf("runs on pipe S, not %s", in.Pipe)
		}
		// A consumer resumes at most at `to`, which must be a step; an
		// empty range (to ≤ from: a loop too short) allows no skip.
		if in.K < 1 || in.M < 0 || in.M >= in.N || in.Rows < 1 || in.Cols > in.Rows && in.Cols >= in.N {
			return fmt.Sprintf("step %d of %d (period %d, skippable from %d to %d): out of range", in.M, in.N, in.K, in.Rows, in.Cols)
		}
	case OpNop, OpScalar, OpSyncAll:
		if in.Pipe != S {
			return fmt.Sprintf("runs on pipe S, not %s", in.Pipe)
		}
		if in.Cycles < 0 {
			return fmt.Sprintf("cycles %d must be >= 0", in.Cycles)
		}
	case OpAlloc:
		r := in.Region
		switch {
		case in.Pipe != S:
			return fmt.Sprintf("runs on pipe S, not %s", in.Pipe)
		case !onChip(r.Buf):
			return fmt.Sprintf("buffer %s is not an on-chip buffer (L1, L0A, L0B, L0C, UB)", r.Buf)
		case r.Offset < 0:
			return fmt.Sprintf("offset %d must be >= 0", r.Offset)
		case r.Size <= 0:
			return fmt.Sprintf("size %d must be > 0", r.Size)
		case r.Name != 0 && !validName(r.Name.String()):
			return fmt.Sprintf("bad region name %q (letters, digits, _ . -; not starting with a digit)", r.Name)
		}
	case OpFree:
		r := in.Region
		switch {
		case in.Pipe != S:
			return fmt.Sprintf("runs on pipe S, not %s", in.Pipe)
		case r.Name != 0:
			if !validName(r.Name.String()) {
				return fmt.Sprintf("bad region name %q", r.Name)
			}
			if r.Buf != GM && !onChip(r.Buf) {
				return fmt.Sprintf("bad buffer %s", r.Buf)
			}
		case !onChip(r.Buf):
			return fmt.Sprintf("needs a region name or an on-chip buffer and offset (got buffer %s)", r.Buf)
		case r.Offset < 0:
			return fmt.Sprintf("offset %d must be >= 0", r.Offset)
		}
	case OpSetFlag, OpWaitFlag:
		switch {
		case !validPipe(in.SrcPipe) || !validPipe(in.DstPipe):
			return fmt.Sprintf("bad pipe pair %s->%s", in.SrcPipe, in.DstPipe)
		case in.SrcPipe == in.DstPipe:
			return fmt.Sprintf("source and destination pipe are both %s", in.SrcPipe)
		case in.FlagID < 0:
			return fmt.Sprintf("flag id %d out of range (must be >= 0)", in.FlagID)
		case in.Op == OpSetFlag && in.Pipe != in.SrcPipe:
			return fmt.Sprintf("runs on its source pipe %s, not %s", in.SrcPipe, in.Pipe)
		case in.Op == OpWaitFlag && in.Pipe != in.DstPipe:
			return fmt.Sprintf("runs on its destination pipe %s, not %s", in.DstPipe, in.Pipe)
		}
	case OpBarrier:
		if !validPipe(in.Pipe) && in.Pipe != ALL {
			return fmt.Sprintf("bad pipe %s", in.Pipe)
		}
	case OpCopy:
		switch in.Pipe {
		case MTE2:
			if in.Src.Buf != GM || (in.Dst.Buf != L1 && in.Dst.Buf != UB) {
				return fmt.Sprintf("copies GM to L1 or UB, not %s to %s", in.Src.Buf, in.Dst.Buf)
			}
		case MTE3:
			if in.Src.Buf != UB || (in.Dst.Buf != GM && in.Dst.Buf != L1) {
				return fmt.Sprintf("copies UB to GM or L1, not %s to %s", in.Src.Buf, in.Dst.Buf)
			}
		default:
			return fmt.Sprintf("copies run on MTE2 or MTE3, not %s", in.Pipe)
		}
		switch {
		case in.NBurst < 1:
			return fmt.Sprintf("nburst %d must be >= 1", in.NBurst)
		case in.BurstLen <= 0:
			return fmt.Sprintf("copy length %d must be > 0", in.BurstLen)
		case in.SrcStride < 0 || in.DstStride < 0:
			return fmt.Sprintf("strides %d, %d must be >= 0", in.SrcStride, in.DstStride)
		case in.NBurst > 1 && in.DstStride < in.BurstLen:
			return fmt.Sprintf("dst_stride %d < len %d: bursts would overlap in the destination", in.DstStride, in.BurstLen)
		}
		return negAddr(in.Src, in.Dst)
	case OpLoad:
		switch {
		case in.Pipe != MTE1:
			return fmt.Sprintf("runs on MTE1, not %s", in.Pipe)
		case in.Src.Buf != L1 || (in.Dst.Buf != L0A && in.Dst.Buf != L0B):
			return fmt.Sprintf("loads L1 to L0A or L0B, not %s to %s", in.Src.Buf, in.Dst.Buf)
		case in.Rows <= 0 || in.Cols <= 0:
			return fmt.Sprintf("rows %d and cols %d must be > 0", in.Rows, in.Cols)
		case !in.In.Valid():
			return "bad dtype"
		}
		row := int64(in.Cols)
		if in.Transpose {
			row = int64(in.Rows)
		}
		if min := satMul(row, int64(in.In.Bytes())); in.RowStride < min {
			return fmt.Sprintf("stride %d is shorter than a row of the L1 matrix (%d bytes)", in.RowStride, min)
		}
		return negAddr(in.Src, in.Dst)
	case OpMmad:
		switch {
		case in.Pipe != M:
			return fmt.Sprintf("runs on M, not %s", in.Pipe)
		case in.Dst.Buf != L0C || in.Src.Buf != L0A || in.Src1.Buf != L0B:
			return fmt.Sprintf("operands must be C in L0C, A in L0A, B in L0B (got %s, %s, %s)", in.Dst.Buf, in.Src.Buf, in.Src1.Buf)
		case in.M <= 0 || in.K <= 0 || in.N <= 0:
			return fmt.Sprintf("m, k, n (%d, %d, %d) must be > 0", in.M, in.K, in.N)
		case !mmadOut(in.In, in.Out):
			return fmt.Sprintf("the cube cannot accumulate %s inputs into %s", in.In, in.Out)
		}
		return negAddr(in.Dst, in.Src, in.Src1)
	case OpL0CCopy:
		switch in.Pipe {
		case FIXP:
			if in.Dst.Buf != UB && in.Dst.Buf != GM {
				return fmt.Sprintf("writes UB or GM, not %s", in.Dst.Buf)
			}
		case V:
			if in.Dst.Buf != UB {
				return fmt.Sprintf("writes UB, not %s", in.Dst.Buf)
			}
		default:
			return fmt.Sprintf("L0C copies run on FIXP or V, not %s", in.Pipe)
		}
		switch {
		case in.Src.Buf != L0C:
			return fmt.Sprintf("reads L0C, not %s", in.Src.Buf)
		case in.Rows <= 0 || in.Cols <= 0:
			return fmt.Sprintf("rows %d and cols %d must be > 0", in.Rows, in.Cols)
		case !l0cType(in.In):
			return fmt.Sprintf("L0C holds fp32, fp16 or int32, not %s", in.In)
		case !castType(in.Out):
			return fmt.Sprintf("bad output type %s", in.Out)
		case in.Round >= numRoundings:
			return "bad rounding mode"
		}
		if min := satMul(int64(in.Cols), int64(in.Out.Bytes())); in.RowStride < min {
			return fmt.Sprintf("stride %d is shorter than a row (%d bytes)", in.RowStride, min)
		}
		return negAddr(in.Src, in.Dst)
	case OpVector:
		return validateVector(in)
	default:
		return fmt.Sprintf("unknown opcode %d", in.Op)
	}
	return ""
}

func validateVector(in *Instr) string {
	if in.Pipe != V {
		return fmt.Sprintf("runs on V, not %s", in.Pipe)
	}
	if in.VOp >= numVecOps {
		return fmt.Sprintf("unknown vector op %d", in.VOp)
	}
	if in.VOp == VCast {
		switch {
		case !castType(in.In) || !castType(in.Out):
			return fmt.Sprintf("cannot cast %s to %s", in.In, in.Out)
		case in.In == in.Out:
			return fmt.Sprintf("from and to are both %s", in.In)
		case in.Round >= numRoundings:
			return "bad rounding mode"
		}
	} else if !vectorType(in.In) {
		return fmt.Sprintf("vector arithmetic on fp32, fp16, bf16 or int32, not %s", in.In)
	}
	if in.Dst.Buf != UB {
		return fmt.Sprintf("dst must be in UB, not %s", in.Dst.Buf)
	}
	if in.VOp != VDup && in.Src.Buf != UB {
		return fmt.Sprintf("src0 must be in UB, not %s", in.Src.Buf)
	}
	if binaryVec(in.VOp) && in.Src1.Buf != UB {
		return fmt.Sprintf("src1 must be in UB, not %s", in.Src1.Buf)
	}
	switch {
	case in.Repeat < 1:
		return fmt.Sprintf("repeat %d must be >= 1", in.Repeat)
	case in.Mask < 0:
		return fmt.Sprintf("mask %d must be >= 0", in.Mask)
	case in.DstRepStr < 0 || in.SrcRepStr < 0:
		return fmt.Sprintf("strides %d, %d must be >= 0", in.DstRepStr, in.SrcRepStr)
	}
	return negAddr(in.Dst, in.Src, in.Src1)
}

func binaryVec(v VecOp) bool {
	return v == VAdd || v == VSub || v == VMul || v == VMax || v == VMin
}

// validName reports whether s is a legal region name: a letter or _, then
// letters, digits, '_', '.', '-'.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// access is one operand's byte range touched by an instruction.
type access struct {
	buf       Buffer
	addr, end int64 // [addr, end)
	what      string
}

// accesses returns the byte ranges an instruction reads or writes (at most
// three). Call only on validated instructions.
func accesses(in *Instr, repeatBytes int, out *[3]access) int {
	n := 0
	add := func(o Operand, span int64, what string) {
		out[n] = access{o.Buf, o.Addr, satAdd(o.Addr, span), what}
		n++
	}
	switch in.Op {
	case OpCopy:
		nb := int64(in.NBurst - 1)
		add(in.Src, satAdd(satMul(nb, in.SrcStride), in.BurstLen), "source")
		add(in.Dst, satAdd(satMul(nb, in.DstStride), in.BurstLen), "destination")
	case OpLoad:
		sz := int64(in.In.Bytes())
		rows, cols := int64(in.Rows), int64(in.Cols)
		if in.Transpose {
			rows, cols = cols, rows
		}
		add(in.Src, satAdd(satMul(rows-1, in.RowStride), satMul(cols, sz)), "L1 source")
		add(in.Dst, satMul(satMul(pad16(in.Rows), pad16(in.Cols)), sz), "fractal destination")
	case OpMmad:
		sz := int64(in.In.Bytes())
		add(in.Src, satMul(satMul(pad16(in.M), pad16(in.K)), sz), "A")
		add(in.Src1, satMul(satMul(pad16(in.K), pad16(in.N)), sz), "B")
		add(in.Dst, satMul(satMul(pad16(in.M), pad16(in.N)), int64(in.Out.Bytes())), "C")
	case OpL0CCopy:
		add(in.Src, satMul(satMul(pad16(in.Rows), pad16(in.Cols)), int64(in.In.Bytes())), "L0C source")
		add(in.Dst, satAdd(satMul(int64(in.Rows-1), in.RowStride), satMul(int64(in.Cols), int64(in.Out.Bytes()))), "destination")
	case OpVector:
		e := int64(in.VecElems(repeatBytes))
		ds, ss := in.vecStrides(repeatBytes)
		r := int64(in.Repeat - 1)
		add(in.Dst, satAdd(satMul(r, ds), e*int64(in.vecOut().Bytes())), "dst")
		if in.VOp != VDup {
			add(in.Src, satAdd(satMul(r, ss), e*int64(in.In.Bytes())), "src0")
		}
		if binaryVec(in.VOp) {
			add(in.Src1, satAdd(satMul(r, ss), e*int64(in.In.Bytes())), "src1")
		}
	}
	return n
}

// satAdd and satMul are x+y and x·y for non-negative operands, saturating
// at math.MaxInt64 instead of wrapping.
func satAdd(x, y int64) int64 {
	if y > 0 && x > math.MaxInt64-y {
		return math.MaxInt64
	}
	return x + y
}

func satMul(x, y int64) int64 {
	if x <= 0 || y <= 0 {
		return x * y
	}
	if x > math.MaxInt64/y {
		return math.MaxInt64
	}
	return x * y
}
