package gpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/dma"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// fp64MMAOld is the FP64 MMA as the core computed it before mmadFP64 (the
// golden): C (m×n FP64, fractal) = A (m×k, fractal) · B (k×n, fractal) +
// (init ? 0 : C), every output a chain of math.FMA in increasing k,
// every operand element located by cube.FractalIndex and decoded per use.
func fp64MMAOld(m, k, n int, a, b, c []byte, init bool) {
	_, bk := cube.FractalBlock(64)
	pk := (k + bk - 1) / bk * bk
	pn := (n + bk - 1) / bk * bk
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			ci := cube.FractalIndex(i, j, pn, 64) * 8
			var acc float64
			if !init {
				acc = math.Float64frombits(binary.LittleEndian.Uint64(c[ci:]))
			}
			for x := 0; x < k; x++ {
				av := math.Float64frombits(binary.LittleEndian.Uint64(a[cube.FractalIndex(i, x, pk, 64)*8:]))
				bv := math.Float64frombits(binary.LittleEndian.Uint64(b[cube.FractalIndex(x, j, pn, 64)*8:]))
				acc = math.FMA(av, bv, acc)
			}
			binary.LittleEndian.PutUint64(c[ci:], math.Float64bits(acc))
		}
	}
}

// fp64Word returns a random FP64 bit pattern for a test mode: 0–2,
// mostly finite values of assorted exponents (so that chains cancel,
// overflow and go subnormal), with 7 in every 40 (400, none) a signed
// zero, a subnormal, an infinity, a NaN (quiet or signalling, random
// payload) or an extreme exponent; 3, values near 2^-530 (whose products
// are subnormal) and subnormals; 4, mostly signed zeros.
func fp64Word(r *rand.Rand, mode int) uint64 {
	sign := uint64(r.IntN(2)) << 63
	frac := r.Uint64() & (1<<52 - 1)
	switch mode {
	case 3:
		if r.IntN(8) == 0 {
			return sign | frac
		}
		return sign | uint64(1023-540+r.IntN(20))<<52 | frac
	case 4:
		if r.IntN(8) != 0 {
			return sign
		}
		return sign | uint64(1023-8+r.IntN(17))<<52 | frac
	}
	switch r.IntN([]int{40, 400, 1 << 30}[mode]) {
	case 0:
		return sign // ±0
	case 1:
		return sign | frac | 1 // subnormal
	case 2:
		return sign | 0x7ff<<52 // ±Inf
	case 3:
		return sign | 0x7ff<<52 | frac | 1 // NaN, quiet or signalling
	case 4:
		return sign | uint64(1+r.IntN(2046))<<52 | frac // any exponent
	case 5:
		return sign | uint64(1+r.IntN(60))<<52 | frac // tiny: products underflow
	case 6:
		return sign | uint64(2046-r.IntN(60))<<52 | frac // huge: products overflow
	}
	return sign | uint64(1023-8+r.IntN(17))<<52 | frac
}

