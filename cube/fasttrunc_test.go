package cube

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
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
	truncImpls(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		shapes := [][3]int{{1, 1, 1}, {2, 16, 2}, {5, 37, 9}, {4, 61, 6}, {3, 0, 2}, {8, 20, 16}}
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
	})
}

// truncImpls runs fn (as subtests "go" and "avx512") with each tile
// implementation of the truncated path this machine has: the pure-Go 2×2
// tiles and, with AVX-512, the assembly 4×8 tiles; for the latter it
// checks that the assembly ran.
func truncImpls(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	tileImpls(t, &truncTileFn, fn)
}

// tileImpls runs fn with useAVX512 off ("go") and, if the machine has
// AVX-512, on ("avx512"), and checks that the assembly tile *tile ran
// in the latter.
func tileImpls(t *testing.T, tile *func(ap *float64, ep *int32, bp *float64, fp *int32, c *float64, res *uint32, n, k, L, x int, rz bool) uint32, fn func(t *testing.T)) {
	t.Helper()
	bothImpls(t, func(calls *atomic.Int64) func() {
		old := *tile
		*tile = func(ap *float64, ep *int32, bp *float64, fp *int32, c *float64, res *uint32, nn, k, L, x int, rz bool) uint32 {
			calls.Add(1)
			return old(ap, ep, bp, fp, c, res, nn, k, L, x, rz)
		}
		return func() { *tile = old }
	}, fn)
}

// bothImpls runs fn as subtest "go" with useAVX512 off and, if the machine
// has AVX-512, as "avx512" with it on; there hook wraps the assembly
// routine so that it counts its calls (and returns the undo), and the
// assembly must have run.
func bothImpls(t *testing.T, hook func(calls *atomic.Int64) (undo func()), fn func(t *testing.T)) {
	t.Helper()
	defer func(old bool) { useAVX512 = old }(useAVX512)
	have := useAVX512
	useAVX512 = false
	t.Run("go", fn)
	if !have {
		t.Log("no AVX-512 on this machine: assembly tiles not tested")
		return
	}
	useAVX512 = true
	var n atomic.Int64
	defer hook(&n)()
	t.Run("avx512", fn)
	if n.Load() == 0 {
		t.Error("the AVX-512 tiles never ran")
	}
}

// TestFastTruncEveryPattern: every 16-bit pattern of A against B columns
// with subnormals and C of several magnitudes, for every truncated model.
func TestFastTruncEveryPattern(t *testing.T) {
	truncImpls(t, testFastTruncEveryPattern)
}

func testFastTruncEveryPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const k, n = 16, 8
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
	truncImpls(t, testFastTruncHand)
}

func testFastTruncHand(t *testing.T) {
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
			// In every lane of a 4×8 tile (the AVX-512 tile), next to
			// ordinary elements in the other lanes of the same row and
			// column (rows 0, 3 and columns 0, 7 take the case).
			k := len(a)
			a4, b8, c32 := make([]uint16, 4*k), make([]uint16, k*8), make([]float32, 32)
			for r := 0; r < 4; r++ {
				for t := 0; t < k; t++ {
					a4[r*k+t] = h(float64(r + t + 1))
					if r == 0 || r == 3 {
						a4[r*k+t] = a[t]
					}
				}
			}
			for t := 0; t < k; t++ {
				for c := 0; c < 8; c++ {
					b8[t*8+c] = h(float64(c - t))
					if c == 0 || c == 7 {
						b8[t*8+c] = b[t]
					}
				}
			}
			for e := range c32 {
				c32[e] = float32(e)
				if r, c := e/8, e%8; (r == 0 || r == 3) && (c == 0 || c == 7) {
					c32[e] = tc.c
				}
			}
			runBoth(t, m, fp.FP16, 4, k, 8, a4, b8, c32, RowMajor, RowMajor, RowMajor, false, tc.name+" tile 4×8")
		}
	}
}

// truncTileKinds are the inputs of TestFastTruncTiles: A, B and C patterns
// for the tiled paths (AVX-512 4×8 and Go 2×2), built from an ordinary
// (N(0,1)) base.
var truncTileKinds = []string{"normal", "spread", "subnormal", "cancel", "huge", "zero-lines", "all-zero",
	"c-first", "c-subnormal", "tiny", "near-max", "special"}

// tinyPats fills p with N(0,1)·2^−70 values (BF16: products near
// 2^−140, whose sums are FP32 subnormals) or N(0,1)·2^−14 (FP16: its
// subnormals, products from 2^−48).
func tinyPats(rng *rand.Rand, f fp.Format, p []uint16) {
	sh := -70
	if f == fp.FP16 {
		sh = -14
	}
	for e := range p {
		p[e] = uint16(fp.FromFloat64(math.Ldexp(rng.NormFloat64(), sh), f, fp.Options{}))
	}
}

