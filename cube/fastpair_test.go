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

// pairModels are the models of the pairwise fast path: the mi210 preset
// and custom variants (other block lengths, powers of two and not, and
// without FTZ).
func pairModels(t testing.TB) []Model {
	m, err := Preset("mi210")
	if err != nil {
		t.Fatal(err)
	}
	out := []Model{m}
	for _, v := range []struct {
		L   int
		ftz bool
	}{{4, false}, {1, true}, {2, true}, {8, true}, {3, true}, {16, false}, {64, true}} {
		out = append(out, Model{Name: fmt.Sprintf("pair-L%d-ftz%v", v.L, v.ftz), Kind: Pairwise, RoundFP32: fp.RNE, RoundFP16: fp.RNE,
			FlushSubnormals: v.ftz, Formats: half(v.L, 0)})
	}
	return out
}

// pairImpls runs fn as subtests "go" and (with AVX-512) "avx512", and
// checks that the assembly tile ran in the latter.
func pairImpls(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	bothImpls(t, func(calls *atomic.Int64) func() {
		old := pairTileFn
		pairTileFn = func(ap, bp *float32, c, res *uint32, n, nb int, mask uint32) {
			calls.Add(1)
			old(ap, bp, c, res, n, nb, mask)
		}
		return func() { pairTileFn = old }
	}, fn)
}

// TestFastPairKind: the pairwise models take the pairwise fast path (so
// that the differential tests test it), and what it cannot do does not.
func TestFastPairKind(t *testing.T) {
	for _, m := range pairModels(t) {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			k, err := m.kernel(f, fp.FP32)
			if err != nil {
				t.Fatal(err)
			}
			if got := fastKindFor(k, f); got != fastPairwise {
				t.Errorf("%s %v: fast kind %d, want fastPairwise", m.Name, f, got)
			}
		}
	}
	m, _ := Preset("mi210")
	if k, _ := m.kernel(fp.FP16, fp.FP16); fastKindFor(k, fp.FP16) != fastNone {
		t.Error("mi210 fp16 output: fast path taken")
	}
	for _, bad := range []Model{
		{Name: "L128", Kind: Pairwise, RoundFP32: fp.RNE, FlushSubnormals: true, Formats: half(128, 0)},
		{Name: "rz", Kind: Pairwise, RoundFP32: fp.RZ, FlushSubnormals: true, Formats: half(4, 0)},
		{Name: "mant", Kind: Pairwise, RoundFP32: fp.RNE, Formats: map[fp.Format]FormatParams{fp.FP16: {L: 4, OutMant: 13}}},
	} {
		if k, err := bad.kernel(fp.FP16, fp.FP32); err != nil || fastKindFor(k, fp.FP16) != fastNone {
			t.Errorf("%s: fast path taken (err %v)", bad.Name, err)
		}
	}
}

// pairKinds are inputs aimed at the pairwise path's hazards (pairInputs).
var pairKinds = []string{"ftz-edge", "acc-sub", "sub-zero", "near-overflow", "neg-zero"}

