package davinci

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// vecGeometry returns elements per repeat and the per-repeat byte strides of
// the destination and sources, one full repeat covering repeatBytes bytes of
// every operand (core.vector.bytes_per_repeat).
func vecGeometry(in *isa.Instr, repeatBytes int) (elems int, dstStride, srcStride int64) {
	full := repeatBytes / in.In.Bytes()
	elems = full
	if in.Mask > 0 && in.Mask < full {
		elems = in.Mask
	}
	outBytes := in.In.Bytes()
	if in.VOp == isa.VCast {
		outBytes = in.Out.Bytes()
	}
	dstStride, srcStride = in.DstRepStr, in.SrcRepStr
	if dstStride == 0 {
		dstStride = int64(full * outBytes)
	}
	if srcStride == 0 {
		srcStride = int64(repeatBytes)
	}
	return
}

// load reads element i of type f from b.
func loadElem(b []byte, i int, f fp.Format) float64 {
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
	}
	return fp.ToFloat64(uint32(b[i]), f)
}

// storeElem writes x (already representable in f, or rounded with o) as
// element i of type f into b.
func storeElem(b []byte, i int, f fp.Format, x float64, o fp.Options) {
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

// vector executes an OpVector on UB. Arithmetic follows the element type:
// FP32 operations round once (Go float32 arithmetic is IEEE RNE); FP16
// operations are computed exactly enough in FP32 and rounded to FP16 RNE,
// which equals native FP16 arithmetic for +, −, × because FP32 has more than
// 2·11+2 significand bits (no double-rounding error).
func (c *Core) vector(in *isa.Instr) error {
	repeatBytes := c.geom.VectorRepeatBytes
	if in.In.Bytes() == 0 || repeatBytes%in.In.Bytes() != 0 {
		return fmt.Errorf("vector %s: unsupported type %s", in.VOp, in.In)
	}
	if in.VOp != isa.VCast && in.In != fp.FP32 && in.In != fp.FP16 {
		return fmt.Errorf("vector %s: arithmetic on %s is not modeled (fp16, fp32)", in.VOp, in.In)
	}
	elems, dstStride, srcStride := vecGeometry(in, repeatBytes)
	outF := in.In
	if in.VOp == isa.VCast {
		outF = in.Out
	}
	ib, ob := int64(in.In.Bytes()), int64(outF.Bytes())
	rne := fp.Options{Round: fp.RNE}
	castOpt := fp.Options{Round: in.Round, Saturate: in.Saturate}
	scalar := float64(float32(in.Scalar))
	if in.In == fp.FP16 {
		scalar = fp.ToFloat64(fp.FromFloat64(in.Scalar, fp.FP16, rne), fp.FP16)
	}
	rep := in.Repeat
	if rep < 1 {
		rep = 1
	}
	for r := 0; r < rep; r++ {
		dst, err := c.local(isa.UB, in.Dst.Addr+int64(r)*dstStride, int64(elems)*ob)
		if err != nil {
			return err
		}
		var s0, s1 []byte
		if in.VOp != isa.VDup {
			if s0, err = c.local(isa.UB, in.Src.Addr+int64(r)*srcStride, int64(elems)*ib); err != nil {
				return err
			}
		}
		switch in.VOp {
		case isa.VAdd, isa.VSub, isa.VMul, isa.VMax, isa.VMin:
			if s1, err = c.local(isa.UB, in.Src1.Addr+int64(r)*srcStride, int64(elems)*ib); err != nil {
				return err
			}
		}
		for i := 0; i < elems; i++ {
			var x float64
			var a, b float64
			if s0 != nil {
				a = loadElem(s0, i, in.In)
			}
			if s1 != nil {
				b = loadElem(s1, i, in.In)
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
				storeElem(dst, i, outF, a, castOpt)
				continue
			}
			storeElem(dst, i, outF, x, rne)
		}
	}
	return nil
}
