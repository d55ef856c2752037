package programs

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// bfBigScheme is a scheme of BF16 pieces whose residual is scaled by 2^60:
// its [ll] accumulator, weight 2^-120, reaches 2^134 at k = 256 for inputs
// up to 2^12 (k × 2^63 × 2^63) where C itself stays within 2^32.
const bfBigScheme = `program.scheme={pieces: [{format: bf16}, {format: bf16, scale: 60}], groups: [{products: [hh]}, {products: [hl, lh]}, {products: [ll]}]}`

// A scale that lifts an accumulator past FP32's largest finite value for
// the inputs' range is bad input naming the scale (a probe: exit 0, C
// ±Inf in 20157 of 65536 elements, the range saying "split without
// overflow"), on GPUs and on DaVinci; below that range the run is fine and
// program.range.max_exponent says where it ends.
func TestEmulatedAccumulatorOverflowRefused(t *testing.T) {
	const want = `key "scheme.pieces[1].scale": the FP32 accumulator of scheme.groups[2] ([ll], weight 2^-120) of inputs in (−2^12, 2^12) at k = 256 may reach 2^134 — k × |piece 1 of A| × |piece 1 of B| ≤ 256 × 2^63 × 2^63, piece 1 scaled by 2^60 — beyond FP32's largest finite value 3.403e+38, though C itself stays within 2^32; a scale of at most 2^56 keeps the accumulators finite here`
	for _, machine := range []string{"a100", "ascend-910b3", "mi210"} {
		_, err := runEmulated(t, machine, bfBigScheme, "program.m=256", "program.n=256", "program.k=256", "program.numerics=full", "program.inputs.offset_exponent=12")
		wantBadInputLine(t, err, want, machine)
	}
	res, err := runEmulated(t, "a100", bfBigScheme, "program.m=64", "program.n=64", "program.k=256", "program.numerics=full", "program.inputs.offset_exponent=8")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report.Program["range"].(map[string]any)
	if r["max_exponent"] != 8 || !strings.Contains(r["meaning"].(string), "accumulate without overflow at k = 256 (from 2^8 the FP32 accumulator of scheme.groups[2] ([ll], weight 2^-120) may pass") {
		t.Errorf("range %v, want max_exponent 8 (the [ll] accumulator's)", r)
	}
	if e := res.Report.Error; e == nil || e.NonFinite != 0 || e.Bits < 10 {
		t.Errorf("at 2^8: error %+v, want finite C", e)
	}
	// .npy inputs are not refused for their values: flagged.
	pa, pb := rangeInputs(t, func(a, b []float32) { a[0], b[0] = 4096, 4096 })
	res, err = runEmulated(t, "a100", bfBigScheme, fmt.Sprintf("program.m=%d", rangeM), fmt.Sprintf("program.k=%d", rangeK), fmt.Sprintf("program.n=%d", rangeN),
		"program.inputs.a="+pa, "program.inputs.b="+pb, "program.numerics=full")
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(res.Report.Notes, "\n"); !strings.Contains(notes, "accumulator beyond FP32: with max|A| = 4096 and max|B| = 4096 the FP32 accumulator of scheme.groups[2] ([ll], weight 2^-120) may reach 2^131.6 at k = 48, beyond FP32's largest finite value 3.403e+38 (its scale lifts it past C's own bound, 2^29.58), so C may be ±Inf or NaN where it overflows") {
		t.Errorf(".npy inputs up to 4096: notes\n%s", notes)
	}
}

