package gpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/dma"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// int8OldPath is the INT8 MMA as the core computed it before mmadInt8:
// shared-memory operands gathered into fractal tiles (dma.LoadFractal),
// then cube's fractal MMADInt8 — here with a plain wrapping reference sum
// in place of MMADInt8, so that it does not share the code under test (a
// pair operand's halves gathered by pairOperand, as before).
func int8OldPath(t *testing.T, core *Core, c *cta, in *isa.Instr) []byte {
	t.Helper()
	frac := func(op isa.Operand, rows, cols int, stride int64) []byte {
		n := dma.FractalBytes(rows, cols, fp.INT8)
		if op.Buf != BufShared {
			return bytes.Clone(c.mem[op.Buf][op.Addr : op.Addr+n])
		}
		var src []byte
		if op.Addr&pairBit != 0 {
			var err error
			if src, err = core.pairOperand(c, op.Addr, rows, cols, stride, fp.INT8); err != nil {
				t.Fatal(err)
			}
			stride = int64(cols)
		} else {
			src = c.mem[BufShared][op.Addr:]
		}
		dst := make([]byte, n)
		if err := dma.LoadFractal(dst, src, rows, cols, stride, fp.INT8, false); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	a := frac(in.Src, in.M, in.K, in.SrcStride)
	b := frac(in.Src1, in.K, in.N, in.RowStride)
	cc := bytes.Clone(c.mem[in.Dst.Buf][in.Dst.Addr : in.Dst.Addr+dma.FractalBytes(in.M, in.N, fp.INT32)])
	pk := cube.LayoutLen(1, in.K, cube.Fractal, 8) / 16
	pn := cube.LayoutLen(1, in.N, cube.Fractal, 8) / 16
	pc := (in.N + 15) / 16 * 16
	for i := 0; i < in.M; i++ {
		for j := 0; j < in.N; j++ {
			var v int32
			for x := 0; x < in.K; x++ {
				v += int32(int8(a[cube.FractalIndex(i, x, pk, 8)])) * int32(int8(b[cube.FractalIndex(x, j, pn, 8)]))
			}
			ci := cube.FractalIndex(i, j, pc, 32) * 4
			if !in.Init {
				v += int32(binary.LittleEndian.Uint32(cc[ci:]))
			}
			binary.LittleEndian.PutUint32(cc[ci:], uint32(v))
		}
	}
	return cc
}

// TestMMAInt8Operands: the INT8 MMA gives the old path's C bit for bit with
// A and B each from registers (fractal) or shared memory (row-major, read
// where it lies), over random shapes, strides and contents, init and
// accumulate, into registers or tensor memory, B also split between the
// two CTAs of a pair (cta_group::2) — one core, its scratch reused from
// call to call.
func TestMMAInt8Operands(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	core := &Core{p: &Params{}}
	var c, peer cta
	for _, b := range []isa.Buffer{BufShared, BufRegs, BufAcc} {
		c.mem[b] = make([]byte, 1<<17)
	}
	peer.mem[BufShared] = make([]byte, 1<<17)
	c.cl = &clusterState{ctas: []*cta{&c, &peer}}
	for it := 0; it < 400; it++ {
		m, k, n := 1+r.IntN(40), r.IntN(300), 1+r.IntN(40)
		if it%50 == 0 {
			m, k, n = 17, 128, 3 // B200's Ozaki GEMM on thin matrices
		}
		for _, buf := range append(c.mem[:], peer.mem[BufShared]) {
			for i := range buf {
				buf[i] = byte(r.Uint32())
			}
		}
		aStride, bStride := int64(k+r.IntN(9)), int64(n+r.IntN(9))
		in := MMAShared(int64(r.IntN(4096)), int64(r.IntN(4096)), aStride, 40000+int64(r.IntN(4096)), bStride, m, k, n, fp.INT8, fp.INT32, r.IntN(2) == 0)
		if r.IntN(3) == 0 {
			in.Src.Buf = BufRegs // A fragments in registers (mma.sync, wgmma RS)
		}
		if r.IntN(3) == 0 {
			in.Src1.Buf = BufRegs
		}
		if r.IntN(2) == 0 {
			in.Dst.Buf = BufAcc
		}
		if in.Src1.Buf == BufShared && r.IntN(3) == 0 {
			in.Src1.Addr = PairOperand(in.Src1.Addr, r.IntN(n+1))
		}
		in.Dst.Addr = 80000 + int64(r.IntN(4096))
		want := int8OldPath(t, core, &c, &in)
		if err := core.mmad(&c, &in); err != nil {
			t.Fatal(err)
		}
		got := c.mem[in.Dst.Buf][in.Dst.Addr:][:len(want)]
		if !bytes.Equal(got, want) {
			t.Fatalf("%d×%d×%d A in %d B in %d C in %d init=%v: C differs from the old path's", m, k, n, in.Src.Buf, in.Src1.Buf, in.Dst.Buf, in.Init)
		}
	}
}

// BenchmarkMMAInt8Shared times the INT8 MMA with A and B in shared memory
// at the shape of B200's Ozaki GEMM on thin matrices (17×128×3) and a
// square tile: the core's path against gathering both operands
// into fractal tiles first (as before it), then cube.MMADInt8.
func BenchmarkMMAInt8Shared(b *testing.B) {
	for _, sh := range [][3]int{{17, 128, 3}, {128, 64, 128}} {
		m, k, n := sh[0], sh[1], sh[2]
		core := &Core{p: &Params{}}
		var c cta
		c.mem[BufShared] = make([]byte, 1<<16)
		c.mem[BufAcc] = make([]byte, 1<<17)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range c.mem[BufShared] {
			c.mem[BufShared][i] = byte(r.Uint32())
		}
		in := MMAShared(0, 0, int64(k), 32768, int64(n), m, k, n, fp.INT8, fp.INT32, false)
		in.Dst.Buf = BufAcc
		name := fmt.Sprintf("%dx%dx%d", m, k, n)
		b.Run(name+"/via-fractal", func(b *testing.B) {
			var sa, sb []byte
			for b.Loop() {
				a, _ := core.operand(&c, in.Src, m, k, in.SrcStride, fp.INT8, &sa)
				bb, _ := core.operand(&c, in.Src1, k, n, in.RowStride, fp.INT8, &sb)
				cube.MMADInt8(m, k, n, a, bb, c.mem[BufAcc], false)
			}
		})
		b.Run(name+"/new", func(b *testing.B) {
			for b.Loop() {
				if err := core.mmad(&c, &in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
