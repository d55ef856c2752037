package programs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// scheme auto takes .npy inputs: each preset's accuracy is measured on
// evenly spaced rows of A and columns of B of the files (here A's rows
// differ in scale, so another choice of rows gives other bits: the
// candidates' bits are those of the presets run on exactly those rows and
// columns), their range is every value's (70000 in a row the sample
// skips still puts the FP16 presets out of range, naming inputs.a), and
// no file is written for the sample (its runs take it from memory).
func TestEmulatedAutoNPYInputs(t *testing.T) {
	const m, k, n = 256, 96, 192
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where auto writes its sample (os.TempDir)
	dir := t.TempDir()
	a, b := make([]float32, m*k), make([]float32, k*n)
	rng := NewRand(7, 1)
	for i := range a {
		a[i] = float32(math.Ldexp(rng.Float64()*2-1, -(i/k)%23)) // row r scaled by 2^-(r mod 23)
	}
	for i := range b {
		b[i] = float32(rng.Float64()*2 - 1)
	}
	write := func(name string, v []float32, rows, cols int) string {
		t.Helper()
		if _, err := WriteOutputs(dir, []Output{{Name: name, F32: v, Shape: []int{rows, cols}}}); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, name+".npy")
	}
	pa, pb := write("a", a, m, k), write("b", b, k, n)
	sizes := []string{fmt.Sprintf("program.m=%d", m), fmt.Sprintf("program.k=%d", k), fmt.Sprintf("program.n=%d", n)}
	res, err := runEmulated(t, "a100", append(sizes, "program.scheme=auto", "program.numerics=off", "program.inputs.a="+pa, "program.inputs.b="+pb)...)
	if err != nil {
		t.Fatal(err)
	}
	auto := res.Report.Program["auto"].(map[string]any)
	if s := auto["sample"].(string); !strings.Contains(s, "rows 0, 4, …, 252") || !strings.Contains(s, "columns 0, 3, …, 189") {
		t.Errorf("sample %q: want A's rows every 4th and B's columns every 3rd", s)
	}
	// The sample by hand: rows 4i of A, columns 3j of B.
	sa, sb := make([]float32, autoSample*k), make([]float32, k*autoSample)
	for i := range autoSample {
		copy(sa[i*k:(i+1)*k], a[4*i*k:(4*i+1)*k])
		for kk := range k {
			sb[kk*autoSample+i] = b[kk*n+3*i]
		}
	}
	qa, qb := write("sa", sa, autoSample, k), write("sb", sb, k, autoSample)
	bits := map[string]float64{}
	for _, r := range auto["candidates"].([]map[string]any) {
		if r["split"] == nil && r["bits"] != nil && r["scheme"] != "native" {
			bits[r["scheme"].(string)] = r["bits"].(float64)
		}
	}
	for _, s := range []string{"ootomo", "hgemm", "le-gemm"} {
		got, ok := bits[s]
		if !ok {
			t.Fatalf("%s: not measured: %v", s, auto["candidates"])
		}
		direct, err := runEmulated(t, "a100", fmt.Sprintf("program.m=%d", autoSample), fmt.Sprintf("program.k=%d", k), fmt.Sprintf("program.n=%d", autoSample),
			"program.scheme="+s, "program.numerics=full", "program.inputs.a="+qa, "program.inputs.b="+qb)
		if err != nil {
			t.Fatal(err)
		}
		if want := direct.Report.Error.Bits; got != want {
			t.Errorf("%s: auto measured %v bits, the sample run directly %v", s, got, want)
		}
	}
	// 70000 in A's last row (not sampled): FP16 pieces overflow there.
	a[(m-1)*k+5] = 70000
	pa = write("a", a, m, k)
	res, err = runEmulated(t, "a100", append(sizes, "program.scheme=auto", "program.numerics=off", "program.inputs.a="+pa, "program.inputs.b="+pb)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Report.Program["auto"].(map[string]any)["candidates"].([]map[string]any) {
		fp16 := r["scheme"] == "ootomo" || r["scheme"] == "hgemm" || r["scheme"] == "markidis"
		if fp16 && (r["status"] != "out-of-range" || !strings.Contains(fmt.Sprint(r["reason"]), `key "inputs.a": inputs up to 70000`)) {
			t.Errorf("%v: want out-of-range naming inputs.a's 70000", r)
		}
		if r["scheme"] == "bf16x9" && r["status"] == "out-of-range" {
			t.Errorf("%v: BF16 pieces hold 70000", r)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("auto left %v behind", left)
	}
	_, err = runEmulated(t, "a100", append(sizes, "program.scheme=auto", "program.inputs.a="+pa)...)
	wantBadInputLine(t, err, `key "inputs.a": give both inputs.a and inputs.b`, "one input")
	_, err = runEmulated(t, "a100", "program.m=128", "program.k=96", "program.n=192", "program.scheme=auto", "program.inputs.a="+pa, "program.inputs.b="+pb)
	wantBadInputLine(t, err, `key "inputs.a": A is 256×96`, "wrong shape")
	if _, err := os.Stat(pa); err != nil {
		t.Fatal(err) // (the user's files stay)
	}
}

// An interrupt while scheme auto reads .npy inputs or measures its
// candidates ends the build with its cause (not as bad input), the sample
// runs not started after it.
func TestEmulatedAutoNPYInterrupted(t *testing.T) {
	const m, k, n = 128, 64, 128
	dir := t.TempDir()
	v := make([]float32, m*k)
	for i := range v {
		v[i] = float32(i%9) - 4
	}
	if _, err := WriteOutputs(dir, []Output{{Name: "a", F32: v, Shape: []int{m, k}}, {Name: "b", F32: v, Shape: []int{k, n}}}); err != nil {
		t.Fatal(err)
	}
	f, err := Parse("p.yaml", dir, []byte(fmt.Sprintf("kind: emulated-gemm\nmachine: a100\nscheme: auto\nm: %d\nn: %d\nk: %d\nnumerics: off\ninputs: {a: a.npy, b: b.npy}\n", m, n, k)))
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	_, err = Execute(f, Options{}, RunHooks{Context: ctx})
	if err == nil || badinput.Is(err) || !errors.Is(err, stop) {
		t.Errorf("interrupted: %v (bad input: %v)", err, badinput.Is(err))
	}
}

// What auto's read of .npy inputs finds in them — float64 rounded to FP32,
// NaN — is in the report once, with numerics off too, where the chosen
// run reads nothing (it had been dropped there).
func TestEmulatedAutoNPYNotes(t *testing.T) {
	const m, k, n = 128, 64, 128
	dir := t.TempDir()
	a := make([]float32, m*k)
	for i := range a {
		a[i] = float32(i%9) - 4
	}
	a[5] = float32(math.NaN())
	b := make([]float64, k*n)
	for i := range b {
		b[i] = float64(i%7)/3 - 1
	}
	fb, err := os.Create(filepath.Join(dir, "b.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeNPYAs(fb, "<f8", b, []int{k, n}); err != nil {
		t.Fatal(err)
	}
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteOutputs(dir, []Output{{Name: "a", F32: a, Shape: []int{m, k}}}); err != nil {
		t.Fatal(err)
	}
	for _, numerics := range []string{"off", "sampled"} {
		f, err := Parse("p.yaml", dir, []byte(fmt.Sprintf("kind: emulated-gemm\nmachine: a100\nscheme: auto\nm: %d\nn: %d\nk: %d\nnumerics: %s\ninputs: {a: a.npy, b: b.npy}\n", m, n, k, numerics)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, Options{}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"inputs.a (a.npy) holds 1 NaN and 0 ±Inf of its 8192 values", "inputs.b (b.npy) is float64: rounded to FP32"} {
			count := 0
			for _, note := range res.Report.Notes {
				if strings.HasPrefix(note, want) {
					count++
				}
			}
			if count != 1 {
				t.Errorf("numerics %s: %d notes starting %q, want 1: %q", numerics, count, want, res.Report.Notes)
			}
		}
	}
}
