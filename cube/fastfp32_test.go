package cube

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// impls32 runs fn with the pure-Go tiles ("go") and, with AVX-512, the
// assembly tiles ("avx512"), which must then have run (either the
// sequential or the truncated one).
func impls32(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	bothImpls(t, func(calls *atomic.Int64) func() {
		oldSeq, oldTrunc := seqTileFn, truncTileFn
		seqTileFn = func(ap, bp *float32, c, res *uint32, nn, k int, rz bool) {
			calls.Add(1)
			oldSeq(ap, bp, c, res, nn, k, rz)
		}
		truncTileFn = func(ap *float64, ep *int32, bp *float64, fp *int32, c *float64, res *uint32, nn, k, L, x int, rz bool) uint32 {
			calls.Add(1)
			return oldTrunc(ap, ep, bp, fp, c, res, nn, k, L, x, rz)
		}
		return func() { seqTileFn, truncTileFn = oldSeq, oldTrunc }
	}, fn)
}

// case32 is one model and input format of the FP32/TF32 fast paths, with
// the fast kind it must take.
type case32 struct {
	m    Model
	in   fp.Format
	want fastKind
}

// models32 are the presets with FP32/TF32 fast paths and custom block-FMA
// models with FP32 or TF32 inputs (finite F, both roundings, several L).
func models32(t testing.TB) []case32 {
	var out []case32
	for _, name := range []string{"fp32-rne", "fp32-rz"} {
		m, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		k := fastSeqRNE32
		if name == "fp32-rz" {
			k = fastSeqRZ32
		}
		out = append(out, case32{m, fp.FP32, k}, case32{m, fp.TF32, k})
	}
	for _, name := range []string{"a100", "ada", "h100", "b200"} {
		m, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, case32{m, fp.TF32, fastTruncBlock})
	}
	for _, p := range []struct {
		L, F int
		r    fp.Rounding
		in   fp.Format
	}{{4, 24, fp.RNE, fp.FP32}, {8, 25, fp.RZ, fp.FP32}, {3, 0, fp.RZ, fp.FP32}, {1, 47, fp.RNE, fp.FP32},
		{16, 46, fp.RZ, fp.FP32}, {5, 13, fp.RNE, fp.TF32}, {2, 48, fp.RZ, fp.TF32}} {
		m := Model{Name: fmt.Sprintf("custom-L%d-F%d-%v", p.L, p.F, p.r), Kind: BlockFMA, RoundFP32: p.r, RoundFP16: fp.RNE,
			Formats: map[fp.Format]FormatParams{p.in: {L: p.L, F: p.F}}}
		out = append(out, case32{m, p.in, fastTruncBlock})
	}
	return out
}

// TestFast32Kind: the dispatch of FP32/TF32 inputs, including what stays
// on the reference path.
func TestFast32Kind(t *testing.T) {
	for _, c := range models32(t) {
		k, err := c.m.kernel(c.in, fp.FP32)
		if err != nil {
			t.Fatal(err)
		}
		if got := fastKindFor(k, c.in); got != c.want {
			t.Errorf("%s %v: fast kind %d, want %d", c.m.Name, c.in, got, c.want)
		}
	}
	m, _ := Preset("ascend-910b3")
	for _, in := range []fp.Format{fp.FP32, fp.TF32} {
		k, _ := m.kernel(in, fp.FP32)
		if got := fastKindFor(k, in); got != fastNone {
			t.Errorf("ascend-910b3 %v: fast kind %d, want none (exact block)", in, got)
		}
	}
	h, _ := Preset("h100")
	if k, _ := h.kernel(fp.TF32, fp.FP16); fastKindFor(k, fp.TF32) != fastNone {
		t.Error("h100 tf32 → fp16 output: want no fast path")
	}
	if k, _ := (Model{Kind: BlockFMA, RoundFP32: fp.RZ, Formats: map[fp.Format]FormatParams{fp.FP32: {L: 64, F: 46}}}).kernel(fp.FP32, fp.FP32); fastKindFor(k, fp.FP32) != fastNone {
		t.Error("F = 46, L = 64: the int64 sum may exceed 2^53, want no fast path")
	}
}

// kinds32 are the input kinds of gen32.
var kinds32 = []string{"normal", "uniform", "wide", "sub", "zeros", "big", "ints", "special", "cancel", "ties"}

// f32pat returns the pattern of sign·m·2^e (m < 2^24, exact).
func f32pat(neg bool, m uint32, e int) uint32 {
	v := math.Float32bits(float32(math.Ldexp(float64(m), e)))
	if neg {
		v |= 1 << 31
	}
	return v
}

