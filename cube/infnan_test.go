package cube

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Special results where a kind does not absorb an infinite accumulator:
// Pairwise (products and tree sums rounded to FP32), TruncatedLateC (a
// product ≥ 2^128 is ±Inf) and the late-c block FMA (the block or window
// sum rounded before c is added) can give, from finite inputs, the
// infinity opposite to c's or to an earlier block's, and Inf + −Inf is
// NaN. And CDNA2 flushes subnormal inputs, so Inf × subnormal is Inf × 0.

// specialCase is one dot product and its expected FP32 result pattern.
type specialCase struct {
	name    string
	preset  string
	in, out fp.Format
	a, b    []uint32
	c       uint32
	split   int // a block (window) boundary: MMAD chained as two calls split there
	want    uint32
}

const (
	f32PInf = 0x7f800000
	f32NInf = 0xff800000
)

// vec returns a K-vector of zeros with the given (index, pattern) entries.
func vec(K int, kv ...uint32) []uint32 {
	v := make([]uint32, K)
	for i := 0; i < len(kv); i += 2 {
		v[kv[i]] = kv[i+1]
	}
	return v
}

func specialCases() []specialCase {
	var cs []specialCase
	// BF16 2^127 (0x7f00) × ±2 (0x4000, 0xc000) = ±2^128: ±Inf in FP32 for
	// the CDNA2 product and the CDNA3 rule; block 0 (k = 0) +Inf, a later
	// block (k = 8) −Inf.
	for _, p := range []string{"mi210", "mi300"} {
		for _, out := range []fp.Format{fp.FP32, fp.FP16} {
			cs = append(cs,
				specialCase{"+2^128 then -2^128", p, fp.BF16, out, vec(16, 0, 0x7f00, 8, 0x7f00), vec(16, 0, 0x4000, 8, 0xc000), 0, 8, NaNBits},
				specialCase{"-2^128 then +2^128", p, fp.BF16, out, vec(16, 0, 0x7f00, 8, 0x7f00), vec(16, 0, 0xc000, 8, 0x4000), 0, 8, NaNBits},
				specialCase{"c=+Inf, block -2^128", p, fp.BF16, out, vec(8, 0, 0x7f00), vec(8, 0, 0xc000), f32PInf, 4, NaNBits},
				specialCase{"c=-Inf, block +2^128", p, fp.BF16, out, vec(8, 3, 0x7f00), vec(8, 3, 0x4000), f32NInf, 4, NaNBits},
				// An Inf input in block 0, a finite product overflowing to
				// −Inf in a later block.
				specialCase{"Inf input then -2^128", p, fp.BF16, out, vec(16, 0, 0x7f80, 8, 0x7f00), vec(16, 0, 0x3f80, 8, 0xc000), 0, 8, NaNBits},
			)
		}
	}
	// E5M2 57344 (0x7b) × ±2 (0x40, 0xc0) = ±114688: the FP16 block result
	// of the fp8→fp16 datapath overflows; window 0 +Inf, window 1 −Inf.
	// E4M3 448 (0x7e) × −448 (0xfe): a −Inf window; c = 74918 rounds to
	// FP16 +Inf.
	for _, p := range []string{"h100", "b200"} {
		cs = append(cs,
			specialCase{"window +Inf then -Inf", p, fp.E5M2, fp.FP16, vec(64, 0, 0x7b, 32, 0x7b), vec(64, 0, 0x40, 32, 0xc0), 0, 32, NaNBits},
			specialCase{"window -Inf then +Inf", p, fp.E5M2, fp.FP16, vec(64, 2, 0x7b, 33, 0x7b), vec(64, 2, 0xc0, 33, 0x40), 0, 32, NaNBits},
			specialCase{"c=+Inf, window -Inf", p, fp.E5M2, fp.FP16, vec(32, 0, 0x7b), vec(32, 0, 0xc0), f32PInf, 16, NaNBits},
			specialCase{"c=74918 (FP16 +Inf), window -Inf", p, fp.E4M3, fp.FP16, vec(16, 0, 0x7e), vec(16, 0, 0xfe), f32bits(74918), 16, NaNBits},
			specialCase{"Inf input then window -Inf", p, fp.E5M2, fp.FP16, vec(64, 0, 0x7c, 32, 0x7b), vec(64, 0, 0x3c, 32, 0xc0), 0, 32, NaNBits},
			// One window: its first block (k = 0, 1, 4, 5, …) +Inf, its
			// second (k = 2, 3, 6, 7, …) holds a −Inf input.
			specialCase{"window's block +Inf, next block -Inf input", p, fp.E5M2, fp.FP16, vec(64, 0, 0x7b, 2, 0xfc), vec(64, 0, 0x40, 2, 0x3c), 0, 32, NaNBits},
		)
	}
	// CDNA2 flushes subnormal inputs: Inf × subnormal = Inf × 0 = NaN.
	for _, out := range []fp.Format{fp.FP32, fp.FP16} {
		cs = append(cs,
			specialCase{"Inf×subnormal", "mi210", fp.FP16, out, vec(8, 0, 0x7c00), vec(8, 0, 0x0001), 0, 4, NaNBits},
			specialCase{"subnormal×-Inf", "mi210", fp.FP16, out, vec(8, 5, 0x83ff), vec(8, 5, 0xfc00), 0, 4, NaNBits},
			specialCase{"Inf×subnormal", "mi210", fp.BF16, out, vec(8, 0, 0x7f80), vec(8, 0, 0x0001), 0, 4, NaNBits},
			specialCase{"subnormal×-Inf", "mi210", fp.BF16, out, vec(8, 6, 0x807f), vec(8, 6, 0xff80), 0, 4, NaNBits},
		)
	}
	return cs
}