// truncTileInputs returns A (mm×k), B (k×n) and C (mm×n) of the kind.
func truncTileInputs(rng *rand.Rand, f fp.Format, kind string, mm, k, n, L int) (a, b []uint16, c []float32) {
	pz := func() uint16 { // ±0
		return uint16(fp.FromFloat64(math.Copysign(0, float64(1-2*rng.IntN(2))), f, fp.Options{}))
	}
	pat := func(x float64) uint16 { return uint16(fp.FromFloat64(x, f, fp.Options{})) }
	switch kind {
	case "normal", "spread", "subnormal", "cancel", "huge", "special":
		return genPats(rng, f, kind, mm*k), genPats(rng, f, kind, k*n), genC(rng, kind, mm*n)
	}
	a, b = genPats(rng, f, "normal", mm*k), genPats(rng, f, "normal", k*n)
	c = genC(rng, "normal", mm*n)
	switch kind {
	case "zero-lines":
		// Zero rows of A, zero columns of B, zero blocks of a row of A
		// and of a column of B (±0 mixed, or all −0), c = ±0 on some;
		// rows 4-7 (a whole 4×8 tile) zero in every other block, c = ±0.
		for i := 0; i < mm; i++ {
			for t := 0; t < k; t++ {
				switch {
				case i%5 == 1, i%7 == 3 && t/L%2 == 1, i/4 == 1 && t/L%2 == 0:
					a[i*k+t] = pz()
				case i%5 == 4 && t/L%2 == 0:
					a[i*k+t] = pat(math.Copysign(0, -1))
				}
			}
		}
		for j := 0; j < n; j++ {
			for t := 0; t < k; t++ {
				switch {
				case j%6 == 2, j%4 == 3 && t/L%3 == 0:
					b[t*n+j] = pz()
				case j%6 == 5 && t/L%2 == 1:
					b[t*n+j] = pat(math.Copysign(0, -1))
				}
			}
		}
		for e := range c {
			if rng.IntN(2) == 0 || e/n/4 == 1 {
				c[e] = float32(math.Copysign(0, float64(1-2*rng.IntN(2))))
			}
		}
	case "all-zero":
		for e := range a {
			a[e] = pz()
		}
		for e := range b {
			b[e] = pz()
		}
		for e := range c {
			c[e] = float32(math.Copysign(0, float64(1-2*rng.IntN(2))))
		}
		if rng.IntN(2) == 0 { // −0 everywhere in A and C: −0 results
			for e := range a {
				a[e] = pat(math.Copysign(0, -1))
			}
			for e := range c {
				c[e] = float32(math.Copysign(0, -1))
			}
		}
	case "c-first":
		// |c| far above the products: the first block's e_max is c's,
		// the products are cut (partly or wholly).
		for e := range c {
			c[e] = float32(math.Ldexp(1+rng.Float64(), 5+rng.IntN(30)) * float64(1-2*rng.IntN(2)))
		}
	case "c-subnormal":
		// FP32-subnormal c, tiny products or zeros.
		for e := range c {
			c[e] = math.Float32frombits(uint32(rng.IntN(1<<23)) | uint32(rng.IntN(2))<<31)
		}
		for e := range a {
			if rng.IntN(3) == 0 {
				a[e] = pz()
			}
		}
		if f == fp.BF16 {
			for e := range a {
				a[e] = pat(math.Ldexp(fp.ToFloat64(uint32(a[e]), f), -120))
			}
		}
	case "tiny":
		// BF16: products near 2^−140, FP32-subnormal block results
		// (FP16: its subnormal products, 2^−48 and up).
		tinyPats(rng, f, a)
		tinyPats(rng, f, b)
		for e := range c {
			c[e] = 0
		}
	case "near-max":
		// Sums just below and above 2^128: RZ gives MaxFloat32 below,
		// ±Inf from 2^128 (BF16; FP16 products cannot reach, c does).
		for e := range c {
			c[e] = float32(math.Ldexp(1-rng.Float64()/1e6, 128) * float64(1-2*rng.IntN(4)/3))
		}
		if f == fp.BF16 {
			for e := range a {
				a[e] = pat(math.Ldexp(1+rng.Float64(), 63))
			}
			for e := range b {
				b[e] = pat(math.Ldexp(1+rng.Float64(), 62) * float64(1-2*rng.IntN(3)/2))
			}
		}
	}
	return a, b, c
}