// pairInputs returns A (mm×k), B (k×n) and C (mm×n) of the kind:
//
//   - ftz-edge: BF16 values m·2^(−63±4) with random 8-bit significands,
//     so products lie around 2^−126 (some flushed) and tree sums cancel
//     to FP32 subnormals (flushed); every fourth C an FP32 subnormal, the
//     others near 2^−126 or 0. FP16: values around its subnormal limit
//     2^−14 (the subnormal inputs flushed).
//   - acc-sub: BF16 products that are small multiples of 2^−126 (elements
//     that pass the no-flush test) and C = ±(1 + x)·2^−126, so that
//     acc + s lands below 2^−126 and is flushed with its sign; every
//     fourth C an FP32 subnormal (flushed before the first block). FP16:
//     values near 2^−14 and C near FP32's subnormal range.
//   - sub-zero: A only subnormals of the input format (flushed to zeros of
//     their sign with FTZ: all-zero trees whose sign the product signs
//     decide), C = ±0 or subnormal.
//   - near-overflow: BF16 products in [2^126, 2^130) of both signs (some
//     ±Inf, tree sums overflowing to ±Inf, Inf − Inf = NaN), C near
//     ±MaxFloat32 on some; FP16: C near ±MaxFloat32 with N(0, 1) inputs
//     scaled to 2^15.
//   - neg-zero: ±0 inputs, mostly −0, with C = −0 or +0: the signs of zero
//     trees, padded short blocks (−0 + +0 = +0) and acc + s.
func pairInputs(rng *rand.Rand, f fp.Format, kind string, mm, k, n int) (a, b []uint16, c []float32) {
	pat := func(x float64) uint16 { return uint16(fp.FromFloat64(x, f, fp.Options{})) }
	sgn := func() float64 { return float64(1 - 2*rng.IntN(2)) }
	bf := f == fp.BF16
	a, b, c = make([]uint16, mm*k), make([]uint16, k*n), make([]float32, mm*n)
	fill := func(p []uint16, g func() float64) {
		for e := range p {
			p[e] = pat(g())
		}
	}
	switch kind {
	case "ftz-edge":
		g := func() float64 {
			if bf {
				return sgn() * math.Ldexp(float64(128+rng.IntN(128)), -63-7+rng.IntN(9)-4)
			}
			return sgn() * math.Ldexp(float64(512+rng.IntN(1024)), -14-10+rng.IntN(5)-2)
		}
		fill(a, g)
		fill(b, g)
		for e := range c {
			switch e % 4 {
			case 0:
				c[e] = math.Float32frombits(uint32(rng.IntN(1<<23)) | uint32(rng.IntN(2))<<31)
			case 1:
				c[e] = float32(math.Copysign(0, sgn()))
			default:
				c[e] = float32(sgn() * math.Ldexp(1+rng.Float64(), -126+rng.IntN(3)))
			}
		}
	case "acc-sub":
		if bf {
			fill(a, func() float64 { return sgn() * math.Ldexp(float64(1+rng.IntN(3)), -63) })
			fill(b, func() float64 { return sgn() * math.Ldexp(float64(1+rng.IntN(2)), -63) })
			for e := range c {
				c[e] = float32(sgn() * math.Ldexp(1+float64(rng.IntN(1<<23))/(1<<23), -126+rng.IntN(2)))
				if e%4 == 3 { // flushed before the first block
					c[e] = math.Float32frombits(uint32(1+rng.IntN(1<<23-1)) | uint32(rng.IntN(2))<<31)
				}
			}
		} else {
			fill(a, func() float64 { return sgn() * math.Ldexp(float64(1+rng.IntN(3)), -14) })
			fill(b, func() float64 { return sgn() * math.Ldexp(float64(1+rng.IntN(2)), -14) })
			for e := range c {
				c[e] = float32(sgn() * math.Ldexp(1+rng.Float64(), -126+rng.IntN(4)))
			}
		}
	case "sub-zero":
		frac, emin := f.MantBits(), 1-f.Bias()
		fill(a, func() float64 { return sgn() * math.Ldexp(float64(1+rng.IntN(1<<frac-1)), emin-frac) })
		fill(b, func() float64 { return sgn() * math.Ldexp(1+rng.Float64(), rng.IntN(5)) })
		for e := range c {
			c[e] = float32(math.Copysign(0, sgn()))
			if e%3 == 0 {
				c[e] = math.Float32frombits(uint32(1+rng.IntN(1<<23-1)) | uint32(rng.IntN(2))<<31)
			}
		}
	case "near-overflow":
		if bf {
			fill(a, func() float64 { return sgn() * math.Ldexp(1+rng.Float64(), 63) })
			fill(b, func() float64 { return sgn() * math.Ldexp(1+rng.Float64(), 63+rng.IntN(2)) })
		} else {
			fill(a, func() float64 { return rng.NormFloat64() * 0x1p15 })
			fill(b, func() float64 { return rng.NormFloat64() })
		}
		for e := range c {
			c[e] = float32(rng.NormFloat64())
			if e%3 == 0 {
				c[e] = float32(sgn() * math.Ldexp(1-rng.Float64()/1e5, 128))
			}
		}
	case "neg-zero":
		z := func() float64 {
			if rng.IntN(4) == 0 {
				return 0
			}
			return math.Copysign(0, -1)
		}
		fill(a, z)
		fill(b, func() float64 {
			if rng.IntN(5) == 0 {
				return -z()
			}
			return 0
		})
		for e := range c {
			c[e] = float32(z())
		}
	default:
		panic("pairInputs: unknown kind " + kind)
	}
	return a, b, c
}

// pairAllInputs returns inputs of any kind: pairKinds, the generic
// kinds (genPats) and the tile kinds of the truncated tests.
func pairAllInputs(rng *rand.Rand, f fp.Format, kind string, mm, k, n, L int) (a, b []uint16, c []float32) {
	switch {
	case slices.Contains(pairKinds, kind):
		return pairInputs(rng, f, kind, mm, k, n)
	case slices.Contains(truncTileKinds, kind):
		return truncTileInputs(rng, f, kind, mm, k, n, L)
	}
	return genPats(rng, f, kind, mm*k), genPats(rng, f, kind, k*n), genC(rng, kind, mm*n)
}

