package programs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
)

func runEmulated(t *testing.T, machine string, sets ...string) (*Result, error) {
	t.Helper()
	f, err := ReadFile("examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return Execute(f, Options{Machine: machine, Overrides: mustSets(t, sets...)}, RunHooks{})
}

// Every preset whose pieces the machine's matrix units take is bit-exact
// to the golden model (check: C, with the split, the outside accumulation
// and the epilogue computed by the simulated vector units) on A100
// (multistage shared-memory pipeline), MI210 (register staging), H100
// (wgmma from shared memory), B200 (accumulators in tensor memory) and
// MI100 (accumulators in AGPRs), with edge tiles in m, n and k and at
// least three k-steps (a register-staged kernel's stages refilled while
// the last ones are read: a termwise kernel's C bands once overwrote them).
func TestEmulatedBitExact(t *testing.T) {
	small := []string{"program.m=72", "program.n=40", "program.k=300", "program.numerics=full", "program.check=true"}
	for _, c := range []struct {
		machine string
		schemes []string
		staging string
	}{
		{"a100", []string{"hgemm", "markidis", "ootomo", "ape-fp32m", "ape-fp32f", "ape-fp32t", "ape-fp32b", "bf16x9", "sgemm-cube", "le-gemm"}, ""},
		{"mi210", []string{"markidis", "ootomo", "ape-fp32f", "ape-fp32b", "le-gemm", "sgemm-cube"}, ""},
		{"h100-sxm", []string{"ootomo", "ape-fp32f", "ape-fp32b", "sgemm-cube"}, ""},
		{"b200", []string{"ootomo", "ape-fp32f", "sgemm-cube"}, ""},
		{"mi100", []string{"ootomo", "bf16x9"}, ""},
		{"a800", []string{"le-gemm", "markidis"}, "none"},
		{"mi210", []string{"le-gemm", "ootomo", "ape-fp32f"}, "none"},
		{"a100", []string{"ape-fp32f"}, "none"}, // termwise: C's bands through shared memory
	} {
		for _, s := range c.schemes {
			sets := append([]string{"program.scheme=" + s}, small...)
			if c.staging != "" {
				sets = append(sets, "program.tiling.staging="+c.staging)
			}
			checkedRun(t, c.machine, s, sets...)
		}
	}
}

// checkedRun runs an emulated GEMM with a bit check (full numerics, check:
// true in sets) and fails the test unless it succeeds with an error report
// of at least 11 bits.
func checkedRun(t *testing.T, machine, label string, sets ...string) *Result {
	t.Helper()
	res, err := runEmulated(t, machine, sets...)
	if err != nil {
		t.Fatalf("%s %s: %v", machine, label, err)
	}
	if res.Failure != nil {
		t.Fatalf("%s %s: %v", machine, label, res.Failure)
	}
	if e := res.Report.Error; e == nil || e.Bits < 11 {
		t.Errorf("%s %s: error %+v", machine, label, e)
	}
	if slices.Contains(sets, "program.check=true") {
		assertChecked(t, machine+" "+label, res)
	}
	return res
}

// Ootomo's outside accumulation runs timed and sampled (the golden model
// computes its tiles) and beats Markidis, whose corrections and hh share
// the tensor cores' truncating accumulator.
func TestEmulatedOotomoSampled(t *testing.T) {
	bits := map[string]float64{}
	for _, s := range []string{"ootomo", "markidis"} {
		res, err := runEmulated(t, "a100", "program.scheme="+s, "program.m=128", "program.n=128", "program.k=512", "program.sample_tiles=1")
		if err != nil || res.Failure != nil {
			t.Fatalf("%s: %v %v", s, err, res.Failure)
		}
		bits[s] = res.Report.Error.Bits
	}
	if bits["ootomo"] <= bits["markidis"]+1 {
		t.Errorf("bits %v: ootomo should beat markidis", bits)
	}
}

// A scheme written in YAML runs like the preset it spells out.
func TestEmulatedInlineScheme(t *testing.T) {
	f := programText(t, `kind: emulated-gemm
machine: a100
m: 64
k: 96
n: 48
scheme:
  pieces: [{format: fp16}, {format: fp16, rounding: rne, scale: 12}]
  groups: [{products: [hh]}, {products: [lh]}, {products: [hl]}]
  kernels: termwise
numerics: full
check: true
`)
	mine, err := Execute(f, Options{}, RunHooks{})
	if err != nil || mine.Failure != nil {
		t.Fatalf("%v %v", err, mine.Failure)
	}
	pre, err := Execute(f, Options{Overrides: mustSets(t, "program.scheme=ape-fp32f")}, RunHooks{})
	if err != nil || pre.Failure != nil {
		t.Fatalf("%v %v", err, pre.Failure)
	}
	if mine.Report.Error.RelFro != pre.Report.Error.RelFro {
		t.Errorf("inline %g, preset %g", mine.Report.Error.RelFro, pre.Report.Error.RelFro)
	}
}

// The split is exact where the scheme's range holds: hi + lo·2^-s = x for
// Ootomo's and Ape FP32-F's splits of normal FP16-range inputs.
func TestEmulatedSplitExact(t *testing.T) {
	bad := func(key, format string, a ...any) error { t.Fatalf("%s: %s", key, format); return nil }
	for _, name := range []string{"ootomo", "ape-fp32f"} {
		sp, _ := resolveScheme(Scheme{Name: name}, bad)
		rng := NewRand(3, 0)
		buf := make([]uint32, 2)
		for i := 0; i < 10000; i++ {
			x := float32(rng.Float64()*2 - 1)
			if math.Abs(float64(x)) < 1.0/1024 {
				continue
			}
			sp.split(x, buf)
			hi, lo := fp.ToFloat64(buf[0], fp.FP16), fp.ToFloat64(buf[1], fp.FP16)
			if got := hi + math.Ldexp(lo, -sp.scales[1]); float32(got) != x && math.Abs(got-float64(x)) > math.Abs(float64(x))*math.Ldexp(1, -22) {
				t.Fatalf("%s: %g splits into %g + %g·2^-%d = %g", name, x, hi, lo, sp.scales[1], got)
			}
		}
	}
}

// Bad schemes are refused with one line naming the key.
func TestEmulatedBadInput(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
		want    string
	}{
		{"a100", []string{"program.scheme=nope"}, `key "scheme.name": unknown scheme "nope"`},
		{"v100", []string{"program.scheme=ape-fp32t"}, `key "scheme.pieces[0].format": tf32 pieces need TF32 tensor cores`},
		{"mi210", []string{"program.scheme=ape-fp32t"}, `key "scheme.pieces[0].format"`},
		{"a100", []string{"program.scheme=ootomo", "program.inputs.offset_exponent=16"}, `key "inputs.offset_exponent"`},
		{"a100", []string{"program.scheme=hgemm", "program.split.sb=12"}, `key "split"`},
		{"a100", []string{"program.scheme=ootomo", "program.split=fused"}, `--set program.split=fused: unknown key "program.split": programs of this kind have no split`}, // (was: a section, set one of rounding, sb, saturate)
		{"a100", []string{"program.scheme={pieces: [{format: fp16, saturate: yes}], groups: [{products: [hh]}]}"}, `--set program.scheme={pieces: [{format: fp16, saturate: yes}], groups: [{products: [hh]}]}: key "scheme.pieces[0].saturate": want true or false, got "yes"`},
		{"a100", []string{"program.scheme={pieces: [{format: fp16}], groups: [{products: hh}]}"}, `key "scheme.groups[0].products" wants a list, not a value`},
		{"a100", []string{"program.scheme={pieces: [{format: fp16}], groups: [[hh]]}"}, `key "scheme.groups[0]" is a section: it wants a mapping of keys (products, accumulate), not a list`},
		{"a100", []string{"program.scheme={name: mine, pieces: [{format: fp16}]}"}, `key "scheme.name": unknown scheme "mine" (presets: `},
		{"a100", []string{"program.scheme={pieces: [{format: fp16}, {format: fp16, scale: 11}], groups: [{products: [hh]}]}"}, `key "scheme.pieces[1]": no product uses piece 1`},
	} {
		_, err := runEmulated(t, c.machine, c.sets...)
		wantBadInputLine(t, err, c.want, c.machine, c.sets)
	}
	for _, c := range []struct{ scheme, want string }{
		{"{pieces: [{format: fp16}, {format: fp16, scale: 30}], groups: [{products: [hh]}, {products: [hl, lh]}]}", `key "scheme.pieces[1].scale"`},
		{"{pieces: [{format: fp16}, {format: fp16, scale: 11.7}], groups: [{products: [hh]}, {products: [hl, lh]}]}", `key "scheme.pieces[1].scale": want an integer, got 11.7`},
		{"{pieces: [{format: fp16}, {format: fp16, scale: x}], groups: [{products: [hh]}, {products: [hl, lh]}]}", `program.yaml:7: key "scheme.pieces[1].scale": want an integer, got "x"`},
		{"{pieces: [{format: fp16}], groups: [[hh]]}", `program.yaml:7: key "scheme.groups[0]" is a section: it wants a mapping of keys (products, accumulate), not a list`},
		{"{pieces: [{format: fp16, colour: red}], groups: [{products: [hh]}]}", `program.yaml:7: unknown key "scheme.pieces[0].colour": "scheme.pieces[0]" has no key "colour" (it has: format, rounding, scale, saturate)`},
		{"[ootomo]", `key "scheme" takes a name or a section of keys (name, pieces, groups, kernels, epilogue, split), not a list`},
		{"5", `key "scheme": want a preset's name (`},
		{"\n  pieces:\n    - {format: fp16}\n    - {format: fp16, scale: 1.5}\n  groups:\n    - {products: [hh, hl]}", `program.yaml:10: key "scheme.pieces[1].scale": want an integer, got 1.5`},
		{"{pieces: [{format: fp16}, {format: fp16}], groups: [{products: [hh, hx]}]}", `key "scheme.groups[0].products": unknown product "hx"`},
		{"{pieces: [{format: fp16}, {format: fp16, scale: 11}], groups: [{products: [hh, hl]}]}", `key "scheme.groups[0].products"`},
		{"{pieces: [{format: fp16}, {format: bf16}], groups: [{products: [hh]}]}", `key "scheme.pieces[1].format"`},
		{"{pieces: [{format: fp8}], groups: [{products: [hh]}]}", `key "scheme.pieces[0].format"`},
		{"{name: ootomo, kernels: sideways}", `key "scheme.kernels"`},
		{"{name: ape-int16}", `key "scheme.name": ape-int16 is not a split`},
	} {
		f := programText(t, "kind: emulated-gemm\nmachine: a100\nm: 64\nk: 64\nn: 64\nnumerics: off\nscheme: "+c.scheme+"\n")
		_, err := Execute(f, Options{}, RunHooks{})
		wantBadInputLine(t, err, c.want, c.scheme)
	}
}

