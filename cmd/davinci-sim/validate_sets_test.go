package main

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gzLines returns the lines of a gzip-compressed vector file.
func gzLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(z)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// A format folder without its FP32 d file exits 2 with one line naming
// it: the set was dropped, and the check passed on the FP16 set ("all 5000
// dot products of 1 file sets match bit for bit", exit 0).
func TestValidateNumericsMissingResultFile(t *testing.T) {
	dir := copyVectors(t, "A100")
	missing := filepath.Join(dir, "A100", "fp16", "d_A100_fp32.txt.gz")
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	out, errs, code := execNumerics(t, "--vectors", dir)
	want := "numerics: missing file " + missing + " (a format folder holds a_A100_fp16, b_A100_fp16, c_A100_fp32 and d_A100_fp32; d_A100_fp16 is optional)"
	if code != 2 || strings.TrimSpace(errs) != want || out != "" {
		t.Errorf("exit %d, stderr %q, stdout %q; want 2, %q", code, errs, out, want)
	}
}

// A d file with more dot products than its a file exits 2 as one with
// fewer does, naming both files and both counts.
func TestValidateNumericsResultLength(t *testing.T) {
	dir := copyVectors(t, "A100")
	fdir := filepath.Join(dir, "A100", "fp16")
	d := filepath.Join(fdir, "d_A100_fp32.txt.gz")
	a := filepath.Join(fdir, "a_A100_fp16.txt.gz")
	whole, err := os.ReadFile(d)
	if err != nil {
		t.Fatal(err)
	}
	lines := gzLines(t, d)
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{append(append([]string{}, lines...), lines[:3]...), d + " has 5003 lines, " + a + " has 5000"},
		{lines[:4000], d + " has 4000 lines, " + a + " has 5000"},
	} {
		writeGz(t, d, strings.Join(tc.lines, "\n")+"\n")
		out, errs, code := execNumerics(t, "--vectors", dir)
		if want := "numerics: " + tc.want; code != 2 || strings.TrimSpace(errs) != want || out != "" {
			t.Errorf("d file of %d lines: exit %d, stderr %q, stdout %q; want 2, %q", len(tc.lines), code, errs, out, want)
		}
	}
	if err := os.WriteFile(d, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := execNumerics(t, "--vectors", dir); code != 0 {
		t.Errorf("restored: exit %d, %q", code, errs)
	}
}
