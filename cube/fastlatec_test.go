package cube

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// lateCModels are the models of the late-c fast path: the mi300 preset and
// custom variants (other L, powers of two and not; F from 0, where even
// the largest product loses bits, to 30; RZ final rounding).
func lateCModels(t testing.TB) []Model {
	m, err := Preset("mi300")
	if err != nil {
		t.Fatal(err)
	}
	out := []Model{m}
	for _, v := range []struct {
		L, F int
		r    fp.Rounding
	}{{8, 24, fp.RZ}, {4, 12, fp.RNE}, {1, 0, fp.RNE}, {3, 5, fp.RZ}, {16, 30, fp.RNE}, {32, 24, fp.RZ}} {
		out = append(out, Model{Name: fmt.Sprintf("latec-L%d-F%d-%v", v.L, v.F, v.r), Kind: TruncatedLateC,
			RoundFP32: v.r, RoundFP16: fp.RNE, Formats: half(v.L, v.F)})
	}
	return out
}

// TestFastLateCKind: the late-c models take the late-c fast path, FP16
// output does not.
func TestFastLateCKind(t *testing.T) {
	for _, m := range lateCModels(t) {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			k, err := m.kernel(f, fp.FP32)
			if err != nil {
				t.Fatal(err)
			}
			if got := fastKindFor(k, f); got != fastLateC {
				t.Errorf("%s %v: fast kind %d, want fastLateC", m.Name, f, got)
			}
		}
	}
	m, _ := Preset("mi300")
	if k, _ := m.kernel(fp.FP16, fp.FP16); fastKindFor(k, fp.FP16) != fastNone {
		t.Error("mi300 fp16 output: fast path taken")
	}
	big := Model{Name: "big", Kind: TruncatedLateC, RoundFP32: fp.RNE, Formats: half(64, 50)}
	if k, _ := big.kernel(fp.FP16, fp.FP32); fastKindFor(k, fp.FP16) != fastNone {
		t.Error("F = 50, L = 64: fast path taken")
	}
}

// lateCKinds are inputs aimed at the late-c path (lateCInputs).
var lateCKinds = []string{"c-late", "c-small", "bf16-big", "zero-blocks"}

// lateCInputs returns A (mm×k), B (k×n) and C (mm×n) of the kind:
//
//   - c-late: N(0,1) inputs, C of either sign with 24 random bits and an
//     exponent from 2^−40 to 2^40, so that c is above, at or below the
//     products' e_dot and its low bits are rounded toward −∞ (negative c:
//     away from zero) at u_c.
//   - c-small: C just below the unit of the block (±(1..3)·2^−30 against
//     products near 1; negative ones round to −2^u_c), FP32 subnormals,
//     and ±0.
//   - bf16-big: BF16 rows and columns with exponents up to 2^70, so that
//     some elements have products of 2^128 and more (the reference path,
//     ±Inf or NaN), others sums that round to ±Inf or stay just below;
//     FP16: C near ±MaxFloat32.
//   - zero-blocks: whole blocks of ±0 in rows of A (mostly −0) with C = ±0
//     or not: the zero-sign rule and c passed through unchanged.
func lateCInputs(rng *rand.Rand, f fp.Format, kind string, mm, k, n, L int) (a, b []uint16, c []float32) {
	pat := func(x float64) uint16 { return uint16(fp.FromFloat64(x, f, fp.Options{})) }
	sgn := func() float64 { return float64(1 - 2*rng.IntN(2)) }
	a, b = genPats(rng, f, "normal", mm*k), genPats(rng, f, "normal", k*n)
	c = make([]float32, mm*n)
	switch kind {
	case "c-late":
		for e := range c {
			c[e] = float32(sgn() * math.Ldexp(1+float64(rng.IntN(1<<23))/(1<<23), rng.IntN(81)-40))
		}
	case "c-small":
		for e := range c {
			switch e % 4 {
			case 0, 1:
				c[e] = float32(sgn() * math.Ldexp(float64(1+rng.IntN(3)), -30-rng.IntN(3)))
			case 2:
				c[e] = math.Float32frombits(uint32(1+rng.IntN(1<<23-1)) | uint32(rng.IntN(2))<<31)
			default:
				c[e] = float32(math.Copysign(0, sgn()))
			}
		}
	case "bf16-big":
		if f == fp.BF16 {
			for i := 0; i < mm; i++ {
				sh := 60 + rng.IntN(8)
				if i%3 == 0 {
					sh = 0
				}
				for t := 0; t < k; t++ {
					a[i*k+t] = pat(math.Ldexp(fp.ToFloat64(uint32(a[i*k+t]), f), sh))
				}
			}
			for j := 0; j < n; j++ {
				sh := 60 + rng.IntN(8)
				for t := 0; t < k; t++ {
					b[t*n+j] = pat(math.Ldexp(fp.ToFloat64(uint32(b[t*n+j]), f), sh))
				}
			}
		}
		for e := range c {
			c[e] = float32(rng.NormFloat64())
			if e%3 == 0 {
				c[e] = float32(sgn() * math.Ldexp(1-rng.Float64()/1e5, 128))
			}
		}
	case "zero-blocks":
		for i := 0; i < mm; i++ {
			for t := 0; t < k; t++ {
				if (t/L+i)%2 == 0 {
					a[i*k+t] = pat(math.Copysign(0, -1))
					if rng.IntN(8) == 0 {
						a[i*k+t] = 0
					}
				}
			}
		}
		for e := range c {
			c[e] = float32(rng.NormFloat64())
			if e%2 == 0 {
				c[e] = float32(math.Copysign(0, sgn()))
			}
		}
	default:
		panic("lateCInputs: unknown kind " + kind)
	}
	return a, b, c
}