// scheme: auto measures every preset's accuracy on a sample and simulates
// the accurate ones in order of their lower bounds: FP32 SGEMM's accuracy
// picks Ootomo on the A100 (its hh accumulates outside the tensor cores'
// truncating accumulator), a loose target the fastest preset, an
// unreachable one the most accurate; the choice is in program.auto.
func TestEmulatedAuto(t *testing.T) {
	base := []string{"program.scheme=auto", "program.m=1024", "program.n=1024", "program.k=1024", "program.numerics=off"}
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, "ootomo"},
		{[]string{"program.target_bits=8"}, "hgemm (split: fused)"}, // one kernel: no split kernel's launch and passes
		{[]string{"program.target_bits=60"}, "ootomo"},
	} {
		res, err := runEmulated(t, "a100", append(append([]string{}, base...), c.sets...)...)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		auto := res.Report.Program["auto"].(map[string]any)
		if auto["chosen"] != c.want || res.Report.Program["scheme"] != strings.TrimSuffix(c.want, " (split: fused)") ||
			(res.Report.Program["split"] == "fused") != strings.HasSuffix(c.want, "(split: fused)") {
			t.Errorf("%v: chose %v (%v), want %s", c.sets, auto["chosen"], auto["why"], c.want)
		}
		simulated := 0
		for _, r := range auto["candidates"].([]map[string]any) {
			if r["status"] == "simulated" || r["status"] == "chosen" {
				simulated++
			}
		}
		if simulated < 1 || simulated == len(fp32SchemeNames()) {
			t.Errorf("%v: %d presets simulated (the bound should prune some)", c.sets, simulated)
		}
	}
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"program.scheme=ootomo", "program.target_bits=20"}, `key "target_bits": applies to scheme: auto`},
		{[]string{"program.scheme=auto", "program.target_bits=70"}, `key "target_bits": must be in 0..64`},
	} {
		_, err := runEmulated(t, "a100", c.sets...)
		wantBadInputLine(t, err, c.want, c.sets)
	}
}

