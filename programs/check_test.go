package programs

import (
	"errors"
	"strings"
	"testing"
)

// checkNote returns the run's golden-model check note ("" when none).
func checkNote(res *Result) string {
	for _, n := range res.Report.Notes {
		if strings.HasPrefix(n, "check: ") && strings.Contains(n, "bit for bit") && !strings.Contains(n, "not made") {
			return n
		}
	}
	return ""
}

// assertChecked fails the test unless the run made its golden-model check
// (a test of bit-exactness that did not check would pass vacuously).
func assertChecked(t *testing.T, label string, res *Result) {
	t.Helper()
	if checkNote(res) == "" {
		t.Errorf("%s: no golden-model check was made (notes: %q)", label, res.Report.Notes)
	}
}

// Every golden-model check compares what the simulation wrote: with one
// bit of the simulated result changed (corruptResults) each run with
// check: true fails with ErrCheckFailed — DaVinci sgemm-cube, hgemm and
// igemm; GPU hgemm, tf32gemm, sgemm, igemm, dgemm; emulated-gemm (a
// product kernel, ape-int16's planes); ozaki's planes (Ozaki-I, Ozaki-II)
// and its fallback on GPUs, its planes on the 910A. Without the change
// the same runs pass their checks.
func TestChecksCompareSimulatedResults(t *testing.T) {
	small := []string{"program.m=40", "program.n=48", "program.k=64", "program.numerics=full", "program.check=true"}
	for _, c := range []struct {
		name, file, machine string
		sets                []string
		note                string // in its check note
	}{
		{"davinci sgemm-cube", "examples/sgemm-cube.yaml", "", nil, "simulated C equals"},
		{"davinci hgemm", "examples/hgemm.yaml", "", nil, "simulated C equals"},
		{"davinci igemm", "examples/a100-igemm.yaml", "ascend-910a", nil, "(exact INT32)"},
		{"gpu hgemm", "examples/a100-hgemm.yaml", "", nil, "simulated C equals"},
		{"gpu tf32gemm", "examples/a100-tf32gemm.yaml", "", nil, "simulated C equals"},
		{"gpu sgemm", "examples/a100-sgemm.yaml", "", nil, "simulated C equals"},
		{"gpu igemm", "examples/a100-igemm.yaml", "", nil, "(exact INT32)"},
		{"gpu dgemm", "examples/a100-dgemm.yaml", "", nil, "(FP64 FMA chains)"},
		{"emulated markidis", "examples/a100-emulated-gemm.yaml", "", []string{"program.scheme=markidis"}, "the simulated C equals"},
		{"emulated ape-int16", "examples/a100-emulated-gemm.yaml", "", []string{"program.scheme=ape-int16"}, "product planes"},
		{"ozaki-I", "examples/b200-ozaki.yaml", "a100", []string{"program.precision=fixed"}, "(package ozaki)"},
		{"ozaki-II", "examples/b200-ozaki.yaml", "a100", []string{"program.method=ozaki-ii", "program.precision="}, "(package ozaki/crt)"},
		{"ozaki fallback", "examples/b200-ozaki.yaml", "a100", []string{"program.precision=dynamic", "program.mantissa_bits=53", "program.max_mantissa_bits=54"}, "the fallback's C"},
		{"ozaki 910a", "examples/ascend-910a-ozaki.yaml", "", []string{"program.precision=fixed"}, "every INT32 plane and C"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := mustRead(t, c.file)
			opts := Options{Machine: c.machine, Overrides: mustSets(t, append(append([]string{}, small...), c.sets...)...)}
			res, err := Execute(f, opts, RunHooks{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failure != nil {
				t.Fatalf("unchanged: %v", res.Failure)
			}
			if n := checkNote(res); !strings.Contains(n, c.note) {
				t.Errorf("check note %q, want one with %q (notes: %q)", n, c.note, res.Report.Notes)
			}
			corruptResults = true
			defer func() { corruptResults = false }()
			res, err = Execute(f, opts, RunHooks{})
			if err == nil && res.Failure != nil {
				err = res.Failure
			}
			if !errors.Is(err, ErrCheckFailed) {
				t.Errorf("one simulated bit changed: got %v, want %v", err, ErrCheckFailed)
			}
		})
	}
}

// report.json records every --set as given, however long its value
// (messages clip what they quote; the record does not).
func TestOverridesRecordedWhole(t *testing.T) {
	long := "program.m=" + strings.Repeat("0", 200) + "64"
	f := mustRead(t, "examples/hgemm.yaml")
	res, err := Execute(f, Options{Numerics: NumericsOff, Overrides: mustSets(t, long, "program.n=64", "program.k=64")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Report.Overrides) == 0 || res.Report.Overrides[0] != long {
		t.Errorf("overrides %q, want %q first", res.Report.Overrides, long)
	}
}

// baselines is honoured where baselines are reported and refused where
// none are (it was ignored by igemm, ape-int16 and GPU native); with
// numerics sampled, baselines: false keeps emulated-gemm's own error
// against the CPU SGEMM on DaVinci machines.
func TestBaselinesKey(t *testing.T) {
	f := mustRead(t, "examples/a100-emulated-gemm.yaml")
	small := []string{"program.m=64", "program.n=64", "program.k=64", "program.baselines=false"}
	for _, c := range []struct{ machine, scheme, want string }{
		{"a100", "native", `key "baselines": applies to davinci machines`},
		{"a100", "ape-int16", `key "baselines": applies to the FP32 emulations`},
		{"ascend-910a", "ape-int16", `key "baselines": applies to the FP32 emulations`},
	} {
		_, err := Execute(f, Options{Machine: c.machine, Numerics: NumericsOff, Overrides: mustSets(t, append([]string{"program.scheme=" + c.scheme}, small...)...)}, RunHooks{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.machine, c.scheme, err, c.want)
		}
	}
	ig := mustRead(t, "examples/a100-igemm.yaml")
	if _, err := Execute(ig, Options{Machine: "ascend-910a", Numerics: NumericsOff, Overrides: mustSets(t, small...)}, RunHooks{}); err == nil || !strings.Contains(err.Error(), `key "baselines"`) {
		t.Errorf("igemm on the 910A: %v", err)
	}
	res, err := Execute(f, Options{Machine: "ascend-910b3", Overrides: mustSets(t, "program.scheme=ootomo", "program.m=256", "program.n=256", "program.k=256",
		"program.numerics=sampled", "program.baselines=false")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Report.Program["error_vs_cpu_sgemm"]; !ok || len(res.Report.Baselines) != 0 {
		t.Errorf("910B3 ootomo sampled, baselines false: error_vs_cpu_sgemm present %v, baselines %v", ok, res.Report.Baselines)
	}
}

// tiling.staging on a DaVinci machine is refused like the other GPU tile
// keys (the defaults dropped it, so every DaVinci GEMM kind took any
// value silently).
func TestStagingOnDaVinciRefused(t *testing.T) {
	for _, file := range []string{"examples/sgemm-cube.yaml", "examples/hgemm.yaml"} {
		f := mustRead(t, file)
		_, err := Execute(f, Options{Numerics: NumericsOff, Overrides: mustSets(t, "program.tiling.staging=shared", "program.m=64", "program.n=64", "program.k=64")}, RunHooks{})
		if err == nil || !strings.Contains(err.Error(), `key "tiling.staging": applies to GPU machines`) {
			t.Errorf("%s: %v", file, err)
		}
	}
}

// The lu-fused and lu-gemm golden comparisons compare what the simulation
// wrote: changed bits in the factors (or the trailing matrix) read back
// fail the run — DaVinci, GPU, a node of NPUs, lu-gemm (which always
// compares with numerics full).
func TestLUChecksCompareSimulatedResults(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
	}{
		{"davinci", "kind: lu-fused\nn: 512\nnb: 128\nn_fused: 2\nn_fusion: 16\nnumerics: full\ncheck: true\n"},
		{"gpu", "kind: lu-fused\nmachine: a100\nn: 512\nnb: 128\nnumerics: full\ncheck: true\n"},
		{"node", luClusterSmall + "numerics: full\ncheck: true\n"},
		{"lu-gemm", "kind: lu-gemm\nnb: 128\nm: 256\nn_fused: 2\nnumerics: full\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse("lu.yaml", ".", []byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Execute(f, Options{}, RunHooks{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failure != nil {
				t.Fatalf("unchanged: %v", res.Failure)
			}
			corruptResults = true
			defer func() { corruptResults = false }()
			res, err = Execute(f, Options{}, RunHooks{})
			if err == nil && res.Failure != nil {
				err = res.Failure
			}
			if !errors.Is(err, ErrCheckFailed) {
				t.Errorf("one simulated bit changed: got %v, want %v", err, ErrCheckFailed)
			}
		})
	}
}

// An unknown key's message lists the keys the kind takes — not those it
// never does (Kind.Omit: dgemm's DaVinci-only keys), in the file and with
// --set alike.
func TestUnknownKeyListsTakenKeys(t *testing.T) {
	f := mustRead(t, "examples/a100-dgemm.yaml")
	_, err := Execute(f, Options{Numerics: NumericsOff, Overrides: mustSets(t, "program.bogus=1")}, RunHooks{})
	if err == nil || !strings.Contains(err.Error(), "(it has: kind, machine, m") || strings.Contains(err.Error(), "baselines") || strings.Contains(err.Error(), "split") {
		t.Errorf("--set: %v", err)
	}
	g, err := Parse("d.yaml", ".", []byte("kind: dgemm\nmachine: a100\nm: 64\nn: 64\nk: 64\nbogus: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(g, Options{Numerics: NumericsOff}, RunHooks{})
	if err == nil || !strings.Contains(err.Error(), `unknown key "bogus"`) || strings.Contains(err.Error(), "baselines") {
		t.Errorf("file: %v", err)
	}
}
