package cube

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// seqImpls runs fn (as subtests "go" and "avx512") with each tile
// implementation of the sequential paths this machine has: the pure-Go
// tiles and, with AVX-512, the assembly 8×16 tiles; for the latter it
// checks that the assembly ran.
func seqImpls(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	bothImpls(t, func(calls *atomic.Int64) func() {
		old := seqTileFn
		seqTileFn = func(ap, bp *float32, c, res *uint32, nn, k int, rz bool) {
			calls.Add(1)
			old(ap, bp, c, res, nn, k, rz)
		}
		return func() { seqTileFn = old }
	}, fn)
}

// seqModels are the models of the sequential fast paths.
func seqModels(t testing.TB) []Model {
	return fastModels(t)[:2]
}

// seqTileKinds are the inputs of TestFastSeqTiles: those of the other
// tile tests plus two aimed at the sequential tiles.
var seqTileKinds = append(append(slices.Clone(genKinds), truncTileKinds...), "rz-top", "sub32")

// seqTileInputs returns A (mm×k), B (k×n) and C (mm×n) of the kind.
//
// rz-top: BF16 products near 2^99 of both signs and |c| near MaxFloat32
// (its unit in the last place is 2^104). For k ≤ 3 every element passes
// plainSeqRZ and takes the tile, whose RZ sums stay at or just below
// MaxFloat32; for longer k every fourth column has products from 2^104 up,
// whose sums with c cross 2^128 (the model's RZ gives ±Inf there, the
// hardware's ±MaxFloat32): plainSeqRZ must send them to the element path.
// sub32: FP32-subnormal c, and (BF16) products around 2^−140 whose sums
// are FP32 subnormals, some with bits below 2^−149 (products that are not
// FP32 values: the FMA's one rounding).
func seqTileInputs(rng *rand.Rand, f fp.Format, kind string, mm, k, n int) (a, b []uint16, c []float32) {
	pat := func(x float64) uint16 { return uint16(fp.FromFloat64(x, f, fp.Options{})) }
	switch kind {
	case "rz-top":
		a, b, c = make([]uint16, mm*k), make([]uint16, k*n), make([]float32, mm*n)
		for e := range a {
			a[e] = pat(math.Ldexp(1+rng.Float64(), 50))
		}
		for e := range b {
			s, x := 1.0, 48
			if e%n%2 == 1 {
				s = -1
			}
			if e%n%4 == 3 && k > 3 {
				s, x = 1, 54
			}
			b[e] = pat(s * math.Ldexp(1+rng.Float64(), x))
		}
		if f == fp.FP16 { // FP16 cannot reach: ordinary products
			a, b = genPats(rng, f, "normal", mm*k), genPats(rng, f, "normal", k*n)
		}
		for e := range c {
			c[e] = math.Float32frombits(0x7f7fffff - uint32(rng.IntN(4)))
			if rng.IntN(4) == 0 {
				c[e] = -c[e]
			}
		}
		return a, b, c
	case "sub32":
		a, b, c = make([]uint16, mm*k), make([]uint16, k*n), make([]float32, mm*n)
		tinyPats(rng, f, a)
		tinyPats(rng, f, b)
		for e := range c {
			c[e] = math.Float32frombits(uint32(rng.IntN(1<<23)) | uint32(rng.IntN(2))<<31)
		}
		return a, b, c
	}
	if slices.Contains(truncTileKinds, kind) {
		return truncTileInputs(rng, f, kind, mm, k, n, 16)
	}
	return genPats(rng, f, kind, mm*k), genPats(rng, f, kind, k*n), genC(rng, kind, mm*n)
}

// TestFastSeqTiles: the sequential paths (fp32-rne, fp32-rz) with the
// AVX-512 8×16 tiles where available and the Go tiles, against the
// reference path: FP16 and BF16 inputs with wide exponent ranges, zeros
// and −0 (signed zero results), c = ±0, FP32-subnormal c and sums, c near
// 2^128, sums overflowing to ±Inf (RNE) and reaching 2^128 under RZ,
// Inf/NaN, shapes that are not multiples of the tile, C given (init
// false) and not, and calls split among goroutines.
func TestFastSeqTiles(t *testing.T) {
	seqImpls(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(31, 32))
		shapes := [][3]int{{8, 1, 16}, {8, 3, 16}, {16, 40, 32}, {17, 37, 35}, {9, 50, 19}, {7, 20, 40}}
		if !testing.Short() {
			shapes = append(shapes, [3]int{24, 129, 48})
		}
		for _, m := range seqModels(t) {
			for _, f := range []fp.Format{fp.FP16, fp.BF16} {
				for _, kind := range seqTileKinds {
					for si, sh := range shapes {
						mm, k, n := sh[0], sh[1], sh[2]
						a, b, c := seqTileInputs(rng, f, kind, mm, k, n)
						runBoth(t, m, f, mm, k, n, a, b, c, RowMajor, Layout(si%2), RowMajor, si == 2, kind)
					}
				}
			}
		}
		old := parallelMACs
		parallelMACs = 1
		defer func() { parallelMACs = old }()
		for _, m := range seqModels(t) {
			for _, f := range []fp.Format{fp.FP16, fp.BF16} {
				for _, kind := range []string{"normal", "special", "rz-top", "zero-lines"} {
					for _, sh := range [][3]int{{24, 40, 32}, {25, 33, 47}, {40, 9, 16}} {
						a, b, c := seqTileInputs(rng, f, kind, sh[0], sh[1], sh[2])
						runBoth(t, m, f, sh[0], sh[1], sh[2], a, b, c, RowMajor, Fractal, RowMajor, false, kind+" parallel")
					}
				}
			}
		}
	})
}