// Native FP32 is a candidate of scheme auto with FP32 SGEMM's accuracy
// (predicted) and its simulated time: chosen where it is the fastest
// accurate one (the A100 at 128³ on inputs so small that no preset meets
// FP32's accuracy; its C then checked against its golden model),
// listed but beaten at 1024³, inaccurate above FP32's accuracy; on the
// MI210's FP32 MFMAs a candidate timing only (numerics off: chosen at 128³)
// and unsupported with numerics (no FP32 MFMA numerics model), as with
// histogram_bins.
func TestEmulatedAutoNative(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
		chosen  string // "" = not checked
		status  string // native's status; "not" = any but these: chosen, unsupported
		units   string
		reason  string
	}{
		{"a100", []string{"program.m=128", "program.n=128", "program.k=128", "program.inputs.offset_exponent=-20", "program.numerics=full", "program.check=true"}, "native", "chosen", "CUDA-core FP32", ""},
		{"a100", []string{"program.m=1024", "program.n=1024", "program.k=1024", "program.numerics=off"}, "ootomo", "not", "CUDA-core FP32", ""},
		{"a100", []string{"program.m=128", "program.n=128", "program.k=128", "program.numerics=off", "program.target_bits=30"}, "", "inaccurate", "CUDA-core FP32", ""},
		{"a100", []string{"program.m=128", "program.n=128", "program.k=128", "program.histogram_bins=10"}, "", "unsupported", "CUDA-core FP32", "no error histogram"},
		{"mi210", []string{"program.m=128", "program.n=128", "program.k=128", "program.numerics=off"}, "native", "chosen", "FP32 MFMA", ""},
		{"mi210", []string{"program.m=64", "program.n=64", "program.k=64", "program.numerics=sampled"}, "", "unsupported", "FP32 MFMA", "no model of FP32 MFMA instructions"},
	} {
		res, err := runEmulated(t, c.machine, append([]string{"program.scheme=auto"}, c.sets...)...)
		if err != nil || res.Failure != nil {
			t.Fatalf("%s %v: %v %v", c.machine, c.sets, err, res.Failure)
		}
		auto := res.Report.Program["auto"].(map[string]any)
		if c.chosen != "" && (auto["chosen"] != c.chosen || res.Report.Program["scheme"] != c.chosen) {
			t.Errorf("%s %v: chose %v, want %s", c.machine, c.sets, auto["chosen"], c.chosen)
		}
		var native map[string]any
		for _, r := range auto["candidates"].([]map[string]any) {
			if r["scheme"] == "native" {
				native = r
			}
		}
		if native == nil {
			t.Fatalf("%s %v: no native candidate: %v", c.machine, c.sets, auto["candidates"])
		}
		st := native["status"].(string)
		if (c.status == "not" && (st == "chosen" || st == "unsupported")) || (c.status != "not" && st != c.status) {
			t.Errorf("%s %v: native %v, want status %s", c.machine, c.sets, native, c.status)
		}
		if native["units"] != c.units || (c.reason != "" && !strings.Contains(fmt.Sprint(native["reason"]), c.reason)) {
			t.Errorf("%s %v: native %v, want units %s, reason %q", c.machine, c.sets, native, c.units, c.reason)
		}
		if st != "unsupported" && (native["bits"] != auto["fp32_sgemm_bits"] || native["bits_from"] == nil || native["bound_seconds"].(float64) <= 0) {
			t.Errorf("%s %v: native %v: want FP32 SGEMM's bits %v (predicted) and a bound", c.machine, c.sets, native, auto["fp32_sgemm_bits"])
		}
		if st == "chosen" {
			if res.Report.Program["units"] != c.units || native["seconds"] == nil {
				t.Errorf("%s %v: program %v", c.machine, c.sets, res.Report.Program)
			}
			if e := res.Report.Error; res.Report.Program["numerics"] != NumericsOff && (e == nil || e.Bits < 20 || !strings.Contains(strings.Join(res.Report.Notes, "\n"), "check: simulated C equals")) {
				t.Errorf("%s %v: native's run: error %+v, notes %v", c.machine, c.sets, e, res.Report.Notes)
			}
		}
	}
}

// Ape's INT16 split is exact for every INT16: x = 256·hi + lo + 128 with
// both pieces signed INT8.
func TestEmulatedInt16Split(t *testing.T) {
	for v := math.MinInt16; v <= math.MaxInt16; v++ {
		hi, lo := splitInt16(int16(v))
		if got := 256*int(hi) + int(lo) + 128; got != v {
			t.Fatalf("%d splits into hi %d, lo %d: 256·hi + lo + 128 = %d", v, hi, lo, got)
		}
	}
}

// ape-int16 on A100 (mma.sync INT8) and MI210 (INT8 MFMA), edge tiles in
// m, n and k: the simulated INT8 product planes equal the golden model's
// bit for bit and the recombined C the exact INT16 product (check); a
// sampled run's golden model agrees with the exact product too.
func TestEmulatedInt16BitExact(t *testing.T) {
	for _, machine := range []string{"a100", "mi210"} {
		res, err := runEmulated(t, machine, "program.scheme=ape-int16", "program.m=72", "program.n=40", "program.k=300",
			"program.numerics=full", "program.check=true")
		if err != nil || res.Failure != nil {
			t.Fatalf("%s: %v %v", machine, err, res.Failure)
		}
		if e := res.Report.Error; e == nil || e.MaxErr != 0 || e.Elements != 72*40 {
			t.Errorf("%s: error %+v", machine, e)
		}
		var c []float64
		for _, o := range res.Outputs {
			if o.Name == "C" {
				c = o.F64
			}
		}
		if len(c) != 72*40 || math.Abs(c[0]) < 1<<20 {
			t.Errorf("%s: C has %d elements, C[0][0] = %g (an INT16 product of k = 300 is ~2^33)", machine, len(c), c[0])
		}
	}
	res, err := runEmulated(t, "a100", "program.scheme=ape-int16", "program.m=256", "program.n=256", "program.k=1000", "program.sample_tiles=1")
	if err != nil || res.Failure != nil {
		t.Fatalf("sampled: %v %v", err, res.Failure)
	}
	if e := res.Report.Error; e == nil || e.MaxErr != 0 || !e.Sampled {
		t.Errorf("sampled: error %+v", e)
	}
}

