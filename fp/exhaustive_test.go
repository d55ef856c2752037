package fp

import (
	"math"
	"testing"
)

// opts returns every combination of rounding mode and subnormal flushing in
// IEEE (non-saturating) mode.
func allModes() []Rounding { return Roundings() }

// isNaN16 reports whether the 16-bit pattern h of format f (FP16 or BF16)
// is a NaN.
func isNaN16(h uint16, f Format) bool {
	if f == FP16 {
		return h&0x7c00 == 0x7c00 && h&0x3ff != 0
	}
	return h&0x7f80 == 0x7f80 && h&0x7f != 0
}

func widen16(h uint16, f Format) float32 {
	if f == FP16 {
		return F16ToF32(h)
	}
	return BF16ToF32(h)
}

// quietBit16 is the quiet bit of a 16-bit NaN pattern.
func quietBit16(f Format) uint16 {
	if f == FP16 {
		return 0x200
	}
	return 0x40
}

// TestExhaustiveWidenNarrow checks every FP16 and BF16 pattern: the widening
// functions agree with each other and with an independent formula, and
// narrowing the widened value gives the pattern back in every mode.
func TestExhaustiveWidenNarrow(t *testing.T) {
	for _, f := range []Format{FP16, BF16} {
		s := f.spec()
		m := s.p - 1
		for i := 0; i < 1<<16; i++ {
			h := uint16(i)
			w := widen16(h, f)
			if g := ToFloat32(uint32(h), f); math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("%v %#04x: ToFloat32 %#08x, fast %#08x", f, h, math.Float32bits(g), math.Float32bits(w))
			}
			d := ToFloat64(uint32(h), f)
			if isNaN16(h, f) {
				if !math.IsNaN(float64(w)) || !math.IsNaN(d) {
					t.Fatalf("%v %#04x: NaN widened to %v / %v", f, h, w, d)
				}
				// Sign and payload kept exactly.
				wantF32 := uint32(h&0x8000)<<16 | 0x7f800000 | uint32(h&(1<<m-1))<<(23-m)
				if math.Float32bits(w) != wantF32 {
					t.Fatalf("%v %#04x: NaN widened to %#08x, want %#08x", f, h, math.Float32bits(w), wantF32)
				}
				wantF64 := uint64(h&0x8000)<<48 | 0x7ff<<52 | uint64(h&(1<<m-1))<<(52-m)
				if math.Float64bits(d) != wantF64 {
					t.Fatalf("%v %#04x: NaN ToFloat64 %#016x, want %#016x", f, h, math.Float64bits(d), wantF64)
				}
			} else {
				// Independent formula for the value.
				be := int(h>>m) & (1<<s.ebits - 1)
				frac := float64(h & (1<<m - 1))
				var want float64
				switch {
				case be == 1<<s.ebits-1:
					want = math.Inf(1)
				case be == 0:
					want = frac * math.Pow(2, float64(s.emin-m))
				default:
					want = (1 + frac/math.Pow(2, float64(m))) * math.Pow(2, float64(be-s.bias))
				}
				if h&0x8000 != 0 {
					want = -want
				}
				if d != want || math.Signbit(d) != math.Signbit(want) || float64(w) != want || math.Signbit(float64(w)) != math.Signbit(want) {
					t.Fatalf("%v %#04x: widened to %v / %v, want %v", f, h, w, d, want)
				}
			}
			for _, r := range allModes() {
				for _, flush := range []bool{false, true} {
					o := Options{Round: r, FlushSubnormals: flush}
					want := h
					if flush && h&0x7fff != 0 && h&0x7fff < 1<<m {
						want = h & 0x8000 // subnormal flushed to signed zero
					}
					if isNaN16(h, f) {
						want = h | quietBit16(f)
					}
					got32 := uint16(FromFloat32(w, f, o))
					got64 := uint16(FromFloat64(d, f, o))
					if got32 != want || got64 != want {
						t.Fatalf("%v %#04x %v flush=%v: narrowed back to %#04x (f32) %#04x (f64), want %#04x", f, h, r, flush, got32, got64, want)
					}
				}
				var fast uint16
				if f == FP16 {
					fast = F32ToF16(w, r)
				} else {
					fast = F32ToBF16(w, r)
				}
				want := h
				if isNaN16(h, f) {
					want = h | quietBit16(f)
				}
				if fast != want {
					t.Fatalf("%v %#04x %v: fast narrow gives %#04x, want %#04x", f, h, r, fast, want)
				}
			}
		}
	}
}

// expectBetween returns the expected pattern when an inexact value lies
// strictly between the adjacent same-sign patterns lo (smaller magnitude)
// and lo+1, given whether it is below, at or above the midpoint (pos −1, 0,
// +1).
func expectBetween[T uint16 | uint32](lo T, neg bool, pos int, r Rounding) T {
	hi := lo + 1
	switch r {
	case RZ:
		return lo
	case RU:
		if neg {
			return lo
		}
		return hi
	case RD:
		if neg {
			return hi
		}
		return lo
	case RO:
		if lo&1 != 0 {
			return lo
		}
		return hi
	}
	if pos < 0 {
		return lo
	}
	if pos > 0 {
		return hi
	}
	if r == RNA || lo&1 != 0 {
		return hi
	}
	return lo
}

// betweenCase is a value strictly between two adjacent values of a format
// and where it lies against their midpoint (−1 below, 0 at, +1 above).
type betweenCase struct {
	x   float64
	pos int
}

// between returns the exact midpoint of adjacent same-sign values a and b
// (|a| < |b|, dir the direction from a to b), its float64 neighbours, and
// the values just inside the pair.
func between(a, b, dir float64) []betweenCase {
	mid := (a + b) / 2 // exact: needs p+1 bits
	return []betweenCase{{mid, 0}, {math.Nextafter(mid, 0), -1}, {math.Nextafter(mid, dir), 1},
		{math.Nextafter(a, dir), -1}, {math.Nextafter(b, 0), 1}}
}