// The accumulators' bound refuses no preset on any input range its split
// takes, at any k up to 2^20, nor Ootomo at the residual scales
// studies/ootomo-scale.yaml varies; their program.range.max_exponent is
// the split's. (Every scaled group of theirs stays within C's own bound
// k·2^2e or far below FP32's largest finite value.)
func TestEmulatedAccumulatorBoundSparesPresets(t *testing.T) {
	bad := func(key, format string, a ...any) error { return fmt.Errorf("%s: %s", key, fmt.Sprintf(format, a...)) }
	var plans []*schemePlan
	for _, name := range fp32SchemeNames() {
		sp, err := resolveScheme(Scheme{Name: name}, bad)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, sp)
	}
	for _, s := range []int{0, 4, 8, 11, 14} {
		pre := schemePresets["ootomo"]
		pieces := slices.Clone(pre.Pieces)
		pieces[1].Scale = s
		sp, err := resolveScheme(Scheme{Name: "ootomo", Pieces: pieces}, bad)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, sp)
	}
	for _, sp := range plans {
		for _, k := range []int{1, 256, 8192, 1 << 20} {
			sp.k = k
			if e, ok := sp.accExponent(); ok {
				if _, emax := sp.rangeExponents(); e-1 < emax {
					t.Errorf("%s at k = %d: the accumulators end the range at 2^%d, below the split's 2^%d", sp.describe(), k, e-1, emax)
				}
			}
			for e := -100; e <= 127; e++ {
				if err := sp.checkRange(math.Ldexp(1, e), e, "inputs.offset_exponent", bad); err != nil && strings.Contains(err.Error(), "accumulator") {
					t.Fatalf("%s at k = %d, inputs to 2^%d: %v", sp.describe(), k, e, err)
				}
			}
		}
	}
}

// A scheme without hh, piece 0 × piece 0, misses C's leading part: bad
// input (a probe: [hl] alone ran, exit 0, bits 0, no diagnosis).
func TestEmulatedSchemeNeedsLeadingProduct(t *testing.T) {
	for _, c := range []struct {
		machine, scheme, want string
	}{
		{"a100", `program.scheme={pieces: [{format: fp16}, {format: fp16, scale: 11}], groups: [{products: [hl]}]}`,
			`key "scheme.groups": no group computes hh, piece 0 × piece 0 — the leading product, C's largest part, which the other products only correct (groups [hl]); add hh to a group`},
		{"ascend-910a", `program.scheme={pieces: [{format: fp16}, {format: fp16, scale: 11}], groups: [{products: [hl, lh]}, {products: [ll]}]}`,
			`key "scheme.groups": no group computes hh, piece 0 × piece 0`},
		{"a100", `program.scheme={pieces: [{format: fp16}, {format: fp16, scale: 11}, {format: fp16, scale: 22}, {format: fp16, scale: 33}], groups: [{products: ["01", "10"]}, {products: ["02", "20"]}, {products: ["03", "30"]}]}`,
			`key "scheme.groups": no group computes 00, piece 0 × piece 0`},
		// A preset's groups replaced.
		{"a100", `program.scheme={name: ootomo, groups: [{products: [hl, lh]}]}`, `key "scheme.groups": no group computes hh`},
	} {
		_, err := runEmulated(t, c.machine, c.scheme, "program.m=64", "program.n=64", "program.k=64", "program.numerics=full")
		wantBadInputLine(t, err, c.want, c.machine, c.scheme)
	}
}