// TestFastSeqRZTop: the inputs of kind rz-top reach both sides of 2^128
// (the reference gives MaxFloat32 and ±Inf), so that TestFastSeqTiles
// tests the overflow rule and not only ordinary sums.
func TestFastSeqRZTop(t *testing.T) {
	m, _ := Preset("fp32-rz")
	rng := rand.New(rand.NewPCG(33, 34))
	defer setFast(false)()
	for _, k := range []int{3, 37} {
		const mm, n = 8, 16
		a, b, c := seqTileInputs(rng, fp.BF16, "rz-top", mm, k, n)
		if err := m.MMADBF16(mm, k, n, a, RowMajor, b, RowMajor, c, RowMajor, false); err != nil {
			t.Fatal(err)
		}
		var inf, top int
		for _, x := range c {
			switch math.Abs(float64(x)) {
			case math.Inf(1):
				inf++
			case math.MaxFloat32:
				top++
			}
		}
		if top == 0 || (k > 3) != (inf > 0) {
			t.Errorf("k = %d: %d results ±MaxFloat32, %d ±Inf", k, top, inf)
		}
	}
}

// TestFastSeqHand: hand-made elements in every lane position of an 8×16
// tile (rows 0, 7; columns 0, 15), next to ordinary elements: signed-zero
// sums, cancellation, subnormal FP32 sums, rounding ties.
func TestFastSeqHand(t *testing.T) {
	seqImpls(t, func(t *testing.T) {
		h := func(x float64) uint16 { return uint16(fp.FromFloat64(x, fp.FP16, fp.Options{})) }
		nz := math.Copysign(0, -1)
		cases := []struct {
			name string
			a, b []float64
			c    float32
		}{
			{"zeros-neg", []float64{nz, 0}, []float64{1, -1}, float32(nz)},    // −0 + −0 + −0 = −0
			{"zeros-mixed", []float64{nz, 0}, []float64{1, 1}, float32(nz)},   // −0 + −0 + +0 = +0
			{"zeros-posc", []float64{nz}, []float64{1}, 0},                    // +0 + −0 = +0
			{"cancel", []float64{-1, 1}, []float64{1, 1}, 0},                  // −1 + 1 = +0
			{"cancel-negc", []float64{1}, []float64{2}, -2},                   // −2 + 2 = +0
			{"tie", []float64{1, p2(-12)}, []float64{p2(-12), 1}, float32(1)}, // 1 + 2^−24 + 2^−24
			{"sub", []float64{p2(-24), -p2(-24)}, []float64{p2(-24), p2(-23)}, // subnormal c
				math.Float32frombits(5)},
			{"max", []float64{65504, -65504}, []float64{65504, 65504}, math.MaxFloat32},
		}
		for _, m := range seqModels(t) {
			for _, tc := range cases {
				const mm, n = 8, 16
				k := len(tc.a)
				a, b, c := make([]uint16, mm*k), make([]uint16, k*n), make([]float32, mm*n)
				for r := 0; r < mm; r++ {
					for t := 0; t < k; t++ {
						a[r*k+t] = h(float64(r + t + 1))
						if r == 0 || r == 7 {
							a[r*k+t] = h(tc.a[t])
						}
					}
				}
				for t := 0; t < k; t++ {
					for j := 0; j < n; j++ {
						b[t*n+j] = h(float64(j - t))
						if j == 0 || j == 15 {
							b[t*n+j] = h(tc.b[t])
						}
					}
				}
				for e := range c {
					c[e] = float32(e)
					if r, j := e/n, e%n; (r == 0 || r == 7) && (j == 0 || j == 15) {
						c[e] = tc.c
					}
				}
				runBoth(t, m, fp.FP16, mm, k, n, a, b, c, RowMajor, RowMajor, RowMajor, false, tc.name)
			}
		}
	})
}
