package gpu

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// TestVectorComputes runs the split and accumulation instructions the
// emulated GEMMs emit on a CTA's registers and checks them bit for bit
// against direct Go float32 arithmetic and package fp's conversions.
func TestVectorComputes(t *testing.T) {
	core := &Core{p: &Params{geom: &machines.Geometry{VectorRepeatBytes: 256}}}
	var c cta
	c.mem[BufRegs] = make([]byte, 1<<16)
	rf := c.mem[BufRegs]
	const n = 1000
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*1.7)) * float32(math.Ldexp(1, i%30-15))
		binary.LittleEndian.PutUint32(rf[4*i:], math.Float32bits(x[i]))
	}
	get := func(addr int64, i int) float32 {
		return math.Float32frombits(binary.LittleEndian.Uint32(rf[addr+4*int64(i):]))
	}
	run := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// hi = fp16(x) (RNE), back to FP32, r = x − hi, lo = fp16(r·2^11).
	const hi, back, res, sc, lo = 4 * n, 6 * n, 10 * n, 14 * n, 18 * n
	run(core.vector(&c, ptr(Convert(hi, 0, n, fp.FP32, fp.FP16, fp.RNE, false))))
	run(core.vector(&c, ptr(Convert(back, hi, n, fp.FP16, fp.FP32, fp.RNE, false))))
	run(core.vector(&c, ptr(Elementwise(vsub, res, 0, back, n, fp.FP32))))
	run(core.vector(&c, ptr(Scale(sc, res, n, 2048))))
	run(core.vector(&c, ptr(Convert(lo, sc, n, fp.FP32, fp.FP16, fp.RNE, false))))
	for i, v := range x {
		h := fp.F32ToF16(v, fp.RNE)
		if got := binary.LittleEndian.Uint16(rf[hi+2*i:]); got != h {
			t.Fatalf("hi[%d] = %#04x, want %#04x", i, got, h)
		}
		r := v - fp.F16ToF32(h)
		if got := get(res, i); math.Float32bits(got) != math.Float32bits(r) {
			t.Fatalf("residual[%d] = %g, want %g", i, got, r)
		}
		l := fp.F32ToF16(r*2048, fp.RNE)
		if got := binary.LittleEndian.Uint16(rf[lo+2*i:]); got != l {
			t.Fatalf("lo[%d] = %#04x, want %#04x", i, got, l)
		}
	}
	// Strided repeats: every other element, in place.
	in := Elementwise(vadd, 0, 0, 0, n/2, fp.FP32)
	in.DstRepStr, in.SrcRepStr = 8, 8
	run(core.vector(&c, &in))
	for i, v := range x {
		want := v
		if i%2 == 0 {
			want = v + v
		}
		if got := get(0, i); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("strided add [%d] = %g, want %g", i, got, want)
		}
	}
	// Out of the registers: an error, not a panic.
	if err := core.vector(&c, ptr(Elementwise(vadd, 1<<16-4, 0, 0, 2, fp.FP32))); err == nil {
		t.Fatal("an add past the registers ran")
	}
}

// An element-wise run over an edge tile's whole warp tiles
// (WithWarpTiles) computes only the elements it names, and the work a
// step stands for (addWork: fast-forward's step skips) counts the repeats
// its execution counts — the tiles' elements where more than its own.
func TestVectorWarpTilesWork(t *testing.T) {
	pr := &Params{geom: &machines.Geometry{VectorRepeatBytes: 256}}
	core := &Core{p: pr}
	var c cta
	c.mem[BufRegs] = make([]byte, 1<<16)
	rf := c.mem[BufRegs]
	for i := range rf {
		rf[i] = 0x3c // 0x3c3c3c3c: 0.0115 as FP32
	}
	in := WithWarpTiles(Scale(0, 0, 4, 2), 64, 128)
	if err := core.vector(&c, &in); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 64; i++ {
		want := uint32(0x3c3c3c3c)
		if i < 4 {
			want = math.Float32bits(2 * math.Float32frombits(want))
		}
		if got := binary.LittleEndian.Uint32(rf[4*i:]); got != want {
			t.Fatalf("element %d = %#08x after a run of 4 over 64×128 tiles, want %#08x", i, got, want)
		}
	}
	for _, c := range []struct {
		in   isa.Instr
		reps int64
	}{
		{Elementwise(vadd, 0, 0, 0, 256, fp.FP32), 256},
		{WithWarpTiles(Elementwise(vadd, 0, 0, 0, 256, fp.FP32), 64, 128), 64 * 128},
		{WithWarpTiles(Elementwise(vadd, 0, 0, 0, 256, fp.FP32), 8, 16), 256},
		{WithWarpTiles(Convert(0, 0, 100, fp.FP32, fp.FP16, fp.RNE, false), 16, 16), 256},
	} {
		var w arch.CTAWork
		resetWork(&w, 0)
		pr.addWork(&w, &c.in, LaneVector)
		_, reps := vectorWork(&c.in, 256)
		if w.VectorRepeats != c.reps || reps != c.reps {
			t.Errorf("%d elements over %d×%d: addWork counts %d repeats, execution %d; want %d", c.in.Repeat, c.in.Rows, c.in.Cols, w.VectorRepeats, reps, c.reps)
		}
	}
}

const (
	vadd = isa.VAdd
	vsub = isa.VSub
)

func ptr[T any](v T) *T { return &v }