// scheme: auto never states a negative target: where FP32 SGEMM itself has
// no accuracy on the sample (its C overflows FP32 at 2^70, underflows at
// 2^-100) the note says that no candidate has any and why (a probe: "the
// fastest candidate with at least -0.5 bits"), and the run's C is flagged.
func TestEmulatedAutoNoAccuracy(t *testing.T) {
	for _, c := range []struct {
		offset string
		why    string
		note   string
	}{
		{"70", "its C overflows FP32: 4096 of the sample's 4096 elements are ±Inf or NaN", "C may overflow FP32: |C| ≤ k × max|A| × max|B| = 64 × "},
		{"-100", "its C underflows FP32: 4096 of the sample's 4096 elements are 0 where the exact C is not", "C is 0: "},
	} {
		res, err := runEmulated(t, "a100", "program.scheme=auto", "program.m=64", "program.n=64", "program.k=64", "program.numerics=sampled",
			"program.inputs.offset_exponent="+c.offset)
		if err != nil {
			t.Fatalf("2^%s: %v", c.offset, err)
		}
		auto := res.Report.Program["auto"].(map[string]any)
		why := auto["why"].(string)
		notes := strings.Join(res.Report.Notes, "\n")
		if target := auto["target_bits"].(float64); target < 0 || strings.Contains(notes, "at least -") ||
			!strings.Contains(why, "no candidate has any accuracy on these inputs — each has 0 bits on the sample, FP32 SGEMM included ("+c.why) ||
			!strings.HasPrefix(auto["target_from"].(string), "none: FP32 SGEMM has 0.0 bits on the sample") {
			t.Errorf("2^%s: target %v (%v), why %q", c.offset, auto["target_bits"], auto["target_from"], why)
		}
		if !strings.Contains(notes, c.note) {
			t.Errorf("2^%s: notes\n%s\nwant %q", c.offset, notes, c.note)
		}
	}
	// FP32 SGEMM has its bits where no candidate has any (the 910A has
	// no FP32 cube; at 2^-30 every FP16 piece is zero).
	res, err := runEmulated(t, "ascend-910a", "program.scheme=auto", "program.m=64", "program.n=64", "program.k=64", "program.numerics=off", "program.inputs.offset_exponent=-30")
	if err != nil {
		t.Fatal(err)
	}
	if why := res.Report.Program["auto"].(map[string]any)["why"].(string); !strings.HasPrefix(why, "no candidate has any accuracy on these inputs — each has 0 bits on the sample, where FP32 SGEMM has ") {
		t.Errorf("910A at 2^-30: why %q", why)
	}
	res, err = runEmulated(t, "a100", "program.scheme=auto", "program.m=64", "program.n=64", "program.k=64", "program.numerics=off")
	if err != nil {
		t.Fatal(err)
	}
	if why := res.Report.Program["auto"].(map[string]any)["why"].(string); !strings.HasPrefix(why, "the fastest candidate with at least ") {
		t.Errorf("U[−1, 1]: why %q", why)
	}
	for _, c := range []struct {
		bits, target float64
		want         bool
	}{{0, 0, false}, {0.1, 0, true}, {20, 19.5, true}, {19, 19.5, false}, {0, -0.5, false}} {
		if got := meetsTarget(c.bits, c.target); got != c.want {
			t.Errorf("meetsTarget(%g, %g) = %v", c.bits, c.target, got)
		}
	}
}

// Scheme native on inputs whose products underflow FP32 says C is 0, as
// the emulations' range notes do (a probe: C 0, bits 0, no note); where
// they overflow it, that C may; an emulation whose pieces survive says C
// underflows FP32.
func TestEmulatedNativeRangeNoted(t *testing.T) {
	for _, c := range []struct {
		machine, scheme, offset, want string
		zero                          bool
	}{
		{"a100", "native", "-100", "C is 0: |C| ≤ k × max|A| × max|B| = 64 × 7.8", true},
		{"ascend-910b3", "native", "-100", "C is 0: |C| ≤ k × max|A| × max|B| = 64 × 7.8", true},
		{"a100", "native", "70", "C may overflow FP32: |C| ≤ k × max|A| × max|B| = 64 × 1.18", false},
		{"a100", "ape-fp32b", "-100", "C underflows FP32: |C| ≤ k × max|A| × max|B| = 64 × 7.8", true},
		{"a100", "native", "0", "", false},
	} {
		res, err := runEmulated(t, c.machine, "program.scheme="+c.scheme, "program.m=64", "program.n=64", "program.k=64", "program.numerics=full",
			"program.inputs.offset_exponent="+c.offset)
		if err != nil {
			t.Fatalf("%s %s at 2^%s: %v", c.machine, c.scheme, c.offset, err)
		}
		notes := strings.Join(res.Report.Notes, "\n")
		if c.want == "" && (strings.Contains(notes, "C is 0") || strings.Contains(notes, "FP32: |C|")) || c.want != "" && !strings.Contains(notes, c.want) {
			t.Errorf("%s %s at 2^%s: notes\n%s\nwant %q", c.machine, c.scheme, c.offset, notes, c.want)
		}
		if c.zero {
			for _, o := range res.Outputs {
				if o.Name == "C" && slices.ContainsFunc(o.F32, func(v float32) bool { return v != 0 }) {
					t.Errorf("%s %s at 2^%s: C is not 0", c.machine, c.scheme, c.offset)
				}
			}
		}
	}
}

