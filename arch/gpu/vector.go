package gpu

import (
	"github.com/davinci-sim/davinci-sim/arch/vecops"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// Element-wise instructions on the vector units (CUDA cores, VALUs): the
// FP32 arithmetic of a split, of an accumulation outside the matrix units
// or of an epilogue. They are timed (elements at the vector lanes' rate)
// and, in functional runs, computed with package vecops's semantics (the
// same as DaVinci's vector unit).

// Elementwise is the vector units' run of op over n elements of f in
// registers (dst = src0 op src1), contiguous from each address.
// WithWarpTiles sets the elements the threads compute when they are more
// (an edge tile's whole accumulator fragments).
func Elementwise(op isa.VecOp, dst, src0, src1 int64, n int, f fp.Format) isa.Instr {
	b := int64(f.Bytes())
	return isa.Instr{Op: isa.OpVector, Pipe: LaneVector, VOp: op, Dst: isa.Operand{Buf: BufRegs, Addr: dst},
		Src: isa.Operand{Buf: BufRegs, Addr: src0}, Src1: isa.Operand{Buf: BufRegs, Addr: src1},
		In: f, Out: f, Repeat: max(n, 1), Mask: 1, DstRepStr: b, SrcRepStr: b}
}

// Scale is the run dst = src · s over n FP32 elements in registers (s is
// rounded to FP32; a power of two scales exactly unless the result leaves
// the normal range).
func Scale(dst, src int64, n int, s float64) isa.Instr {
	in := Elementwise(isa.VMuls, dst, src, src, n, fp.FP32)
	in.Scalar = s
	return in
}

// Convert is the run of conversions of n elements in registers from
// format in (at src) to format out (at dst) with the given rounding and
// saturation (TF32 elements are FP32 patterns, 4 bytes).
func Convert(dst, src int64, n int, in, out fp.Format, round fp.Rounding, sat bool) isa.Instr {
	v := Elementwise(isa.VCast, dst, src, src, n, in)
	v.Out, v.Round, v.Saturate = out, round, sat
	v.DstRepStr = int64(out.Bytes())
	return v
}

// vector computes an OpVector on CTA t's buffers: Repeat repeats of
// VecElems elements, repeat r of each operand at its address plus r times
// its stride (0: a full repeat of its elements).
func (core *Core) vector(t *cta, in *isa.Instr) error {
	if err := vecops.Check(in); err != nil {
		return err
	}
	elems := in.VecElems(core.p.geom.VectorRepeatBytes)
	rep := max(in.Repeat, 1)
	ib, ob := int64(in.In.Bytes()), int64(vecops.OutFormat(in).Bytes())
	ds, ss := in.DstRepStr, in.SrcRepStr
	if ds == 0 {
		ds = int64(elems) * ob
	}
	if ss == 0 {
		ss = int64(elems) * ib
	}
	scalar := vecops.Scalar(in)
	n, runs := elems, rep
	if ds == int64(elems)*ob && ss == int64(elems)*ib {
		n, runs = elems*rep, 1 // contiguous: one run
	}
	for r := 0; r < runs; r++ {
		dst, err := core.local(t, in.Dst.Buf, in.Dst.Addr+int64(r)*ds, int64(n)*ob)
		if err != nil {
			return err
		}
		var s0, s1 []byte
		if in.VOp != isa.VDup {
			if s0, err = core.local(t, in.Src.Buf, in.Src.Addr+int64(r)*ss, int64(n)*ib); err != nil {
				return err
			}
		}
		if vecops.Binary(in.VOp) {
			if s1, err = core.local(t, in.Src1.Buf, in.Src1.Addr+int64(r)*ss, int64(n)*ib); err != nil {
				return err
			}
		}
		vecops.Apply(in, dst, s0, s1, n, scalar)
	}
	return nil
}
