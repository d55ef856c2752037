package cube

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// fastModels are the models the fast paths cover: the presets plus custom
// variants (other block lengths, RZ block rounding).
func fastModels(t testing.TB) []Model {
	var out []Model
	for _, name := range []string{"fp32-rne", "fp32-rz", "ascend-910a", "ascend-910b3", "mi100"} {
		m, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	for _, L := range []int{1, 3, 8, 32} {
		for _, r := range []fp.Rounding{fp.RNE, fp.RZ} {
			out = append(out, Model{Name: fmt.Sprintf("exact-L%d-%v", L, r), Kind: BlockFMA, RoundFP32: r, RoundFP16: fp.RNE,
				Formats: half(L, Exact)})
		}
	}
	return out
}

// genKinds produce input patterns of different difficulty for the fast paths.
var genKinds = []string{"normal", "edge", "spread", "subnormal", "special", "zeros", "cancel", "huge"}

// genPats returns n patterns of format f (FP16 or BF16) of the given kind.
func genPats(rng *rand.Rand, f fp.Format, kind string, n int) []uint16 {
	out := make([]uint16, n)
	for i := range out {
		var p uint32
		switch kind {
		case "normal": // N(0,1), occasional zero
			x := rng.NormFloat64()
			if rng.IntN(30) == 0 {
				x = 0
			}
			p = fp.FromFloat64(x, f, fp.Options{})
		case "edge": // two exponents per value set, odd significands: block
			// spreads near the float64 exactness limit of the block test
			frac := f.MantBits()
			d := 10 + rng.IntN(14)
			hi := 14 - rng.IntN(4)
			if f == fp.BF16 {
				hi = 40 - rng.IntN(60)
			}
			e := hi
			if rng.IntN(2) == 0 {
				e = hi - d
			}
			x := math.Ldexp(float64(1<<frac|(2*rng.IntN(1<<(frac-1))+1)), e-frac)
			if rng.IntN(2) == 0 {
				x = -x
			}
			p = fp.FromFloat64(x, f, fp.Options{})
		case "spread": // every finite pattern equally likely
			for {
				p = uint32(rng.IntN(1 << 16))
				if !math.IsInf(fp.ToFloat64(p, f), 0) && !math.IsNaN(fp.ToFloat64(p, f)) {
					break
				}
			}
		case "subnormal": // mostly normal values, some subnormals
			x := rng.NormFloat64()
			if rng.IntN(4) == 0 {
				x = math.Ldexp(x, -20)
				if f == fp.BF16 {
					x = math.Ldexp(x, -110)
				}
			}
			p = fp.FromFloat64(x, f, fp.Options{})
		case "special": // Inf, NaN, signed zeros sprinkled in
			switch rng.IntN(12) {
			case 0:
				p = fp.FromFloat64(math.Inf(1-2*rng.IntN(2)), f, fp.Options{})
			case 1:
				p = fp.FromFloat64(math.NaN(), f, fp.Options{})
			case 2:
				p = fp.FromFloat64(math.Copysign(0, float64(1-2*rng.IntN(2))), f, fp.Options{})
			default:
				p = fp.FromFloat64(rng.NormFloat64(), f, fp.Options{})
			}
		case "zeros": // only ±0
			p = fp.FromFloat64(math.Copysign(0, float64(1-2*rng.IntN(2))), f, fp.Options{})
		case "cancel": // few distinct values of both signs: sums cancel often
			x := float64(1+rng.IntN(3)) * math.Ldexp(1, rng.IntN(3)-1)
			if rng.IntN(2) == 0 {
				x = -x
			}
			p = fp.FromFloat64(x, f, fp.Options{})
		case "huge": // the largest exponents of the format (overflow in FP32)
			x := (1 + rng.Float64()) * math.Ldexp(1, 15)
			if f == fp.BF16 {
				x = (1 + rng.Float64()) * math.Ldexp(1, 120+rng.IntN(7))
			}
			if rng.IntN(2) == 0 {
				x = -x
			}
			p = fp.FromFloat64(x, f, fp.Options{})
		}
		out[i] = uint16(p)
	}
	return out
}

// genC returns n FP32 C values of the kind.
func genC(rng *rand.Rand, kind string, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		switch kind {
		case "special":
			switch rng.IntN(8) {
			case 0:
				out[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
			case 1:
				out[i] = float32(math.NaN())
			default:
				out[i] = float32(rng.NormFloat64())
			}
		case "zeros":
			out[i] = float32(math.Copysign(0, float64(1-2*rng.IntN(2))))
		case "spread":
			out[i] = math.Float32frombits(rng.Uint32() &^ (1 << 30)) // finite, any magnitude below 2^0…
			if rng.IntN(2) == 0 {
				out[i] = math.Float32frombits(rng.Uint32()&0x7f7fffff | 1<<31)
			}
		case "huge":
			out[i] = float32(math.Ldexp(1-rng.Float64()/4, 128) * float64(1-2*rng.IntN(2)))
		case "cancel":
			out[i] = float32(rng.IntN(9) - 4)
		default:
			out[i] = float32(rng.NormFloat64() * 4)
		}
	}
	return out
}

func toLayout16(src []uint16, rows, cols int, l Layout) []uint16 {
	out := make([]uint16, LayoutLen(rows, cols, l, 16))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			out[layoutIndex(l, r, c, cols, 16)] = src[r*cols+c]
		}
	}
	return out
}