// ape-int16 on DaVinci machines: the split and recombination passes on the
// vector unit (timing only), the four INT8 product GEMMs on the INT8 cube
// with igemm's planner. On the 910A (no FixPipe: tiles L0C→UB→GM) with
// edge tiles in m, n and k, and several L1 groups (k-blocks whose INT32
// partial sums are added in UB) at igemm's tiles and at small ones, and on
// the 910B3: the simulated planes equal the golden model's bit for bit and
// C the exact INT16 product (check); the generated streams pass the
// static check; the run's time does not depend on the numerics (the
// timing-only passes are timed alike); a sampled run agrees with the exact
// product.
func TestEmulatedInt16DaVinciBitExact(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
	}{
		{"ascend-910a", []string{"program.m=200", "program.n=300", "program.k=700", "program.tiling.nfused=1"}},
		{"ascend-910a", []string{"program.m=100", "program.n=90", "program.k=700", "program.tiling.bm=48", "program.tiling.bk=96", "program.tiling.bn=64", "program.tiling.nfused=2"}},
		{"ascend-910a", []string{"program.m=70", "program.n=40", "program.k=300", "program.buffering=single", "program.tiling.bm=32", "program.tiling.bk=64", "program.tiling.bn=32", "program.cores=5"}},
		{"ascend-910b3", []string{"program.m=130", "program.n=200", "program.k=600"}},
	} {
		sets := append([]string{"program.scheme=ape-int16", "program.numerics=full", "program.check=true"}, c.sets...)
		res, err := runEmulated(t, c.machine, sets...)
		if err != nil || res.Failure != nil {
			t.Fatalf("%s %v: %v %v", c.machine, c.sets, err, res.Failure)
		}
		pr := res.Report.Program
		m, n := pr["m"].(int), pr["n"].(int)
		if e := res.Report.Error; e == nil || e.MaxErr != 0 || e.Elements != int64(m*n) {
			t.Errorf("%s %v: error %+v", c.machine, c.sets, e)
		}
		if !strings.Contains(strings.Join(res.Report.Notes, "\n"), "check: the simulated product planes equal") {
			t.Errorf("%s %v: no check note: %v", c.machine, c.sets, res.Report.Notes)
		}
		if g := pr["tiling"].(map[string]int)["groups"]; strings.Contains(strings.Join(c.sets, " "), "nfused") && g < 2 {
			t.Errorf("%s %v: %d L1 groups, want several", c.machine, c.sets, g)
		}
		off, err := runEmulated(t, c.machine, append(sets, "program.numerics=off")...)
		if err != nil || off.Failure != nil {
			t.Fatalf("%s %v off: %v %v", c.machine, c.sets, err, off.Failure)
		}
		if off.Report.Time.Cycles != res.Report.Time.Cycles {
			t.Errorf("%s %v: %d cycles with numerics full, %d off", c.machine, c.sets, res.Report.Time.Cycles, off.Report.Time.Cycles)
		}
		if err := staticCheck(t, mustRead(t, "examples/a100-emulated-gemm.yaml"), Options{Machine: c.machine, Overrides: mustSets(t, sets...)}); err != nil {
			t.Errorf("%s %v: static check: %v", c.machine, c.sets, err)
		}
	}
	res, err := runEmulated(t, "ascend-910a", "program.scheme=ape-int16", "program.m=300", "program.n=300", "program.k=1000", "program.sample_tiles=2", "program.numerics=sampled")
	if err != nil || res.Failure != nil {
		t.Fatalf("sampled: %v %v", err, res.Failure)
	}
	if e := res.Report.Error; e == nil || e.MaxErr != 0 || !e.Sampled || e.Elements != 2*128*128 {
		t.Errorf("sampled: error %+v", e)
	}
}

// scheme native is kind sgemm's kernel: the CUDA cores on A100 (checked
// against its golden model), the FP32 cube on the 910B3; the report names
// the scheme and the units.
func TestEmulatedNative(t *testing.T) {
	for _, c := range []struct{ machine, units, numerics string }{
		{"a100", "CUDA-core FP32", "full"},
		{"ascend-910b3", "FP32 cube", "full"},
		{"mi210", "FP32 MFMA", "off"},
	} {
		res, err := runEmulated(t, c.machine, "program.scheme=native", "program.m=128", "program.n=96", "program.k=64",
			"program.numerics="+c.numerics, "program.check=true")
		if err != nil || res.Failure != nil {
			t.Fatalf("%s: %v %v", c.machine, err, res.Failure)
		}
		pr := res.Report.Program
		if pr["scheme"] != "native" || pr["units"] != c.units || pr["kind"] != "emulated-gemm" {
			t.Errorf("%s: program %v", c.machine, pr)
		}
		if c.numerics == "full" && (res.Report.Error == nil || res.Report.Error.Bits < 20) {
			t.Errorf("%s: error %+v", c.machine, res.Report.Error)
		}
	}
}

// A machine whose units cannot run a scheme, and an ape-int16 k beyond its
// INT32 accumulators, are bad input: one line naming the key.
func TestEmulatedWholeSchemesBadInput(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
		want    string
	}{
		{"v100", []string{"program.scheme=ape-int16"}, `key "scheme": ape-int16 needs INT8 tensor cores; machine v100`},
		{"ascend-910a", []string{"program.scheme=ape-int16", "machine.core.cube.kstep_int8=0"}, `key "scheme": ape-int16 needs the INT8 cube; machine ascend-910a has none`},
		{"ascend-910a", []string{"program.scheme=ape-int16", "program.split_chunk=4096"}, `key "split_chunk": does not apply to emulated-gemm's ape-int16 scheme on ascend-910a`},
		{"ascend-910a", []string{"program.scheme=ape-int16", "program.tiling.bm=128", "program.tiling.bk=48", "program.tiling.bn=128"}, `key "tiling.bk": must be a multiple of 32`},
		{"ascend-910b3", []string{"program.scheme=ape-int16", "program.k=131072", "program.numerics=off"}, `key "k": ape-int16's INT32 accumulators`},
		{"ascend-910a", []string{"program.scheme=native"}, `key "scheme": native FP32 needs FP32 matrix units`},
		{"a100", []string{"program.scheme=ape-int16", "program.k=131072", "program.numerics=off"}, `key "k": ape-int16's INT32 accumulators`},
	} {
		_, err := runEmulated(t, c.machine, c.sets...)
		wantBadInputLine(t, err, c.want, c.machine, c.sets)
	}
}