// TestMMAFP64Golden: the FP64 MMA gives the old path's C (fp64MMAOld on
// fractal tiles; shared-memory operands gathered by LoadFractal first, as
// before) bit for bit — NaN payloads included — over random shapes (k and
// n not multiples of the 16×16 block, k = 0, one row or column), strides,
// contents with special values, init and accumulate, A and B each in
// registers (fractal) or shared memory (row-major, read where it lies, B
// also as a pair operand), C in registers or tensor memory — one core,
// the pooled scratch reused from call to call.
func TestMMAFP64Golden(t *testing.T) {
	r := rand.New(rand.NewPCG(64, 65))
	core := &Core{p: &Params{}}
	var c, peer cta
	for _, b := range []isa.Buffer{BufShared, BufRegs, BufAcc} {
		c.mem[b] = make([]byte, 1<<18)
	}
	peer.mem[BufShared] = make([]byte, 1<<18)
	c.cl = &clusterState{ctas: []*cta{&c, &peer}}
	shapes := [][3]int{{32, 16, 32}, {32, 2, 32}, {12, 16, 4}, {1, 1, 1}, {1, 0, 5}, {17, 33, 19}, {64, 32, 64}}
	for it := 0; it < 600; it++ {
		var m, k, n int
		if it < len(shapes) {
			m, k, n = shapes[it][0], shapes[it][1], shapes[it][2]
		} else {
			m, k, n = 1+r.IntN(40), r.IntN(70), 1+r.IntN(40)
		}
		if it%8 == 0 { // (C then holds earlier results and random words)
			mode := it / 8 % 5
			for _, buf := range append(c.mem[:], peer.mem[BufShared]) {
				for i := 0; i+8 <= len(buf); i += 8 {
					binary.LittleEndian.PutUint64(buf[i:], fp64Word(r, mode))
				}
			}
		}
		aStride, bStride := int64(8*(k+r.IntN(5))), int64(8*(n+r.IntN(5)))
		in := MMAShared(int64(8*r.IntN(4096)), int64(8*r.IntN(2048)), aStride, 40000+int64(8*r.IntN(4096)), bStride, m, k, n, fp.FP64, fp.FP64, r.IntN(2) == 0)
		if r.IntN(3) == 0 {
			in.Src.Buf = BufRegs // A fragments in registers (DMMA)
		}
		if r.IntN(3) == 0 {
			in.Src1.Buf = BufRegs
		}
		if it < len(shapes) {
			in.Src.Buf, in.Src1.Buf = BufRegs, BufRegs
		}
		if r.IntN(2) == 0 {
			in.Dst.Buf = BufAcc
		}
		if in.Src1.Buf == BufShared && r.IntN(3) == 0 {
			in.Src1.Addr = PairOperand(in.Src1.Addr, r.IntN(n+1))
		}
		in.Dst.Addr = 180000 + int64(8*r.IntN(4096))

		var sa, sb []byte
		a, err := core.operand(&c, in.Src, m, k, in.SrcStride, fp.FP64, &sa)
		if err != nil {
			t.Fatal(err)
		}
		b, err := core.operand(&c, in.Src1, k, n, in.RowStride, fp.FP64, &sb)
		if err != nil {
			t.Fatal(err)
		}
		dst := c.mem[in.Dst.Buf][in.Dst.Addr:][:dma.FractalBytes(m, n, fp.FP64)]
		want := bytes.Clone(dst)
		fp64MMAOld(m, k, n, a, b, want, in.Init)
		if err := core.mmad(&c, &in); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, want) {
			for x := 0; x < len(dst); x += 8 {
				if g, w := binary.LittleEndian.Uint64(dst[x:]), binary.LittleEndian.Uint64(want[x:]); g != w {
					t.Fatalf("%d×%d×%d A in %d B in %d C in %d init=%v: C word %d is %#016x, the old path's %#016x",
						m, k, n, in.Src.Buf, in.Src1.Buf, in.Dst.Buf, in.Init, x/8, g, w)
				}
			}
		}
	}
}

// BenchmarkMMAFP64 times the FP64 MMA on register fragments at the shapes
// of the DGEMM example's warp tiles (32×16×32 on NVIDIA, 64×32×64 on AMD):
// the old path (fp64MMAOld) against the core's.
func BenchmarkMMAFP64(b *testing.B) {
	for _, sh := range [][3]int{{32, 16, 32}, {64, 32, 64}} {
		m, k, n := sh[0], sh[1], sh[2]
		core := &Core{p: &Params{}}
		var c cta
		c.mem[BufRegs] = make([]byte, 1<<17)
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i+8 <= len(c.mem[BufRegs]); i += 8 {
			binary.LittleEndian.PutUint64(c.mem[BufRegs][i:], math.Float64bits(r.Float64()-0.5))
		}
		in := MMA(65536, 0, 32768, m, k, n, fp.FP64, fp.FP64, false)
		regs := c.mem[BufRegs]
		name := fmt.Sprintf("%dx%dx%d", m, k, n)
		b.Run(name+"/old", func(b *testing.B) {
			for b.Loop() {
				fp64MMAOld(m, k, n, regs[0:], regs[32768:], regs[65536:], false)
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