// runBoth runs one MMAD with the fast paths on and off and compares the
// results bit for bit.
func runBoth(t *testing.T, m Model, f fp.Format, mm, k, n int, a, b []uint16, c []float32, la, lb, lc Layout, init bool, what string) {
	t.Helper()
	ab, bb := toLayout16(a, mm, k, la), toLayout16(b, k, n, lb)
	cIn := make([]float32, LayoutLen(mm, n, lc, 32))
	for i := 0; i < mm*n; i++ {
		cIn[layoutIndex(lc, i/n, i%n, n, 32)] = c[i]
	}
	run := func(fast bool) []float32 {
		defer setFast(fast)()
		out := append([]float32(nil), cIn...)
		var err error
		if f == fp.FP16 {
			err = m.MMADF16(mm, k, n, ab, la, bb, lb, out, lc, init)
		} else {
			err = m.MMADBF16(mm, k, n, ab, la, bb, lb, out, lc, init)
		}
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got, want := run(true), run(false)
	for i := range got {
		if g, w := math.Float32bits(got[i]), math.Float32bits(want[i]); g != w {
			t.Fatalf("%s %v %s %d×%d×%d A %v B %v C %v init %v: index %d fast %08x (%g) reference %08x (%g)",
				m.Name, f, what, mm, k, n, la, lb, lc, init, i, g, got[i], w, want[i])
		}
	}
}

// TestFastMatchesReference: the fast paths against the reference path on
// every covered model, both input formats, every layout combination, shapes
// that are not multiples of 16 and inputs built to defeat the fast paths;
// with the pure-Go tiles and (if the machine has AVX-512) the assembly
// tiles.
func TestFastMatchesReference(t *testing.T) {
	seqImpls(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		shapes := [][3]int{{1, 1, 1}, {2, 16, 4}, {5, 37, 9}, {17, 33, 18}, {4, 64, 8}, {3, 0, 2}, {0, 5, 3}}
		if !testing.Short() {
			shapes = append(shapes, [3]int{34, 80, 35})
		}
		for _, m := range fastModels(t) {
			for _, f := range []fp.Format{fp.FP16, fp.BF16} {
				diffShapes(t, rng, m, f, shapes, []string{"spread", "subnormal"}, 3)
			}
		}
	})
}

// diffShapes runs runBoth for every input kind and shape: the kinds in mix
// get every third A element replaced by an ordinary one; all layout
// combinations on a rotating subset of shapes, one combination otherwise
// (keeps the tests fast); the combination initComb starts from C = 0.
func diffShapes(t *testing.T, rng *rand.Rand, m Model, f fp.Format, shapes [][3]int, mix []string, initComb int) {
	t.Helper()
	for _, kind := range genKinds {
		for si, sh := range shapes {
			mm, k, n := sh[0], sh[1], sh[2]
			a, b := genPats(rng, f, kind, mm*k), genPats(rng, f, kind, k*n)
			if slices.Contains(mix, kind) {
				for i := range a {
					if i%3 == 0 {
						a[i] = genPats(rng, f, "normal", 1)[0]
					}
				}
			}
			c := genC(rng, kind, mm*n)
			for lcomb := 0; lcomb < 8; lcomb++ {
				if lcomb != si%8 && si%2 == 1 {
					continue
				}
				la, lb, lc := Layout(lcomb&1), Layout(lcomb>>1&1), Layout(lcomb>>2&1)
				runBoth(t, m, f, mm, k, n, a, b, c, la, lb, lc, lcomb == initComb, kind)
			}
		}
	}
}

