package fp

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"
)

// refParams describes a floating format independently of the package's
// internal tables (numbers copied from the format definitions).
type refParams struct {
	p, emin int
	max     float64 // largest finite value
	hasInf  bool
}

var refFloat = map[Format]refParams{
	FP32: {24, -126, math.MaxFloat32, true},
	FP16: {11, -14, 65504, true},
	BF16: {8, -126, 0x1.fep127, true},
	TF32: {11, -126, 0x1.ffcp127, true},
	E4M3: {4, -6, 448, false},
	E5M2: {3, -14, 57344, true},
}

var refInt = map[Format][2]float64{
	INT8:  {-128, 127},
	INT32: {math.MinInt32, math.MaxInt32},
}

var bigModes = map[Rounding]big.RoundingMode{
	RNE: big.ToNearestEven, RNA: big.ToNearestAway, RZ: big.ToZero, RD: big.ToNegativeInf, RU: big.ToPositiveInf,
}

// refRoundFloat rounds finite nonzero x to precision p with exponent floor
// emin (subnormals) using math/big, returning the exact result as float64
// (with unbounded exponent range; overflow is decided by the caller).
func refRoundFloat(x float64, p, emin int, r Rounding) float64 {
	bx := new(big.Float).SetFloat64(x)
	e := bx.MantExp(nil) - 1 // x = 1.f·2^e
	lead := e
	if lead < emin {
		lead = emin
	}
	q := lead - (p - 1) // exponent of the last kept bit
	kept := e - q + 1   // significant bits available at x's magnitude
	ulp := math.Ldexp(1, q)
	neg := x < 0
	ax := math.Abs(x)
	if kept <= 0 { // |x| < 2^q: result is 0 or 2^q
		half := math.Ldexp(1, q-1)
		up := false
		switch r {
		case RNE:
			up = ax > half
		case RNA:
			up = ax >= half
		case RU:
			up = !neg
		case RD:
			up = neg
		case RO:
			up = true
		}
		res := 0.0
		if up {
			res = ulp
		}
		if neg {
			res = -res
		}
		return res
	}
	mode := big.ToZero
	if r != RO {
		mode = bigModes[r]
	}
	z := new(big.Float).SetPrec(uint(kept)).SetMode(mode).Set(bx)
	if r == RO && z.Acc() != big.Exact {
		// Round to odd: if the truncated significand is even, step away from zero.
		n, _ := new(big.Float).SetMantExp(z, -q).Int(nil)
		if n.Bit(0) == 0 {
			step := new(big.Float).SetFloat64(math.Copysign(ulp, x))
			z = new(big.Float).SetPrec(200).Add(z, step)
		}
	}
	v, acc := z.Float64()
	if acc != big.Exact && !math.IsInf(v, 0) { // ±Inf: beyond float64, an overflow anyway
		panic("reference result not exact in float64")
	}
	return v
}

// refValue returns the value FromFloat64(x, f, o) must encode, as float64
// (NaN for NaN results).
func refValue(x float64, f Format, o Options) float64 {
	if lim, ok := refInt[f]; ok {
		switch {
		case math.IsNaN(x):
			return 0
		case math.IsInf(x, 1):
			return lim[1]
		case math.IsInf(x, -1):
			return lim[0]
		}
		bx := new(big.Float).SetPrec(2000).SetFloat64(x)
		n, _ := bx.Int(nil) // truncated toward zero
		t := new(big.Float).SetPrec(2000).SetInt(n)
		frac := new(big.Float).SetPrec(2000).Sub(bx, t) // exact
		frac.Abs(frac)
		cmp := frac.Cmp(big.NewFloat(0.5))
		tv, _ := t.Float64()
		away := math.Copysign(1, x)
		inexact := frac.Sign() != 0
		res := tv
		if inexact {
			switch o.Round {
			case RNE:
				if cmp > 0 || (cmp == 0 && n.Bit(0) == 1) {
					res += away
				}
			case RNA:
				if cmp >= 0 {
					res += away
				}
			case RU:
				if x > 0 {
					res++
				}
			case RD:
				if x < 0 {
					res--
				}
			case RO:
				if n.Bit(0) == 0 {
					res += away
				}
			}
		}
		return math.Max(lim[0], math.Min(lim[1], res)) + 0 // +0 turns −0 into 0
	}
	rp := refFloat[f]
	switch {
	case math.IsNaN(x):
		if o.Saturate {
			return 0
		}
		return math.NaN()
	case math.IsInf(x, 0):
		if o.Saturate {
			return math.Copysign(rp.max, x)
		}
		if !rp.hasInf {
			return math.NaN()
		}
		return x
	case x == 0:
		return x
	}
	v := refRoundFloat(x, rp.p, rp.emin, o.Round)
	if math.Abs(v) > rp.max {
		toInf := false
		switch o.Round {
		case RNE, RNA:
			toInf = true
		case RU:
			toInf = x > 0
		case RD:
			toInf = x < 0
		}
		switch {
		case o.Saturate || !toInf:
			return math.Copysign(rp.max, x)
		case rp.hasInf:
			return math.Copysign(math.Inf(1), x)
		default:
			return math.NaN()
		}
	}
	if o.FlushSubnormals && v != 0 && math.Abs(v) < math.Ldexp(1, rp.emin) {
		return math.Copysign(0, x)
	}
	if v == 0 {
		return math.Copysign(0, x)
	}
	return v
}

