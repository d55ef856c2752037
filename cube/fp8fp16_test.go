package cube

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// TestFP8FP16Blocks checks the FP8 → FP16-output datapath of h100 and b200
// on hand vectors: two blocks of 16 products, the first holding k =
// 0,1,4,5,…, each rounded to FP16 (RNE), then c.
func TestFP8FP16Blocks(t *testing.T) {
	h := p2(-11) // half an FP16 ulp at 1: 2^-6 · 2^-5
	at := func(ks ...int) (a, b []float64) {
		a, b = make([]float64, 32), make([]float64, 32)
		a[0], b[0] = 1, 1
		for _, k := range ks {
			a[k], b[k] = p2(-6), p2(-5)
		}
		return a, b
	}
	cases := []struct {
		name   string
		ks     []int
		c      float64
		want16 float64
	}{
		// k = 1 in the first block, k = 2 in the second: 1 + 2^-11 ties to
		// 1 in the first block, the second adds 2^-11 to 1 again.
		{"split pair", []int{1, 2}, 0, 1},
		// k = 1 and 4 share the first block: 1 + 2^-10 exactly (an even/odd
		// split would give 1).
		{"same block", []int{1, 4}, 0, 1 + p2(-10)},
		// k = 3 and 6 share the second block: 1 + (2^-11 + 2^-11).
		{"second block", []int{3, 6}, 0, 1 + p2(-10)},
		// c is added last: the product sum 1 (as in "split pair") plus c = 2^-10.
		{"c last", []int{1, 2}, p2(-10), 1 + p2(-10)},
	}
	for _, model := range []string{"h100", "b200"} {
		for _, f := range []fp.Format{fp.E4M3, fp.E5M2} {
			for _, c := range cases {
				a, b := at(c.ks...)
				if got := dot(t, model, f, a, b, c.c, fp.FP16); got != c.want16 {
					t.Errorf("%s %v %s: fp16 got %g want %g", model, f, c.name, got, c.want16)
				}
			}
			// FP32 output keeps the single 32-product block: exact here.
			if model == "b200" {
				a, b := at(1, 2)
				if got := dot(t, model, f, a, b, 0, fp.FP32); got != 1+2*h {
					t.Errorf("%s %v: fp32 got %g want %g", model, f, got, 1+2*h)
				}
			}
		}
	}
}

// TestFP8FP16Chaining: two MMAD calls of k = 32 (one window each) equal one
// call of k = 64 for the windowed FP16-output datapath.
func TestFP8FP16Chaining(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, model := range []string{"h100", "b200"} {
		m, _ := Preset(model)
		mm, k, n := 5, 64, 4
		a := randPats(rng, fp.E4M3, mm*k)
		b := randPats(rng, fp.E4M3, k*n)
		c0 := randPats(rng, fp.FP32, mm*n)
		one := append([]uint32(nil), c0...)
		if err := m.MMAD(fp.E4M3, fp.FP16, mm, k, n, a, RowMajor, b, RowMajor, one, RowMajor, false); err != nil {
			t.Fatal(err)
		}
		two := append([]uint32(nil), c0...)
		half := k / 2
		a1, a2 := make([]uint32, mm*half), make([]uint32, mm*half)
		for i := 0; i < mm; i++ {
			copy(a1[i*half:], a[i*k:i*k+half])
			copy(a2[i*half:], a[i*k+half:(i+1)*k])
		}
		for _, part := range []struct{ a, b []uint32 }{{a1, b[:half*n]}, {a2, b[half*n:]}} {
			if err := m.MMAD(fp.E4M3, fp.FP16, mm, half, n, part.a, RowMajor, part.b, RowMajor, two, RowMajor, false); err != nil {
				t.Fatal(err)
			}
		}
		for i := range one {
			if one[i] != two[i] {
				t.Fatalf("%s: element %d: one call %08x, two calls %08x", model, i, one[i], two[i])
			}
		}
	}
}

func TestParamsFor(t *testing.T) {
	m, _ := Preset("h100")
	p32, err := m.ParamsFor(fp.E4M3, fp.FP32)
	if err != nil || p32.L != 32 || p32.F != 13 || p32.Window != 0 {
		t.Errorf("h100 e4m3→fp32: %+v %v", p32, err)
	}
	if p, _ := m.Params(fp.E4M3); p != p32 {
		t.Errorf("Params %+v differs from ParamsFor(fp32) %+v", p, p32)
	}
	p16, err := m.ParamsFor(fp.E4M3, fp.FP16)
	if err != nil || p16.L != 16 || p16.Window != 32 || p16.Run != 2 {
		t.Errorf("h100 e4m3→fp16: %+v %v", p16, err)
	}
	if p, _ := m.ParamsFor(fp.FP16, fp.FP16); p.L != 16 || p.Window != 0 {
		t.Errorf("h100 fp16→fp16 should use Formats: %+v", p)
	}
	// Preset copies FP16Formats too.
	m.FP16Formats[fp.E4M3] = FormatParams{L: 1}
	if m2, _ := Preset("h100"); m2.FP16Formats[fp.E4M3].L != 16 {
		t.Error("Preset shares its FP16Formats map")
	}
	// FP16Formats does not add input formats.
	m.FP16Formats[fp.FP32] = FormatParams{L: 4}
	if _, err := m.ParamsFor(fp.FP32, fp.FP16); err == nil {
		t.Error("fp32 input accepted through FP16Formats alone")
	}
}

func TestWindowErrors(t *testing.T) {
	base, _ := Preset("b200")
	for _, c := range []struct {
		name string
		p    FormatParams
		kind Kind
	}{
		{"not a multiple of L", FormatParams{L: 16, F: 25, Window: 24, Run: 2}, BlockFMA},
		{"run 0", FormatParams{L: 16, F: 25, Window: 32}, BlockFMA},
		{"run does not divide", FormatParams{L: 16, F: 25, Window: 32, Run: 3}, BlockFMA},
		{"runs not dealt evenly", FormatParams{L: 8, F: 25, Window: 32, Run: 16}, BlockFMA},
		{"negative", FormatParams{L: 16, F: 25, Window: -32, Run: 2}, BlockFMA},
		{"sequential kind", FormatParams{L: 1, F: Exact, Window: 2, Run: 1}, Sequential},
	} {
		m := base
		m.Kind = c.kind
		m.Formats = map[fp.Format]FormatParams{fp.E4M3: c.p}
		m.FP16Formats = nil
		_, err := m.Dot(fp.E4M3, []uint32{0}, []uint32{0}, 0, fp.FP32)
		if err == nil || !strings.Contains(err.Error(), "Window") {
			t.Errorf("%s: got %v, want a Window error", c.name, err)
		}
	}
}
