package programs

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// buildWith builds program text with --set values sets (and a --seed where
// seed is not nil) for a run with numerics numerics, stopping before any
// simulation: the refusal of a key or option comes from the build.
func buildWith(t *testing.T, text, numerics string, seed *int64, sets ...string) (*Result, error) {
	t.Helper()
	f, err := Parse("p.yaml", t.TempDir(), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	ovs, err := machines.ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	return Execute(f, Options{Overrides: ovs, Numerics: numerics, Seed: seed}, RunHooks{})
}

// A key a kind does not take is refused whatever its value — an explicit 0
// (cores: 0, split_chunk: 0), the Go zero that once read as "not given" —
// and so are values the kind would ignore (elementwise accumulation of one
// product, sampling.windows: 0).
func TestKeysThatDoNotApplyRefusedAtZero(t *testing.T) {
	for _, c := range []struct {
		text string
		sets []string
		want string
	}{
		{"kind: hgemm\nmachine: a100\nm: 64\nn: 64\nk: 64\n", []string{"program.cores=0"}, `key "cores": applies to davinci machines`},
		{"kind: hgemm\nmachine: a100\nm: 64\nn: 64\nk: 64\nsplit_chunk: 0\n", nil, `key "split_chunk": applies to davinci machines`},
		{"kind: emulated-gemm\nmachine: a100\nscheme: ootomo\nm: 64\nn: 64\nk: 64\n", []string{"program.cores=0"}, `key "cores": does not apply to emulated-gemm on a100`},
		{"kind: emulated-gemm\nmachine: a100\nscheme: native\nm: 64\nn: 64\nk: 64\n", []string{"program.tiling.nfused=0"}, `key "tiling.nfused": does not apply to emulated-gemm's native scheme`},
		{"kind: emulated-gemm\nmachine: a100\nscheme: ape-int16\nm: 64\nn: 64\nk: 64\n", []string{"program.split_chunk=0"}, `key "split_chunk": does not apply to emulated-gemm's ape-int16 scheme`},
		{"kind: ozaki\nmachine: a100\nm: 64\nn: 64\nk: 64\n", []string{"program.cores=0"}, `key "cores": does not apply to ozaki`},
		{"kind: emulated-gemm\nmachine: ascend-910a\nscheme: ape-int16\nm: 64\nn: 64\nk: 64\n", []string{"program.split_chunk=0"}, `key "split_chunk": does not apply to emulated-gemm's ape-int16 scheme on ascend-910a`},
		{"kind: hgemm\nm: 64\nn: 64\nk: 64\n", []string{"program.accumulation=elementwise"}, `key "accumulation": elementwise adds sgemm-cube's three products`},
		{"kind: lu-fused\nn: 1024\nnb: 256\n", []string{"program.sampling.windows=0"}, `key "sampling.windows": must be ≥ 1`},
		{"kind: sgemm\nmachine: ascend-910b3\nm: 64\nn: 64\nk: 64\n", []string{"program.split_chunk=64"}, `key "split_chunk": the chunk of sgemm-cube's and hgemm's split pass`},
		{"kind: igemm\nmachine: ascend-910a\nm: 64\nn: 64\nk: 64\nsplit_chunk: 0\n", nil, `key "split_chunk": the chunk of sgemm-cube's and hgemm's split pass`},
	} {
		_, err := buildWith(t, c.text, NumericsOff, nil, c.sets...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %v: %v, want %q", c.text, c.sets, err, c.want)
		}
	}
	// What stays: unit on the native scheme (its own key), cores: 0 on DaVinci (all cores), termwise.
	for _, c := range []struct {
		text string
		sets []string
	}{
		{"kind: emulated-gemm\nmachine: a100\nscheme: native\nm: 64\nn: 64\nk: 64\nunit: vector\n", nil},
		{"kind: hgemm\nm: 64\nn: 64\nk: 64\n", []string{"program.cores=0", "program.accumulation=termwise"}},
		{"kind: sgemm-cube\nm: 64\nn: 64\nk: 64\n", []string{"program.accumulation=elementwise"}},
		// A DaVinci file's key reset by an empty --set (the documented reset) on a GPU.
		{"kind: hgemm\nmachine: a100\nm: 64\nn: 64\nk: 64\nbuffering: double\naccumulation: termwise\n", []string{"program.buffering=", "program.accumulation="}},
	} {
		if _, err := buildWith(t, c.text, NumericsOff, nil, c.sets...); err != nil {
			t.Errorf("%q %v: %v", c.text, c.sets, err)
		}
	}
}

// Inputs from files: --seed is refused (nothing is drawn), the file's
// distribution keys are named in a note; sample_tiles with numerics full
// is named in a note too.
func TestInputFilesAndUnusedKeys(t *testing.T) {
	dir := t.TempDir()
	v := make([]float32, 64*64)
	for i := range v {
		v[i] = float32(i%7) - 3
	}
	if _, err := WriteOutputs(dir, []Output{{Name: "A", F32: v, Shape: []int{64, 64}}, {Name: "B", F32: v, Shape: []int{64, 64}}}); err != nil {
		t.Fatal(err)
	}
	text := "kind: emulated-gemm\nmachine: a100\nscheme: ootomo\nm: 64\nn: 64\nk: 64\ninputs: {distribution: uniform, seed: 3, a: " + dir + "/A.npy, b: " + dir + "/B.npy}\n"
	seed := int64(5)
	for _, numerics := range []string{NumericsOff, NumericsFull} {
		if _, err := buildWith(t, text, numerics, &seed); err == nil || !strings.Contains(err.Error(), "--seed: A and B are the files inputs.a and inputs.b") {
			t.Errorf("numerics %s: --seed with files: %v", numerics, err)
		}
	}
	notesOf(t, text, NumericsFull, nil, "", "program.sample_tiles=4")(
		"inputs.distribution, inputs.seed: not used, A and B are the files inputs.a and inputs.b",
		"sample_tiles (4) applies to numerics sampled: not used (numerics full computes every tile)")
	notesOf(t, "kind: hgemm\nm: 64\nn: 64\nk: 64\n", NumericsFull, &seed, "not used")()
}

// notesOf builds text (as buildWith) and fails where a note contains
// unwanted ("": none is unwanted); its result fails where a note wanted is
// not among the run's.
func notesOf(t *testing.T, text, numerics string, seed *int64, unwanted string, sets ...string) func(wanted ...string) {
	t.Helper()
	res, err := buildWith(t, text, numerics, seed, sets...)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Report.Notes {
		if unwanted != "" && strings.Contains(n, unwanted) {
			t.Errorf("note %q", n)
		}
	}
	return func(wanted ...string) {
		t.Helper()
		for _, want := range wanted {
			if !slices.Contains(res.Report.Notes, want) {
				t.Errorf("no note %q in %q", want, res.Report.Notes)
			}
		}
	}
}

// A GM too small for an emulated GEMM names what the whole run needs,
// whatever the capacity below it: the product kernels' plans check only
// their part (A, B and C of the pieces), which was said first.
func TestEmulatedGMNeedWhole(t *testing.T) {
	for _, c := range []string{"1KiB", "131072", "327679"} {
		_, err := buildWith(t, "kind: emulated-gemm\nmachine: a100\nscheme: ootomo\nm: 128\nn: 128\nk: 128\n", NumericsOff, nil, "machine.gm.capacity="+c)
		if err == nil || !strings.Contains(err.Error(), "FP32 A and B, their pieces and C need 327680 bytes of global memory") {
			t.Errorf("gm.capacity %s: %v", c, err)
		}
	}
	if _, err := buildWith(t, "kind: emulated-gemm\nmachine: a100\nscheme: ootomo\nm: 128\nn: 128\nk: 128\n", NumericsOff, nil, "machine.gm.capacity=327680"); err != nil {
		t.Errorf("gm.capacity 327680: %v", err)
	}
}

// A timing-only run names the --seed and sample_tiles it does not use —
// but for scheme auto, whose accuracy sample the seed draws.
func TestTimingOnlyUnusedNotes(t *testing.T) {
	seed := int64(3)
	notesOf(t, "kind: hgemm\nmachine: a100\nm: 128\nn: 128\nk: 128\nsample_tiles: 4\n", NumericsOff, &seed, "")(
		"--seed 3: not used (numerics off draws no inputs)", "sample_tiles applies to numerics sampled: not used (numerics off computes no tile)")
	notesOf(t, "kind: emulated-gemm\nmachine: a100\nscheme: auto\nm: 128\nn: 128\nk: 128\n", NumericsOff, &seed, "--seed")()
}

// The note on NaN inputs says C may be finite where a conversion saturates
// them — as Ascend's hgemm does (NaN → 0): it said the elements of C they
// reach are NaN.
func TestNaNInputsNoteSaturation(t *testing.T) {
	dir := t.TempDir()
	a := make([]float32, 64*64)
	for i := range a {
		a[i] = float32(math.NaN())
	}
	b := make([]float32, 64*64)
	for i := range b {
		b[i] = 1
	}
	if _, err := WriteOutputs(dir, []Output{{Name: "A", F32: a, Shape: []int{64, 64}}, {Name: "B", F32: b, Shape: []int{64, 64}}}); err != nil {
		t.Fatal(err)
	}
	res, err := buildWith(t, "kind: hgemm\nm: 64\nn: 64\nk: 64\ninputs: {a: "+dir+"/A.npy, b: "+dir+"/B.npy}\n", NumericsFull, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Report.Notes, func(n string) bool {
		return strings.Contains(n, "holds 4096 NaN") && strings.Contains(n, "or finite where a conversion to the pieces saturates them (NaN → 0")
	}) {
		t.Errorf("notes %q", res.Report.Notes)
	}
	if res.Report.Error == nil || res.Report.Error.NonFinite != 0 {
		t.Errorf("Ascend's hgemm saturates: error %+v", res.Report.Error)
	}
}