// allOptions lists every rounding mode with every flag combination.
func allOptions() []Options {
	var out []Options
	for _, r := range Roundings() {
		for _, fl := range []bool{false, true} {
			for _, sat := range []bool{false, true} {
				out = append(out, Options{Round: r, FlushSubnormals: fl, Saturate: sat})
			}
		}
	}
	return out
}

func checkRef(t *testing.T, x float64, f Format, o Options) {
	t.Helper()
	want := refValue(x, f, o)
	b := FromFloat64(x, f, o)
	got := ToFloat64(b, f)
	if math.IsNaN(want) {
		if !math.IsNaN(got) {
			t.Fatalf("%v %+v x=%v (%#x): got %v (%#x), want NaN", f, o, x, math.Float64bits(x), got, b)
		}
		return
	}
	if got != want || math.Signbit(got) != math.Signbit(want) {
		t.Fatalf("%v %+v x=%v (%#x): got %v (%#x), want %v", f, o, x, math.Float64bits(x), got, b, want)
	}
	if f == TF32 && b&(1<<13-1) != 0 {
		t.Fatalf("TF32 result %#x has low bits set", b)
	}
	if f.Bits() < 32 && f != TF32 && b>>f.Bits() != 0 {
		t.Fatalf("%v result %#x wider than the format", f, b)
	}
	// The float32 entry point must agree when x is a float32.
	if x32 := float32(x); float64(x32) == x || math.IsNaN(x) {
		if b32 := FromFloat32(x32, f, o); b32 != b && !(math.IsNaN(x) && math.IsNaN(ToFloat64(b32, f))) {
			t.Fatalf("%v %+v x=%v: FromFloat32 %#x, FromFloat64 %#x", f, o, x, b32, b)
		}
	}
	if f == FP32 && !o.Saturate && !o.FlushSubnormals {
		if r := RoundFloat64ToFloat32(x, o.Round); math.Float32bits(r) != b && !(math.IsNaN(x) && r != r) {
			t.Fatalf("RoundFloat64ToFloat32(%v, %v) = %#x, want %#x", x, o.Round, math.Float32bits(r), b)
		}
	}
}

// boundaries returns hand-picked inputs around the interesting points of f.
func boundaries(f Format) []float64 {
	var xs []float64
	add := func(v ...float64) {
		for _, x := range v {
			xs = append(xs, x, -x, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)),
				float64(math.Nextafter32(float32(x), float32(math.Inf(1)))), float64(math.Nextafter32(float32(x), float32(math.Inf(-1)))))
		}
	}
	add(0, 1, 0.5, 1.5, 2.5, 3.5, 100.5, 127.5, 128.5, -128.5, 2147483647.5, 2147483648, 4294967296, 1e300, 1e-300)
	xs = append(xs, math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.NaN(),
		math.Float64frombits(0x7ff0000000000001), // signalling NaN, lowest payload
		math.Float64frombits(0xfff8dead0000beef), // negative quiet NaN with payload
		math.Float64frombits(0x7ff4000000000000),
		math.SmallestNonzeroFloat64, math.MaxFloat64)
	if rp, ok := refFloat[f]; ok {
		minN := math.Ldexp(1, rp.emin)
		minS := math.Ldexp(1, rp.emin-rp.p+1)
		ulpMax := math.Ldexp(1, int(math.Floor(math.Log2(rp.max)))-rp.p+1)
		add(minN, minS, minS/2, minS*1.5, minS/4, minS*3/4, minN-minS, minN-minS/2, minN-minS/4,
			rp.max, rp.max+ulpMax/2, rp.max+ulpMax/4, rp.max+ulpMax, rp.max+ulpMax*3/2, 2*rp.max,
			1+math.Ldexp(1, -rp.p), 1+3*math.Ldexp(1, -rp.p), 1+math.Ldexp(1, 1-rp.p), 2-math.Ldexp(1, -rp.p))
	}
	return xs
}

