package programs

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every FP32 scheme whose pieces the cube takes is bit-exact to the golden
// model on DaVinci (check: C, with the split, the outside accumulation, the
// L1 groups' partial sums and the epilogue computed by the simulated vector
// unit): FP16 presets on the 910A, FP16 and BF16 ones on the 910B3
// (FixPipe, smaller buffers), with edge tiles in m, n and k, several L1
// groups (nfused 2) and a hand-written scheme with three pieces (a scaled
// middle piece: the split's residual kept unscaled), two outside groups and
// an inside one in a fused pass.
func TestEmulatedDaVinciBitExact(t *testing.T) {
	small := []string{"program.m=200", "program.n=150", "program.k=330", "program.tiling.nfused=2", "program.numerics=full", "program.check=true"}
	fp16 := []string{"hgemm", "markidis", "ape-fp32m", "ootomo", "ape-fp32f", "sgemm-cube", "le-gemm"}
	for _, c := range []struct {
		machine string
		schemes []string
	}{
		{"ascend-910a", fp16},
		{"ascend-910b3", append([]string{"ape-fp32b", "bf16x9"}, fp16[:4]...)},
	} {
		for _, s := range c.schemes {
			res := checkedRun(t, c.machine, s, append([]string{"program.scheme=" + s}, small...)...)
			if res.Report.Program["scheme"] != s || res.Report.Program["error_vs_cpu_sgemm"] == nil {
				t.Errorf("%s %s: program section %v", c.machine, s, res.Report.Program)
			}
		}
	}
	custom := "{pieces: [{format: fp16}, {format: fp16, scale: 11}, {format: fp16, rounding: rz, scale: 22}], " +
		"groups: [{products: [hh], accumulate: outside}, {products: [hm, mh], accumulate: outside}, {products: [hl, mm, lh]}]}"
	res := runSchemeFile(t, "ascend-910a", custom, "m: 100\nk: 400\nn: 120\nnumerics: full\ncheck: true\ntiling: {nfused: 3}\n")
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	if res.Report.Error.Bits < 22 {
		t.Errorf("three-piece scheme: %.1f bits", res.Report.Error.Bits)
	}
}

// programText is a program file holding src (in a test's directory).
func programText(t *testing.T, src string) *File {
	t.Helper()
	return programFiles(t, src, nil)
}