// TestFastMMADGeneral: the uint32 MMAD entry takes the fast paths too.
func TestFastMMADGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const mm, k, n = 9, 40, 11
	for _, m := range fastModels(t)[:5] {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			a := randPats(rng, f, mm*k)
			b := randPats(rng, f, k*n)
			c := randPats(rng, fp.FP32, mm*n)
			run := func(fast bool) []uint32 {
				defer setFast(fast)()
				out := append([]uint32(nil), toLayout(c, mm, n, Fractal, 32)...)
				if err := m.MMAD(f, fp.FP32, mm, k, n, toLayout(a, mm, k, Fractal, 16), Fractal, b, RowMajor, out, Fractal, false); err != nil {
					t.Fatal(err)
				}
				return out
			}
			got, want := run(true), run(false)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s %v: index %d fast %08x reference %08x", m.Name, f, i, got[i], want[i])
				}
			}
		}
	}
}

// TestFastEveryPattern: every 16-bit pattern of A (Inf and NaN included)
// through every covered model, against B columns and C of several
// magnitudes, with the pure-Go and (if available) the AVX-512 tiles.
func TestFastEveryPattern(t *testing.T) {
	seqImpls(t, testFastEveryPattern)
}

func testFastEveryPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const k, n = 16, 16
	mm := (1 << 16) / k
	a := make([]uint16, 1<<16)
	for i := range a {
		a[i] = uint16(i)
	}
	// Shuffle so that a row mixes magnitudes (defeats the block test often).
	rng.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
	models := fastModels(t)
	if testing.Short() {
		models = models[:5]
	}
	for _, m := range models {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			b := genPats(rng, f, "normal", k*n)
			for i := 0; i < k*n; i += 5 {
				b[i] = genPats(rng, f, "subnormal", 1)[0]
			}
			c := genC(rng, "normal", mm*n)
			runBoth(t, m, f, mm, k, n, a, b, c, RowMajor, Fractal, RowMajor, false, "every-pattern")
		}
	}
}

// TestFastErrors: the fast entry keeps the reference's input checks.
func TestFastErrors(t *testing.T) {
	m, _ := Preset("ascend-910a")
	a := make([]uint16, 16*16)
	c := make([]float32, 16*16)
	if err := m.MMADF16(-1, 16, 16, a, RowMajor, a, RowMajor, c, RowMajor, true); err == nil {
		t.Error("negative shape: no error")
	}
	if err := m.MMADF16(16, 16, 17, a, RowMajor, a, RowMajor, c, RowMajor, true); err == nil {
		t.Error("short B: no error")
	}
	if err := m.MMADF16(16, 16, 16, a, Layout(7), a, RowMajor, c, RowMajor, true); err == nil {
		t.Error("bad layout: no error")
	}
	if err := m.MMADF16(15, 16, 15, a, Fractal, a, Fractal, c[:15*15], Fractal, true); err == nil {
		t.Error("short fractal C: no error")
	}
}

// TestFastSticky: an exact block sum just above an FP32 tie, by a term
// 2^57 below the sum (2^9 + 2^−15 + 2^−48 with C = 2^9): the fast and the
// reference paths of the exact-sum presets both round it up (the term
// beyond float64's 53 bits survives as a sticky bit), with both signs.
func TestFastSticky(t *testing.T) {
	h := func(x float64) uint16 { return uint16(fp.FromFloat64(x, fp.FP16, fp.Options{})) }
	for _, name := range []string{"mi100", "ascend-910a", "ascend-910b3"} {
		m, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, sign := range []float64{1, -1} {
			a := []uint16{h(sign * p2(-8)), h(sign * p2(-24)), 0, 0}
			b := []uint16{h(p2(-7)), h(p2(-24)), 0, 0}
			want := float32(sign * (p2(9) + p2(-14)))
			for _, fast := range []bool{true, false} {
				restore := setFast(fast)
				c := []float32{float32(sign * p2(9))}
				err := m.MMADF16(1, 4, 1, a, RowMajor, b, RowMajor, c, RowMajor, false)
				restore()
				if err != nil {
					t.Fatal(err)
				}
				if math.Float32bits(c[0]) != math.Float32bits(want) {
					t.Errorf("%s sign %v fast %v: %08x (%g), want %08x (%g)", name, sign, fast, math.Float32bits(c[0]), c[0], math.Float32bits(want), want)
				}
			}
		}
	}
}

