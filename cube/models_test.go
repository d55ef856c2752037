package cube

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

func pats(t testing.TB, f fp.Format, xs ...float64) []uint32 {
	t.Helper()
	out := make([]uint32, len(xs))
	for i, x := range xs {
		out[i] = fp.FromFloat64(x, f, fp.Options{})
		if back := fp.ToFloat64(out[i], f); back != x && !(math.IsNaN(x) && math.IsNaN(back)) {
			t.Fatalf("%g not exact in %v", x, f)
		}
	}
	return out
}

func dot(t testing.TB, model string, f fp.Format, a, b []float64, c float64, out fp.Format) float64 {
	t.Helper()
	m, err := Preset(model)
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.Dot(f, pats(t, f, a...), pats(t, f, b...), math.Float32bits(float32(c)), out)
	if err != nil {
		t.Fatal(err)
	}
	return float64(math.Float32frombits(r))
}

func TestModelsDistinguish(t *testing.T) {
	p := math.Ldexp
	type tc struct {
		name  string
		model string
		f     fp.Format
		a, b  []float64
		c     float64
		want  float64
	}
	cases := []tc{
		// Exact sum (mi100) vs truncation (a100): 1 + 2^-24 + 2^-25 rounds up only when exact.
		{"mi100 exact", "mi100", fp.FP16, []float64{p(1, -24), p(1, -24), 0, 0}, []float64{0.5, 1, 0, 0}, 1, 1 + p(1, -23)},
		{"a100 truncates", "a100", fp.FP16, []float64{p(1, -24), p(1, -24), 0, 0}, []float64{0.5, 1, 0, 0}, 1, 1},
		// The exact block sum 2^9 + 2^-15 + 2^-48 lies just above the tie
		// between 2^9 and its next float: the 2^-48 that the sum's 53-bit
		// conversion shifts out must survive as a sticky bit (round to
		// odd), or the tie rounds to even. (A mutant that dropped it
		// passed every other test.)
		{"mi100 sticky", "mi100", fp.FP16, []float64{p(1, -8), p(1, -24), 0, 0}, []float64{p(1, -7), p(1, -24), 0, 0}, p(1, 9), p(1, 9) + p(1, -14)},
		{"ascend-910a sticky", "ascend-910a", fp.FP16, []float64{p(1, -8), p(1, -24), 0, 0}, []float64{p(1, -7), p(1, -24), 0, 0}, p(1, 9), p(1, 9) + p(1, -14)},
		{"ascend-910b3 sticky", "ascend-910b3", fp.FP16, []float64{p(1, -8), p(1, -24), 0, 0}, []float64{p(1, -7), p(1, -24), 0, 0}, p(1, 9), p(1, 9) + p(1, -14)},
		{"mi100 sticky negative", "mi100", fp.FP16, []float64{-p(1, -8), -p(1, -24), 0, 0}, []float64{p(1, -7), p(1, -24), 0, 0}, -p(1, 9), -p(1, 9) - p(1, -14)},
		// Far-apart exponents: the exact model needs the wide accumulator.
		{"mi100 wide", "mi100", fp.BF16, []float64{p(1, 60), 1}, []float64{p(1, 60), p(1, -100)}, -p(1, 120), p(1, -100)},
		{"a100 wide truncated", "a100", fp.BF16, []float64{p(1, 60), 1}, []float64{p(1, 60), p(1, -100)}, -p(1, 120), 0},
		{"ascend wide", "ascend-910a", fp.BF16, []float64{p(1, 60), 1}, []float64{p(1, 60), p(1, -100)}, -p(1, 120), p(1, -100)},
		// Pairwise (mi210): (1 + 2^-24) + (2^-24 + 0) = 1 with RNE ties; exact gives 1 + 2^-23.
		{"mi210 pairwise", "mi210", fp.FP16, []float64{1, p(1, -12), p(1, -12), 0}, []float64{1, p(1, -12), p(1, -12), 0}, 0, 1},
		{"mi100 same", "mi100", fp.FP16, []float64{1, p(1, -12), p(1, -12), 0}, []float64{1, p(1, -12), p(1, -12), 0}, 0, 1 + p(1, -23)},
		{"mi210 order", "mi210", fp.FP16, []float64{p(1, -12), p(1, -12), 1, 0}, []float64{p(1, -12), p(1, -12), 1, 0}, 0, 1 + p(1, -23)},
		// mi210 flushes a subnormal FP16 input; mi100 keeps it.
		{"mi210 ftz", "mi210", fp.FP16, []float64{p(1, -24), 0, 0, 0}, []float64{1024, 0, 0, 0}, 1, 1},
		{"mi100 subnormal", "mi100", fp.FP16, []float64{p(1, -24), 0, 0, 0}, []float64{1024, 0, 0, 0}, 0, p(1, -14)},
		// mi300: c rounded toward −∞ to 24 bits below 2^e_dot.
		{"mi300 late c negative", "mi300", fp.FP16, []float64{1}, []float64{1}, -p(1, -30), 1 - p(1, -24)},
		{"mi300 late c positive", "mi300", fp.FP16, []float64{1}, []float64{1}, p(1, -30), 1},
		{"mi100 tiny c", "mi100", fp.FP16, []float64{1}, []float64{1}, -p(1, -30), 1},
		// mi300 truncates products: 1 + 1.5·2^-24 → 1 + 2^-24 → RNE tie → 1.
		{"mi300 truncated products", "mi300", fp.FP16, []float64{1, 3 * p(1, -13)}, []float64{1, p(1, -12)}, 0, 1},
		{"mi100 exact products", "mi100", fp.FP16, []float64{1, 3 * p(1, -13)}, []float64{1, p(1, -12)}, 0, 1 + p(1, -23)},
		{"mi300 product overflow", "mi300", fp.BF16, []float64{p(1, 100)}, []float64{p(1, 30)}, 0, math.Inf(1)},
		{"mi300 negative overflow", "mi300", fp.BF16, []float64{-p(1, 100)}, []float64{p(1, 30)}, 1, math.Inf(-1)},
		// Sequential FP32: each product rounded into the accumulator.
		{"fp32-rne", "fp32-rne", fp.FP16, []float64{3 * p(1, -13)}, []float64{p(1, -12)}, 1, 1 + p(1, -23)},
		{"fp32-rz", "fp32-rz", fp.FP16, []float64{3 * p(1, -13)}, []float64{p(1, -12)}, 1, 1},
		{"fp32-rne order", "fp32-rne", fp.FP16, []float64{p(1, -12), p(1, -12), 1}, []float64{p(1, -12), p(1, -12), 1}, 0, 1 + p(1, -23)},
		{"fp32-rne order 2", "fp32-rne", fp.FP16, []float64{1, p(1, -12), p(1, -12)}, []float64{1, p(1, -12), p(1, -12)}, 0, 1},
		{"fp32-rz negative", "fp32-rz", fp.FP16, []float64{-3 * p(1, -13)}, []float64{p(1, -12)}, -1, -1},
		{"fp32-rne fp32 inputs", "fp32-rne", fp.FP32, []float64{1 + p(1, -23)}, []float64{1 + p(1, -23)}, 0, 1 + p(1, -22)},
		// Overflow gives Inf even under RZ (NVIDIA).
		{"a100 overflow RZ", "a100", fp.BF16, []float64{p(1, 127), p(1, 127)}, []float64{1, 1}, 0, math.Inf(1)},
		{"fp32-rz overflow", "fp32-rz", fp.BF16, []float64{p(1, 127), p(1, 127)}, []float64{1, 1}, 0, math.Inf(1)},
		// Blocks chain: with L = 16, 16 products of 2^-24 are absorbed together; sequential loses them.
		{"ascend block", "ascend-910a", fp.FP16, rep(p(1, -12), 16), rep(p(1, -12), 16), 1, 1 + 16*p(1, -24)},
		{"fp32-rne loses", "fp32-rne", fp.FP16, rep(p(1, -12), 16), rep(p(1, -12), 16), 1, 1},
	}
	for _, c := range cases {
		if got := dot(t, c.model, c.f, c.a, c.b, c.c, fp.FP32); got != c.want {
			t.Errorf("%s: got %g (%08x), want %g (%08x)", c.name, got, math.Float32bits(float32(got)), c.want, math.Float32bits(float32(c.want)))
		}
	}
}