// With numerics, an emulated GEMM reports LE-GEMM's metrics against a CPU
// FP32 SGEMM (program.error_vs_cpu_sgemm, baselines.cpu_sgemm_fp32) and,
// with histogram_bins, the per-element error distribution: every element
// is counted once, and the plain FP16 cast's distribution lies above
// Ootomo's (its median bin is higher).
func TestEmulatedErrorHistogram(t *testing.T) {
	median := map[string]int{}
	mred := map[string]float64{}
	for _, s := range []string{"hgemm", "ootomo"} {
		res, err := runEmulated(t, "a100", "program.scheme="+s, "program.m=128", "program.n=128", "program.k=512",
			"program.sample_tiles=100", "program.histogram_bins=24")
		if err != nil || res.Failure != nil {
			t.Fatalf("%s: %v %v", s, err, res.Failure)
		}
		h := res.Report.Program["error_histogram"].(map[string]any)
		counts := h["counts"].([]int64)
		total := h["exact"].(int64) + h["below"].(int64) + h["nonfinite"].(int64)
		for _, c := range counts {
			total += c
		}
		if n := h["elements"].(int); total != int64(n) || n != 128*128 {
			t.Errorf("%s: %d elements counted of %d", s, total, n)
		}
		half, acc := total/2, h["exact"].(int64)+h["below"].(int64)
		for i, c := range counts {
			if acc += c; acc >= half {
				median[s] = i
				break
			}
		}
		mred[s] = res.Report.Program["error_vs_cpu_sgemm"].(accuracy.Metrics).MRED
		if _, ok := res.Report.Baselines["cpu_sgemm_fp32"]; !ok {
			t.Errorf("%s: no cpu_sgemm_fp32 baseline", s)
		}
	}
	if median["hgemm"] <= median["ootomo"]+2 || mred["hgemm"] < 100*mred["ootomo"] {
		t.Errorf("median bins %v, MRED %v: the FP16 cast should be far less accurate than Ootomo", median, mred)
	}
}

// baselines: false leaves the CPU SGEMM baseline out of an emulated GEMM's
// report (the scheme's own error against it stays: program.error_vs_cpu_sgemm).
func TestEmulatedBaselinesOff(t *testing.T) {
	res, err := runEmulated(t, "a100", "program.scheme=ootomo", "program.m=64", "program.n=64", "program.k=64", "program.baselines=false")
	if err != nil || res.Failure != nil {
		t.Fatalf("%v %v", err, res.Failure)
	}
	if _, ok := res.Report.Baselines["cpu_sgemm_fp32"]; ok {
		t.Errorf("baselines: false, but the report has baselines %v", res.Report.Baselines)
	}
	if _, ok := res.Report.Program["error_vs_cpu_sgemm"]; !ok {
		t.Errorf("no program.error_vs_cpu_sgemm")
	}
}

// A fused split (scheme split: fused: each product kernel splits its FP32
// tiles every k-step in registers, no split kernel) is bit-exact to the
// same golden model as the split kernel: NVIDIA (register staging in place
// of the multistage pipeline; Hopper's wgmma tiles on register fragments),
// AMD CDNA2 and CDNA1 (accumulators in AGPRs), fused and termwise kernels
// (whose kernels make pieces they do not stage), three pieces, an outside
// group beside the conversions on the vector units.
func TestEmulatedFusedSplit(t *testing.T) {
	small := []string{"program.m=72", "program.n=40", "program.k=300", "program.numerics=full", "program.check=true"}
	for _, c := range []struct {
		machine string
		schemes []string
	}{
		{"a100", []string{"ootomo", "ape-fp32f", "ape-fp32b", "le-gemm"}},
		{"mi210", []string{"markidis", "sgemm-cube"}},
		{"h100-sxm", []string{"ape-fp32f"}},
		{"mi100", []string{"ootomo"}},
	} {
		for _, s := range c.schemes {
			res := checkedRun(t, c.machine, s, append([]string{"program.scheme={name: " + s + ", split: fused}"}, small...)...)
			fused := false
			for _, n := range res.Report.Notes {
				fused = fused || strings.Contains(n, "split fused into the product kernels")
			}
			if !fused || res.Report.Program["split"] != "fused" {
				t.Errorf("%s %s: notes %v", c.machine, s, res.Report.Notes)
			}
		}
	}
	for _, c := range []struct {
		machine string
		sets    []string
		want    string
	}{
		{"a100", []string{"program.scheme={name: markidis, split: fused}", "program.tiling.staging=shared"}, `key "tiling.staging": scheme.split fused splits the FP32 tiles in registers`},
		{"a100", []string{"program.scheme={name: markidis, split: inside}"}, `key "scheme.split": must be pass`},
		{"ascend-910a", []string{"program.scheme={name: markidis, split: fused}"}, `key "scheme.split": fused is generated for GPU machines`},
	} {
		_, err := runEmulated(t, c.machine, c.sets...)
		wantBadInputLine(t, err, c.want, c.machine, c.sets)
	}
}

// A fused split's FP32 tiles take registers as more pieces do, so a
// one-product fused kernel is offered the half-depth and eight-warp tiles
// too: on the H100 fused HGEMM had 64×64×64 alone within its 255 registers
// a thread (2048² in 1024 blocks, slower than fused Markidis' 128×128).
func TestEmulatedFusedSplitTile(t *testing.T) {
	res, err := runEmulated(t, "h100-sxm", "program.scheme={name: hgemm, split: fused}", "program.m=2048", "program.n=2048", "program.k=256", "program.numerics=off")
	if err != nil {
		t.Fatal(err)
	}
	if k := res.Report.Kernels; len(k) != 1 || k[0].Blocks > 256 {
		t.Errorf("kernels %+v, want one of at most 256 blocks (a tile of 128×128 or more)", k)
	}
}

// Every FP32 scheme reports its full-precision range (program.range: Ape's
// Table 2 gives FP32-B [−110, +127] and FP32-F from −14) and, with the
// inputs at hand, how many lie outside it: .npy inputs beyond the range are
// flagged in a note (their pieces overflow), on GPUs and on DaVinci.
func TestEmulatedRangeFlagged(t *testing.T) {
	res, err := runEmulated(t, "a100", "program.scheme=ape-fp32b", "program.m=64", "program.n=64", "program.k=64", "program.numerics=off")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report.Program["range"].(map[string]any)
	if r["min_exponent"] != -110 || r["max_exponent"] != 127 || r["a_over"] != nil {
		t.Errorf("ape-fp32b range %v", r)
	}
	const m, k, n = rangeM, rangeK, rangeN
	// 40000 may overflow FP32-F's scaled piece (from 2^15), 2^20 and −Inf
	// certainly overflow its first (from 65520).
	pa, pb := rangeInputs(t, func(a, b []float32) { a[4], a[5], a[6], b[7] = 40000, 1<<20, float32(math.Inf(-1)), 1e-6 })
	for _, machine := range []string{"a100", "ascend-910a"} {
		res, err := runEmulated(t, machine, "program.scheme=ape-fp32f", fmt.Sprintf("program.m=%d", m), fmt.Sprintf("program.k=%d", k), fmt.Sprintf("program.n=%d", n),
			"program.inputs.a="+pa, "program.inputs.b="+pb, "program.numerics=full")
		if err != nil {
			t.Fatalf("%s: %v", machine, err)
		}
		r := res.Report.Program["range"].(map[string]any)
		if r["min_exponent"] != -14 || r["a_over"] != int64(3) || r["b_over"] != int64(0) || r["b_under"] != int64(1) {
			t.Errorf("%s: range %v", machine, r)
		}
		flagged := false
		for _, note := range res.Report.Notes {
			flagged = flagged || strings.Contains(note, "inputs outside the scheme's range: 3 elements of A and 0 of B have |x| ≥ 32768") &&
				strings.Contains(note, "; 2 of A and 0 of B have |x| ≥ 65520 (or are not finite): their first pieces overflow, so C is wrong")
		}
		if !flagged {
			t.Errorf("%s: not flagged: %v", machine, res.Report.Notes)
		}
	}
}

