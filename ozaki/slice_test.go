package ozaki

import (
	"errors"
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// bigDigits is the slow reference slicer: N = floor(x·2^(8s−1−σ)) in
// math/big, then balanced digits ((N+128) mod 256) − 128 from the bottom.
// ok is false if N does not fit s digits.
func bigDigits(x float64, sigma, s int) (d []int8, ok bool) {
	f := new(big.Float).SetFloat64(x)
	f.SetMantExp(f, 8*s-1-sigma)
	z, acc := f.Int(nil)
	if acc == big.Above { // truncation went up: x < 0 and not an integer
		z.Sub(z, big.NewInt(1))
	}
	d = make([]int8, s)
	b256, b128 := big.NewInt(256), big.NewInt(128)
	r := new(big.Int)
	for p := 0; p < s; p++ {
		r.Add(z, b128)
		r.Mod(r, b256)
		r.Sub(r, b128)
		d[s-1-p] = int8(r.Int64())
		z.Sub(z, r)
		z.Rsh(z, 8)
	}
	return d, z.Sign() == 0
}

// bigValue returns 2^(σ−7)·Σ_t d_t·2^(−8(t−1)) exactly.
func bigValue(d []int8, sigma int) *big.Float {
	sum := new(big.Float).SetPrec(4096)
	for t, v := range d {
		term := new(big.Float).SetPrec(4096).SetInt64(int64(v))
		term.SetMantExp(term, sigma-7-8*t)
		sum.Add(sum, term)
	}
	return sum
}

// TestSlicesFor: the W → s rule ceil((W+1)/8) and its error outside 1…200.
func TestSlicesFor(t *testing.T) {
	for _, c := range []struct{ bits, s int }{{1, 1}, {7, 1}, {8, 2}, {53, 7}, {54, 7}, {55, 7}, {56, 8}, {63, 8}, {64, 9}, {103, 13}, {200, 26}} {
		s, err := SlicesFor(c.bits)
		if err != nil || s != c.s || Capacity(s) < c.bits {
			t.Errorf("SlicesFor(%d) = %d, %v; want %d", c.bits, s, err, c.s)
		}
	}
	for _, bad := range []int{0, -1, 201, 1 << 30} {
		if _, err := SlicesFor(bad); !errors.Is(err, ErrBits) {
			t.Errorf("SlicesFor(%d): err = %v, want ErrBits", bad, err)
		}
	}
	// A 53-bit mantissa: 7 slices with capacity 8s−1 = 55; naive signed
	// slices (7 magnitude bits each) would need ceil(53/7) = 8.
	if s, _ := SlicesFor(53); s != 7 || Capacity(7) != 55 || (53+6)/7 != 8 {
		t.Errorf("53 bits: %d slices", s)
	}
}

// TestRemapExample: the paper's 123·256 + 200 = 124·256 − 56 = 31688, and
// 200 (u8) and −56 (s8) share the bit pattern 0b11001000.
func TestRemapExample(t *testing.T) {
	if 123*256+200 != 31688 || 124*256-56 != 31688 || uint8(Digit(200)) != 0b11001000 || Digit(200) != -56 {
		t.Fatal("arithmetic of the example")
	}
	x := 31688.0
	sc := ScaleRows([]float64{x}, 1, 1)[0]
	if sc.Sigma != 15 || sc.Bumped {
		t.Fatalf("scale %+v", sc)
	}
	var d [2]int8
	SliceValue(x, sc.Sigma, 2, d[:]) // N = x·2^(15−15) = 31688
	if d != [2]int8{124, -56} {
		t.Fatalf("digits %v, want [124 -56]", d)
	}
	// A full 53-bit mantissa at the top of its row is exact in 7 slices.
	y := 0x1.FFFFFFFFFFFFFp-3
	sy := ScaleRows([]float64{y, 0x1p-3}, 1, 2)[0]
	var e [7]int8
	SliceValue(y, sy.Sigma, 7, e[:])
	if got, _ := bigValue(e[:], sy.Sigma).Float64(); got != y {
		t.Fatalf("7 slices do not hold 53 bits: %v vs %v (σ=%d)", got, y, sy.Sigma)
	}
}

// interesting returns float64 values across the whole range, including
// subnormals, the largest finite values and full 53-bit mantissas.
func interesting(rng *rand.Rand, n int) []float64 {
	out := []float64{1, -1, 0x1.FFFFFFFFFFFFFp1023, -0x1.FFFFFFFFFFFFFp1023, 0x1p-1074, -0x1p-1074,
		0x1.FFFFFFFFFFFFFp-1023, 0x1p-1022, -0x1.0000000000001p-1022, 1.984375, -1.984375, 0x1.FFFFFFFFFFFFFp0}
	for len(out) < n {
		x := math.Float64frombits(rng.Uint64())
		if math.IsInf(x, 0) || math.IsNaN(x) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// TestSliceFastMatchesBig: the int64 fast path equals the math/big slicer
// for values over the whole float64 range (subnormal to 2^1023), scales
// from the value itself up to 300 bits above it, and s = 1…26; the
// reconstruction is x truncated toward −∞ at 2^(σ+1−8s), exact when
// E(x) ≥ σ − 1 − (8s − 1 − 53) (for normal x).
func TestSliceFastMatchesBig(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var d [MaxSlices]int8
	for _, x := range interesting(rng, 400) {
		own := ScaleRows([]float64{x}, 1, 1)[0].Sigma
		for _, lift := range []int{0, 1, 5, 40, 300} {
			sigma := own + lift
			if sigma > 1025 {
				continue
			}
			for s := 1; s <= MaxSlices; s++ {
				SliceValue(x, sigma, s, d[:])
				want, ok := bigDigits(x, sigma, s)
				if !ok {
					t.Fatalf("big digits overflow for %v σ=%d s=%d", x, sigma, s)
				}
				for i := range want {
					if want[i] != d[i] {
						t.Fatalf("x=%v σ=%d s=%d: fast %v big %v", x, sigma, s, d[:s], want)
					}
				}
				r := bigValue(d[:s], sigma)
				xb := new(big.Float).SetPrec(4096).SetFloat64(x)
				diff := new(big.Float).SetPrec(4096).Sub(xb, r)
				ulp := new(big.Float).SetPrec(4096).SetMantExp(big.NewFloat(1), sigma+1-8*s)
				if diff.Sign() < 0 || diff.Cmp(ulp) >= 0 {
					t.Fatalf("x=%v σ=%d s=%d: x − recon = %v not in [0, 2^%d)", x, sigma, s, diff, sigma+1-8*s)
				}
				if Exp(x) >= -1022 && Exp(x) >= sigma-1-(8*s-1-53) && diff.Sign() != 0 {
					t.Fatalf("x=%v σ=%d s=%d: not exact although E(x) ≥ σ−1−(8s−54)", x, sigma, s)
				}
			}
		}
	}
}

// TestBumpThreshold: rows whose maximum has significand 0x1.FFFFFFFFFFFFFp0
// or exactly 1.984375 (both signs, across the exponent range) are bumped
// and slice without overflow for s = 1…26; without the bump (σ = E+1) the
// leading digit of 0x1.FFFFFFFFFFFFFp0 overflows (SliceValue panics) once
// s ≥ 2 — the reason for the bump — while 1.984375·2^E is exactly at the edge
// that the bump threshold includes.
func TestBumpThreshold(t *testing.T) {
	var d [MaxSlices]int8
	for _, sig := range []float64{0x1.FFFFFFFFFFFFFp0, 1.984375} {
		for _, e := range []int{-1022, -500, -1, 0, 1, 700, 1023} {
			for _, sign := range []float64{1, -1} {
				mu := sign * math.Ldexp(sig, e)
				row := []float64{mu, mu / 3, -mu / 7, 0}
				sc := ScaleRows(row, 1, 4)[0]
				if !sc.Bumped || sc.Sigma != e+2 || sc.Exp != e+1 {
					t.Fatalf("μ=%v: scale %+v", mu, sc)
				}
				for s := 1; s <= MaxSlices; s++ {
					for _, x := range row {
						SliceValue(x, sc.Sigma, s, d[:]) // panics on overflow
					}
				}
			}
		}
	}
	if sc := scaleOf(0x1.FBFFFFFFFFFFFp0); sc.Bumped {
		t.Fatal("bumped below the threshold")
	}
	overflowed := func(x float64, sigma, s int) (p bool) {
		defer func() { p = recover() != nil }()
		SliceValue(x, sigma, s, d[:])
		return false
	}
	if !overflowed(0x1.FFFFFFFFFFFFFp0, 1, 2) {
		t.Fatal("unbumped 0x1.FFFFFFFFFFFFFp0 fits 2 digits: the bump would be unnecessary")
	}
	if !overflowed(0x1.FFp0, 1, 2) {
		t.Fatal("unbumped 0x1.FFp0 fits 2 digits")
	}
}

// TestSliceMatrices: SliceRows/SliceCols use the row/column scales and the
// planes reconstruct every entry within the truncation bound.
func TestSliceMatrices(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	const r, c, s = 6, 9, 4
	a := make([]float64, r*c)
	for i := range a {
		a[i] = (rng.Float64() - 0.5) * math.Ldexp(1, rng.Intn(20))
	}
	for j := 0; j < c; j++ { // a zero row and a zero column
		a[2*c+j] = 0
	}
	for i := 0; i < r; i++ {
		a[i*c+4] = 0
	}
	sr, sc := ScaleRows(a, r, c), ScaleCols(a, r, c)
	if !sr[2].Zero || sr[2].Exp != NegInf || !sc[4].Zero || sc[4].Exp != NegInf {
		t.Fatal("zero lines not flagged")
	}
	pr, pc := SliceRows(a, r, c, s, sr), SliceCols(a, r, c, s, sc)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			dr, dc := make([]int8, s), make([]int8, s)
			for p := 0; p < s; p++ {
				dr[p], dc[p] = pr[p][i*c+j], pc[p][i*c+j]
			}
			want, _ := bigDigits(a[i*c+j], sr[i].Sigma, s)
			want2, _ := bigDigits(a[i*c+j], sc[j].Sigma, s)
			for p := range dr {
				if dr[p] != want[p] || dc[p] != want2[p] {
					t.Fatalf("(%d,%d): rows %v/%v cols %v/%v", i, j, dr, want, dc, want2)
				}
			}
		}
	}
}