func rep(x float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x
	}
	return out
}

func TestSpecials(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, model := range PresetNames() {
		m, _ := Preset(model)
		f := fp.FP16
		if _, ok := m.Formats[f]; !ok {
			f = fp.E4M3
		}
		if f == fp.E4M3 {
			continue
		}
		check := func(name string, a, b []float64, c float64, want uint32) {
			t.Helper()
			got, err := m.Dot(f, pats(t, f, a...), pats(t, f, b...), math.Float32bits(float32(c)), fp.FP32)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s %s: got %08x want %08x", model, name, got, want)
			}
		}
		check("nan input", []float64{nan, 1}, []float64{1, 1}, 0, NaNBits)
		check("inf*0", []float64{inf, 1}, []float64{0, 1}, 0, NaNBits)
		check("inf-inf", []float64{inf, -inf}, []float64{1, 1}, 0, NaNBits)
		check("inf", []float64{inf, 1}, []float64{2, 1}, 5, 0x7f800000)
		check("-inf", []float64{inf, 1}, []float64{-2, 1}, 5, 0xff800000)
		check("c nan", []float64{1}, []float64{1}, nan, NaNBits)
		check("c inf", []float64{1}, []float64{1}, -inf, 0xff800000)
		check("c inf vs product inf", []float64{inf}, []float64{1}, -inf, NaNBits)
		check("zeros", []float64{0, -0.0}, []float64{1, 1}, 0, 0)
		check("negative zeros", []float64{math.Copysign(0, -1)}, []float64{1}, math.Copysign(0, -1), 0x80000000)
		check("cancel", []float64{1, -1}, []float64{1, 1}, 0, 0)
		if _, ok := m.Formats[fp.BF16]; ok {
			want := uint32(0x200) // 2^-140, an FP32 subnormal
			if m.FlushSubnormals {
				want = 0
			}
			got, _ := m.Dot(fp.BF16, pats(t, fp.BF16, p2(-70)), pats(t, fp.BF16, p2(-70)), 0, fp.FP32)
			if got != want {
				t.Errorf("%s subnormal out: got %08x want %08x", model, got, want)
			}
		}
	}
}

