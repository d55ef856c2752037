package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A write that fails leaves the previous file and no temporary file; one
// that succeeds replaces it whole; the temporary name keeps the extension.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.json.gz")
	put := func(s string) error {
		return Write(path, func(w io.Writer) error { _, err := io.WriteString(w, s); return err })
	}
	if err := put("one"); err != nil {
		t.Fatal(err)
	}
	err := Write(path, func(w io.Writer) error { io.WriteString(w, "half"); return errors.New("disk full") })
	if err == nil {
		t.Fatal("a failed write reported success")
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	var ext string
	if err := WriteWith(path, func(tmp string) error {
		ext = filepath.Ext(tmp)
		return os.WriteFile(tmp, []byte("two"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" || ext != ".gz" {
		t.Errorf("file %q, temporary extension %q", b, ext)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := CheckDir(filepath.Join(dir, "no"), "-o x"); err == nil {
		t.Error("CheckDir of a missing directory")
	}
	if err := CheckDir(path, "-o x"); err == nil {
		t.Error("CheckDir of a file")
	}
	if err := CheckDir(dir, "-o x"); err != nil {
		t.Error(err)
	}
}
