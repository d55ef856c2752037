package programs

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// The note on inputs below a scheme's full-precision range names the
// piece that sets min_exponent: it said "their low pieces are FP16
// subnormals" for every scheme, where SGEMM-cube's, FP32-F's (and
// Ootomo's, tied with its low piece) bound is piece 0's, the high one.
func TestEmulatedRangePieceNamed(t *testing.T) {
	bad := func(key, format string, a ...any) error { return fmt.Errorf(format, a...) }
	for name, want := range map[string]string{
		"sgemm-cube": "high piece (0)",
		"ape-fp32f":  "high piece (0)",
		"ootomo":     "high and low pieces (0, 1)",
		"markidis":   "low piece (1)",
		"le-gemm":    "low piece (1)",
		"ape-fp32t":  "low piece (1)",
		"ape-fp32b":  "low piece (2)",
	} {
		sp, err := resolveScheme(Scheme{Name: name}, bad)
		if err != nil {
			t.Fatal(err)
		}
		if got := pieceNames(sp.minExponentPieces(), len(sp.scales)); got != want {
			t.Errorf("%s: %q sets min_exponent, want %q", name, got, want)
		}
	}
	pa, pb := rangeInputs(t, func(a, b []float32) { a[0], b[0] = 0x1p-16, -0x1p-17 })
	res, err := runEmulated(t, "a100", "program.scheme=sgemm-cube", fmt.Sprintf("program.m=%d", rangeM), fmt.Sprintf("program.k=%d", rangeK), fmt.Sprintf("program.n=%d", rangeN),
		"program.inputs.a="+pa, "program.inputs.b="+pb, "program.numerics=full")
	if err != nil {
		t.Fatal(err)
	}
	want := "inputs below the scheme's full-precision range: 1 elements of A and 1 of B have 0 < |x| < 2^-14: their high piece (0) is an FP16 subnormal or zero and loses bits"
	if !slices.ContainsFunc(res.Report.Notes, func(s string) bool { return strings.HasPrefix(s, want) }) {
		t.Errorf("notes %q: want %q", res.Report.Notes, want)
	}
}

// Where the matrix units flush subnormal inputs to zero (the MI210's
// numerics), the note says a subnormal piece is lost, not less accurate:
// Markidis's unscaled low pieces of |x| < 2^-3 (an eighth of U[−1, 1])
// add nothing there, its 14.2 bits, which a review found unexplained in
// the run; the A100 keeps them.
func TestEmulatedRangeFlushNamed(t *testing.T) {
	for machine, want := range map[string]string{
		"mi210": "their low piece (1) is an FP16 subnormal or zero, and lost: the mi210's matrix cores (numerics mi210) flush subnormal inputs to zero",
		"a100":  "their low piece (1) is an FP16 subnormal or zero and loses bits (",
	} {
		res, err := runEmulated(t, machine, "program.scheme=markidis", "program.m=32", "program.n=32", "program.k=64", "program.numerics=full")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Report.Notes, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("%s: notes %q: want %q", machine, res.Report.Notes, want)
		}
	}
}

// zeroUpTo is the end of the inputs whose pieces 0..last are all zero:
// every FP32 value up to it (both signs) has them zero, the next one not.
func TestEmulatedRangeZeroBound(t *testing.T) {
	bad := func(key, format string, a ...any) error { return fmt.Errorf(format, a...) }
	for _, name := range []string{"hgemm", "markidis", "ootomo", "ape-fp32f", "sgemm-cube", "le-gemm", "ape-fp32b", "ape-fp32t"} {
		sp, err := resolveScheme(Scheme{Name: name}, bad)
		if err != nil {
			t.Fatal(err)
		}
		pieces := make([]uint32, len(sp.scales))
		zero := func(x float32, last int) bool {
			sp.split(x, pieces)
			for _, b := range pieces[:last+1] {
				if fp.ToFloat64(b, sp.format) != 0 {
					return false
				}
			}
			return true
		}
		for last := range sp.scales {
			for _, neg := range []bool{false, true} {
				z := sp.zeroUpTo(neg, last)
				sign := float32(1)
				if neg {
					sign = -1
				}
				if z == 0 {
					t.Errorf("%s pieces 0..%d: no zero bound", name, last)
					continue
				}
				for m := uint32(1); m <= math.Float32bits(z); m += max(1, math.Float32bits(z)/4096) {
					if x := sign * math.Float32frombits(m); !zero(x, last) {
						t.Fatalf("%s pieces 0..%d: %g has one that is not zero, below the bound %g", name, last, x, z)
					}
				}
				if !zero(sign*z, last) || zero(sign*math.Nextafter32(z, 1), last) {
					t.Errorf("%s pieces 0..%d: bound %g (neg %v) is not the end of the zero ones", name, last, z, neg)
				}
			}
		}
	}
}