// programFiles is programText with files (name → content) written beside
// program.yaml.
func programFiles(t *testing.T, src string, files map[string]string) *File {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "program.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// runSchemeFile runs kind emulated-gemm with an inline scheme on machine.
func runSchemeFile(t *testing.T, machine, scheme, rest string) *Result {
	t.Helper()
	f := programText(t, "kind: emulated-gemm\nmachine: "+machine+"\nscheme: "+scheme+"\n"+rest)
	res, err := Execute(f, Options{}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Scheme sgemm-cube on DaVinci is SGEMM-cube's own program: the same C bit
// for bit and the same time as kind sgemm-cube; scheme hgemm is kind
// hgemm's.
func TestEmulatedDaVinciIsTheKind(t *testing.T) {
	for _, c := range []struct{ scheme, example string }{{"sgemm-cube", "sgemm-cube.yaml"}, {"hgemm", "hgemm.yaml"}} {
		sets := []string{"program.m=300", "program.n=200", "program.k=700", "program.numerics=full", "program.tiling.nfused=3",
			"program.tiling.bm=176", "program.tiling.bk=64", "program.tiling.bn=176"}
		emu, err := runEmulated(t, "ascend-910a", append([]string{"program.scheme=" + c.scheme}, sets...)...)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ReadFile("examples/" + c.example)
		if err != nil {
			t.Fatal(err)
		}
		kind, err := Execute(f, Options{Overrides: mustSets(t, sets...)}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if emu.Stats.Time != kind.Stats.Time {
			t.Errorf("%s: emulated-gemm %v, kind %v", c.scheme, emu.Stats.Time, kind.Stats.Time)
		}
		ce, ck := outputF32(t, emu, "C"), outputF32(t, kind, "C")
		if len(ck) != 300*200 || len(ce) != len(ck) {
			t.Fatalf("%s: C of %d and %d elements, want %d", c.scheme, len(ce), len(ck), 300*200)
		}
		for i := range ck {
			if math.Float32bits(ce[i]) != math.Float32bits(ck[i]) {
				t.Fatalf("%s: C[%d] = %g, kind's %g", c.scheme, i, ce[i], ck[i])
			}
		}
	}
}

// outputF32 returns the run's FP32 output name.
func outputF32(t *testing.T, res *Result, name string) []float32 {
	t.Helper()
	for _, o := range res.Outputs {
		if o.Name == name {
			return o.F32
		}
	}
	t.Fatalf("no output %s", name)
	return nil
}

// Sampled numerics on DaVinci report the scheme's error on the golden
// model's tiles, with LE-GEMM's metrics against the CPU SGEMM; Ootomo and
// the FP16 cast order as expected.
func TestEmulatedDaVinciSampled(t *testing.T) {
	bits := map[string]float64{}
	for _, s := range []string{"ootomo", "hgemm"} {
		res, err := runEmulated(t, "ascend-910a", "program.scheme="+s, "program.m=256", "program.n=256", "program.k=512",
			"program.sample_tiles=2", "program.histogram_bins=12")
		if err != nil || res.Failure != nil {
			t.Fatalf("%s: %v %v", s, err, res.Failure)
		}
		if !res.Report.Error.Sampled || res.Report.Program["error_histogram"] == nil {
			t.Errorf("%s: %+v %v", s, res.Report.Error, res.Report.Program)
		}
		bits[s] = res.Report.Error.Bits
	}
	if bits["ootomo"] < bits["hgemm"]+8 {
		t.Errorf("bits %v", bits)
	}
}

// What a DaVinci cube cannot run, and keys the scheme decides, are bad
// input: one line naming the key.
func TestEmulatedDaVinciBadInput(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
		want    string
	}{
		{"ascend-910a", []string{"program.scheme=ape-fp32t"}, `key "scheme.pieces[0].format": tf32 pieces need a TF32 cube; machine ascend-910a (davinci) has none (the DaVinci cube has no TF32 mode)`},
		{"ascend-910a", []string{"program.scheme=bf16x9"}, `key "scheme.pieces[0].format": bf16 pieces need a BF16 cube; machine ascend-910a (davinci) has none`},
		{"ascend-910a", []string{"program.scheme=markidis", "program.accumulation=elementwise"}, `key "accumulation": does not apply to emulated-gemm`},
		{"ascend-910a", []string{"program.scheme=markidis", "program.split.sb=6"}, `key "split": does not apply`},
		{"ascend-910a", []string{"program.scheme=ootomo", "program.inputs.offset_exponent=16"}, `key "inputs.offset_exponent"`},
		{"ascend-910a", []string{"program.scheme=ootomo", "program.tiling.bm=176"}, `key "tiling": 3 fp32 tiles of bm·bn = 176·176 exceed L0C`},
		{"ascend-910b3", []string{"program.scheme=bf16x9", "program.tiling.bm=176"}, `key "tiling": bm·bk = 176·64 bf16 ×3 matrices, 67584 bytes, exceeds L0A`},
		{"ascend-910a", []string{"program.scheme=markidis", "program.tiling.nfused=1000"}, `key "tiling.nfused": 1000 A blocks do not fit L1`},
		{"ascend-910a", []string{"program.scheme=markidis", "program.m=1048576", "program.n=1048576", "program.numerics=off"}, `key "m": the matrices need`},
		{"ascend-910b3", []string{"program.scheme={pieces: [{format: bf16}, {format: bf16}], groups: [{products: [00, \"01\"]}]}"}, `key "scheme.groups[0].products[0]": want a string, got 0 (YAML reads unquoted digits as a number: quote them, e.g. "01")`},
	} {
		_, err := runEmulated(t, c.machine, c.sets...)
		wantBadInputLine(t, err, c.want, c.machine, c.sets)
	}
}

// scheme: auto on DaVinci: the presets the cube takes are measured on the
// sample and the accurate ones simulated; the 910A has no FP32 cube
// (native unsupported) and picks a fused FP16 scheme, the 910B3's FP32 cube
// (accuracy measured, not predicted) beats them at 1024³ on U[−1, 1]; a
// loose target picks the FP16 cast; the choice is in program.auto.
func TestEmulatedDaVinciAuto(t *testing.T) {
	status := func(res *Result) (string, map[string]map[string]any) {
		a := res.Report.Program["auto"].(map[string]any)
		rows := map[string]map[string]any{}
		for _, r := range a["candidates"].([]map[string]any) {
			rows[r["scheme"].(string)] = r
		}
		return a["chosen"].(string), rows
	}
	sets := []string{"program.scheme=auto", "program.m=1024", "program.n=1024", "program.k=1024", "program.numerics=off"}
	res, err := runEmulated(t, "ascend-910a", sets...)
	if err != nil {
		t.Fatal(err)
	}
	chosen, rows := status(res)
	if rows["native"]["status"] != "unsupported" || rows["bf16x9"]["status"] != "unsupported" || rows["hgemm"]["status"] != "inaccurate" {
		t.Errorf("910A candidates: %v", rows)
	}
	if rows[chosen]["status"] != "chosen" || chosen == "hgemm" || res.Report.Program["scheme"] != chosen {
		t.Errorf("910A chose %s: %v", chosen, rows)
	}
	for name, r := range rows {
		if r["status"] == "simulated" && r["seconds"].(float64) < res.Report.Time.Seconds {
			t.Errorf("910A: %s simulated faster (%v) than the chosen %s (%v)", name, r["seconds"], chosen, res.Report.Time.Seconds)
		}
	}
	res, err = runEmulated(t, "ascend-910b3", sets...)
	if err != nil {
		t.Fatal(err)
	}
	chosen, rows = status(res)
	if chosen != "native" || rows["native"]["bits_from"] != "measured on the sample (the golden model)" || rows["native"]["bits"].(float64) < 21 {
		t.Errorf("910B3 chose %s: native %v", chosen, rows["native"])
	}
	for _, n := range res.Report.Notes {
		if strings.Contains(n, "scheme auto chose") && strings.Contains(n, "predicted") {
			t.Errorf("native's measured bits called predicted: %s", n)
		}
	}
	res, err = runEmulated(t, "ascend-910a", append(sets, "program.target_bits=8")...)
	if err != nil {
		t.Fatal(err)
	}
	if chosen, _ = status(res); chosen != "hgemm" {
		t.Errorf("target 8 bits: chose %s", chosen)
	}
	// A tiling Ootomo's accumulators do not fit leaves it out, with the
	// reason; the others still compete.
	res, err = runEmulated(t, "ascend-910a", append(sets, "program.tiling.bm=176", "program.tiling.bn=176")...)
	if err != nil {
		t.Fatal(err)
	}
	chosen, rows = status(res)
	if rows["ootomo"]["status"] != "unsupported" || !strings.Contains(rows["ootomo"]["reason"].(string), "exceed L0C") || chosen == "ootomo" {
		t.Errorf("tiling 176: chose %s, ootomo %v", chosen, rows["ootomo"])
	}
}