// gen32 returns n FP32 patterns of the kind (random low bits included:
// TF32 inputs must ignore them).
func gen32(rng *rand.Rand, kind string, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		var v uint32
		switch kind {
		case "normal":
			v = math.Float32bits(float32(rng.NormFloat64()))
		case "uniform":
			v = math.Float32bits(rng.Float32())
		case "wide": // any finite pattern
			v = rng.Uint32()&0x807fffff | uint32(rng.IntN(255))<<23
		case "sub": // subnormals and the smallest normals
			v = rng.Uint32()&0x807fffff | uint32(rng.IntN(2))<<23
		case "zeros":
			v = rng.Uint32() & 0x80000000
			if rng.IntN(4) == 0 {
				v = math.Float32bits(float32(rng.NormFloat64()))
			}
		case "big": // products overflow float32
			v = rng.Uint32()&0x807fffff | uint32(200+rng.IntN(55))<<23
		case "ints":
			v = math.Float32bits(float32(rng.IntN(9) - 4))
		case "special":
			v = math.Float32bits(float32(rng.NormFloat64()))
			switch rng.IntN(40) {
			case 0:
				v = 0x7f800000 | rng.Uint32()&0x80000000 // ±Inf
			case 1:
				v = 0x7f800000 | rng.Uint32()&0x807fffff | 1 // NaN (TF32: NaN or Inf)
			case 2:
				v = 0x7fc00000
			}
		case "cancel": // pairs x, −x
			v = math.Float32bits(float32(rng.NormFloat64()))
			if i%2 == 1 {
				v = out[i-1] ^ 1<<31
			}
		case "ties": // 1 + small odd multiples: sums land on FP32 midpoints
			v = f32pat(rng.IntN(2) == 0, 1<<23|uint32(rng.IntN(4)), -23+rng.IntN(3)-rng.IntN(2)*24)
		}
		out[i] = v
	}
	return out
}

// toLayout32 lays out a row-major rows×cols matrix of 32-bit patterns in
// layout l, padding with pad's values.
func toLayout32(src []uint32, rows, cols int, l Layout, pad *rand.Rand) []uint32 {
	out := make([]uint32, LayoutLen(rows, cols, l, 32))
	for i := range out {
		out[i] = pad.Uint32()
	}
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			out[layoutIndex(l, r, c, cols, 32)] = src[r*cols+c]
		}
	}
	return out
}

// runBoth32 runs one MMAD (uint32 entry) with the fast paths on and off
// and compares the whole C buffers (padding included) bit for bit.
func runBoth32(t *testing.T, c32 case32, mm, k, n int, a, b, c []uint32, la, lb, lc Layout, init bool, what string) {
	t.Helper()
	pad := rand.New(rand.NewPCG(uint64(mm*k*n), 3))
	ab, bb, cb := toLayout32(a, mm, k, la, pad), toLayout32(b, k, n, lb, pad), toLayout32(c, mm, n, lc, pad)
	run := func(fast bool) []uint32 {
		defer setFast(fast)()
		out := append([]uint32(nil), cb...)
		if err := c32.m.MMAD(c32.in, fp.FP32, mm, k, n, ab, la, bb, lb, out, lc, init); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got, want := run(true), run(false)
	for x := range got {
		if got[x] != want[x] {
			i, j := -1, -1
			for r := 0; r < mm && i < 0; r++ {
				for q := 0; q < n; q++ {
					if layoutIndex(lc, r, q, n, 32) == x {
						i, j = r, q
						break
					}
				}
			}
			t.Fatalf("%s %v %s %d×%d×%d A %v B %v C %v init %v: element (%d, %d) fast %08x (%g) reference %08x (%g)",
				c32.m.Name, c32.in, what, mm, k, n, la, lb, lc, init, i, j,
				got[x], math.Float32frombits(got[x]), want[x], math.Float32frombits(want[x]))
		}
	}
}

// TestFast32MatchesReference: every FP32/TF32 fast path against the
// reference on every input kind, odd and tile-sized shapes, all layout
// combinations (on a rotating subset of shapes), init true and false,
// with the Go and the AVX-512 tiles.
func TestFast32MatchesReference(t *testing.T) {
	impls32(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(32, 33))
		shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {2, 16, 2}, {8, 9, 16}, {9, 17, 33}, {17, 3, 19}, {8, 0, 16}, {0, 4, 3}, {16, 24, 32}}
		if !testing.Short() {
			shapes = append(shapes, [3]int{33, 40, 35})
		}
		for _, c32 := range models32(t) {
			for _, kind := range kinds32 {
				for si, sh := range shapes {
					mm, k, n := sh[0], sh[1], sh[2]
					a, b := gen32(rng, kind, mm*k), gen32(rng, kind, k*n)
					ckind := kind
					if kind == "cancel" || kind == "ints" || kind == "big" {
						ckind = "zeros"
					}
					c := gen32(rng, ckind, mm*n)
					for lcomb := 0; lcomb < 16; lcomb++ {
						if lcomb%8 != si%8 && si%2 == 1 {
							continue
						}
						la, lb, lc := Layout(lcomb&1), Layout(lcomb>>1&1), Layout(lcomb>>2&1)
						runBoth32(t, c32, mm, k, n, a, b, c, la, lb, lc, lcomb>>3 == 1, kind)
					}
				}
			}
		}
	})
}

