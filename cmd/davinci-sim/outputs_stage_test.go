package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/report"
)

// outRun is a run's outputs of n×n arrays named names, its report naming n.
func outRun(n int, names ...string) (*report.Report, []programs.Output) {
	rep := &report.Report{Machine: "m", Program: report.Program{"kind": "gemm", "m": n}, Overrides: []string{}}
	var outs []programs.Output
	for _, name := range names {
		outs = append(outs, programs.Output{Name: name, Shape: []int{n, n}, F32: make([]float32, n*n)})
	}
	return rep, outs
}

// dirFiles returns dir's entries and their bytes.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			files[e.Name()+"/"] = ""
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// A write that fails partway (no space left for the third array) leaves
// the previous run's outputs as they were: the old order wrote C.npy over
// the old one and failed before report.json, leaving a 200×200 C beside
// the previous 64×64 A, B and report.json.
func TestOutDirFailedWriteLeavesPreviousRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	rep, outs := outRun(4, "A", "B", "C")
	if err := writeOutDir(dir, rep, outs); err != nil {
		t.Fatal(err)
	}
	before := dirFiles(t, dir)
	if len(before) != 4 {
		t.Fatalf("first run wrote %v", slices.Sorted(mapKeys(before)))
	}

	defer func(w func(string, []programs.Output) ([]string, error)) { writeOutputs = w }(writeOutputs)
	writeOutputs = func(d string, outs []programs.Output) ([]string, error) {
		// C first, then the disk is full.
		names, err := programs.WriteOutputs(d, outs[2:])
		if err != nil {
			return names, err
		}
		return names, fmt.Errorf("%s: %w", filepath.Join(d, "A.npy"), syscall.ENOSPC)
	}
	rep2, outs2 := outRun(8, "A", "B", "C")
	err := writeOutDir(dir, rep2, outs2)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	if strings.Contains(err.Error(), stagingPrefix) || !strings.Contains(err.Error(), filepath.Join(dir, "A.npy")) {
		t.Errorf("err = %v: should name %s, not the staging directory", err, filepath.Join(dir, "A.npy"))
	}
	after := dirFiles(t, dir)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s changed by the failed run", name)
		}
	}
	if len(after) != len(before) {
		t.Errorf("after the failed run: %v, want %v", slices.Sorted(mapKeys(after)), slices.Sorted(mapKeys(before)))
	}
}

// A successful run replaces the arrays, removes the previous run's arrays
// it does not write, and a staging directory a killed run left (which
// checkOutDir accepts); the files keep the mode of those they replace.
func TestOutDirReplacesPreviousRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	rep, outs := outRun(4, "A", "B", "C")
	if err := writeOutDir(dir, rep, outs); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "C.npy"), 0o600); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(dir, stagingPrefix+"123")
	if err := os.Mkdir(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "C.npy"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkOutDir(dir); err != nil {
		t.Fatalf("a killed run's staging directory refused: %v", err)
	}
	rep2, outs2 := outRun(8, "C")
	if err := writeOutDir(dir, rep2, outs2); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(mapKeys(dirFiles(t, dir)))
	if want := []string{"C.npy", "report.json"}; !slices.Equal(got, want) {
		t.Errorf("after the second run: %v, want %v", got, want)
	}
	if st, err := os.Stat(filepath.Join(dir, "C.npy")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("C.npy: %v %v, want mode 0600 kept", st.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "report.json")); !strings.Contains(string(b), `"m": 8`) {
		t.Errorf("report.json is not the second run's:\n%s", b)
	}
	// Empty but for a leftover: accepted too.
	empty := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(filepath.Join(empty, stagingPrefix+"9"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := checkOutDir(empty); err != nil {
		t.Errorf("a directory holding only a staging directory refused: %v", err)
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