func TestReferenceBoundaries(t *testing.T) {
	for _, f := range Formats() {
		for _, x := range boundaries(f) {
			for _, o := range allOptions() {
				checkRef(t, x, f, o)
			}
		}
	}
}

// randomInput draws a float64 whose magnitude is spread over f's range
// (plus a margin), sometimes close to a tie of f.
func randomInput(rng *rand.Rand, f Format) float64 {
	lo, hi := -40, 40 // integer formats
	p := 60
	if rp, ok := refFloat[f]; ok {
		lo, hi, p = rp.emin-rp.p-3, int(math.Log2(rp.max))+3, rp.p
	}
	e := lo + rng.IntN(hi-lo+1)
	var x float64
	switch rng.IntN(4) {
	case 0, 1: // random 52-bit significand
		x = math.Ldexp(1+float64(rng.Uint64()>>12)/(1<<52), e)
	case 2: // a tie of f (or of the integer grid) plus a tiny perturbation
		k := float64(rng.Uint64() >> (64 - min(p, 52)))
		x = math.Ldexp(k+0.5, e-min(p, 52))
		switch rng.IntN(3) {
		case 1:
			x = math.Nextafter(x, 0)
		case 2:
			x = math.Nextafter(x, math.Inf(1))
		}
	default: // a random float32 pattern (the float32 entry points get covered too)
		x = float64(math.Float32frombits(rng.Uint32()))
	}
	if rng.IntN(2) == 0 {
		x = -x
	}
	return x
}