// infCases are infinite results the fix must keep: an infinite c (or
// block result) stays when no block gives the other infinity, and the kinds
// that absorb (block FMA without late c, sequential) keep it even where a
// block's own sum would overflow to the other one (c is a term of the
// block's one exact sum, or of one rounded addition).
func infCases() []specialCase {
	var cs []specialCase
	for _, p := range []string{"mi210", "mi300"} {
		for _, out := range []fp.Format{fp.FP32, fp.FP16} {
			cs = append(cs,
				specialCase{"c=+Inf, finite block", p, fp.BF16, out, vec(16, 0, 0x7f00, 9, 0x3f80), vec(16, 0, 0xbf80, 9, 0xc000), f32PInf, 8, f32PInf},
				specialCase{"+2^128, then finite", p, fp.BF16, out, vec(16, 0, 0x7f00, 9, 0x3f80), vec(16, 0, 0x4000, 9, 0xc000), 0, 8, f32PInf},
			)
		}
	}
	for _, p := range []string{"h100", "b200"} {
		cs = append(cs,
			specialCase{"c=-Inf, finite window", p, fp.E5M2, fp.FP16, vec(32, 0, 0x3c), vec(32, 0, 0x3c), f32NInf, 16, f32NInf},
			specialCase{"window +Inf, then finite", p, fp.E5M2, fp.FP16, vec(64, 0, 0x7b, 32, 0x3c), vec(64, 0, 0x40, 32, 0xc0), 0, 32, f32PInf},
			// Inside a window the blocks are chained block FMAs: the first
			// block's +Inf is the second's c, which its finite products
			// (alone −Inf) cannot change.
			specialCase{"window's block +Inf, next block alone -Inf", p, fp.E5M2, fp.FP16, vec(64, 0, 0x7b, 2, 0x7b), vec(64, 0, 0x40, 2, 0xc0), 0, 32, f32PInf},
		)
	}
	cs = append(cs,
		specialCase{"absorbing: c=+Inf, block -2^128", "a100", fp.BF16, fp.FP32, vec(16, 0, 0x7f00), vec(16, 0, 0xc000), f32PInf, 8, f32PInf},
		specialCase{"absorbing: +2^128 then -2^128", "a100", fp.BF16, fp.FP32, vec(16, 0, 0x7f00, 8, 0x7f00), vec(16, 0, 0x4000, 8, 0xc000), 0, 8, f32PInf},
		specialCase{"absorbing: c=+Inf, window -Inf", "h100", fp.E5M2, fp.FP32, vec(32, 0, 0x7b), vec(32, 0, 0xc0), f32PInf, 16, f32PInf},
		specialCase{"absorbing: sequential", "fp32-rne", fp.BF16, fp.FP32, vec(4, 0, 0x7f00, 1, 0x7f00), vec(4, 0, 0x4000, 1, 0xc000), 0, 1, f32PInf},
	)
	return cs
}

