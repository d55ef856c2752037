package cube

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFormatDir copies the shipped vectors' <gpu>/<format> folder into a
// temporary vector folder and returns that folder.
func copyFormatDir(t *testing.T, gpu, format string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(vectorsDir, gpu, format)
	dst := filepath.Join(dir, gpu, format)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A format folder without one of the files of its FP32 set is refused,
// naming the file: without the FP32 d file the set was dropped, and the
// check passed on the FP16 set alone. Without the FP16 d file the folder
// has the FP32 set only.
func TestVectorSetMissingFile(t *testing.T) {
	for _, name := range []string{"a_A100_fp16.txt.gz", "b_A100_fp16.txt.gz", "c_A100_fp32.txt.gz", "d_A100_fp32.txt.gz"} {
		dir := copyFormatDir(t, "A100", "fp16")
		path := filepath.Join(dir, "A100", "fp16", name)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		sets, err := FindVectorSets(dir)
		want := "cube: vectors: missing file " + path + " (a format folder holds a_A100_fp16, b_A100_fp16, c_A100_fp32 and d_A100_fp32; d_A100_fp16 is optional)"
		if err == nil || err.Error() != want {
			t.Errorf("without %s: %d sets, %v; want %q", name, len(sets), err, want)
		}
	}
	dir := copyFormatDir(t, "A100", "fp16")
	if err := os.Remove(filepath.Join(dir, "A100", "fp16", "d_A100_fp16.txt.gz")); err != nil {
		t.Fatal(err)
	}
	sets, err := FindVectorSets(dir)
	if err != nil || len(sets) != 1 || sets[0].Output.String() != "fp32" {
		t.Errorf("without the FP16 d file: %v, %v; want the FP32 set alone", sets, err)
	}
	// A Hopper FP8 folder, whose FP32 set ignores the c file, needs its
	// FP32 d file as well.
	dir = copyFormatDir(t, "H100", "E4M3")
	path := filepath.Join(dir, "H100", "E4M3", "d_H100_fp32.txt.gz")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if sets, err := FindVectorSets(dir); err == nil || !strings.Contains(err.Error(), "missing file "+path+" ") {
		t.Errorf("H100 E4M3 without its FP32 d file: %d sets, %v", len(sets), err)
	}
}

// writeVectorGz writes lines, gzip-compressed, to path.
func writeVectorGz(t *testing.T, path string, lines []string) {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	for _, l := range lines {
		fmt.Fprintln(z, l)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every file of a set with more dot products than its a file, as well as
// fewer, is refused, naming both files and both counts (a longer file's
// extra lines must not be ignored).
func TestVectorSetLengthMismatch(t *testing.T) {
	const n = 3
	rows := func(k int, line string) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = line
		}
		return out
	}
	hex := "3c000000 00000000 00000000 00000000" // (1/128 in FP32, exact in FP16)
	bin := strings.Repeat("0", 32)
	files := map[string]string{"a": hex, "b": hex, "c": bin, "d": bin}
	names := map[string]string{"a": "a_V100_fp16", "b": "b_V100_fp16", "c": "c_V100_fp32", "d": "d_V100_fp32"}
	for _, f := range []string{"a", "b", "c", "d"} {
		for _, k := range []int{n - 1, n + 1, n + 1000} {
			dir := t.TempDir()
			fdir := filepath.Join(dir, "V100", "fp16")
			if err := os.MkdirAll(fdir, 0o755); err != nil {
				t.Fatal(err)
			}
			for g, line := range files {
				m := n
				if g == f {
					m = k
				}
				writeVectorGz(t, filepath.Join(fdir, names[g]+".txt.gz"), rows(m, line))
			}
			sets, err := FindVectorSets(dir)
			if err != nil || len(sets) != 1 {
				t.Fatalf("%d sets, %v", len(sets), err)
			}
			path := func(g string) string { return filepath.Join(fdir, names[g]+".txt.gz") }
			want := fmt.Sprintf("cube: vectors: %s has %d lines, %s has %d", path(f), k, path("a"), n)
			if f == "a" {
				want = fmt.Sprintf("cube: vectors: %s has %d lines, %s has %d", path("b"), n, path("a"), k)
			}
			if _, err := sets[0].Load(); err == nil || err.Error() != want {
				t.Errorf("%s file of %d lines for %d: %v; want %q", f, k, n, err, want)
			}
		}
	}
}