// TestFastTruncTiles: the tiled truncated paths (AVX-512 4×8 tiles where
// available, and the Go 2×2 tiles) against the reference path on every
// model of truncModels, both input formats, shapes that are not multiples
// of the tile or of L, inputs that exercise every special case of the
// proof (zero blocks and their signed-zero rule, c deciding e_max, FP16
// subnormals, FP32-subnormal results, overflow below and above 2^128 with
// RZ and RNE), and calls split among goroutines.
func TestFastTruncTiles(t *testing.T) {
	truncImpls(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(25, 26))
		shapes := [][3]int{{4, 1, 8}, {8, 3, 16}, {4, 64, 8}, {12, 37, 24}, {9, 50, 19}}
		if !testing.Short() {
			shapes = append(shapes, [3]int{16, 129, 32})
		}
		for _, m := range truncModels(t) {
			for _, f := range []fp.Format{fp.FP16, fp.BF16} {
				if !hasFormat(m, f) {
					continue
				}
				L := m.Formats[f].L
				for _, kind := range truncTileKinds {
					for si, sh := range shapes {
						mm, k, n := sh[0], sh[1], sh[2]
						a, b, c := truncTileInputs(rng, f, kind, mm, k, n, L)
						lb := Layout(si % 2)
						runBoth(t, m, f, mm, k, n, a, b, c, RowMajor, lb, RowMajor, false, kind)
					}
				}
			}
		}
		// Parallel splits (forced on small calls).
		old := parallelMACs
		parallelMACs = 1
		defer func() { parallelMACs = old }()
		for _, name := range []string{"v100", "t4", "h100"} {
			m, _ := Preset(name)
			for _, kind := range []string{"normal", "zero-lines", "near-max", "special"} {
				for _, sh := range [][3]int{{24, 40, 16}, {13, 33, 27}} {
					a, b, c := truncTileInputs(rng, fp.FP16, kind, sh[0], sh[1], sh[2], m.Formats[fp.FP16].L)
					runBoth(t, m, fp.FP16, sh[0], sh[1], sh[2], a, b, c, RowMajor, Fractal, RowMajor, false, kind+" parallel")
				}
			}
		}
	})
}

// TestFastExactTiles: the exact block-FMA fast path (mi100, Ascend and
// custom exact models) with the AVX-512 4×8 tiles where available and the
// Go 2×2 tiles, against the reference path: every input kind of the fast
// path tests (wide exponent spreads that fail the exactness test, Inf/NaN,
// overflow, cancellation) and of TestFastTruncTiles (zero lines and
// blocks, FP32-subnormal results, sums near 2^128), shapes that are not
// multiples of the tile or of L, and parallel splits.
func TestFastExactTiles(t *testing.T) {
	tileImpls(t, &exactTileFn, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(27, 28))
		shapes := [][3]int{{4, 1, 8}, {8, 3, 16}, {4, 64, 8}, {12, 37, 24}, {9, 50, 19}}
		if !testing.Short() {
			shapes = append(shapes, [3]int{16, 129, 32})
		}
		kinds := append(append([]string(nil), genKinds...), truncTileKinds...)
		for _, m := range fastModels(t)[2:] {
			for _, f := range []fp.Format{fp.FP16, fp.BF16} {
				if !hasFormat(m, f) {
					continue
				}
				L := m.Formats[f].L
				for _, kind := range kinds {
					for si, sh := range shapes {
						mm, k, n := sh[0], sh[1], sh[2]
						var a, b []uint16
						var c []float32
						if slices.Contains(genKinds, kind) && !slices.Contains(truncTileKinds, kind) {
							a, b, c = genPats(rng, f, kind, mm*k), genPats(rng, f, kind, k*n), genC(rng, kind, mm*n)
						} else {
							a, b, c = truncTileInputs(rng, f, kind, mm, k, n, L)
						}
						runBoth(t, m, f, mm, k, n, a, b, c, RowMajor, Layout(si%2), RowMajor, false, kind)
					}
				}
			}
		}
		old := parallelMACs
		parallelMACs = 1
		defer func() { parallelMACs = old }()
		for _, name := range []string{"mi100", "ascend-910a"} {
			m, _ := Preset(name)
			for _, kind := range []string{"normal", "zero-lines", "spread", "special"} {
				for _, sh := range [][3]int{{24, 40, 16}, {13, 33, 27}} {
					a, b, c := truncTileInputs(rng, fp.FP16, kind, sh[0], sh[1], sh[2], m.Formats[fp.FP16].L)
					runBoth(t, m, fp.FP16, sh[0], sh[1], sh[2], a, b, c, RowMajor, Fractal, RowMajor, false, kind+" parallel")
				}
			}
		}
	})
}