func TestReferenceRandom(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	if os.Getenv("DAVINCI_LONG") == "1" {
		n = 200000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range Formats() {
		for i := 0; i < n; i++ {
			x := randomInput(rng, f)
			for _, o := range allOptions() {
				checkRef(t, x, f, o)
			}
		}
	}
}

// TestSpecialValues checks the documented NaN/Inf/overflow encodings bit by bit.
func TestSpecialValues(t *testing.T) {
	nan := math.Float64frombits(0x7ff0000000000001) // signalling, payload only in the low bit
	pay := math.Float64frombits(0xfff5a00000000000) // negative, payload 0101 1010...
	cases := []struct {
		x    float64
		f    Format
		o    Options
		want uint32
	}{
		{nan, FP16, Options{}, 0x7e00},                        // payload does not fit: quiet bit only
		{pay, FP16, Options{}, 0xfc00 | 0x168 | 0x200},        // top 10 payload bits 01 0110 1000, quieted
		{pay, FP32, Options{}, 0xff800000 | 0x2d0000 | 1<<22}, // top 23 payload bits, quieted
		{pay, BF16, Options{}, 0xff80 | 0x2d | 0x40},
		{pay, E4M3, Options{}, 0xff},
		{pay, E5M2, Options{}, 0xff}, // payload bits 01 | quiet 10
		{pay, FP16, Options{Saturate: true}, 0},
		{pay, INT8, Options{}, 0},
		{math.Inf(1), FP16, Options{}, 0x7c00},
		{math.Inf(-1), FP16, Options{Round: RZ}, 0xfc00}, // an infinite input is exact
		{math.Inf(1), FP16, Options{Saturate: true}, 0x7bff},
		{math.Inf(1), E4M3, Options{}, 0x7f},
		{math.Inf(-1), E4M3, Options{Saturate: true}, 0xfe},
		{70000, FP16, Ascend(RNE), 0x7bff}, // Ascend: 70000 → 65504
		{65520, FP16, Options{}, 0x7c00},   // max + half ulp ties to even = Inf
		{65520, FP16, Options{Round: RO}, 0x7bff},
		{-65520, FP16, Options{Round: RU}, 0xfbff},
		{-65520, FP16, Options{Round: RD}, 0xfc00},
		{65519.99, FP16, Options{}, 0x7bff},
		{464, E4M3, Options{}, 0x7e}, // tie between 448 and 480(NaN): even → 448
		{465, E4M3, Options{}, 0x7f}, // OCP non-saturating: NaN
		{465, E4M3, Options{Round: RZ}, 0x7e},
		{-465, E4M3, Options{Round: RU}, 0xfe},
		{-465, E4M3, Options{Round: RD}, 0xff},
		{465, E4M3, Options{Saturate: true}, 0x7e},
		{61440, E5M2, Options{}, 0x7c}, // 57344 + half ulp: tie to even → Inf
		{61439, E5M2, Options{}, 0x7b},
		{-128.5, INT8, Options{}, 0x80},
		{127.5, INT8, Options{}, 0x7f},
		{-2.5, INT8, Options{}, 0xfe},
		{-2.5, INT8, Options{Round: RNA}, 0xfd},
		{-2.5, INT8, Options{Round: RO}, 0xfd},
		{-2.25, INT8, Options{Round: RD}, 0xfd},
		{1e10, INT32, Options{}, 0x7fffffff},
		{math.Inf(-1), INT32, Options{}, 0x80000000},
		{math.NaN(), INT32, Options{}, 0},
		{math.Copysign(0, -1), FP16, Options{}, 0x8000},
		{math.Copysign(0, -1), INT8, Options{}, 0},
		{-1e-30, FP16, Options{Round: RU}, 0x8000},
		{-1e-30, FP16, Options{Round: RD}, 0x8001},
		{1e-30, FP16, Options{Round: RU, FlushSubnormals: true}, 0},
		{-1e-30, FP16, Options{Round: RD, FlushSubnormals: true}, 0x8000},
		// Tininess after rounding: just below MinNormal but rounding up to it is kept.
		{math.Nextafter(math.Ldexp(1, -14), 0), FP16, Options{FlushSubnormals: true}, 0x0400},
		{math.Ldexp(1, -14) - math.Ldexp(1, -24), FP16, Options{FlushSubnormals: true}, 0},
		{math.Ldexp(1, -14) - math.Ldexp(1, -26), FP16, Options{FlushSubnormals: true}, 0x0400},
		{math.Ldexp(1, -14) - math.Ldexp(1, -26), FP16, Options{FlushSubnormals: true, Round: RZ}, 0},
		{math.Ldexp(1, -25), FP16, Options{}, 0},                // min subnormal / 2: tie to even zero
		{math.Ldexp(1, -25), FP16, Options{Round: RNA}, 1},      // … away: min subnormal
		{math.Ldexp(1.0000001, -25), FP16, Options{}, 1},        // just above half: rounds up
		{1 + math.Ldexp(1, -11), TF32, Options{}, 0x3f800000},   // TF32 tie to even
		{1 + 3*math.Ldexp(1, -11), TF32, Options{}, 0x3f804000}, // TF32 tie to even (up)
		{1 + math.Ldexp(1, -11), TF32, Options{Round: RO}, 0x3f802000},
	}
	for _, c := range cases {
		if got := FromFloat64(c.x, c.f, c.o); got != c.want {
			t.Errorf("FromFloat64(%v, %v, %+v) = %#x, want %#x", c.x, c.f, c.o, got, c.want)
		}
	}
}

// TestDecodeFP8 checks every FP8 pattern against the format definitions.
func TestDecodeFP8(t *testing.T) {
	for i := 0; i < 256; i++ {
		b := uint32(i)
		sign := 1.0
		if b&0x80 != 0 {
			sign = -1
		}
		// E4M3: bias 7, S.1111.111 = NaN, no Inf.
		e, m := int(b>>3&0xf), float64(b&7)
		var want float64
		switch {
		case e == 15 && m == 7:
			want = math.NaN()
		case e == 0:
			want = sign * m / 8 * math.Pow(2, -6)
		default:
			want = sign * (1 + m/8) * math.Pow(2, float64(e-7))
		}
		got := ToFloat64(b, E4M3)
		if !(got == want && math.Signbit(got) == math.Signbit(want)) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("E4M3 %#02x = %v, want %v", b, got, want)
		}
		if g32 := ToFloat32(b, E4M3); float64(g32) != got && !math.IsNaN(got) {
			t.Fatalf("E4M3 ToFloat32 %#02x = %v", b, g32)
		}
		if math.IsNaN(want) || FromFloat64(got, E4M3, Options{}) == b {
		} else {
			t.Fatalf("E4M3 %#02x does not round-trip", b)
		}
		// E5M2: bias 15, IEEE-like.
		e, m = int(b>>2&0x1f), float64(b&3)
		switch {
		case e == 31 && m == 0:
			want = sign * math.Inf(1)
		case e == 31:
			want = math.NaN()
		case e == 0:
			want = sign * m / 4 * math.Pow(2, -14)
		default:
			want = sign * (1 + m/4) * math.Pow(2, float64(e-15))
		}
		got = ToFloat64(b, E5M2)
		if !(got == want && math.Signbit(got) == math.Signbit(want)) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("E5M2 %#02x = %v, want %v", b, got, want)
		}
		if g32 := ToFloat32(b, E5M2); float64(g32) != got && !math.IsNaN(got) {
			t.Fatalf("E5M2 ToFloat32 %#02x = %v", b, g32)
		}
		wantBack := b
		if math.IsNaN(want) {
			wantBack |= 2 // quieted
		}
		if back := FromFloat64(got, E5M2, Options{}); back != wantBack {
			t.Fatalf("E5M2 %#02x round-trips to %#02x", b, back)
		}
	}
	if E4M3.MaxFinite() != 448 || E5M2.MaxFinite() != 57344 || FP16.MaxFinite() != 65504 {
		t.Fatal("MaxFinite")
	}
}