// TestFast32Mixed: ordinary inputs in which each row / column mixes in one
// hazard (a very wide exponent spread, subnormals, an Inf or NaN, huge
// values), so tiles and the element path meet in one call.
func TestFast32Mixed(t *testing.T) {
	impls32(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(34, 35))
		mm, k, n := 19, 21, 37
		for _, c32 := range models32(t) {
			for rep := 0; rep < 3; rep++ {
				a, b, c := gen32(rng, "normal", mm*k), gen32(rng, "normal", k*n), gen32(rng, "normal", mm*n)
				for _, v := range [][]uint32{a, b, c} {
					for i := range v {
						switch rng.IntN(30) {
						case 0:
							v[i] = gen32(rng, "wide", 1)[0]
						case 1:
							v[i] = gen32(rng, "sub", 1)[0]
						case 2:
							v[i] = gen32(rng, "big", 1)[0]
						case 3:
							if rng.IntN(3) == 0 {
								v[i] = gen32(rng, "special", 40)[rng.IntN(40)]
							}
						}
					}
				}
				runBoth32(t, c32, mm, k, n, a, b, c, Fractal, RowMajor, Fractal, rep == 1, "mixed")
			}
		}
	})
}

// TestFast32SmallDomain: exhaustive over a small domain of FP32 values —
// each sign, 2-bit significands, exponents near the bottom (subnormal),
// around 1 (ties at the FP32 rounding boundary) and at the top (overflow)
// — as k = 1 and k = 2 products against C from the same domain: every
// pair of A and B values meets every C value of its class.
func TestFast32SmallDomain(t *testing.T) {
	var dom []uint32
	for _, e := range []int{-150, -149, -148, -127, -126, -125, -24, -23, -1, 0, 1, 23, 24, 62, 63, 64, 125, 126} {
		for m := uint32(4); m < 8; m++ {
			for _, neg := range []bool{false, true} {
				dom = append(dom, f32pat(neg, m, e-2))
			}
		}
	}
	dom = append(dom, 0, 1<<31, 1, 0x807fffff, 0x7f7fffff, 0xff7fffff, 0x00800001)
	nd := len(dom)
	impls32(t, func(t *testing.T) {
		for _, c32 := range models32(t) {
			for k := 1; k <= 2; k++ {
				// A: nd×k, row i is (dom[i], dom[(i·7) % nd]); B: k×nd,
				// column j is (dom[j], 1 or −1); C(i, j) = dom[(i+3j) % nd].
				a, b, c := make([]uint32, nd*k), make([]uint32, k*nd), make([]uint32, nd*nd)
				for i := 0; i < nd; i++ {
					a[i*k] = dom[i]
					if k == 2 {
						a[i*k+1] = dom[i*7%nd]
						b[nd+i] = f32pat(i%2 == 1, 1, 0)
					}
					b[i] = dom[i]
				}
				for i := range c {
					c[i] = dom[(i/nd+3*(i%nd))%nd]
				}
				runBoth32(t, c32, nd, k, nd, a, b, c, RowMajor, RowMajor, RowMajor, false, fmt.Sprintf("domain k=%d", k))
			}
		}
	})
}

