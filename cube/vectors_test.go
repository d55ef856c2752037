package cube

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vectorsDir is the recorded vectors shipped with the repository.
var vectorsDir = filepath.Join("..", "testdata", "tc-vectors")

// TestRecordedVectors checks every recorded file set (every GPU, input and
// output format, all 5000 lines) bit for bit.
func TestRecordedVectors(t *testing.T) {
	sets, err := FindVectorSets(vectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 48 {
		t.Fatalf("found %d file sets in testdata, want 48", len(sets))
	}
	for _, s := range sets {
		r := checkSet(t, s)
		if r.Checked != 5000 {
			t.Errorf("%s %v→%v: checked %d, want 5000", s.GPU, s.Input, s.Output, r.Checked)
		}
		for _, x := range r.First {
			t.Errorf("%s %v→%v line %d: got %08x want %08x", s.GPU, s.Input, s.Output, x.Line, x.Got, x.Want)
		}
	}
}

func TestFindVectorSetsErrors(t *testing.T) {
	src := filepath.Join(vectorsDir, "V100", "fp16")
	mk := func(t *testing.T, skip string) string {
		dir := t.TempDir()
		dst := filepath.Join(dir, "V100", "fp16")
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(src)
		for _, e := range ents {
			if e.Name() == skip {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
		}
		return dir
	}
	for _, missing := range []string{"a_V100_fp16.txt.gz", "b_V100_fp16.txt.gz", "c_V100_fp32.txt.gz"} {
		_, err := FindVectorSets(mk(t, missing))
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("missing %s: err = %v, want one naming the file", missing, err)
		}
	}
	// No d file at all.
	dir := mk(t, "")
	os.Remove(filepath.Join(dir, "V100", "fp16", "d_V100_fp16.txt.gz"))
	os.Remove(filepath.Join(dir, "V100", "fp16", "d_V100_fp32.txt.gz"))
	if _, err := FindVectorSets(dir); err == nil || !strings.Contains(err.Error(), "d_V100_") {
		t.Errorf("no d file: err = %v", err)
	}
	// Unknown GPU.
	dir = mk(t, "")
	os.Rename(filepath.Join(dir, "V100"), filepath.Join(dir, "X9"))
	if _, err := FindVectorSets(dir); err == nil || !strings.Contains(err.Error(), "X9") {
		t.Errorf("unknown GPU: err = %v", err)
	}
	// Corrupt file: Load reports file and line.
	dir = mk(t, "")
	os.WriteFile(filepath.Join(dir, "V100", "fp16", "a_V100_fp16.txt.gz"), []byte("not gzip"), 0o644)
	sets, err := FindVectorSets(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sets[0].Load(); err == nil || !strings.Contains(err.Error(), "a_V100_fp16") {
		t.Errorf("corrupt file: err = %v", err)
	}
	if _, err := FindVectorSets(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("missing folder: no error")
	}
}

func TestGPUModel(t *testing.T) {
	for gpu, want := range map[string]string{"V100": "v100", "A2": "a100", "L40S": "ada", "H200": "h100", "B200": "b200", "Ada": "ada"} {
		if got, ok := GPUModel(gpu); !ok || got != want {
			t.Errorf("GPUModel(%s) = %s, %v; want %s", gpu, got, ok, want)
		}
		if _, err := Preset(want); err != nil {
			t.Error(err)
		}
	}
}

// checkSet loads a recorded vector set and checks it against the preset it
// maps to.
func checkSet(t *testing.T, s VectorSet) CheckResult {
	t.Helper()
	m, err := Preset(s.Model)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Check(m, v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A GPU folder linked in is found (it was skipped: a check that passed
// having read half the sets), and a set without dot products is refused
// (an empty set "matched").
func TestVectorSetsLinksAndEmpty(t *testing.T) {
	src, err := filepath.Abs("../testdata/tc-vectors/A100")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(src, filepath.Join(dir, "A100")); err != nil {
		t.Skip("no symlinks:", err)
	}
	sets, err := FindVectorSets(dir)
	if err != nil || len(sets) == 0 {
		t.Fatalf("linked A100: %d sets, %v", len(sets), err)
	}
	empty := filepath.Join(t.TempDir(), "A100", "fp16")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a_A100_fp16", "b_A100_fp16", "c_A100_fp32", "d_A100_fp32"} {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Close()
		if err := os.WriteFile(filepath.Join(empty, n+".txt.gz"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sets, err = FindVectorSets(filepath.Dir(filepath.Dir(empty)))
	if err != nil || len(sets) != 1 {
		t.Fatalf("empty set: %d sets, %v", len(sets), err)
	}
	if _, err := sets[0].Load(); err == nil || !strings.Contains(err.Error(), "no dot products") {
		t.Errorf("empty set loaded: %v", err)
	}
}