func TestProperties(t *testing.T) {
	type row struct {
		f                     Format
		bits, mant, exp, bias int
		maxF, minN, minS      float64
		float                 bool
	}
	rows := []row{
		{FP32, 32, 23, 8, 127, math.MaxFloat32, 0x1p-126, 0x1p-149, true},
		{FP16, 16, 10, 5, 15, 65504, 0x1p-14, 0x1p-24, true},
		{BF16, 16, 7, 8, 127, 0x1.fep127, 0x1p-126, 0x1p-133, true},
		{TF32, 19, 10, 8, 127, 0x1.ffcp127, 0x1p-126, 0x1p-136, true},
		{E4M3, 8, 3, 4, 7, 448, 0x1p-6, 0x1p-9, true},
		{E5M2, 8, 2, 5, 15, 57344, 0x1p-14, 0x1p-16, true},
		{INT8, 8, 7, 0, 0, 127, 1, 1, false},
		{INT32, 32, 31, 0, 0, math.MaxInt32, 1, 1, false},
	}
	for _, r := range rows {
		f := r.f
		if f.Bits() != r.bits || f.MantBits() != r.mant || f.ExpBits() != r.exp || f.Bias() != r.bias ||
			f.MaxFinite() != r.maxF || f.MinNormal() != r.minN || f.MinSubnormal() != r.minS || f.IsFloat() != r.float {
			t.Errorf("%v: properties %d %d %d %d %v %v %v %v", f, f.Bits(), f.MantBits(), f.ExpBits(), f.Bias(),
				f.MaxFinite(), f.MinNormal(), f.MinSubnormal(), f.IsFloat())
		}
	}
	if Format(200).Valid() || FromFloat64(1, Format(200), Options{}) != 0 || FromFloat64(1.5, FP16, Options{Round: 99}) != 0 {
		t.Error("invalid format/rounding not rejected")
	}
	if !math.IsNaN(ToFloat64(0, Format(200))) {
		t.Error("ToFloat64 on an invalid format")
	}
}

func TestToFloat32Int(t *testing.T) {
	if ToFloat32(uint32(0xff), INT8) != -1 || ToFloat32(uint32(1<<31-1), INT32) != 2147483648 {
		t.Error("integer widening")
	}
	v := int32(16777217) // 2^24+1 ties to even 2^24
	if ToFloat32(uint32(v), INT32) != 16777216 {
		t.Error("INT32 → float32 not RNE")
	}
	if ToFloat64(uint32(0x80), INT8) != -128 {
		t.Error("INT8 widening")
	}
}