// TestExhaustiveMidpoints rounds, for every pair of adjacent finite FP16 and
// BF16 values of the same sign, the exact midpoint and its float32/float64
// neighbours, and values just above the smaller one, in every mode.
func TestExhaustiveMidpoints(t *testing.T) {
	for _, f := range []Format{FP16, BF16} {
		s := f.spec()
		maxPat := uint16(maxTo(false, s))
		for i := 0; i < 1<<16; i++ {
			lo := uint16(i)
			mag := lo & 0x7fff
			if mag >= maxPat { // the top pair crosses into overflow: covered by the boundary tests
				continue
			}
			neg := lo&0x8000 != 0
			a, b := ToFloat64(uint32(lo), f), ToFloat64(uint32(lo+1), f)
			mid := (a + b) / 2 // exact: needs p+1 bits
			dir := math.Inf(1)
			if neg {
				dir = math.Inf(-1)
			}
			mid32 := float32(mid)
			if float64(mid32) != mid {
				t.Fatalf("%v midpoint %v not exact in float32", f, mid)
			}
			cases := append(between(a, b, dir),
				betweenCase{float64(math.Nextafter32(mid32, 0)), -1},
				betweenCase{float64(math.Nextafter32(mid32, float32(dir))), 1},
				betweenCase{float64(math.Nextafter32(float32(a), float32(dir))), -1})
			for _, c := range cases {
				for _, r := range allModes() {
					want := expectBetween(lo, neg, c.pos, r)
					got := uint16(FromFloat64(c.x, f, Options{Round: r}))
					if got != want {
						t.Fatalf("%v between %#04x and %#04x: x=%v (pos %d) %v gives %#04x, want %#04x", f, lo, lo+1, c.x, c.pos, r, got, want)
					}
					if x32 := float32(c.x); float64(x32) == c.x {
						got := uint16(FromFloat32(x32, f, Options{Round: r}))
						var fast uint16
						if f == FP16 {
							fast = F32ToF16(x32, r)
						} else {
							fast = F32ToBF16(x32, r)
						}
						if got != want || fast != want {
							t.Fatalf("%v x=%v %v: FromFloat32 %#04x, fast %#04x, want %#04x", f, x32, r, got, fast, want)
						}
					}
				}
			}
		}
	}
}

// TestNoDoubleRounding: FP64 → FP16 must round once from the exact value;
// going through float32 would land on a tie and round to even.
func TestNoDoubleRounding(t *testing.T) {
	x := 1 + math.Ldexp(1, -11) + math.Ldexp(1, -40) // just above the FP16 tie 1+2^-11
	if got := FromFloat64(x, FP16, Options{}); got != 0x3c01 {
		t.Fatalf("FromFloat64(1+2^-11+2^-40) = %#04x, want 0x3c01", got)
	}
	if via := F32ToF16(float32(x), RNE); via != 0x3c00 {
		t.Fatalf("sanity: double rounding through float32 gives %#04x, expected 0x3c00", via)
	}
	// Same for the FP32 target: 1 + 2^-24 + 2^-50 rounds up once.
	y := 1 + math.Ldexp(1, -24) + math.Ldexp(1, -50)
	if got := RoundFloat64ToFloat32(y, RNE); got != math.Nextafter32(1, 2) {
		t.Fatalf("RoundFloat64ToFloat32 = %v", got)
	}
	// BF16 from float64, directed: RZ of a value just below 1+2^-7.
	z := math.Nextafter(1+math.Ldexp(1, -7), 0)
	if got := FromFloat64(z, BF16, Options{Round: RZ}); got != 0x3f80 {
		t.Fatalf("BF16 RZ = %#04x", got)
	}
}

// TestExhaustiveMidpointsNarrow is TestExhaustiveMidpoints for the narrow
// formats whose domains are small enough to walk whole: every pair of
// adjacent finite E4M3, E5M2 and TF32 values of the same sign, the exact
// midpoint, its float64 neighbours and values just inside the pair, in
// every mode, from float64 and (where exact) float32.
func TestExhaustiveMidpointsNarrow(t *testing.T) {
	for _, f := range []Format{E4M3, E5M2, TF32} {
		s := f.spec()
		step := uint32(1) << s.fracShift
		maxPat := maxTo(false, s)
		for _, neg := range []bool{false, true} {
			for mag := uint32(0); mag < maxPat; mag += step { // the top pair crosses into overflow: the boundary tests
				lo := mag
				if neg {
					lo |= 1 << s.signShift
				}
				hi := lo + step
				a, b := ToFloat64(lo, f), ToFloat64(hi, f)
				dir := math.Inf(1)
				if neg {
					dir = math.Inf(-1)
				}
				for _, c := range between(a, b, dir) {
					for _, r := range allModes() {
						// expectBetween on the magnitudes counted in steps.
						want := expectBetween(mag/step, neg, c.pos, r)*step | lo&(1<<s.signShift)
						if got := FromFloat64(c.x, f, Options{Round: r}); got != want {
							t.Fatalf("%v between %#x and %#x: x=%v (pos %d) %v gives %#x, want %#x", f, lo, hi, c.x, c.pos, r, got, want)
						}
						if x32 := float32(c.x); float64(x32) == c.x {
							if got := FromFloat32(x32, f, Options{Round: r}); got != want {
								t.Fatalf("%v x=%v %v: FromFloat32 %#x, want %#x", f, x32, r, got, want)
							}
						}
					}
				}
			}
		}
	}
}