func p2(e int) float64 { return math.Ldexp(1, e) }

func TestFP16Output(t *testing.T) {
	// c is first rounded to FP16 RNE: 1 + 2^-11 (a tie) → 1; then 1·1 + 1 = 2.
	if got := dot(t, "a100", fp.FP16, []float64{1}, []float64{1}, 1+p2(-11), fp.FP16); got != 2 {
		t.Errorf("fp16 out: got %g want 2", got)
	}
	// RNE to FP16: 1 + 3·2^-12 → 1 + 2^-10.
	if got := dot(t, "a100", fp.FP16, []float64{1, 3 * p2(-12)}, []float64{1, 1}, 0, fp.FP16); got != 1+p2(-10) {
		t.Errorf("fp16 rne: got %g", got)
	}
	// FP16 overflow → Inf.
	if got := dot(t, "a100", fp.FP16, []float64{256}, []float64{256}, 0, fp.FP16); !math.IsInf(got, 1) {
		t.Errorf("fp16 overflow: got %g", got)
	}
}

func TestPresetErrors(t *testing.T) {
	if _, err := Preset("nope"); err == nil || !strings.Contains(err.Error(), "a100") {
		t.Errorf("Preset(nope) = %v", err)
	}
	names := PresetNames()
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatal("PresetNames not sorted")
		}
	}
	for _, n := range names {
		m, err := Preset(n)
		if err != nil || m.Name != n || m.Doc == "" {
			t.Errorf("preset %s: %v %q", n, err, m.Doc)
		}
	}
	m, _ := Preset("v100")
	if _, err := m.Dot(fp.BF16, []uint32{0}, []uint32{0}, 0, fp.FP32); err == nil {
		t.Error("v100 bf16: no error")
	}
	if _, err := m.Dot(fp.FP16, []uint32{0}, []uint32{0}, 0, fp.BF16); err == nil {
		t.Error("bf16 output: no error")
	}
	if _, err := m.Dot(fp.FP16, []uint32{0, 1}, []uint32{0}, 0, fp.FP32); err == nil {
		t.Error("length mismatch: no error")
	}
	bad := m
	bad.Formats = map[fp.Format]FormatParams{fp.FP16: {L: 0}}
	if _, err := bad.Dot(fp.FP16, []uint32{0}, []uint32{0}, 0, fp.FP32); err == nil {
		t.Error("L=0: no error")
	}
	// Preset returns a copy.
	m.Formats[fp.FP16] = FormatParams{L: 99}
	if m2, _ := Preset("v100"); m2.Formats[fp.FP16].L != 4 {
		t.Error("Preset shares its Formats map")
	}
}

