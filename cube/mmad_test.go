package cube

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// randPats returns n random finite patterns of format f with values near 1
// (with some zeros and subnormals mixed in).
func randPats(rng *rand.Rand, f fp.Format, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		x := rng.NormFloat64()
		switch rng.IntN(20) {
		case 0:
			x = 0
		case 1:
			x = math.Ldexp(x, -20) // subnormal in FP16
		}
		out[i] = fp.FromFloat64(x, f, fp.Options{})
	}
	return out
}

func TestFractalIndex(t *testing.T) {
	// 20×40 matrix, 16-bit: blocks of 16×16, grid 2×3.
	if got := FractalIndex(0, 0, 40, 16); got != 0 {
		t.Error(got)
	}
	if got := FractalIndex(1, 2, 40, 16); got != 18 {
		t.Errorf("(1,2) = %d want 18", got)
	}
	if got := FractalIndex(0, 16, 40, 16); got != 256 {
		t.Errorf("(0,16) = %d want 256", got)
	}
	if got := FractalIndex(17, 33, 40, 16); got != (3+2)*256+16+1 {
		t.Errorf("(17,33) = %d", got)
	}
	// 8-bit: blocks of 16×32.
	if got := FractalIndex(1, 33, 40, 8); got != 512+32+1 {
		t.Errorf("8-bit (1,33) = %d", got)
	}
	if got := LayoutLen(20, 40, Fractal, 16); got != 32*48 {
		t.Errorf("LayoutLen = %d", got)
	}
	// Every index of a padded fractal buffer is hit exactly once.
	seen := make([]bool, LayoutLen(32, 64, Fractal, 8))
	for r := 0; r < 32; r++ {
		for c := 0; c < 64; c++ {
			i := FractalIndex(r, c, 64, 8)
			if seen[i] {
				t.Fatalf("index %d twice", i)
			}
			seen[i] = true
		}
	}
}

// toLayout stores a row-major rows×cols matrix in layout l.
func toLayout(src []uint32, rows, cols int, l Layout, bits int) []uint32 {
	out := make([]uint32, LayoutLen(rows, cols, l, bits))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			out[layoutIndex(l, r, c, cols, bits)] = src[r*cols+c]
		}
	}
	return out
}