// TestFastTies: blocks whose exact sum lies just below an FP32 rounding tie
// (c + 2^12 + 2^−11 + 2^−12 − tiny). A float64 sum drops the tiny term and
// rounds to the tie, so a block-exactness test that let these through would
// give the wrong FP32 result; the spreads run from 53 bits upward.
func TestFastTies(t *testing.T) {
	h := func(x float64) uint16 { return uint16(fp.FromFloat64(x, fp.FP16, fp.Options{})) }
	for _, m := range fastModels(t) {
		if m.Kind != BlockFMA || m.Formats[fp.FP16].L < 4 {
			continue
		}
		for d := 0; d <= 7; d++ {
			const k = 4
			a := []uint16{h(64), h(p2(-5)), h(p2(-6)), h(-p2(-17 - d))}
			b := []uint16{h(64), h(p2(-6)), h(p2(-6)), h(p2(-24))}
			runBoth(t, m, fp.FP16, 1, k, 1, a, b, []float32{0}, RowMajor, RowMajor, RowMajor, true, fmt.Sprint("tie ", d))
		}
	}
}

// TestBlockBoundExact checks the lemma behind the exact-block fast path at
// its limit: for block spreads s_A + s_B = 51 − ⌈log2 L⌉, the float64 sum of
// worst-case products (largest significands, all of one sign, one product at
// the lowest bit) equals the exact sum.
func TestBlockBoundExact(t *testing.T) {
	for _, f := range []fp.Format{fp.FP16, fp.BF16} {
		frac := f.MantBits()
		maxSig := float64(int(1)<<(frac+1) - 1)
		for L := 1; L <= 64; L++ {
			lim := 51 - bitsLen(L-1)
			for sA := frac; sA <= lim-frac; sA++ {
				sB := lim - sA
				// A: L−1 values maxSig·2^(−frac) (H = 0), one 2^(−sA) (lowest bit);
				// B likewise with sB.
				var s float64
				var w wide
				for i := 0; i < L; i++ {
					var x, y float64
					if i == 0 {
						x, y = math.Ldexp(1, -sA), math.Ldexp(1, -sB)
					} else {
						x, y = maxSig*math.Ldexp(1, -frac), maxSig*math.Ldexp(1, -frac)
					}
					s += x * y
					mx, ex := math.Frexp(x * y)
					w.add(uint64(math.Ldexp(mx, 53)), ex-53, false)
				}
				if e := w.float(); e != s {
					t.Fatalf("%v L=%d spreads %d+%d: float64 sum %g, exact %g", f, L, sA, sB, s, e)
				}
			}
		}
	}
}

func bitsLen(x int) int {
	n := 0
	for ; x > 0; x >>= 1 {
		n++
	}
	return n
}

// TestConvRows: the arithmetic conversion of load equals the value table
// (fastTable) for every FP16 and BF16 pattern, as float32 and float64,
// signed zeros included, with the special flag per row.
func TestConvRows(t *testing.T) {
	for _, f := range []fp.Format{fp.FP16, fp.BF16} {
		info, err := formatInfo(f)
		if err != nil {
			t.Fatal(err)
		}
		tab := fastTable(f, info)
		const k = 256
		p := make([]uint16, 1<<16)
		for i := range p {
			p[i] = uint16(i)
		}
		rows := len(p) / k
		sp, sp2 := make([]bool, rows), make([]bool, rows)
		v32, v64 := make([]float32, len(p)), make([]float64, len(p))
		convRows(p, sp, v32, rows, k, f == fp.FP16)
		convRows(p, sp2, v64, rows, k, f == fp.FP16)
		for i, x := range p {
			w := tab.val[x]
			if math.Float64bits(float64(v32[i])) != math.Float64bits(w) || math.Float64bits(v64[i]) != math.Float64bits(w) {
				t.Fatalf("%v pattern %04x: float32 %g, float64 %g, table %g", f, x, v32[i], v64[i], w)
			}
		}
		for r := 0; r < rows; r++ {
			want := slices.ContainsFunc(p[r*k:(r+1)*k], func(x uint16) bool { return tab.special[x] })
			if sp[r] != want || sp2[r] != want {
				t.Fatalf("%v row %d: special %v %v, want %v", f, r, sp[r], sp2[r], want)
			}
		}
	}
}

// rowIndex is layoutIndex for a whole row of C (32-bit elements), for
// both layouts, rows in and out of the first fractal block, and widths
// that are and are not multiples of 16.
func TestRowIndex(t *testing.T) {
	for _, l := range []Layout{RowMajor, Fractal} {
		for _, n := range []int{1, 7, 16, 17, 40, 64} {
			idx := make([]int, n)
			for i := range 40 {
				rowIndex(l, i, n, idx)
				for j, x := range idx {
					if want := layoutIndex(l, i, j, n, 32); x != want {
						t.Fatalf("layout %v, %d columns, (%d, %d): %d, want %d", l, n, i, j, x, want)
					}
				}
			}
		}
	}
}