// TestRoundMatchesFP checks the local rounding against package fp.
func TestRoundMatchesFP(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type tgt struct {
		f  fp.Format
		os outSpec
	}
	for _, r := range []fp.Rounding{fp.RNE, fp.RZ, fp.RNA, fp.RU, fp.RD} {
		for _, g := range []tgt{
			{fp.FP32, outSpec{p: 24, emin: -126, emax: 127, mode: r}},
			{fp.FP16, outSpec{p: 11, emin: -14, emax: 15, mode: r}},
		} {
			for i := 0; i < 20000; i++ {
				e := rng.IntN(g.os.emax-g.os.emin+30) + g.os.emin - 28
				x := math.Ldexp(1+rng.Float64(), e)
				if rng.IntN(2) == 0 {
					x = -x
				}
				want := fp.ToFloat64(fp.FromFloat64(x, g.f, fp.Options{Round: r}), g.f)
				if math.Abs(x) > g.f.MaxFinite() {
					continue // overflow policy differs on purpose (Inf in every mode)
				}
				if got := g.os.round(x); got != want {
					t.Fatalf("%v %v round(%g) = %g, fp gives %g", g.f, r, x, got, want)
				}
			}
		}
	}
}

// TestRoundFP32FastPaths checks round's FP32 shortcuts (RNE and RZ, with
// and without flushing to zero) against the general path, roundAny, on
// values that probe them: both sides of the normal range's bottom, the
// subnormals, the overflow threshold, and exact ties at 24 bits.
func TestRoundFP32FastPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, mode := range []fp.Rounding{fp.RNE, fp.RZ} {
		for _, ftz := range []bool{false, true} {
			os := outSpec{p: 24, emin: -126, emax: 127, mode: mode, ftz: ftz}
			check := func(x float64) {
				t.Helper()
				got, want := os.round(x), os.roundAny(x)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%v ftz=%v: round(%g = %#x) = %g, roundAny gives %g", mode, ftz, x, math.Float64bits(x), got, want)
				}
			}
			for _, x := range []float64{0x1p-126, 0x1p-127, 0x1p-149, 0x1p-150, 0x1.fffffep-127, 0x1.ffffffp-127,
				0x1.fffffe8p-127, 0x1.fffffep127, 0x1.ffffffp127, 0x1.fffffefp127, 0x1p128, math.MaxFloat64, 5e-324} {
				check(x)
				check(-x)
			}
			for i := 0; i < 200000; i++ {
				var x float64
				switch i % 3 {
				case 0: // anywhere near FP32's range
					x = math.Ldexp(1+rng.Float64(), rng.IntN(300)-160)
				case 1: // an exact tie or a neighbour of one at 24 bits
					e := rng.IntN(290) - 155
					m := float64(rng.Uint64N(1<<24)) + 0.5
					x = math.Ldexp(m, e-23)
					if j := rng.IntN(3); j > 0 {
						x = math.Nextafter(x, math.Inf(2*j-3))
					}
				default: // the bottom of the normal range
					x = math.Ldexp(1+rng.Float64(), -126-rng.IntN(2))
				}
				if rng.IntN(2) == 0 {
					x = -x
				}
				check(x)
			}
		}
	}
}