// unit: matrix for scheme native on a machine without FP32 matrix units is
// refused naming unit (a probe: it named kind).
func TestEmulatedNativeUnitKey(t *testing.T) {
	_, err := runEmulated(t, "a100", "program.scheme=native", "program.unit=matrix")
	wantBadInputLine(t, err, `key "unit": matrix asks for FP32 tensor cores; machine a100 (nvidia-sm) has none (unit: vector runs it on the CUDA-core units)`)
	if _, err := runEmulated(t, "mi210", "program.scheme=native", "program.unit=matrix", "program.m=64", "program.n=64", "program.k=64", "program.numerics=off"); err != nil {
		t.Errorf("mi210, FP32 MFMAs: %v", err)
	}
}

// baselines given to a timing-only run is said not to be used, as
// sample_tiles is (a probe: silently ignored).
func TestEmulatedBaselinesUnusedNoted(t *testing.T) {
	const note = "baselines applies to numerics sampled or full: not used (numerics off computes no error)"
	for _, c := range []struct {
		machine, scheme, numerics string
		noted                     bool
	}{
		{"a100", "ootomo", "off", true},
		{"ascend-910a", "markidis", "off", true},
		{"ascend-910b3", "native", "off", true},
		{"a100", "auto", "off", true},
		{"a100", "ootomo", "sampled", false},
		{"ascend-910b3", "native", "sampled", false},
	} {
		res, err := runEmulated(t, c.machine, "program.scheme="+c.scheme, "program.m=64", "program.n=64", "program.k=64", "program.numerics="+c.numerics, "program.baselines=false")
		if err != nil {
			t.Fatalf("%s %s: %v", c.machine, c.scheme, err)
		}
		if got := slices.Contains(res.Report.Notes, note); got != c.noted {
			t.Errorf("%s %s numerics %s: noted %v, want %v: %v", c.machine, c.scheme, c.numerics, got, c.noted, res.Report.Notes)
		}
	}
}

// scheme.name is the program's own: a control character, space around it
// or the reports' own label of a changed preset is refused (a probe: "a\nb"
// split the summary's line; "ootomo (pieces changed)" was reported as the
// tool's label of a changed Ootomo).
func TestEmulatedSchemeNameRefused(t *testing.T) {
	own := `, pieces: [{format: fp16}], groups: [{products: [hh]}]}`
	for _, c := range []struct{ name, want string }{
		{`"ootomo (pieces changed)"`, `key "scheme.name": "ootomo (pieces changed)" is how the reports label preset ootomo with keys changed`},
		{`"markidis (split: fused)"`, `key "scheme.name": "markidis (split: fused)" is how the reports label preset markidis`},
		{`"mine (groups changed)"`, `key "scheme.name": "mine (groups changed)" ends as the reports' label of a preset with keys changed`},
		{`"a\nb"`, `key "scheme.name": "a\nb" has a control character (U+000A at byte 1)`},
		{`"tab\there"`, `key "scheme.name": "tab\there" has a control character (U+0009 at byte 3)`},
		{`" ootomo"`, `key "scheme.name": " ootomo" begins or ends with space`},
	} {
		_, err := runEmulated(t, "a100", "program.scheme={name: "+c.name+own, "program.m=64", "program.n=64", "program.k=64", "program.numerics=off")
		wantBadInputLine(t, err, c.want, c.name)
	}
	res, err := runEmulated(t, "a100", "program.scheme={name: my-cast"+own, "program.m=64", "program.n=64", "program.k=64", "program.numerics=off")
	if err != nil || res.Report.Program["scheme"] != "my-cast" {
		t.Errorf("my-cast: %v", err)
	}
}