// pairAllKinds lists every input kind of the pairwise tests once.
func pairAllKinds() []string {
	var out []string
	for _, k := range slices.Concat(pairKinds, genKinds, truncTileKinds) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// TestFastPairMatchesReference: the pairwise fast path against the
// reference kernel, bit for bit: every model of pairModels, FP16 and BF16,
// every input kind (the hazards of the proof: products and tree sums
// around 2^−126, acc + s flushed, subnormal inputs, signed zeros, padded
// short blocks, overflow to ±Inf and NaN, Inf/NaN inputs and C, C
// subnormal), shapes that are and are not multiples of the tiles and of L,
// layouts, C given and not; with the Go tiles and the AVX-512 tiles.
func TestFastPairMatchesReference(t *testing.T) {
	pairImpls(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(41, 42))
		shapes := [][3]int{{1, 1, 1}, {8, 16, 16}, {8, 4, 16}, {9, 13, 17}, {16, 7, 32}, {3, 5, 2}, {8, 0, 16}, {0, 4, 3}, {17, 34, 33}, {16, 6, 16}}
		if !testing.Short() {
			shapes = append(shapes, [3]int{24, 130, 48})
		}
		for mi, m := range pairModels(t) {
			for _, f := range []fp.Format{fp.FP16, fp.BF16} {
				L := m.Formats[f].L
				for ki, kind := range pairAllKinds() {
					for si, sh := range shapes {
						if mi > 1 && (si+ki)%3 != 0 { // the custom models on a rotating third
							continue
						}
						mm, k, n := sh[0], sh[1], sh[2]
						a, b, c := pairAllInputs(rng, f, kind, mm, k, n, L)
						l := (si + ki) % 8
						runBoth(t, m, f, mm, k, n, a, b, c, Layout(l&1), Layout(l>>1&1), Layout(l>>2&1), (si+ki)%5 == 0, kind)
					}
				}
			}
		}
	})
}

// TestFastPairMixed: rows and columns of different kinds in one call, so
// that tiles and single elements meet: safe and unsafe (no-flush test)
// elements, Inf/NaN rows next to ordinary ones, in tiles and edges, and
// calls split among goroutines.
func TestFastPairMixed(t *testing.T) {
	pairImpls(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(43, 44))
		kinds := pairAllKinds()
		for _, m := range pairModels(t)[:3] {
			for _, f := range []fp.Format{fp.FP16, fp.BF16} {
				for rep := 0; rep < 6; rep++ {
					mm, k, n := 8+rng.IntN(20), 1+rng.IntN(40), 16+rng.IntN(40)
					a, b, c := make([]uint16, mm*k), make([]uint16, k*n), make([]float32, mm*n)
					for i := 0; i < mm; i++ { // A row by row
						kind := kinds[rng.IntN(len(kinds))]
						if rng.IntN(2) == 0 {
							kind = "normal"
						}
						ra, _, rc := pairAllInputs(rng, f, kind, 1, k, n, 4)
						copy(a[i*k:], ra)
						copy(c[i*n:], rc)
					}
					for j := 0; j < n; j++ { // B column by column
						kind := kinds[rng.IntN(len(kinds))]
						if rng.IntN(2) == 0 {
							kind = "normal"
						}
						_, cb, _ := pairAllInputs(rng, f, kind, 1, k, 1, 4)
						for t := 0; t < k; t++ {
							b[t*n+j] = cb[t]
						}
					}
					runBoth(t, m, f, mm, k, n, a, b, c, RowMajor, Fractal, RowMajor, false, fmt.Sprint("mixed ", rep))
				}
			}
		}
		old := parallelMACs
		parallelMACs = 1
		defer func() { parallelMACs = old }()
		for _, m := range pairModels(t)[:2] {
			for _, f := range []fp.Format{fp.FP16, fp.BF16} {
				for _, kind := range []string{"normal", "special", "ftz-edge", "near-overflow"} {
					for _, sh := range [][3]int{{24, 40, 32}, {25, 33, 47}} {
						a, b, c := pairAllInputs(rng, f, kind, sh[0], sh[1], sh[2], 4)
						runBoth(t, m, f, sh[0], sh[1], sh[2], a, b, c, RowMajor, Fractal, RowMajor, false, kind+" parallel")
					}
				}
			}
		}
	})
}