// rangeM, rangeK and rangeN are the shape of rangeInputs' A (m×k) and B
// (k×n).
const rangeM, rangeK, rangeN = 32, 48, 40

// rangeInputs writes small A and B (small integers) as .npy files, with
// the values set sets in them, and returns their paths.
func rangeInputs(t *testing.T, set func(a, b []float32)) (pa, pb string) {
	t.Helper()
	dir := t.TempDir()
	a, b := make([]float32, rangeM*rangeK), make([]float32, rangeK*rangeN)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range b {
		b[i] = float32(i%5) - 2
	}
	set(a, b)
	write := func(name string, v []float32, rows, cols int) string {
		path := filepath.Join(dir, name)
		fh, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if err := writeNPY(fh, v, []int{rows, cols}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return write("a.npy", a, rangeM, rangeK), write("b.npy", b, rangeK, rangeN)
}

// The GEMM kinds that round FP32 inputs to the matrix unit's format
// report the cast's exact bounds and flag inputs beyond them: FP16 holds
// 65519 (RNE rounds it to 65504) but not 65520 (halfway: to +Inf), RZ
// holds everything below 2^16; sgemm-cube's kind reports its split's
// range as emulated-gemm's preset does.
func TestCastRangeFlagged(t *testing.T) {
	const m, k, n = rangeM, rangeK, rangeN
	pa, pb := rangeInputs(t, func(a, b []float32) { a[5], a[6], a[7], b[7] = 65519, -65520, 65535, 1e-6 })
	sets := []string{fmt.Sprintf("program.m=%d", m), fmt.Sprintf("program.k=%d", k), fmt.Sprintf("program.n=%d", n),
		"program.inputs.a=" + pa, "program.inputs.b=" + pb, "program.numerics=full", "program.tiling.bm=16", "program.tiling.bk=16", "program.tiling.bn=16"}
	for _, c := range []struct {
		example, machine string
		sets             []string
		over             float64 // overflow_from (0: a split's range)
		aOver            int64
	}{
		{"hgemm.yaml", "ascend-910a", nil, 65520, 2},
		{"hgemm.yaml", "ascend-910a", []string{"program.split.rounding=rz"}, 65536, 0},
		{"a100-hgemm.yaml", "a100", nil, 65520, 2},
		{"a100-hgemm.yaml", "h100-sxm", []string{"program.input=e4m3"}, 464, 3},
		{"sgemm-cube.yaml", "ascend-910a", nil, 0, 3},
		{"a100-emulated-gemm.yaml", "a100", []string{"program.scheme=hgemm"}, 65520, 2}, // (the preset is the same cast)
	} {
		label := c.example + " " + c.machine + " " + strings.Join(c.sets, " ")
		f, err := ReadFile("examples/" + c.example)
		if err != nil {
			t.Fatal(err)
		}
		all := slices.Concat(sets, c.sets)
		if c.machine != "ascend-910a" { // the GPU kernels take their own tiles
			all = slices.Concat(sets[:6], c.sets)
		}
		res, err := Execute(f, Options{Machine: c.machine, Overrides: mustSets(t, all...)}, RunHooks{})
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		r, _ := res.Report.Program["range"].(map[string]any)
		if r == nil {
			t.Fatalf("%s: no program.range", label)
		}
		if c.over != 0 && (r["overflow_from"] != c.over || r["min_exponent"] == nil) {
			t.Errorf("%s: range %v", label, r)
		}
		if r["a_over"] != c.aOver || r["b_over"] != int64(0) || r["b_under"] != int64(1) {
			t.Errorf("%s: range %v, want a_over %d, b_under 1", label, r, c.aOver)
		}
		want := fmt.Sprintf("%d elements of A and 0 of B", c.aOver)
		flagged := false
		for _, note := range res.Report.Notes {
			flagged = flagged || (strings.Contains(note, "inputs beyond ") || strings.Contains(note, "inputs outside the scheme's range")) && strings.Contains(note, want)
		}
		if flagged != (c.aOver > 0) {
			t.Errorf("%s: flagged %v (%s): %v", label, flagged, want, res.Report.Notes)
		}
	}
}

// .npy inputs of the wrong shape are refused naming the key of the one
// that does not fit.
func TestInputShapesNameTheKey(t *testing.T) {
	pa, pb := rangeInputs(t, func([]float32, []float32) {})
	for _, c := range []struct {
		sets []string
		key  string
	}{
		{[]string{"program.m=33", "program.k=48", "program.n=40"}, "inputs.a"},
		{[]string{"program.m=32", "program.k=48", "program.n=41"}, "inputs.b"},
	} {
		_, err := runEmulated(t, "a100", append(c.sets, "program.scheme=ootomo", "program.inputs.a="+pa, "program.inputs.b="+pb, "program.numerics=full")...)
		wantBadInputLine(t, err, `key "`+c.key+`": A is 32×48 and B 48×40, but m, k, n = `, c.sets)
	}
}

// A scheme's reported name says what ran: a preset's keys changed name
// them ("ootomo (pieces changed)"; a fused split is the preset still), a
// scheme of the program's own may carry its own name, one without is
// "custom".
func TestSchemeReportedName(t *testing.T) {
	for _, c := range []struct{ scheme, want string }{
		{"{name: ootomo, pieces: [{format: fp16, rounding: rz}, {format: fp16, rounding: rz, scale: 11}]}", "ootomo (pieces changed)"},
		{"{name: ootomo, split: fused}", "ootomo"},
		{"{name: ootomo, pieces: [{format: fp16, rounding: rint}, {format: fp16, scale: 11}]}", "ootomo"},                                                   // (its pieces, spelt otherwise)
		{"{name: ootomo, epilogue: corrections-first, groups: [{products: [hh], accumulate: outside}, {products: [hl, lh]}]}", "ootomo (epilogue changed)"}, // (its own groups)
		{"{name: markidis, groups: [{products: [hh, hl, lh, ll]}]}", "markidis (groups changed)"},
		// The preset's own values, spelt out, change nothing (a review found
		// each reported as changed, C bit for bit the preset's).
		{"{name: markidis, kernels: fused}", "markidis"},
		{"{name: ootomo, epilogue: ordered}", "ootomo"},
		{"{name: markidis, groups: [{products: [hh, hl, lh], accumulate: inside}]}", "markidis"},
		{"{name: le-gemm, pieces: [{format: fp16, rounding: rz}, {format: fp16, rounding: rz, scale: 10}]}", "le-gemm"}, // (truncate is rz)
		{"{name: markidis, kernels: termwise}", "markidis (kernels changed)"},
		{"{name: mine, pieces: [{format: bf16}, {format: bf16, scale: 8}], groups: [{products: [hh]}, {products: [hl, lh]}]}", "mine"},
		{"{pieces: [{format: bf16}, {format: bf16, scale: 8}], groups: [{products: [hh]}, {products: [hl, lh]}]}", "custom"},
	} {
		res, err := runEmulated(t, "a100", "program.scheme="+c.scheme, "program.m=64", "program.n=64", "program.k=64", "program.numerics=off")
		if err != nil {
			t.Fatalf("%s: %v", c.scheme, err)
		}
		if got := res.Report.Program["scheme"]; got != c.want {
			t.Errorf("%s: program.scheme %q, want %q", c.scheme, got, c.want)
		}
	}
}

// The up-front range check takes the inputs' largest magnitude, not its
// power of two: FP16 holds U[0, 60000] (it refused it as reaching 2^16),
// not U[0, 65520].
func TestEmulatedRangeCheckExact(t *testing.T) {
	base := []string{"program.scheme=hgemm", "program.m=64", "program.n=64", "program.k=64", "program.numerics=off", "program.inputs.distribution=between", "program.inputs.low=0"}
	if _, err := runEmulated(t, "a100", append(base, "program.inputs.high=60000")...); err != nil {
		t.Errorf("U[0, 60000] on FP16: %v", err)
	}
	_, err := runEmulated(t, "a100", append(base, "program.inputs.high=65520")...)
	wantBadInputLine(t, err, `key "inputs.high": inputs up to 65520 reach 65520, from where piece 0 (FP16, scale 2^0) rounds past the format's largest finite value 65504`)
	// A bound below 65520 whose draws round to it in FP32 (they did
	// overflow: C all Inf/NaN, noted after the run).
	_, err = runEmulated(t, "a100", append(base, "program.inputs.low=65519.99", "program.inputs.high=65519.999")...)
	wantBadInputLine(t, err, `key "inputs.high": inputs up to 65520 reach 65520`)
}

// wantBadInputLine fails the test unless err is bad input (exit 2) of one
// line containing want; label says which case.
func wantBadInputLine(t *testing.T, err error, want string, label ...any) {
	t.Helper()
	if !badinput.Is(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: %v, want one bad-input line containing %q", strings.TrimSpace(fmt.Sprintln(label...)), err, want)
	}
}

// Scheme auto's candidate runs are the run's: they show on its progress
// line, which says what they time, and stop with its context — an
// interrupt there ends Execute with its cause, not as bad input (they had
// run on, deaf to it, for minutes at 8192³) —; the run itself is metered
// afresh after them. With m and n in the file (not --set), the chosen
// candidate's time is the run's (timing only, the same simulation): the
// candidates had been timed at the accuracy sample's 64×64, which its runs
// had left in the file's config.
func TestEmulatedAutoRunsAreTheRuns(t *testing.T) {
	text := []byte("kind: emulated-gemm\nmachine: a100\nscheme: auto\nm: 2048\nn: 2048\nk: 1024\nnumerics: off\n")
	f, err := Parse("p.yaml", ".", text)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var m WorkMeter
	var stages []string
	_, err = Execute(f, Options{}, RunHooks{Context: ctx, Meter: &m, ProgressEvery: 1 << 10, Progress: func(sim.Time, uint64) {
		if s := m.Stage(); s != "" {
			stages = append(stages, s)
			cancel(stop)
		}
	}})
	if err == nil || badinput.Is(err) || !errors.Is(err, stop) || len(stages) == 0 || !strings.HasPrefix(stages[0], "scheme auto, timing run 1: ") {
		t.Errorf("interrupted in a candidate's run (stages %q): %v (bad input: %v)", stages, err, badinput.Is(err))
	}
	var last float64
	var lastStage string
	if v := f.Config.Viper(); v.Get("scheme") != "auto" || v.Get("m") != 2048 {
		t.Errorf("the run's file after its runs: scheme %v, m %v (theirs left in it)", v.Get("scheme"), v.Get("m"))
	}
	f, _ = Parse("p.yaml", ".", text)
	res, err := Execute(f, Options{}, RunHooks{Meter: &m, ProgressEvery: 1 << 10, Progress: func(sim.Time, uint64) {
		last, _ = m.Fraction()
		lastStage = m.Stage()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if frac, ok := m.Fraction(); !ok || frac != 1 || m.Stage() != "" {
		t.Errorf("after the candidates, the run's own meter: %v %v, stage %q (the last progress line's: %.3f, %q)", frac, ok, m.Stage(), last, lastStage)
	}
	auto, _ := res.Report.Program["auto"].(map[string]any)
	if auto == nil {
		t.Fatalf("no scheme auto in the report (scheme %v)", res.Report.Program["scheme"])
	}
	for _, r := range auto["candidates"].([]map[string]any) {
		if r["status"] == "chosen" && r["seconds"] != res.Report.Time.Seconds {
			t.Errorf("the chosen candidate (%v) timed %v s, the run %v s", auto["chosen"], r["seconds"], res.Report.Time.Seconds)
		}
	}
	if res.Report.Program["m"] != 2048 || res.Report.Program["n"] != 2048 {
		t.Errorf("the run's m, n: %v, %v", res.Report.Program["m"], res.Report.Program["n"])
	}
}

// BenchmarkSplitAll splits a 2048² FP32 input into Ootomo's pieces (the
// host work before a run with numerics; -cpu 1,2 for the chunks on every
// processor).
func BenchmarkSplitAll(b *testing.B) {
	sp, err := resolveScheme(Scheme{Name: "ootomo"}, func(key, format string, a ...any) error { return fmt.Errorf(format, a...) })
	if err != nil {
		b.Fatal(err)
	}
	x := UniformFP32(NewRand(1, 1), 2048*2048, -1, 1)
	for b.Loop() {
		if _, ok := sp.splitAll(x, nil); !ok {
			b.Fatal("stopped")
		}
	}
}

// TestEmulatedAutoKeepsItsChoice: a timing run of scheme auto (numerics
// off or sampled) reports its chosen candidate's timing run, not made
// again, and that report is the one a run of the chosen preset gives (but
// for program.auto, the notes auto adds, the runs before it and the wall
// time) — with the default settings, sampled numerics (the golden tiles
// computed beside), fast-forwarded (skips and their notes), and with a
// target that picks a fused split; with numerics full the run is made.
func TestEmulatedAutoKeepsItsChoice(t *testing.T) {
	text := "kind: emulated-gemm\nmachine: a100\nscheme: auto\nm: %d\nn: %d\nk: 512\nnumerics: %s\n"
	run := func(mn int, numerics string, o Options) *Result {
		t.Helper()
		f, err := Parse("p.yaml", ".", []byte(fmt.Sprintf(text, mn, mn, numerics)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, o, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// timed counts the candidates auto simulated at full size.
	timed := func(res *Result) (n int, chosen map[string]any) {
		auto, _ := res.Report.Program["auto"].(map[string]any)
		if auto == nil {
			t.Fatalf("no scheme auto in the report (scheme %v)", res.Report.Program["scheme"])
		}
		for _, r := range auto["candidates"].([]map[string]any) {
			if r["status"] == "simulated" || r["status"] == "chosen" {
				n++
			}
			if r["status"] == "chosen" {
				chosen = r
			}
		}
		return n, chosen
	}
	const keptNote = "scheme auto made of its choice"
	ff := arch.DefaultFastForward
	for _, c := range []struct {
		name, numerics string
		mn             int
		o              Options
	}{
		{"default", "off", 1024, Options{}},
		{"sampled", "sampled", 1024, Options{}},
		{"fast-forward", "off", 4096, Options{FastForward: &ff}},
		{"fused", "off", 1024, Options{Overrides: mustSets(t, "program.target_bits=8")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			kept := run(c.mn, c.numerics, c.o)
			_, chosen := timed(kept)
			reusedNote := slices.ContainsFunc(kept.Report.Notes, func(s string) bool { return strings.Contains(s, keptNote) })
			if c.name == "default" {
				// With numerics full the run is made (functional): the
				// same candidates timed, one run before it more.
				full := run(256, "full", c.o)
				small := run(256, "off", c.o)
				nf, _ := timed(full)
				ns, _ := timed(small)
				if nf != ns || small.Report.Sim.RunsBefore != full.Report.Sim.RunsBefore-1 {
					t.Errorf("256²: %d runs before it timing only, %d with numerics full; candidates timed %d, %d", small.Report.Sim.RunsBefore, full.Report.Sim.RunsBefore, ns, nf)
				}
				if slices.ContainsFunc(full.Report.Notes, func(s string) bool { return strings.Contains(s, keptNote) }) {
					t.Error("numerics full: the run reported a candidate's timing run")
				}
			}
			if c.name == "sampled" && (kept.Report.Error == nil || kept.Report.Error.Elements == 0) {
				t.Errorf("sampled: no error measured (%+v)", kept.Report.Error)
			}
			if !reusedNote {
				t.Errorf("no note of the run kept: %q", kept.Report.Notes)
			}
			scheme := fmt.Sprint(chosen["scheme"])
			if chosen["split"] == "fused" {
				scheme = "{name: " + scheme + ", split: fused}"
			} else if c.name == "fused" {
				t.Errorf("target_bits 8 chose %v, not a fused split", chosen)
			}
			o := c.o
			o.Overrides = append(slices.Clip(o.Overrides), machines.Override{Path: "program.scheme", Value: scheme}, machines.Override{Path: "program.target_bits", Value: "0"})
			fresh := run(c.mn, c.numerics, o)
			if c.name == "fast-forward" && fresh.Report.Sim.SkippedSeconds == 0 {
				t.Errorf("fast-forward: nothing skipped (notes %q)", fresh.Report.Notes)
			}
			strip := func(r *report.Report) map[string]any {
				c := *r
				c.Program = maps.Clone(r.Program)
				delete(c.Program, "auto")
				c.Notes = slices.DeleteFunc(slices.Clone(r.Notes), func(s string) bool {
					return strings.Contains(s, keptNote) || strings.HasPrefix(s, "scheme auto")
				})
				c.Overrides = nil
				c.Sim.WallSeconds, c.Sim.EventsPerSecond, c.Sim.RunsBefore, c.Sim.RunsBeforeWallSeconds = 0, 0, 0, 0
				c.Sim.DiscardedWallSeconds = 0
				b, err := json.Marshal(&c)
				if err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				return m
			}
			if a, b := strip(kept.Report), strip(fresh.Report); !reflect.DeepEqual(a, b) {
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				t.Errorf("the kept run's report differs from a run of %v:\n%.3000s\n%.3000s", chosen, ja, jb)
			}
		})
	}
}

// Every FP32 preset splits every input below its overflow_from without a
// piece overflowing: exhaustively over the binade just below it (where the
// residuals are largest), so the bound the up-front check refuses beyond
// holds. And it is tight where the papers state the range: FP32-F's and
// SGEMM-cube's 2^15 (Ape, Table 2; SGEMM-cube, Eq. 6 with sb = 12), which
// the check had put one binade lower (a full ulp of residual for RNE).
func TestEmulatedOverflowFromSound(t *testing.T) {
	bad := func(key, format string, a ...any) error { return fmt.Errorf(format, a...) }
	for _, name := range fp32SchemeNames() {
		sp, err := resolveScheme(Scheme{Name: name}, bad)
		if err != nil {
			t.Fatal(err)
		}
		hi, _ := sp.overflowFrom()
		top := float32(min(hi, math.MaxFloat32))
		if float64(top) >= hi {
			top = math.Nextafter32(top, 0)
		}
		_, e := math.Frexp(float64(top)) // top < 2^e
		lo := float32(math.Ldexp(1, e-1))
		step := uint32(1)
		if testing.Short() {
			step = 97
		}
		out := make([]uint32, len(sp.scales))
		for bits := math.Float32bits(lo); bits <= math.Float32bits(top); bits += step {
			sp.split(math.Float32frombits(bits), out)
			for i, b := range out {
				if v := fp.ToFloat64(b, sp.format); math.IsInf(v, 0) || math.IsNaN(v) {
					t.Fatalf("%s: %g (below overflow_from %g) splits into a non-finite piece %d", name, math.Float32frombits(bits), hi, i)
				}
			}
		}
		if name == "ape-fp32f" || name == "sgemm-cube" {
			if _, emax := sp.rangeExponents(); emax != 15 || hi != 32768 {
				t.Errorf("%s: max_exponent %d, overflow_from %g; want the papers' 15 and 2^15", name, emax, hi)
			}
		}
	}
}
