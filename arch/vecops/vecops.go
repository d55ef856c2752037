// Package vecops computes the element-wise vector operations of package isa
// (isa.VecOp) on byte buffers, bit-accurately: the semantics shared by every
// core that computes OpVector (DaVinci's vector unit, a GPU's CUDA cores or
// VALUs). Arithmetic follows the element type: FP32 operations round once
// (Go float32 arithmetic is IEEE RNE); FP16 operations are computed exactly
// enough in FP32 and rounded to FP16 RNE, which equals native FP16
// arithmetic for +, −, × because FP32 has more than 2·11+2 significand bits
// (no double-rounding error). Casts convert with the instruction's rounding
// and saturation (package fp).
package vecops

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// Load returns element i of type f in b (TF32 as its 32-bit FP32 pattern).
func Load(b []byte, i int, f fp.Format) float64 {
	switch f {
	case fp.FP32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case fp.FP16:
		return float64(fp.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
	case fp.BF16:
		return float64(fp.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
	case fp.INT32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case fp.INT8:
		return float64(int8(b[i]))
	case fp.TF32:
		return fp.ToFloat64(binary.LittleEndian.Uint32(b[4*i:]), f)
	}
	return fp.ToFloat64(uint32(b[i]), f)
}

// Store writes x (already representable in f, or rounded with o) as
// element i of type f into b.
func Store(b []byte, i int, f fp.Format, x float64, o fp.Options) {
	v := fp.FromFloat64(x, f, o)
	switch f.Bytes() {
	case 4:
		binary.LittleEndian.PutUint32(b[4*i:], v)
	case 2:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	default:
		b[i] = byte(v)
	}
}

// Binary reports whether op reads a second source (Src1).
func Binary(op isa.VecOp) bool {
	switch op {
	case isa.VAdd, isa.VSub, isa.VMul, isa.VMax, isa.VMin:
		return true
	}
	return false
}

// Check returns an error when the vector operation in is not computed:
// arithmetic is modeled on FP16 and FP32, INT32 addition (the partial sums
// of INT8 GEMMs), casts between any formats.
func Check(in *isa.Instr) error {
	if in.In == fp.INT32 && in.VOp == isa.VAdd {
		return nil
	}
	if in.VOp != isa.VCast && in.In != fp.FP32 && in.In != fp.FP16 {
		return fmt.Errorf("vector %s: arithmetic on %s is not modeled (fp16, fp32; int32 add)", in.VOp, in.In)
	}
	return nil
}

// OutFormat is the element type in writes: Out for a cast, else In.
func OutFormat(in *isa.Instr) fp.Format {
	if in.VOp == isa.VCast {
		return in.Out
	}
	return in.In
}

// Scalar is in's scalar operand as the element type holds it: rounded to
// FP32, or to FP16 RNE for FP16 operations.
func Scalar(in *isa.Instr) float64 {
	if in.In == fp.FP16 {
		return fp.ToFloat64(fp.FromFloat64(in.Scalar, fp.FP16, fp.Options{Round: fp.RNE}), fp.FP16)
	}
	return float64(float32(in.Scalar))
}

// Apply computes n elements of in's operation: dst[i] = op(s0[i], s1[i])
// (s0 unused by VDup, s1 only by binary operations), scalar being
// Scalar(in). Operands hold elements of in.In (dst: of OutFormat(in)).
func Apply(in *isa.Instr, dst, s0, s1 []byte, n int, scalar float64) {
	if in.In == fp.INT32 && in.VOp == isa.VAdd {
		// INT32 addition wraps (two's complement), as the vector unit's.
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(dst[4*i:], binary.LittleEndian.Uint32(s0[4*i:])+binary.LittleEndian.Uint32(s1[4*i:]))
		}
		return
	}
	if in.In == fp.FP32 && applyFP32(in, dst, s0, s1, n, scalar) {
		return
	}
	e := elemOp(in)
	for i := 0; i < n; i++ {
		e.at(dst, s0, s1, i, scalar)
	}
}

// elementOp is an instruction's operation element by element (Apply's
// general path), with what it needs of in worked out once.
type elementOp struct {
	in   *isa.Instr
	out  fp.Format  // OutFormat(in)
	cast fp.Options // a cast's rounding and saturation
}

func elemOp(in *isa.Instr) elementOp {
	return elementOp{in, OutFormat(in), fp.Options{Round: in.Round, Saturate: in.Saturate}}
}

// applyFP32 is Apply of FP32 additions, subtractions and multiplications
// (the hot ones: an emulated GEMM's outside accumulations and epilogues),
// on the bit patterns in float32 arithmetic, and reports whether it took
// in. It gives the element path's bits: a float32 result stored through float64 is
// the same pattern (the conversions are exact), but for NaNs, whose
// payloads the two ways could quiet differently — those elements are
// the element path's (elementOp).
func applyFP32(in *isa.Instr, dst, s0, s1 []byte, n int, scalar float64) bool {
	op := in.VOp
	switch op {
	case isa.VAdd, isa.VSub, isa.VMul, isa.VMuls, isa.VAdds:
	default:
		return false
	}
	sc := float32(scalar)
	dst, s0 = dst[:4*n], s0[:4*n]
	if Binary(op) {
		s1 = s1[:4*n]
	}
	for i := 0; i < n; i++ {
		a := math.Float32frombits(binary.LittleEndian.Uint32(s0[4*i:]))
		var x float32
		switch op {
		case isa.VAdd:
			x = a + math.Float32frombits(binary.LittleEndian.Uint32(s1[4*i:]))
		case isa.VSub:
			x = a - math.Float32frombits(binary.LittleEndian.Uint32(s1[4*i:]))
		case isa.VMul:
			x = a * math.Float32frombits(binary.LittleEndian.Uint32(s1[4*i:]))
		case isa.VMuls:
			x = a * sc
		case isa.VAdds:
			x = a + sc
		}
		if x != x {
			elemOp(in).at(dst, s0, s1, i, scalar)
			continue
		}
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
	}
	return true
}

// at computes element i of the operation (Apply).
func (e elementOp) at(dst, s0, s1 []byte, i int, scalar float64) {
	in := e.in
	var x float64
	var a, b float64
	if s0 != nil {
		a = Load(s0, i, in.In)
	}
	if s1 != nil {
		b = Load(s1, i, in.In)
	}
	switch in.VOp {
	case isa.VAdd:
		x = float64(float32(a) + float32(b))
	case isa.VSub:
		x = float64(float32(a) - float32(b))
	case isa.VMul:
		x = float64(float32(a) * float32(b))
	case isa.VMuls:
		x = float64(float32(a) * float32(scalar))
	case isa.VAdds:
		x = float64(float32(a) + float32(scalar))
	case isa.VMax:
		x = math.Max(a, b)
	case isa.VMin:
		x = math.Min(a, b)
	case isa.VAbs:
		x = math.Abs(a)
	case isa.VDup:
		x = scalar
	case isa.VCast:
		Store(dst, i, e.out, a, e.cast)
		return
	}
	Store(dst, i, e.out, x, fp.Options{Round: fp.RNE})
}