// TestSpecialNonAbsorbing checks specialCases (NaN results) through Dot,
// MMAD in one call (an 8×16 tile of the same dot product, fast paths on
// and off, and the typed entries for FP16/BF16 → FP32) and MMAD as two
// chained calls.
func TestSpecialNonAbsorbing(t *testing.T) { checkSpecialCases(t, specialCases()) }

// TestSpecialStaysInf checks infCases the same way.
func TestSpecialStaysInf(t *testing.T) { checkSpecialCases(t, infCases()) }

func checkSpecialCases(t *testing.T, cases []specialCase) {
	for _, tc := range cases {
		name := fmt.Sprintf("%s/%v->%v/%s", tc.preset, tc.in, tc.out, tc.name)
		m, err := Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		K := len(tc.a)
		check := func(how string, got uint32) {
			t.Helper()
			if got != tc.want {
				t.Errorf("%s: %s gives %#08x, want %#08x", name, how, got, tc.want)
			}
		}
		got, err := m.Dot(tc.in, tc.a, tc.b, tc.c, tc.out)
		if err != nil {
			t.Fatal(err)
		}
		check("Dot", got)
		// A (M×K) has the vector a in every row, B (K×N) b in every column.
		const M, N = 8, 16
		tile := func(k0, k1 int) (A, B []uint32) {
			kk := k1 - k0
			A, B = make([]uint32, M*kk), make([]uint32, kk*N)
			for i := 0; i < M; i++ {
				copy(A[i*kk:], tc.a[k0:k1])
			}
			for r := 0; r < kk; r++ {
				for j := 0; j < N; j++ {
					B[r*N+j] = tc.b[k0+r]
				}
			}
			return A, B
		}
		fill := func() []uint32 {
			C := make([]uint32, M*N)
			for i := range C {
				C[i] = tc.c
			}
			return C
		}
		checkC := func(how string, C []uint32) {
			t.Helper()
			for i, v := range C {
				if v != tc.want {
					check(fmt.Sprintf("%s element %d", how, i), v)
					return
				}
			}
		}
		for _, fast := range []bool{true, false} {
			func() {
				defer setFast(fast)()
				A, B := tile(0, K)
				C := fill()
				if err := m.MMAD(tc.in, tc.out, M, K, N, A, RowMajor, B, RowMajor, C, RowMajor, false); err != nil {
					t.Fatal(err)
				}
				checkC(fmt.Sprintf("MMAD one call (fast %v)", fast), C)

				C = fill()
				A0, B0 := tile(0, tc.split)
				A1, B1 := tile(tc.split, K)
				if err := m.MMAD(tc.in, tc.out, M, tc.split, N, A0, RowMajor, B0, RowMajor, C, RowMajor, false); err != nil {
					t.Fatal(err)
				}
				if err := m.MMAD(tc.in, tc.out, M, K-tc.split, N, A1, RowMajor, B1, RowMajor, C, RowMajor, false); err != nil {
					t.Fatal(err)
				}
				checkC(fmt.Sprintf("MMAD two calls split at k=%d (fast %v)", tc.split, fast), C)

				if tc.out != fp.FP32 || (tc.in != fp.FP16 && tc.in != fp.BF16) {
					return
				}
				mmad := m.MMADF16
				if tc.in == fp.BF16 {
					mmad = m.MMADBF16
				}
				a16, b16 := make([]uint16, len(A)), make([]uint16, len(B))
				for i := range A {
					a16[i] = uint16(A[i])
				}
				for i := range B {
					b16[i] = uint16(B[i])
				}
				Cf := make([]float32, M*N)
				for i := range Cf {
					Cf[i] = math.Float32frombits(tc.c)
				}
				if err := mmad(M, K, N, a16, RowMajor, b16, RowMajor, Cf, RowMajor, false); err != nil {
					t.Fatal(err)
				}
				for i := range Cf {
					C[i] = math.Float32bits(Cf[i])
				}
				checkC(fmt.Sprintf("typed MMAD (fast %v)", fast), C)
			}()
		}
	}
}

