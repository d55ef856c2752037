package cube

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// truncModels are the models the truncated block-FMA fast path covers: every
// NVIDIA preset (FP16/BF16 inputs) plus custom variants (small F so that most
// bits are cut, L = 1 and L not a power of two, RNE block rounding).
func truncModels(t testing.TB) []Model {
	var out []Model
	for _, name := range []string{"v100", "t4", "a100", "ada", "h100", "b200"} {
		m, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	for _, v := range []struct{ L, F int }{{1, 0}, {3, 5}, {5, 12}, {32, 24}, {8, 40}} {
		for _, r := range []fp.Rounding{fp.RZ, fp.RNE} {
			out = append(out, Model{Name: fmt.Sprintf("trunc-L%d-F%d-%v", v.L, v.F, r), Kind: BlockFMA, RoundFP32: r, RoundFP16: fp.RNE,
				Formats: half(v.L, v.F)})
		}
	}
	return out
}

func hasFormat(m Model, f fp.Format) bool {
	_, ok := m.Formats[f]
	return ok
}

// TestFastTruncKind: the truncated block models take the new fast path (a
// test of the dispatch, so that the differential tests below test it).
func TestFastTruncKind(t *testing.T) {
	for _, m := range truncModels(t) {
		k, err := m.kernel(fp.FP16, fp.FP32)
		if err != nil {
			t.Fatal(err)
		}
		if got := fastKindFor(k, fp.FP16); got != fastTruncBlock {
			t.Errorf("%s: fast kind %d, want fastTruncBlock", m.Name, got)
		}
	}
	// Out of the path: FP16 output, late c, windows, F too large for int64.
	m, _ := Preset("h100")
	if k, _ := m.kernel(fp.FP16, fp.FP16); fastKindFor(k, fp.FP16) != fastNone {
		t.Error("h100 fp16 output: fast path taken")
	}
	w := Model{Name: "w", Kind: BlockFMA, RoundFP32: fp.RZ, Formats: map[fp.Format]FormatParams{fp.FP16: {L: 4, F: 24, Window: 8, Run: 2}}}
	if k, err := w.kernel(fp.FP16, fp.FP32); err != nil || fastKindFor(k, fp.FP16) != fastNone {
		t.Errorf("windowed model: fast path taken (err %v)", err)
	}
	big := Model{Name: "big", Kind: BlockFMA, RoundFP32: fp.RZ, Formats: half(64, 50)}
	if k, _ := big.kernel(fp.FP16, fp.FP32); fastKindFor(k, fp.FP16) != fastNone {
		t.Error("F = 50, L = 64: fast path taken")
	}
}

// TestFastTruncMatchesReference: the truncated block fast path against the
// reference kernel, bit for bit: every NVIDIA preset and custom variant, both
// input formats, all layout combinations, k not a multiple of L, inputs that
// cancel, spread over the whole exponent range, hold subnormals, zeros,
// Inf/NaN, or overflow.
func TestFastTruncMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	shapes := [][3]int{{1, 1, 1}, {2, 16, 2}, {5, 37, 9}, {4, 61, 6}, {3, 0, 2}}
	if !testing.Short() {
		shapes = append(shapes, [3]int{17, 100, 18})
	}
	for _, m := range truncModels(t) {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			if !hasFormat(m, f) {
				continue
			}
			diffShapes(t, rng, m, f, shapes, []string{"spread", "subnormal", "zeros"}, 5)
		}
	}
}

// TestFastTruncEveryPattern: every 16-bit pattern of A against B columns
// with subnormals and C of several magnitudes, for every truncated model.
func TestFastTruncEveryPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const k, n = 16, 4
	mm := (1 << 16) / k
	a := make([]uint16, 1<<16)
	for i := range a {
		a[i] = uint16(i)
	}
	rng.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
	models := truncModels(t)
	if testing.Short() {
		models = models[:6]
	}
	for _, m := range models {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			if !hasFormat(m, f) {
				continue
			}
			b := genPats(rng, f, "normal", k*n)
			for i := 0; i < k*n; i += 5 {
				b[i] = genPats(rng, f, "subnormal", 1)[0]
			}
			c := genC(rng, "spread", mm*n)
			for i := range c {
				if i%3 == 0 {
					c[i] = float32(rng.NormFloat64())
				}
			}
			runBoth(t, m, f, mm, k, n, a, b, c, RowMajor, Fractal, RowMajor, false, "every-pattern")
		}
	}
}

// TestFastTruncHand: hand-made blocks where truncation, the zero-sign rule
// and the c alignment decide the result.
func TestFastTruncHand(t *testing.T) {
	h := func(x float64) uint16 { return uint16(fp.FromFloat64(x, fp.FP16, fp.Options{})) }
	cases := []struct {
		name string
		a, b []float64
		c    float32
	}{
		// A product far below e_max loses all its bits (truncated to 0),
		// and a negative one truncates toward zero, not toward −∞.
		{"cut", []float64{1024, 1, -p2(-14)}, []float64{1024, p2(-10), 3}, 0},
		{"neg-cut", []float64{-1024, 1, -p2(-14)}, []float64{1024, p2(-10), 3}, 0},
		// c below e_max: its low bits are cut.
		{"c-cut", []float64{64, 1}, []float64{64, 0}, 1 + 0x1p-23},
		// Cancellation to zero: +0 even from negative terms.
		{"cancel", []float64{-1, 1}, []float64{1, 1}, 0},
		{"cancel-negc", []float64{-1, 1, 0}, []float64{1, 1, 0}, float32(math.Copysign(0, -1))},
		// All-zero products with −0 c: −0 only when every product is −0.
		{"zeros-neg", []float64{math.Copysign(0, -1), 0}, []float64{1, -1}, float32(math.Copysign(0, -1))},
		{"zeros-mixed", []float64{math.Copysign(0, -1), 0}, []float64{1, 1}, float32(math.Copysign(0, -1))},
		{"zeros-posc", []float64{math.Copysign(0, -1)}, []float64{1}, 0},
		// Subnormal products only (e_max = −28).
		{"subnormal", []float64{p2(-24), 3 * p2(-24)}, []float64{p2(-20), -p2(-14)}, 0},
		// Overflow of the FP32 accumulator by a huge c plus products.
		{"overflow", []float64{65504, 65504}, []float64{65504, 65504}, math.MaxFloat32},
	}
	for _, m := range truncModels(t) {
		for _, tc := range cases {
			a := make([]uint16, len(tc.a))
			b := make([]uint16, len(tc.b))
			for i := range a {
				a[i], b[i] = h(tc.a[i]), h(tc.b[i])
			}
			runBoth(t, m, fp.FP16, 1, len(a), 1, a, b, []float32{tc.c}, RowMajor, RowMajor, RowMajor, false, tc.name)
			// The same element inside a 2×2 tile (the tiled code path).
			a2 := append(append([]uint16(nil), a...), a...)
			b2 := make([]uint16, 2*len(b))
			for i := range b {
				b2[2*i], b2[2*i+1] = b[i], b[i]
			}
			runBoth(t, m, fp.FP16, 2, len(a), 2, a2, b2, []float32{tc.c, tc.c, tc.c, tc.c}, RowMajor, RowMajor, RowMajor, false, tc.name+" tile")
		}
	}
}