// Far below the range every piece is zero and C is 0 (a review: offset
// −30 or FP32-subnormal inputs gave bits 0.0, exit 0, and a note that the
// inputs "lose bits"): a note says which inputs vanish and, where every
// product the scheme computes takes a piece zero throughout — every piece,
// or SGEMM-cube's high pieces at 2^-30, which all its products take —,
// that C is 0. The note never claims a C that is not 0.
func TestEmulatedRangeVanish(t *testing.T) {
	for _, c := range []struct {
		scheme, offset string
		vanish         string // the vanish note's start ("": none)
		zeroC          bool
		why            string
	}{
		{"hgemm", "-30", "inputs that vanish: 4096 elements of A and 4096 of B have 0 < |x| ≤ 2.98e-08: they round to zero", true, "C is 0: every element of A rounds to zero in FP16 (each |x| ≤ 2.98e-08)"},
		{"markidis", "-30", "inputs that vanish: 4096 elements of A and 4096 of B have 0 < |x| ≤ 2.98e-08: every piece of them is zero", true,
			"C is 0: every product the scheme computes (hh hl lh) takes a piece that is zero throughout — A's high and low pieces (0, 1) are zero in every element"},
		// Most inputs keep their low pieces; the high ones, which every
		// product takes, are all zero.
		{"sgemm-cube", "-30", "inputs that vanish: 34 elements of A and 34 of B have 0 < |x| ≤ 7.276e-12", true,
			"C is 0: every product the scheme computes (hh hl lh) takes a piece that is zero throughout — A's high piece (0) is zero in every element (each |x| ≤ 2.98e-08); B's high piece (0) is zero in every element"},
		{"sgemm-cube", "-20", "", false, ""},
		{"ootomo", "-40", "inputs that vanish: 4096 elements of A and 4096 of B", true, ""},
	} {
		res, err := runEmulated(t, "a100", "program.scheme="+c.scheme, "program.m=64", "program.k=64", "program.n=64",
			"program.inputs.offset_exponent="+c.offset, "program.numerics=full")
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(res.Report.Notes, "\n")
		vanish := strings.Contains(notes, "inputs that vanish: ")
		if c.vanish != "" && !strings.Contains(notes, c.vanish) {
			t.Errorf("%s at 2^%s: notes\n%s\nwant %q", c.scheme, c.offset, notes, c.vanish)
		}
		zeroNote := strings.Contains(notes, "C is 0: ")
		var cOut []float32
		for _, o := range res.Outputs {
			if o.Name == "C" {
				cOut = o.F32
			}
		}
		allZero := !slices.ContainsFunc(cOut, func(v float32) bool { return v != 0 })
		if vanish != (c.vanish != "") || zeroNote != c.zeroC || c.why != "" && !strings.Contains(notes, c.why) {
			t.Errorf("%s at 2^%s: notes\n%s\nwant a vanish note %v, C is 0 %v (%q)", c.scheme, c.offset, notes, c.vanish, c.zeroC, c.why)
		}
		if zeroNote && !allZero {
			t.Errorf("%s at 2^%s: the note says C is 0, but it is not", c.scheme, c.offset)
		}
		if c.zeroC && (!allZero || res.Report.Error.Bits != 0) {
			t.Errorf("%s at 2^%s: C all zero %v, bits %g", c.scheme, c.offset, allZero, res.Report.Error.Bits)
		}
	}
	// Four pieces: the note names the products as the kernels do ("00",
	// not "0·0").
	four := `program.scheme={pieces: [{format: fp16}, {format: fp16, scale: 11}, {format: fp16, scale: 22}, {format: fp16, scale: 33}], groups: [{products: ["00"]}, {products: ["01", "10"]}, {products: ["02", "20"]}, {products: ["03", "30"]}]}`
	res4, err := runEmulated(t, "a100", four, "program.m=64", "program.k=64", "program.n=64", "program.inputs.offset_exponent=-60", "program.numerics=full")
	if err != nil {
		t.Fatal(err)
	}
	notes4 := strings.Join(res4.Report.Notes, "\n")
	if !strings.Contains(notes4, "C is 0: every product the scheme computes (00 01 10 02 20 03 30) takes a piece") {
		t.Errorf("four pieces at 2^-60: notes\n%s\nwant the products named 00 01 10 02 20 03 30, as the kernels are", notes4)
	}
	// FP32-subnormal .npy inputs (1e-39): every piece of every scheme is 0.
	pa, pb := rangeInputs(t, func(a, b []float32) {
		for i := range a {
			a[i] *= 1e-39
		}
	})
	res, err := runEmulated(t, "a100", "program.scheme=ootomo", fmt.Sprintf("program.m=%d", rangeM), fmt.Sprintf("program.k=%d", rangeK), fmt.Sprintf("program.n=%d", rangeN),
		"program.inputs.a="+pa, "program.inputs.b="+pb, "program.numerics=full")
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Report.Notes, "\n")
	if !strings.Contains(notes, "inputs that vanish: 1317 elements of A and 0 of B") || !strings.Contains(notes, "C is 0: every product the scheme computes (hh hl lh) takes a piece that is zero throughout — A's high and low pieces (0, 1) are zero in every element") {
		t.Errorf("ootomo on 1e-39·A: notes\n%s", notes)
	}
}