// lateCAllInputs returns inputs of any kind of the late-c tests.
func lateCAllInputs(rng *rand.Rand, f fp.Format, kind string, mm, k, n, L int) (a, b []uint16, c []float32) {
	switch {
	case slices.Contains(lateCKinds, kind):
		return lateCInputs(rng, f, kind, mm, k, n, L)
	case slices.Contains(truncTileKinds, kind):
		return truncTileInputs(rng, f, kind, mm, k, n, L)
	}
	return genPats(rng, f, kind, mm*k), genPats(rng, f, kind, k*n), genC(rng, kind, mm*n)
}

func lateCAllKinds() []string {
	var out []string
	for _, k := range slices.Concat(lateCKinds, genKinds, truncTileKinds) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// TestFastLateCMatchesReference: the late-c fast path against the
// reference kernel, bit for bit: every model of lateCModels, FP16 and
// BF16, every input kind (c above, at and below e_dot and rounded toward
// −∞; products truncated; blocks without nonzero products and the
// zero-sign rule; FP16 subnormals; FP32-subnormal results and c; products
// of 2^128 and more; sums overflowing; Inf/NaN inputs and C), shapes that
// are and are not multiples of the 2×2 tile and of L, layouts, C given
// and not.
func TestFastLateCMatchesReference(t *testing.T) {
	tileImpls(t, &lateCTileFn, testFastLateCMatchesReference)
}

func testFastLateCMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	shapes := [][3]int{{1, 1, 1}, {2, 8, 2}, {4, 16, 8}, {5, 13, 7}, {3, 0, 2}, {0, 4, 3}, {9, 37, 10}, {6, 20, 6}}
	if !testing.Short() {
		shapes = append(shapes, [3]int{16, 129, 18})
	}
	for mi, m := range lateCModels(t) {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			L := m.Formats[f].L
			for ki, kind := range lateCAllKinds() {
				for si, sh := range shapes {
					if mi > 1 && (si+ki)%3 != 0 { // the custom models on a rotating third
						continue
					}
					mm, k, n := sh[0], sh[1], sh[2]
					a, b, c := lateCAllInputs(rng, f, kind, mm, k, n, L)
					l := (si + ki) % 8
					runBoth(t, m, f, mm, k, n, a, b, c, Layout(l&1), Layout(l>>1&1), Layout(l>>2&1), (si+ki)%5 == 0, kind)
				}
			}
		}
	}
	// Calls split among goroutines.
	old := parallelMACs
	parallelMACs = 1
	defer func() { parallelMACs = old }()
	for _, m := range lateCModels(t)[:2] {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			for _, kind := range []string{"normal", "special", "bf16-big", "zero-blocks"} {
				for _, sh := range [][3]int{{24, 40, 16}, {13, 33, 27}} {
					a, b, c := lateCAllInputs(rng, f, kind, sh[0], sh[1], sh[2], 8)
					runBoth(t, m, f, sh[0], sh[1], sh[2], a, b, c, RowMajor, Fractal, RowMajor, false, kind+" parallel")
				}
			}
		}
	}
}

// TestFastLateCEveryPattern: every FP16 and BF16 pattern of A (Inf and
// NaN included), shuffled into rows of 16, against B columns of spread
// exponents and C of every magnitude and sign.
func TestFastLateCEveryPattern(t *testing.T) {
	tileImpls(t, &lateCTileFn, testFastLateCEveryPattern)
}

func testFastLateCEveryPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	const k, n = 16, 8
	mm := (1 << 16) / k
	a := make([]uint16, 1<<16)
	for i := range a {
		a[i] = uint16(i)
	}
	rng.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
	models := lateCModels(t)
	if testing.Short() {
		models = models[:2]
	}
	for _, m := range models {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			exps := []int{-14, -7, 0, 7, 14}
			if f == fp.BF16 {
				exps = []int{-126, -63, -20, 0, 20, 63, 127}
			}
			b := make([]uint16, k*n)
			for e := range b {
				b[e] = uint16(fp.FromFloat64(float64(1-2*rng.IntN(2))*math.Ldexp(1+rng.Float64(), exps[rng.IntN(len(exps))]), f, fp.Options{}))
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
}

// TestFastLateCHand: hand-made elements with known results, alone and in
// tiles among ordinary elements.
func TestFastLateCHand(t *testing.T) {
	tileImpls(t, &lateCTileFn, testFastLateCHand)
}

func testFastLateCHand(t *testing.T) {
	m, _ := Preset("mi300")
	nz := math.Copysign(0, -1)
	cases := []struct {
		name string
		f    fp.Format
		a, b []float64
		c    float32
		want float32
	}{
		// c rounded toward −∞ at 2^(0−24): −2^−30 becomes −2^−24.
		{"c-neg", fp.FP16, []float64{1}, []float64{1}, float32(-p2(-30)), float32(1 - p2(-24))},
		{"c-pos", fp.FP16, []float64{1}, []float64{1}, float32(p2(-30)), 1},
		// c above e_dot: aligned at its own exponent, exact.
		{"c-big", fp.FP16, []float64{p2(-10)}, []float64{p2(-10)}, -3, float32(-3 + p2(-20))},
		// A product truncated: 1 + 1.5·2^−24 → 1 + 2^−24 → tie → 1.
		{"trunc", fp.FP16, []float64{1, 3 * p2(-13)}, []float64{1, p2(-12)}, 0, 1},
		// Negative products truncate toward zero (not −∞): −1 − 1.5·2^−24
		// → −1 − 2^−24 → tie → −1.
		{"trunc-neg", fp.FP16, []float64{-1, -3 * p2(-13)}, []float64{1, p2(-12)}, 0, -1},
		// No nonzero product: c unchanged; with c = ±0 the zero-sign rule.
		{"zero-c", fp.FP16, []float64{0, nz}, []float64{1, 1}, 1.5, 1.5},
		{"zero-neg", fp.FP16, []float64{nz, nz}, []float64{1, 1}, float32(nz), float32(nz)},
		{"zero-mixed", fp.FP16, []float64{nz, 0}, []float64{1, 1}, float32(nz), 0},
		// Exact cancellation: +0.
		{"cancel", fp.FP16, []float64{1, -1}, []float64{1, 1}, float32(nz), 0},
		{"cancel-c", fp.FP16, []float64{1}, []float64{1}, -1, 0},
		// Product overflow: ±Inf, NaN with both signs.
		{"overflow", fp.BF16, []float64{p2(100)}, []float64{p2(30)}, 0, float32(math.Inf(1))},
		{"overflow-nan", fp.BF16, []float64{p2(100), -p2(100)}, []float64{p2(30), p2(30)}, 0, float32(math.NaN())},
		// A block sum that overflows (products 1.125·2^127, which pass the
		// fast path's overflow test) and a later block that would bring
		// it back: +Inf stays (c = +Inf plus finite products is c).
		{"sum-inf", fp.BF16, []float64{1.5 * p2(63), 1.5 * p2(63), 0, 0, 0, 0, 0, 0, -1.5 * p2(63)},
			[]float64{1.5 * p2(63), 1.5 * p2(63), 0, 0, 0, 0, 0, 0, 1.5 * p2(63)}, 0, float32(math.Inf(1))},
	}
	for _, tc := range cases {
		pat := func(x float64) uint16 { return uint16(fp.FromFloat64(x, tc.f, fp.Options{})) }
		k := len(tc.a)
		a, b := make([]uint16, k), make([]uint16, k)
		for q := range a {
			a[q], b[q] = pat(tc.a[q]), pat(tc.b[q])
		}
		runBoth(t, m, tc.f, 1, k, 1, a, b, []float32{tc.c}, RowMajor, RowMajor, RowMajor, false, tc.name)
		ap, bp := make([]uint32, k), make([]uint32, k)
		for q := range ap {
			ap[q], bp[q] = uint32(a[q]), uint32(b[q])
		}
		got, err := m.Dot(tc.f, ap, bp, math.Float32bits(tc.c), fp.FP32)
		if err != nil {
			t.Fatal(err)
		}
		want := math.Float32bits(tc.want)
		if math.IsNaN(float64(tc.want)) {
			want = NaNBits
		}
		if got != want {
			t.Errorf("%s: reference %08x, want %08x", tc.name, got, want)
		}
		// In several lanes of a 4×8 tile (the AVX-512 tile; with the Go
		// tiles, each position of a 2×2 tile) among ordinary elements.
		for _, pos := range [][2]int{{0, 0}, {1, 7}, {2, 3}, {3, 6}} {
			const mm, n = 4, 8
			pi, pj := pos[0], pos[1]
			A, B, C := make([]uint16, mm*k), make([]uint16, k*n), make([]float32, mm*n)
			for r := 0; r < mm; r++ {
				for q := 0; q < k; q++ {
					A[r*k+q] = pat(float64(r+q+1) / 8)
					if r == pi {
						A[r*k+q] = a[q]
					}
				}
			}
			for q := 0; q < k; q++ {
				for j := 0; j < n; j++ {
					B[q*n+j] = pat(float64(j-q) / 4)
					if j == pj {
						B[q*n+j] = b[q]
					}
				}
			}
			for e := range C {
				C[e] = float32(e)
				if e == pi*n+pj {
					C[e] = tc.c
				}
			}
			runBoth(t, m, tc.f, mm, k, n, A, B, C, RowMajor, RowMajor, RowMajor, false, fmt.Sprint(tc.name, " tile ", pos))
		}
	}
}