// TestMMADMatchesDot checks MMAD element by element against Dot for several
// models, formats, layouts and shapes (including non-multiples of 16), and
// the FP16 entry MMADF16.
func TestMMADMatchesDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shapes := [][3]int{{1, 1, 1}, {16, 16, 16}, {5, 37, 9}, {17, 33, 18}, {32, 8, 3}, {3, 0, 2}}
	type mf struct {
		model   string
		in, out fp.Format
	}
	for _, c := range []mf{
		{"fp32-rne", fp.FP16, fp.FP32}, {"a100", fp.FP16, fp.FP32}, {"ascend-910a", fp.FP16, fp.FP32},
		{"mi100", fp.BF16, fp.FP32}, {"mi210", fp.FP16, fp.FP32}, {"mi300", fp.BF16, fp.FP32},
		{"h100", fp.TF32, fp.FP32}, {"ada", fp.E4M3, fp.FP32}, {"b200", fp.E5M2, fp.FP16}, {"h100", fp.E4M3, fp.FP16}, {"a100", fp.FP16, fp.FP16},
		{"fp32-rz", fp.FP32, fp.FP32}, {"ascend-910b3", fp.FP32, fp.FP32},
	} {
		m, err := Preset(c.model)
		if err != nil {
			t.Fatal(err)
		}
		bits := c.in.Bits()
		if c.in == fp.TF32 || c.in == fp.FP32 {
			bits = 32
		}
		for _, sh := range shapes {
			mm, k, n := sh[0], sh[1], sh[2]
			a := randPats(rng, c.in, mm*k)
			b := randPats(rng, c.in, k*n)
			c0 := randPats(rng, fp.FP32, mm*n)
			// Reference: a loop of Dot calls.
			want := make([]uint32, mm*n)
			for i := 0; i < mm; i++ {
				for j := 0; j < n; j++ {
					col := make([]uint32, k)
					for kk := range col {
						col[kk] = b[kk*n+j]
					}
					d, err := m.Dot(c.in, a[i*k:(i+1)*k], col, c0[i*n+j], c.out)
					if err != nil {
						t.Fatal(err)
					}
					want[i*n+j] = d
				}
			}
			for _, la := range []Layout{RowMajor, Fractal} {
				for _, lc := range []Layout{RowMajor, Fractal} {
					lb := Fractal - la
					ab := toLayout(a, mm, k, la, bits)
					bb := toLayout(b, k, n, lb, bits)
					cb := toLayout(c0, mm, n, lc, 32)
					if err := m.MMAD(c.in, c.out, mm, k, n, ab, la, bb, lb, cb, lc, false); err != nil {
						t.Fatal(err)
					}
					for i := 0; i < mm; i++ {
						for j := 0; j < n; j++ {
							if got := cb[layoutIndex(lc, i, j, n, 32)]; got != want[i*n+j] {
								t.Fatalf("%s %v→%v %v %dx%dx%d A %v C %v (%d,%d): got %08x want %08x",
									c.model, c.in, c.out, sh, mm, k, n, la, lc, i, j, got, want[i*n+j])
							}
						}
					}
					if c.in == fp.FP16 && c.out == fp.FP32 {
						a16, b16 := make([]uint16, len(ab)), make([]uint16, len(bb))
						for i := range ab {
							a16[i] = uint16(ab[i])
						}
						for i := range bb {
							b16[i] = uint16(bb[i])
						}
						cf := make([]float32, LayoutLen(mm, n, lc, 32))
						for i := 0; i < mm*n; i++ {
							cf[layoutIndex(lc, i/n, i%n, n, 32)] = math.Float32frombits(c0[i])
						}
						if err := m.MMADF16(mm, k, n, a16, la, b16, lb, cf, lc, false); err != nil {
							t.Fatal(err)
						}
						for i := 0; i < mm*n; i++ {
							if got := math.Float32bits(cf[layoutIndex(lc, i/n, i%n, n, 32)]); got != want[i] {
								t.Fatalf("MMADF16 %s %v: element %d got %08x want %08x", c.model, sh, i, got, want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestMMADChaining: successive calls with k a multiple of L equal one long k.
func TestMMADChaining(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, model := range []string{"a100", "ascend-910a", "fp32-rz", "mi300", "h100"} {
		m, _ := Preset(model)
		mm, k, n := 7, 64, 5
		a := randPats(rng, fp.FP16, mm*k)
		b := randPats(rng, fp.FP16, k*n)
		if model == "mi300" || model == "h100" {
			a = randPats(rng, fp.BF16, mm*k)
			b = randPats(rng, fp.BF16, k*n)
		}
		in := fp.FP16
		if model == "mi300" || model == "h100" {
			in = fp.BF16
		}
		one := make([]uint32, mm*n)
		if err := m.MMAD(in, fp.FP32, mm, k, n, a, RowMajor, b, RowMajor, one, RowMajor, true); err != nil {
			t.Fatal(err)
		}
		two := make([]uint32, mm*n)
		half := k / 2
		a1, a2 := make([]uint32, mm*half), make([]uint32, mm*half)
		for i := 0; i < mm; i++ {
			copy(a1[i*half:], a[i*k:i*k+half])
			copy(a2[i*half:], a[i*k+half:(i+1)*k])
		}
		if err := m.MMAD(in, fp.FP32, mm, half, n, a1, RowMajor, b[:half*n], RowMajor, two, RowMajor, true); err != nil {
			t.Fatal(err)
		}
		if err := m.MMAD(in, fp.FP32, mm, half, n, a2, RowMajor, b[half*n:], RowMajor, two, RowMajor, false); err != nil {
			t.Fatal(err)
		}
		for i := range one {
			if one[i] != two[i] {
				t.Fatalf("%s: element %d: one call %08x, two calls %08x", model, i, one[i], two[i])
			}
		}
	}
}

func TestMMADErrors(t *testing.T) {
	m, _ := Preset("a100")
	a := make([]uint16, 16*16)
	c := make([]float32, 16*16)
	if err := m.MMADF16(16, 16, 16, a, RowMajor, a, RowMajor, c, RowMajor, true); err != nil {
		t.Fatal(err)
	}
	if err := m.MMADF16(17, 16, 16, a, RowMajor, a, RowMajor, c, RowMajor, true); err == nil {
		t.Error("short A: no error")
	}
	if err := m.MMADF16(15, 16, 16, a, Fractal, a, Fractal, c[:15*16], Fractal, true); err == nil {
		t.Error("short fractal C: no error")
	}
	if err := m.MMADF16(-1, 16, 16, a, RowMajor, a, RowMajor, c, RowMajor, true); err == nil {
		t.Error("negative shape: no error")
	}
	if err := m.MMADF16(1, 1, 1, a, Layout(7), a, RowMajor, c, RowMajor, true); err == nil {
		t.Error("bad layout: no error")
	}
	v, _ := Preset("v100")
	if err := v.MMADBF16(1, 1, 1, a, RowMajor, a, RowMajor, c, RowMajor, true); err == nil {
		t.Error("v100 bf16: no error")
	}
}

func benchMMAD(b *testing.B, model string) {
	m, err := Preset(model)
	if err != nil {
		b.Fatal(err)
	}
	const s = 128
	rng := rand.New(rand.NewPCG(9, 10))
	a, bb := make([]uint16, s*s), make([]uint16, s*s)
	for i := range a {
		a[i] = fp.F32ToF16(float32(rng.NormFloat64()), fp.RNE)
		bb[i] = fp.F32ToF16(float32(rng.NormFloat64()), fp.RNE)
	}
	c := make([]float32, s*s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.MMADF16(s, s, s, a, Fractal, bb, Fractal, c, Fractal, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s*s*s)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MMAC/s")
}

// BenchmarkMMADF16 measures the tile kernel on 128×128×128 (MAC/s).
func BenchmarkMMADF16(b *testing.B) {
	for _, model := range []string{"fp32-rne", "a100", "ascend-910a"} {
		b.Run(model, func(b *testing.B) { benchMMAD(b, model) })
	}
}
