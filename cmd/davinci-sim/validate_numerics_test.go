package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/cube"
)

// execNumerics runs `validate numerics` with args and returns stdout,
// stderr and the exit code main would use.
func execNumerics(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(append([]string{"validate", "numerics"}, args...))
	err := root.Execute()
	code := exitCode(err)
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

// copyVectors copies the named GPU folders of the shipped vectors
// (testdata/tc-vectors) into a temporary vector folder.
func copyVectors(t *testing.T, gpus ...string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "tc-vectors")
	dst := t.TempDir()
	for _, g := range gpus {
		err := filepath.WalkDir(filepath.Join(src, g), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestValidateNumericsJSON(t *testing.T) {
	dir := copyVectors(t, "V100", "A2", "L40S")
	out, errs, code := execNumerics(t, "--vectors", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	// V100: fp16→fp32, fp16→fp16; A2: fp16×2, bf16, tf32; L40S: fp16×2, bf16, tf32, e4m3, e5m2.
	if len(rows) != 12 {
		t.Fatalf("%d rows, want 12:\n%s", len(rows), out)
	}
	for _, r := range rows {
		for _, k := range []string{"gpu", "input", "output", "checked", "mismatches"} {
			if _, ok := r[k]; !ok {
				t.Errorf("row %v lacks key %q", r, k)
			}
		}
		if r["checked"].(float64) != 5000 || r["mismatches"].(float64) != 0 {
			t.Errorf("row %v: want 5000 checked, 0 mismatches", r)
		}
	}
	// Text form.
	out, _, code = execNumerics(t, "--vectors", dir)
	if code != 0 || !strings.Contains(out, "L40S") || !strings.Contains(out, "match bit for bit") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
}

func TestValidateNumericsExitCodes(t *testing.T) {
	// A mismatch exits 1: corrupt one result bit pattern.
	dir := copyVectors(t, "V100")
	d := filepath.Join(dir, "V100", "fp16", "d_V100_fp32.txt.gz")
	writeGz(t, d, strings.Repeat("0", 31)+"1\n")
	os.WriteFile(filepath.Join(dir, "V100", "fp16", "a_V100_fp16.txt.gz"), gz(t, "3c000000 00000000 00000000 00000000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "V100", "fp16", "b_V100_fp16.txt.gz"), gz(t, "3c000000 00000000 00000000 00000000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "V100", "fp16", "c_V100_fp32.txt.gz"), gz(t, strings.Repeat("0", 32)+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "V100", "fp16", "d_V100_fp16.txt.gz"), gz(t, "00111110000000000000000000000000\n"), 0o644)
	_, errs, code := execNumerics(t, "--vectors", dir)
	if code != 1 || !strings.Contains(errs, "mismatch") {
		t.Errorf("mismatch: exit %d, %q", code, errs)
	}

	// A missing file exits 2 with one line naming it.
	dir = copyVectors(t, "A100")
	missing := filepath.Join(dir, "A100", "bf16", "b_A100_bf16.txt.gz")
	os.Remove(missing)
	_, errs, code = execNumerics(t, "--vectors", dir, "--json")
	if code != 2 || !strings.Contains(errs, missing) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("missing file: exit %d, %q", code, errs)
	}
	// An unreadable (corrupt) file exits 2 naming it.
	dir = copyVectors(t, "A100")
	bad := filepath.Join(dir, "A100", "tf32", "a_A100_tf32.txt.gz")
	os.WriteFile(bad, []byte("garbage"), 0o644)
	_, errs, code = execNumerics(t, "--vectors", dir)
	if code != 2 || !strings.Contains(errs, bad) {
		t.Errorf("corrupt file: exit %d, %q", code, errs)
	}
	// A missing folder exits 2.
	_, errs, code = execNumerics(t, "--vectors", filepath.Join(dir, "nope"))
	if code != 2 || !strings.Contains(errs, "not found") {
		t.Errorf("missing folder: exit %d, %q", code, errs)
	}
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func writeGz(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, gz(t, s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A plain clone is enough: the default vector folder is the one shipped in
// the repository, with its licence, found also from a subdirectory.
func TestValidateNumericsDefaultShipped(t *testing.T) {
	dir, _, err := resolveVectorsDir(defaultVectorsDir, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "LICENCE")); err != nil {
		t.Errorf("the shipped vectors have no licence: %v", err)
	}
	sets, err := cube.FindVectorSets(dir)
	if err != nil || len(sets) != 48 {
		t.Errorf("%s: %d sets, %v; want 48", dir, len(sets), err)
	}
}

// A binary built elsewhere (go build -o /some/dir), run from a directory
// outside the repository, finds the shipped vectors through the source
// tree its build recorded (it reported "vector folder … not found").
func TestValidateNumericsFoundFromElsewhere(t *testing.T) {
	if sourceDir() == "" {
		t.Skip("built with -trimpath: no source tree recorded")
	}
	t.Chdir(t.TempDir()) // (the test binary itself lives in a temporary directory)
	dir, note, err := resolveVectorsDir(defaultVectorsDir, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "relative to the repository") {
		t.Errorf("note %q does not say where the folder was found", note)
	}
	if _, err := os.Stat(filepath.Join(dir, "LICENCE")); err != nil {
		t.Errorf("%s: %v", dir, err)
	}
}

// A vector file cut short is reported as such wherever the cut falls, in
// the header, the compressed data or the trailer: the partial last line
// was parsed first and reported as whatever it lacked (":320: want a
// 32-character binary pattern", "c03c is not exact in fp16"), and only
// some cuts as an unexpected EOF. An empty file is not a gzip stream.
func TestValidateNumericsTruncatedGzip(t *testing.T) {
	dir := copyVectors(t, "A2")
	for _, name := range []string{"c_A2_fp32.txt.gz", "a_A2_fp16.txt.gz", "d_A2_fp16.txt.gz"} {
		path := filepath.Join(dir, "A2", "fp16", name)
		whole, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cuts := []int{0, 1, 5, 9, 10, 11, 20, len(whole) - 8, len(whole) - 4, len(whole) - 1}
		for k := 1; k < 60; k++ {
			cuts = append(cuts, k*len(whole)/60)
		}
		for _, n := range cuts {
			if err := os.WriteFile(path, whole[:n], 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := runNumerics(dir)
			want := path + ": truncated or corrupt gzip stream: unexpected EOF"
			if n == 0 {
				want = path + ": empty file, not a gzip stream"
			}
			if err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("%s cut to %d of %d bytes: %v, want %q", name, n, len(whole), err, want)
			}
		}
		// A corrupt byte is reported as corrupt.
		bad := bytes.Clone(whole)
		bad[len(bad)/2] ^= 0xff
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := runNumerics(dir); err == nil || !strings.Contains(err.Error(), path+": truncated or corrupt gzip stream: ") {
			t.Errorf("%s with a corrupt byte: %v", name, err)
		}
		if err := os.WriteFile(path, whole, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The command exits 2 with that one line.
	path := filepath.Join(dir, "A2", "fp16", "c_A2_fp32.txt.gz")
	whole, _ := os.ReadFile(path)
	if err := os.WriteFile(path, whole[:2000], 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := execNumerics(t, "--vectors", dir)
	if want := "numerics: " + path + ": truncated or corrupt gzip stream: unexpected EOF"; code != 2 || strings.TrimSpace(errs) != want {
		t.Errorf("exit %d, %q; want 2, %q", code, errs, want)
	}
}

// A vector file of a line longer than the reader takes is refused as that
// line, not as a corrupt gzip stream (it is a well-formed one: before, the
// scanner's "token too long" was reported as the stream's break).
func TestValidateNumericsLongLine(t *testing.T) {
	dir := copyVectors(t, "A2")
	for _, name := range []string{"a_A2_fp16.txt.gz", "c_A2_fp32.txt.gz"} {
		path := filepath.Join(dir, "A2", "fp16", name)
		whole, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gzip.NewReader(bytes.NewReader(whole))
		if err != nil {
			t.Fatal(err)
		}
		first, err := bufio.NewReader(r).ReadBytes('\n') // (a good line first)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		z := gzip.NewWriter(&buf)
		z.Write(first)
		z.Write(bytes.Repeat([]byte("3"), 2<<20))
		z.Close()
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = runNumerics(dir)
		if want := path + ":2: line longer than 1048576 bytes"; err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
		if err := os.WriteFile(path, whole, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
