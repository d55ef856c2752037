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

// An output file is readable as a new file usually is (0644; CreateTemp's
// 0600 made sweep results and run -o files private), or keeps the mode of
// the file it replaces.
func TestWriteMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "a"); return err }); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v (%v), want 0644", st.Mode().Perm(), err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "b"); return err }); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Fatalf("replaced file mode %v (%v), want 0640 kept", st.Mode().Perm(), err)
	}
}

// MoveIn moves a staged file over another, keeping the replaced file's
// mode (a new one gets 0644), as Write does.
func TestMoveInMode(t *testing.T) {
	dir := t.TempDir()
	staged := func(name string) string {
		p := filepath.Join(dir, "stage-"+name)
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kept, fresh := filepath.Join(dir, "kept.npy"), filepath.Join(dir, "fresh.npy")
	if err := os.WriteFile(kept, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		to   string
		want os.FileMode
	}{{kept, 0o640}, {fresh, 0o644}} {
		if err := MoveIn(staged(filepath.Base(c.to)), c.to); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(c.to)
		b, _ := os.ReadFile(c.to)
		if err != nil || st.Mode().Perm() != c.want || string(b) != filepath.Base(c.to) {
			t.Errorf("%s: mode %v, %q (%v); want %v and the staged bytes", c.to, st.Mode().Perm(), b, err, c.want)
		}
	}
}