// TestFast32Hand: hand-made elements for the arguments of fastfp32.go.
func TestFast32Hand(t *testing.T) {
	one := math.Float32bits(1)
	ulp := func(m uint32, e int) uint32 { return f32pat(false, m, e) }
	type hand struct {
		what string
		a, b []uint32
		c    uint32
	}
	hands := []hand{
		// 1 + 2^−23 + (2^−24 − 2^−70): the float64 sum is the midpoint
		// 1 + 3·2^−24, the exact sum is below it: RNE gives 1 + 2^−23,
		// rounding the float64 sum again 1 + 2^−22.
		{"midpoint below", []uint32{ulp(1<<23|1, -23)}, []uint32{ulp(1<<23-1, -47)}, ulp(1<<23|1, -23)},
		// 97·257·673 = 2^24 + 1, an FP32 midpoint, plus 2^−40 (lost in
		// float64): RNE gives 2^24 + 2, rounding the float64 sum 2^24.
		{"midpoint above", []uint32{ulp(97*257, 0)}, []uint32{ulp(673, 0)}, ulp(1, -40)},
		// 1549·10831 = 2^24 + 3 minus 2^−40: RNE 2^24 + 2, twice 2^24 + 4.
		{"midpoint below 2", []uint32{ulp(1549, 0)}, []uint32{ulp(10831, 0)}, ulp(1, -40) | 1<<31},
		{"exact tie", []uint32{ulp(1, -24)}, []uint32{one}, one},
		{"−0 + −0·1", []uint32{1 << 31}, []uint32{one}, 1 << 31},
		{"−0 + 0·−1", []uint32{0}, []uint32{one | 1<<31}, 1 << 31},
		{"+0 + −0", []uint32{1 << 31}, []uint32{one}, 0},
		{"x − x = +0", []uint32{one}, []uint32{one | 1<<31}, one},
		{"tiny negative → −0", []uint32{ulp(1, -100) | 1<<31}, []uint32{ulp(1, -60)}, 0},
		{"subnormal sum", []uint32{ulp(3, -80)}, []uint32{ulp(5, -70)}, 1},
		{"overflow", []uint32{0x7f7fffff}, []uint32{math.Float32bits(2)}, 0},
		{"overflow then on", []uint32{0x7f7fffff, one}, []uint32{math.Float32bits(2), 0xff7fffff}, 0x7f7fffff},
		{"max + half ulp", []uint32{ulp(1, 103)}, []uint32{one}, 0x7f7fffff},
		{"max + half ulp − tiny", []uint32{ulp(1<<23-1, 80)}, []uint32{ulp(1<<23+1, 0)}, 0x7f7fffff},
		{"inf·0", []uint32{0x7f800000}, []uint32{0}, one},
		{"tf32 garbage", []uint32{one | 0x1fff}, []uint32{one | 0x1000}, one | 0x1fff},
		{"nan payload low", []uint32{0x7f800001}, []uint32{one}, 0},
	}
	impls32(t, func(t *testing.T) {
		for _, c32 := range models32(t) {
			for _, h := range hands {
				k := len(h.a)
				// 8×16 copies so that the AVX-512 tiles take them too.
				mm, n := 8, 16
				a, b, c := make([]uint32, mm*k), make([]uint32, k*n), make([]uint32, mm*n)
				for i := 0; i < mm; i++ {
					copy(a[i*k:], h.a)
				}
				for t := 0; t < k; t++ {
					for j := 0; j < n; j++ {
						b[t*n+j] = h.b[t]
					}
				}
				for i := range c {
					c[i] = h.c
				}
				runBoth32(t, c32, mm, k, n, a, b, c, RowMajor, RowMajor, RowMajor, false, h.what)
			}
		}
	})
}

// TestAddRNE32: addRNE32 against kernel.add2 on sums built around FP32
// midpoints, subnormals and overflow (the Go step of fp32-rne).
func TestAddRNE32(t *testing.T) {
	m, _ := Preset("fp32-rne")
	k, _ := m.kernel(fp.FP32, fp.FP32)
	rng := rand.New(rand.NewPCG(36, 37))
	for i := 0; i < 200000; i++ {
		x := float64(math.Float32frombits(gen32(rng, kinds32[i%6], 1)[0]))
		var y float64
		switch i % 4 {
		case 0: // a product of two FP32 values
			y = float64(math.Float32frombits(gen32(rng, "wide", 1)[0])) * float64(math.Float32frombits(gen32(rng, "wide", 1)[0]))
		case 1: // half an FP32 ulp of x, nudged
			_, e := math.Frexp(x)
			y = math.Ldexp(1, e-25) * (1 + float64(rng.IntN(3)-1)*0x1p-40)
		default:
			a := float64(math.Float32frombits(gen32(rng, kinds32[rng.IntN(6)], 1)[0]))
			y = a * float64(math.Float32frombits(gen32(rng, kinds32[rng.IntN(6)], 1)[0]))
		}
		if math.IsInf(x, 0) || math.IsNaN(x) || math.IsInf(y, 0) || math.IsNaN(y) {
			continue
		}
		if g, w := math.Float64bits(addRNE32(x, y)), math.Float64bits(k.add2(x, y)); g != w {
			t.Fatalf("addRNE32(%g, %g) = %x, add2 %x", x, y, g, w)
		}
	}
}

