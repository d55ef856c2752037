package vecops

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// f32bytes returns v as little-endian FP32 bytes.
func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// interesting returns FP32 test values: specials, boundaries of FP16,
// BF16 and TF32 ranges, halfway cases, and random patterns.
func interesting(n int) []float32 {
	v := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		65504, 65519.99, 65520, -65520, 6.1035156e-05, 5.9604645e-08, 2.9802322e-08, 2.9802326e-08,
		math.MaxFloat32, math.SmallestNonzeroFloat32, 1.17549435e-38, 1 + 1.0/2048, 1 + 1.0/1024 + 1.0/2048, 1 + 3.0/2048}
	r := rand.New(rand.NewPCG(1, 2))
	for len(v) < n {
		x := math.Float32frombits(r.Uint32())
		if r.IntN(2) == 0 {
			x = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(40)-20))
		}
		v = append(v, x)
	}
	return v
}

// TestFP32Arithmetic checks add, sub, mul, muls and adds on FP32 against
// Go's float32 arithmetic (IEEE RNE), bit for bit (NaNs as NaNs).
func TestFP32Arithmetic(t *testing.T) {
	a, b := interesting(4096), interesting(4096)
	b[0], b[1] = b[len(b)-1], b[len(b)-2]
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	const s = 0.000244140625 // 2^-12
	for _, c := range []struct {
		op isa.VecOp
		f  func(x, y float32) float32
	}{
		{isa.VAdd, func(x, y float32) float32 { return x + y }},
		{isa.VSub, func(x, y float32) float32 { return x - y }},
		{isa.VMul, func(x, y float32) float32 { return x * y }},
		{isa.VMuls, func(x, _ float32) float32 { return x * s }},
		{isa.VAdds, func(x, _ float32) float32 { return x + s }},
	} {
		in := isa.Instr{Op: isa.OpVector, VOp: c.op, In: fp.FP32, Out: fp.FP32, Scalar: s}
		dst := make([]byte, 4*len(a))
		Apply(&in, dst, f32bytes(a), f32bytes(b), len(a), Scalar(&in))
		for i := range a {
			want := c.f(a[i], b[i])
			got := math.Float32frombits(binary.LittleEndian.Uint32(dst[4*i:]))
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("%s(%g, %g) = %g (%#08x), want %g (%#08x)", c.op, a[i], b[i], got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
}

// TestCastExhaustive16 converts every FP16 and every BF16 pattern to FP32
// and back with every rounding, against the direct conversions of package
// fp: the round trip must give the pattern back (NaNs stay NaNs).
func TestCastExhaustive16(t *testing.T) {
	for _, f := range []fp.Format{fp.FP16, fp.BF16} {
		src := make([]byte, 2<<16)
		for i := 0; i < 1<<16; i++ {
			binary.LittleEndian.PutUint16(src[2*i:], uint16(i))
		}
		wide := make([]byte, 4<<16)
		up := isa.Instr{VOp: isa.VCast, In: f, Out: fp.FP32, Round: fp.RNE}
		Apply(&up, wide, src, nil, 1<<16, 0)
		for i := 0; i < 1<<16; i++ {
			want := fp.ToFloat32(uint32(i), f)
			got := math.Float32frombits(binary.LittleEndian.Uint32(wide[4*i:]))
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("%s %#04x → fp32 = %g, want %g", f, i, got, want)
			}
		}
		for _, rd := range fp.Roundings() {
			back := make([]byte, 2<<16)
			down := isa.Instr{VOp: isa.VCast, In: fp.FP32, Out: f, Round: rd}
			Apply(&down, back, wide, nil, 1<<16, 0)
			for i := 0; i < 1<<16; i++ {
				got := binary.LittleEndian.Uint16(back[2*i:])
				if math.IsNaN(fp.ToFloat64(uint32(i), f)) {
					if !math.IsNaN(fp.ToFloat64(uint32(got), f)) {
						t.Fatalf("%s NaN %#04x → %#04x (%s)", f, i, got, rd)
					}
					continue
				}
				if got != uint16(i) {
					t.Fatalf("%s %#04x → fp32 → %s (%s) = %#04x", f, i, f, rd, got)
				}
			}
		}
	}
}

// TestCastDown converts FP32 values to FP16, BF16 and TF32 with every
// rounding (and saturation) against fp.FromFloat32, the direct model.
func TestCastDown(t *testing.T) {
	v := interesting(1 << 14)
	src := f32bytes(v)
	for _, f := range []fp.Format{fp.FP16, fp.BF16, fp.TF32} {
		for _, rd := range fp.Roundings() {
			for _, sat := range []bool{false, true} {
				in := isa.Instr{VOp: isa.VCast, In: fp.FP32, Out: f, Round: rd, Saturate: sat}
				dst := make([]byte, f.Bytes()*len(v))
				Apply(&in, dst, src, nil, len(v), 0)
				for i, x := range v {
					want := fp.FromFloat32(x, f, fp.Options{Round: rd, Saturate: sat})
					var got uint32
					if f.Bytes() == 4 {
						got = binary.LittleEndian.Uint32(dst[4*i:])
					} else {
						got = uint32(binary.LittleEndian.Uint16(dst[2*i:]))
					}
					if got != want {
						t.Fatalf("%g → %s (%s, sat %v) = %#x, want %#x", x, f, rd, sat, got, want)
					}
				}
			}
		}
	}
}

// TestTF32Load reads TF32 elements as the FP32 patterns they are stored as.
func TestTF32Load(t *testing.T) {
	b := f32bytes([]float32{1.5, -3})
	if Load(b, 0, fp.TF32) != 1.5 || Load(b, 1, fp.TF32) != -3 {
		t.Fatalf("TF32 loads %g %g", Load(b, 0, fp.TF32), Load(b, 1, fp.TF32))
	}
}

// The FP32 fast path (applyFP32) gives the element path's bits exactly,
// NaN payloads included (signalling and quiet NaNs of either sign among
// the operands), for every operation it takes.
func TestFP32FastPathBits(t *testing.T) {
	a, b := interesting(4096), interesting(4096)
	nans := []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fa5a5a5, 0xffbfffff, 0x7fffffff}
	for i, p := range nans {
		a[40+i] = math.Float32frombits(p)
		b[400+i] = math.Float32frombits(p)
		a[800+i], b[800+i] = math.Float32frombits(p), math.Float32frombits(nans[(i+3)%len(nans)])
	}
	r := rand.New(rand.NewPCG(5, 6))
	r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	s0, s1 := f32bytes(a), f32bytes(b)
	for _, op := range []isa.VecOp{isa.VAdd, isa.VSub, isa.VMul, isa.VMuls, isa.VAdds} {
		for _, scalar := range []float64{0.000244140625, math.Inf(-1), math.NaN(), 3.5e38} {
			in := isa.Instr{Op: isa.OpVector, VOp: op, In: fp.FP32, Out: fp.FP32, Scalar: scalar}
			fast, slow := make([]byte, len(s0)), make([]byte, len(s0))
			if !applyFP32(&in, fast, s0, s1, len(a), Scalar(&in)) {
				t.Fatalf("%s: not taken by the fast path", op)
			}
			for i := range a {
				elemOp(&in).at(slow, s0, s1, i, Scalar(&in))
			}
			for i := range a {
				if g, w := binary.LittleEndian.Uint32(fast[4*i:]), binary.LittleEndian.Uint32(slow[4*i:]); g != w {
					t.Fatalf("%s(%#08x, %#08x) scalar %g: fast %#08x, element path %#08x", op, math.Float32bits(a[i]), math.Float32bits(b[i]), scalar, g, w)
				}
			}
		}
	}
}
