package davinci

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/arch/vecops"
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

// vector executes an OpVector on UB, with the element semantics of package
// vecops (shared with the GPU cores).
func (c *Core) vector(in *isa.Instr) error {
	repeatBytes := c.geom.VectorRepeatBytes
	if in.In.Bytes() == 0 || repeatBytes%in.In.Bytes() != 0 {
		return fmt.Errorf("vector %s: unsupported type %s", in.VOp, in.In)
	}
	if err := vecops.Check(in); err != nil {
		return err
	}
	elems, dstStride, srcStride := vecGeometry(in, repeatBytes)
	ib, ob := int64(in.In.Bytes()), int64(vecops.OutFormat(in).Bytes())
	scalar := vecops.Scalar(in)
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
		if vecops.Binary(in.VOp) {
			if s1, err = c.local(isa.UB, in.Src1.Addr+int64(r)*srcStride, int64(elems)*ib); err != nil {
				return err
			}
		}
		vecops.Apply(in, dst, s0, s1, elems, scalar)
	}
	return nil
}