// FuzzMMAD32: the FP32/TF32 fast paths against the reference path for a
// model, shape, layouts, init and input kinds decoded from the bytes (the
// values from a PRNG seeded with them), Go and AVX-512 tiles.
func FuzzMMAD32(f *testing.F) {
	for _, s := range [][]byte{
		{0, 8, 16, 7, 0, 0, 0}, {1, 9, 17, 5, 1, 2, 3}, {4, 33, 20, 9, 7, 4, 4}, {6, 16, 16, 16, 3, 8, 1},
		{9, 5, 40, 11, 5, 3, 9}, {12, 24, 32, 4, 2, 6, 7}, {14, 1, 1, 1, 6, 5, 5}, {2, 17, 3, 30, 4, 9, 2},
	} {
		f.Add(s)
	}
	cases := models32(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var h [7]byte
		copy(h[:], data)
		c32 := cases[int(h[0])%len(cases)]
		mm, n, k := int(h[1])%40, int(h[2])%40, int(h[3])%40
		seed := uint64(0)
		for _, x := range data {
			seed = seed*131 + uint64(x)
		}
		rng := rand.New(rand.NewPCG(seed, 38))
		a := gen32(rng, kinds32[int(h[5])%len(kinds32)], mm*k)
		b := gen32(rng, kinds32[int(h[6])%len(kinds32)], k*n)
		c := gen32(rng, kinds32[int(h[5]+h[6])%len(kinds32)], mm*n)
		l := h[4]
		for _, avx := range []bool{false, true} {
			func() {
				defer func(old bool) { useAVX512 = old }(useAVX512)
				useAVX512 = useAVX512 && avx
				runBoth32(t, c32, mm, k, n, a, b, c, Layout(l&1), Layout(l>>1&1), Layout(l>>2&1), l&8 != 0, "fuzz")
			}()
		}
	})
}

// TestFast32Vectors: the recorded GPU vectors with TF32 (or FP32) inputs
// and FP32 output through the MMAD fast paths: every 10th dot product as
// an 8×K×16 tile whose rows of A and columns of B repeat its a and b (so
// that the Go and AVX-512 tiles compute it), against the recorded d.
func TestFast32Vectors(t *testing.T) {
	sets, err := FindVectorSets(vectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range sets {
		if s.Input != fp.TF32 && s.Input != fp.FP32 || s.Output != fp.FP32 {
			continue
		}
		m, err := Preset(s.Model)
		if err != nil {
			t.Fatal(err)
		}
		k, err := m.kernel(s.Input, fp.FP32)
		if err != nil {
			t.Fatal(err)
		}
		if fastKindFor(k, s.Input) == fastNone {
			t.Fatalf("%s %v: no fast path", s.GPU, s.Input)
		}
		v, err := s.Load()
		if err != nil {
			t.Fatal(err)
		}
		n++
		impls32(t, func(t *testing.T) {
			const mm, nn = 8, 16
			for i := 0; i < len(v.A); i += 10 {
				kk := len(v.A[i])
				a, b, c := make([]uint32, mm*kk), make([]uint32, kk*nn), make([]uint32, mm*nn)
				for r := 0; r < mm; r++ {
					copy(a[r*kk:], v.A[i])
				}
				for x := 0; x < kk; x++ {
					for j := 0; j < nn; j++ {
						b[x*nn+j] = v.B[i][x]
					}
				}
				for j := range c {
					c[j] = v.C[i]
				}
				if err := m.MMAD(s.Input, fp.FP32, mm, kk, nn, a, RowMajor, b, RowMajor, c, RowMajor, false); err != nil {
					t.Fatal(err)
				}
				for j, got := range c {
					if want := v.D[i]; got != want && !(isNaN32(got) && isNaN32(want)) {
						t.Fatalf("%s %v line %d (element %d): got %08x want %08x", s.GPU, s.Input, i+1, j, got, want)
					}
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no TF32/FP32 vector sets")
	}
	t.Logf("%d TF32/FP32 → FP32 sets", n)
}