// TestFastPairEveryPattern: every FP16 and every BF16 pattern of A (Inf
// and NaN included: those rows take the reference path), shuffled into
// rows of 16, against B columns whose exponents spread over the format's
// range (so that, for every A value, some products fall near 2^−126,
// below it, or overflow) and C of several magnitudes, subnormals
// included; for the mi210 preset and the FTZ-less variant (all models
// without -short).
func TestFastPairEveryPattern(t *testing.T) {
	pairImpls(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(45, 46))
		const k, n = 16, 16
		mm := (1 << 16) / k
		a := make([]uint16, 1<<16)
		for i := range a {
			a[i] = uint16(i)
		}
		rng.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
		models := pairModels(t)
		if testing.Short() {
			models = models[:2]
		}
		for _, m := range models {
			for _, f := range []fp.Format{fp.FP16, fp.BF16} {
				exps := []int{-14, -7, 0, 7, 14}
				if f == fp.BF16 {
					exps = []int{-126, -100, -63, -20, 0, 20, 63, 100, 127}
				}
				b := make([]uint16, k*n)
				for e := range b {
					x := math.Ldexp(1+rng.Float64(), exps[rng.IntN(len(exps))]+rng.IntN(3)-1)
					if rng.IntN(2) == 0 {
						x = -x
					}
					b[e] = uint16(fp.FromFloat64(x, f, fp.Options{}))
				}
				c := genC(rng, "spread", mm*n)
				for e := range c {
					if e%3 == 0 {
						c[e] = float32(rng.NormFloat64())
					}
				}
				runBoth(t, m, f, mm, k, n, a, b, c, RowMajor, Fractal, RowMajor, false, "every-pattern")
			}
		}
	})
}

// TestFastPairProducts: every BF16 pattern a times a set of b values
// chosen so that a·b lies at 2^−126 or just below or above it, or at the
// overflow threshold, one product per element (a row a, 0, 0, 0) and with
// a cancelling partner (a, a, 0, 0 against b, −b·(1 + 2^−7), 0, 0: the
// tree sum lands below 2^−126), C = 0 or a small normal: the product and
// sum flushes at their boundaries, in the tiles (the elements that pass
// the no-flush test) and on the element path.
func TestFastPairProducts(t *testing.T) {
	pairImpls(t, func(t *testing.T) {
		m, _ := Preset("mi210")
		f := fp.BF16
		pat := func(x float64) uint16 { return uint16(fp.FromFloat64(x, f, fp.Options{})) }
		a := make([]uint16, 0, 1<<16)
		for p := 0; p < 1<<16; p++ {
			if p&0x7f80 != 0x7f80 { // finite patterns
				a = append(a, uint16(p))
			}
		}
		// For each a row, B columns: 2^e·s for the e that bring |a·b| to
		// 2^−126 (b = 2^−126/a's leading power, times significands just
		// below and above 1), 2^127·…, and partners 1 ulp off.
		var cols []float64
		for _, s := range []float64{1, 1 - 0x1p-8, 1 + 0x1p-7, 1.5, 0.75} {
			cols = append(cols, s, -s)
		}
		const n, k = 16, 4
		for _, two := range []bool{false, true} {
			mm := len(a)
			A := make([]uint16, mm*k)
			for i, p := range a {
				A[i*k] = p
				if two {
					A[i*k+1] = p
				}
			}
			// The column scale depends on the row (a's exponent), so the
			// call is split by a's exponent.
			for e := -133; e <= 127; e++ {
				var rows []int
				for i, p := range a {
					if ex := int(p>>7&0xff) - 127; ex == e || (e == -133 && ex == -127) {
						rows = append(rows, i)
					}
				}
				if len(rows) == 0 {
					continue
				}
				Ar := make([]uint16, 0, len(rows)*k)
				for _, i := range rows {
					Ar = append(Ar, A[i*k:(i+1)*k]...)
				}
				B := make([]uint16, k*n)
				for j := 0; j < n; j++ {
					target := -126 - max(e, -126) // a·b near 2^−126
					if j >= len(cols) {
						target = 127 - max(e, -126) // near overflow
					}
					s := cols[j%len(cols)]
					B[j] = pat(math.Ldexp(s, target))
					if two {
						B[n+j] = pat(-math.Ldexp(s*(1+0x1p-7), target)) // a·b − a·b(1+2^−7)
					}
				}
				C := make([]float32, len(rows)*n)
				for e := range C {
					if e%2 == 1 {
						C[e] = float32(math.Ldexp(1+float64(e%7)/8, -126))
					}
				}
				runBoth(t, m, f, len(rows), k, n, Ar, B, C, RowMajor, RowMajor, RowMajor, false, fmt.Sprintf("products pair %v e=%d", two, e))
			}
		}
	})
}