// TestExactSums checks intToF64, sumRO and the wide accumulator against
// big.Float on random terms.
func TestExactSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	os := outSpec{p: 24, emin: -126, emax: 127, mode: fp.RNE}
	for i := 0; i < 20000; i++ {
		var w wide
		exact := new(big.Float).SetPrec(4000)
		n := 1 + rng.IntN(6)
		for j := 0; j < n; j++ {
			mag := rng.Uint64() >> (1 + rng.IntN(50))
			lsb := rng.IntN(300) - 298
			if i%2 == 0 {
				lsb = rng.IntN(20) - 10
			}
			neg := rng.IntN(2) == 0
			w.add(mag, lsb, neg)
			v := new(big.Float).SetPrec(4000).SetMantExp(new(big.Float).SetUint64(mag), lsb)
			if neg {
				v.Neg(v)
			}
			exact.Add(exact, v)
		}
		want, _ := exact.Float32()
		if got := os.round(w.float()); got != float64(want) {
			t.Fatalf("case %d: wide gives %g, exact %g (%s)", i, got, want, exact.Text('g', 40))
		}
		// sumRO of two float64s.
		x := math.Ldexp(rng.Float64(), rng.IntN(200)-100)
		y := -math.Ldexp(rng.Float64(), rng.IntN(200)-100)
		ex := new(big.Float).SetPrec(4000).SetFloat64(x)
		ex.Add(ex, new(big.Float).SetFloat64(y))
		want, _ = ex.Float32()
		if got := os.round(sumRO(x, y)); got != float64(want) {
			t.Fatalf("sumRO(%g, %g): %g want %g", x, y, got, want)
		}
		// intToF64 of a 63-bit integer.
		S := int64(rng.Uint64() >> 1)
		if i%3 == 0 {
			S = -S
		}
		u := rng.IntN(100) - 50
		ex = new(big.Float).SetPrec(4000).SetMantExp(new(big.Float).SetInt64(S), u)
		want, _ = ex.Float32()
		if got := os.round(intToF64(S, u)); got != float64(want) {
			t.Fatalf("intToF64(%d, %d): %g want %g", S, u, got, want)
		}
	}
}

// Pairwise's float32 tree for FP16 and FP8 inputs (kernel.pw32) gives the
// general path's results bit for bit: random blocks with subnormal, zero,
// signed-zero, extreme and cancelling inputs, with and without flushing,
// for every block length up to 64.
func TestPairwiseFloat32Tree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, ftz := range []bool{true, false} {
		for _, in := range []fp.Format{fp.FP16, fp.E4M3, fp.E5M2} {
			m := Model{Name: "pw", Kind: Pairwise, RoundFP32: fp.RNE, RoundFP16: fp.RNE, FlushSubnormals: ftz,
				Formats: map[fp.Format]FormatParams{in: {L: 64}}}
			k, err := m.kernel(in, fp.FP32)
			if err != nil {
				t.Fatal(err)
			}
			if !k.pw32 {
				t.Fatalf("%v: the float32 tree is not used", in)
			}
			gen := *k
			gen.pw32 = false
			bits := in.Bits()
			for trial := 0; trial < 20000; trial++ {
				n := 1 + rng.IntN(64)
				pa, pb := make([]dec, n), make([]dec, n)
				for i := range pa {
					for _, d := range []*dec{&pa[i], &pb[i]} {
						var v uint32
						switch rng.IntN(6) {
						case 0: // zero of either sign
							v = uint32(rng.IntN(2)) << (bits - 1)
						case 1: // subnormal
							v = uint32(rng.IntN(2))<<(bits-1) | uint32(1+rng.IntN(1<<k.frac-1))
						default:
							v = uint32(rng.Uint64N(1 << bits))
						}
						*d = k.info.decode(v)
					}
					if d := pa[i]; d.cls != 0 || pb[i].cls != 0 { // Inf and NaN are special results, not trees
						pa[i], pb[i] = k.info.decode(0), k.info.decode(0)
					}
					if i > 0 && rng.IntN(4) == 0 { // cancel the product before
						pa[i], pb[i] = pa[i-1], pb[i-1]
						pa[i].neg = !pa[i].neg
						if pa[i].sig != 0 {
							pa[i].sig = -pa[i].sig
						}
					}
				}
				c := math.Ldexp(rng.Float64()-0.5, rng.IntN(40)-20)
				if rng.IntN(4) == 0 {
					c = 0
				}
				got, want := k.pairwise(pa, pb, c, false), gen.pairwise(pa, pb, c, false)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%v ftz=%v n=%d: float32 tree %g, general %g", in, ftz, n, got, want)
				}
			}
		}
	}
}
