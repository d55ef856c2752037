package traces

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// TestPackRoundTrip: every opcode's packed copy formats and counts bytes
// and flops exactly as the instruction itself.
func TestPackRoundTrip(t *testing.T) {
	vmask := isa.VecBinary(isa.VMul, 256, 512, 1024, fp.FP32, 7)
	vmask.Mask, vmask.DstRepStr, vmask.SrcRepStr = 13, 512, 768
	tr := isa.Load(isa.L0B, 64, 1<<19, 16, 32, 64, fp.FP16, true)
	big := isa.Copy2D(isa.MTE2, isa.Operand{Buf: isa.L1, Addr: 96}, isa.Operand{Buf: isa.GM, Addr: 1 << 40}, 33, 4096, 1<<20, -8192)
	ins := []isa.Instr{
		isa.Nop(), isa.SyncAll(), isa.Alloc(isa.UB, 128, 4096, "tile a"), isa.Alloc(isa.L1, 0, 64, ""),
		isa.Free("tile a"), isa.Free("other \"name\""), isa.FreeAt(isa.L1, 64), isa.Scalar(1234),
		isa.SetFlag(isa.MTE2, isa.M, 3), isa.WaitFlag(isa.M, isa.V, 7), isa.Barrier(isa.MTE3),
		isa.CopyGM2L1(1<<33, 4096, 8192), isa.CopyUB2GM(0, 77, 12), big, tr,
		isa.Load(isa.L0A, 0, 0, 32, 16, 32, fp.FP16, false),
		isa.Mmad(1024, 2048, 4096, 16, 32, 48, fp.FP16, fp.FP32, true), isa.Mmad(0, 0, 0, 1, 1, 1, fp.FP16, fp.FP16, false),
		isa.L0CCopy(isa.FIXP, isa.Operand{Buf: isa.GM, Addr: 5 << 30}, 256, 16, 16, 64, fp.FP32, fp.FP16, fp.RNE, true),
		isa.L0CCopy(isa.V, isa.Operand{Buf: isa.UB, Addr: 64}, 0, 16, 16, 32, fp.FP32, fp.FP32, fp.RNE, false),
		vmask, isa.VecScalar(isa.VMuls, 0, 256, -1.0/3, fp.FP32, 2), isa.VecScalar(isa.VAdds, 0, 256, 1e300, fp.FP16, 255),
		isa.VecAbs(32, 64, fp.FP32, 1), isa.VecDup(0, 2.5, fp.FP16, 3),
		isa.VecCast(0, 4096, fp.FP32, fp.FP16, fp.RNE, true, 4), isa.VecCast(0, 4096, fp.FP16, fp.FP32, fp.RNE, false, 4),
	}
	var arena []byte
	var offs []int
	for i := range ins {
		c := pack(&ins[i])
		offs = append(offs, len(arena))
		arena = appendPacked(arena, &c)
		if n := len(arena) - offs[i]; n > maxPacked {
			t.Errorf("%s: %d packed bytes > maxPacked", isa.Format(ins[i]), n)
		}
	}
	for i := range ins {
		c, ok := unpacked(arena[offs[i]:])
		if !ok {
			t.Fatalf("%s: cannot unpack", isa.Format(ins[i]))
		}
		got := c.unpack()
		if a, b := isa.Format(got), isa.Format(ins[i]); a != b {
			t.Errorf("packed %q, want %q", a, b)
		}
		gb, gf := got.Amount(0)
		wb, wf := ins[i].Amount(0)
		if gb != wb || gf != wf {
			t.Errorf("%s: bytes/flops %v %v, want %v %v", isa.Format(ins[i]), gb, gf, wb, wf)
		}
		if isa.Mnemonic(got) != isa.Mnemonic(ins[i]) || classOfOp(c.op) != ClassOf(&ins[i]) {
			t.Errorf("%s: mnemonic or class differs", isa.Format(ins[i]))
		}
	}
	for _, bad := range [][]byte{nil, {1, 2}, {byte(isa.OpCopy), 0, 0, 1}, {byte(isa.OpCopy), 0, 0, 0xff, 0x80}} {
		if _, ok := unpacked(bad); ok {
			t.Errorf("unpacked(%v): want failure", bad)
		}
	}
}

// A group (arch.Group) packed with its first instruction comes back with
// it, through the varint encoding, for the instructions that start in
// groups (element-wise runs too, beside every field of the instruction);
// others keep no group.
func TestPackGroup(t *testing.T) {
	cp := isa.CopyGM2L1(64, 128, 4096)
	mm := isa.Mmad(0, 0, 0, 16, 8, 16, 1, 0, true)
	vec := isa.Instr{Op: isa.OpVector, VOp: isa.VAdd, In: fp.FP16, Out: fp.FP16, Repeat: 3, Mask: 128, DstRepStr: 8, SrcRepStr: 8}
	sc := isa.Instr{Op: isa.OpScalar, Cycles: 7}
	for _, tc := range []struct {
		in   isa.Instr
		g    *arch.Group
		want arch.Group
	}{
		{cp, &arch.Group{N: 3, Bytes: 12288}, arch.Group{N: 3, Bytes: 12288}},
		{mm, &arch.Group{N: 8, Flops: 8 * 4096}, arch.Group{N: 8, Flops: 8 * 4096}},
		{cp, nil, arch.Group{}},
		{vec, &arch.Group{N: 2, Bytes: 1536, Flops: 768}, arch.Group{N: 2, Bytes: 1536, Flops: 768}},
		{vec, nil, arch.Group{}},
		{sc, &arch.Group{N: 2}, arch.Group{}},
	} {
		var c cinstr
		c.pack(&tc.in)
		c.setGroup(tc.g)
		got, ok := unpacked(appendPacked(nil, &c))
		if !ok {
			t.Fatalf("%v: does not decode", tc.in.Op)
		}
		if g := got.group(); g != tc.want {
			t.Errorf("%v with %v: group %+v, want %+v", tc.in.Op, tc.g, g, tc.want)
		}
		if in := got.unpack(); in.Op != tc.in.Op || in.Repeat != tc.in.Repeat || in.NBurst != tc.in.NBurst || in.M != tc.in.M ||
			in.Mask != tc.in.Mask || in.DstRepStr != tc.in.DstRepStr || in.SrcRepStr != tc.in.SrcRepStr || in.Cycles != tc.in.Cycles {
			t.Errorf("%v: the instruction came back as %+v", tc.in.Op, in)
		}
	}
}