// TestFastPairHand: hand-made elements, in the corner lanes of an 8×16
// tile (rows 0 and 7, columns 0 and 15) among ordinary ones, with the
// model's expected result checked as well as the fast path's agreement.
func TestFastPairHand(t *testing.T) {
	pairImpls(t, func(t *testing.T) {
		m, _ := Preset("mi210")
		nz := math.Copysign(0, -1)
		sub := math.Float32frombits(0x00400000) // 2^−127
		cases := []struct {
			name string
			f    fp.Format
			a, b []float64
			c    float32
			want float32
		}{
			// acc + s = 1.5·2^−126 − 2^−126 = 2^−127: flushed to +0.
			{"acc-flush", fp.BF16, []float64{p2(-63), 0, 0, 0}, []float64{-p2(-63), 0, 0, 0}, float32(1.5 * p2(-126)), 0},
			// ... and to −0 with the signs swapped.
			{"acc-flush-neg", fp.BF16, []float64{p2(-63), 0, 0, 0}, []float64{p2(-63), 0, 0, 0}, float32(-1.5 * p2(-126)), float32(nz)},
			// A product 2^−127 is flushed (the sum would be 2^−126 + 2^−127).
			{"prod-flush", fp.BF16, []float64{p2(-63), p2(-64), 0, 0}, []float64{p2(-63), p2(-63), 0, 0}, 0, float32(p2(-126))},
			// A tree sum 2^−125 − 1.5·2^−126 = 2^−127 is flushed: the other
			// half 2^−126 is the result (not 1.5·2^−126).
			{"tree-flush", fp.BF16, []float64{p2(-62), -1.5 * p2(-63), p2(-63), 0}, []float64{p2(-63), p2(-63), p2(-63), 0}, 0, float32(p2(-126))},
			// A subnormal c is flushed (with its sign) before the first
			// block: +0 + (+0) = +0, −0 + (−0) = −0.
			{"c-flush", fp.FP16, []float64{0, 0, 0, 0}, []float64{1, 1, 1, 1}, sub, 0},
			{"c-flush-neg", fp.FP16, []float64{nz, nz, nz, nz}, []float64{1, 1, 1, 1}, -sub, float32(nz)},
			// Subnormal FP16 inputs are flushed: the product is −0 (sign
			// kept), the sum with c = −0 is −0.
			{"in-flush", fp.FP16, []float64{-p2(-24), 0, 0, 0}, []float64{1, nz, nz, nz}, float32(nz), float32(nz)},
			// Short block (k = 3) of −0 products: padded with +0, so +0.
			{"pad", fp.FP16, []float64{nz, nz, nz}, []float64{1, 1, 1}, float32(nz), 0},
			// k = 4 of −0 products: −0.
			{"full-neg", fp.FP16, []float64{nz, nz, nz, nz}, []float64{1, 1, 1, 1}, float32(nz), float32(nz)},
			// Pairwise rounding: (1 + 2^−24) + (2^−24 + 2^−24) = 1 + 2^−23
			// (a chain gives 1, one rounding of the exact sum 1 + 2^−22).
			{"order", fp.FP16, []float64{1, p2(-12), p2(-12), p2(-12)}, []float64{1, p2(-12), p2(-12), p2(-12)}, 0, float32(1 + p2(-23))},
			// Overflow of a tree sum: +Inf (reference path).
			{"overflow", fp.BF16, []float64{p2(64), p2(64), 0, 0}, []float64{p2(63), p2(63), 0, 0}, 0, float32(math.Inf(1))},
		}
		for _, tc := range cases {
			pat := func(x float64) uint16 { return uint16(fp.FromFloat64(x, tc.f, fp.Options{})) }
			const mm, n = 8, 16
			k := len(tc.a)
			a, b, c := make([]uint16, mm*k), make([]uint16, k*n), make([]float32, mm*n)
			for r := 0; r < mm; r++ {
				for t := 0; t < k; t++ {
					a[r*k+t] = pat(float64(r + t + 1))
					if r == 0 || r == 7 {
						a[r*k+t] = pat(tc.a[t])
					}
				}
			}
			for t := 0; t < k; t++ {
				for j := 0; j < n; j++ {
					b[t*n+j] = pat(float64(j-t) / 4)
					if j == 0 || j == 15 {
						b[t*n+j] = pat(tc.b[t])
					}
				}
			}
			for e := range c {
				c[e] = float32(e)
				if r, j := e/n, e%n; (r == 0 || r == 7) && (j == 0 || j == 15) {
					c[e] = tc.c
				}
			}
			runBoth(t, m, tc.f, mm, k, n, a, b, c, RowMajor, RowMajor, RowMajor, false, tc.name)
			// The expected value through the public Dot (reference).
			ap, bp := make([]uint32, k), make([]uint32, k)
			for q := range ap {
				ap[q], bp[q] = uint32(pat(tc.a[q])), uint32(pat(tc.b[q]))
			}
			got, err := m.Dot(tc.f, ap, bp, math.Float32bits(tc.c), fp.FP32)
			if err != nil {
				t.Fatal(err)
			}
			if got != math.Float32bits(tc.want) {
				t.Errorf("%s: reference %08x, want %08x", tc.name, got, math.Float32bits(tc.want))
			}
		}
	})
}