// TestPairwiseSpecialsIEEE compares the CDNA2 model with Inf, NaN,
// subnormal and overflowing inputs against the same steps in float32 IEEE
// arithmetic (pairBlocks, with the subnormal inputs flushed to signed
// zeros): Inf·0 and Inf + −Inf are NaN, an overflowing product or sum is
// ±Inf and stays so through every later block.
func TestPairwiseSpecialsIEEE(t *testing.T) {
	m, err := Preset("mi210")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, in := range []fp.Format{fp.FP16, fp.BF16} {
		expMask, minNormal := uint32(0x7c00), 0x1p-14
		if in == fp.BF16 {
			expMask, minNormal = 0x7f80, 0x1p-126
		}
		lsb := expMask & -expMask // the exponent field's lowest bit
		pick := func() uint32 {
			r := uint32(rng.IntN(1 << 16))
			switch rng.IntN(8) {
			case 0: // Inf, NaN
				return []uint32{expMask, expMask | 0x8000, expMask | 1}[rng.IntN(3)]
			case 1: // subnormal or zero
				return r &^ expMask
			case 2: // top binade (BF16 products overflow FP32)
				return r&(0x8000|(lsb-1)) | (expMask - lsb)
			}
			for {
				p := uint32(rng.IntN(1 << 16))
				if p&expMask != expMask {
					return p
				}
			}
		}
		val := func(p uint32) float32 {
			v := fp.ToFloat64(p, in)
			if v != 0 && math.Abs(v) < minNormal {
				v = math.Copysign(0, v) // flushed input
			}
			return float32(v)
		}
		nNaN, nInf := 0, 0
		for it := 0; it < 20000; it++ {
			K := 1 + rng.IntN(24)
			a, b := make([]uint32, K), make([]uint32, K)
			x, y := make([]float32, K), make([]float32, K)
			for i := range a {
				a[i], b[i] = pick(), pick()
				if rng.IntN(3) == 0 {
					a[i], b[i] = uint32(rng.IntN(1<<16))&^expMask, uint32(rng.IntN(1<<16))&^expMask
				}
				x[i], y[i] = val(a[i]), val(b[i])
			}
			c := []uint32{0, f32PInf, f32NInf, f32bits(rng.NormFloat64() * 0x1p120)}[rng.IntN(4)]
			got, err := m.Dot(in, a, b, c, fp.FP32)
			if err != nil {
				t.Fatal(err)
			}
			want := math.Float32bits(pairBlocks(x, y, ftz32(math.Float32frombits(c), 1<<31), 4, 1<<31))
			if math.IsNaN(float64(math.Float32frombits(want))) {
				want = NaNBits
				nNaN++
			} else if want&0x7fffffff == f32PInf {
				nInf++
			}
			if got != want {
				t.Fatalf("%v a=%#x b=%#x c=%#08x: model %#08x, float32 IEEE %#08x", in, a, b, c, got, want)
			}
		}
		if nNaN < 1000 || nInf < 1000 {
			t.Fatalf("%v: only %d NaN and %d infinite results", in, nNaN, nInf)
		}
	}
}