// TestFastPairNoFlushBoundary: whole tiles of BF16 elements at the limit of
// the no-flush test, lo_A + lo_B = −126 (the tiles run, nothing may be
// flushed but acc + s) and −127 (the elements take elemPair: products
// 2^−127 and tree sums that cancel to 2^−127 must be flushed). Values are
// 2^(E+d) and 1.5·2^(E+d) with each row's (column's) lowest bit exactly at
// its lo, C zero or a small multiple of 2^−127.
func TestFastPairNoFlushBoundary(t *testing.T) {
	pairImpls(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(47, 48))
		m, _ := Preset("mi210")
		f := fp.BF16
		pat := func(x float64) uint16 { return uint16(fp.FromFloat64(x, f, fp.Options{})) }
		// val returns ±2^(lo+d) or ±3·2^(lo+d) (lowest bit 2^(lo+d)), d ≥ 0,
		// d = 0 when first.
		val := func(lo int, first bool) float64 {
			d := rng.IntN(4)
			if first {
				d = 0
			}
			x := math.Ldexp(float64(1+2*rng.IntN(2)), lo+d)
			if rng.IntN(2) == 0 {
				x = -x
			}
			return x
		}
		for rep := 0; rep < 60; rep++ {
			mm, n, k := 16, 32, 4*(1+rng.IntN(2))
			if rep%3 == 0 {
				k += 1 + rng.IntN(3) // a tail block
			}
			E := rng.IntN(120) - 60
			F := -126 - E - rng.IntN(2)
			a, b, c := make([]uint16, mm*k), make([]uint16, k*n), make([]float32, mm*n)
			for i := 0; i < mm; i++ {
				for q := 0; q < k; q++ {
					a[i*k+q] = pat(val(E, q == i%k))
				}
			}
			for q := 0; q < k; q++ {
				for j := 0; j < n; j++ {
					b[q*n+j] = pat(val(F, q == j%k))
				}
			}
			for e := range c {
				c[e] = float32(math.Ldexp(float64(rng.IntN(9)-4), -127))
			}
			runBoth(t, m, f, mm, k, n, a, b, c, RowMajor, RowMajor, RowMajor, false, fmt.Sprintf("E=%d F=%d", E, F))
		}
	})
}

// TestFastAMDMMADGeneral: the uint32 MMAD entry (the one the emulated
// GEMMs call, row-major and fractal) takes the pairwise and late-c fast
// paths too, and agrees with the reference.
func TestFastAMDMMADGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	const mm, k, n = 17, 40, 19
	for _, name := range []string{"mi210", "mi300"} {
		m, _ := Preset(name)
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			for _, l := range []Layout{RowMajor, Fractal} {
				a := randPats(rng, f, mm*k)
				b := randPats(rng, f, k*n)
				c := randPats(rng, fp.FP32, mm*n)
				run := func(fast bool) []uint32 {
					defer setFast(fast)()
					out := append([]uint32(nil), toLayout(c, mm, n, l, 32)...)
					if err := m.MMAD(f, fp.FP32, mm, k, n, toLayout(a, mm, k, l, 16), l, toLayout(b, k, n, l, 16), l, out, l, false); err != nil {
						t.Fatal(err)
					}
					return out
				}
				got, want := run(true), run(false)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s %v %v: index %d fast %08x reference %08x", name, f, l, i, got[i], want[i])
					}
				}
			}
		}
	}
}
