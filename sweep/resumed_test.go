package sweep

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadResumedStill: the records finished read stand for the file only
// while it is the same file, unchanged (size, modification time).
func TestReadResumedStill(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ResultsJSONL)
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &readResumed{recs: []Record{{Index: 3}}, file: fi}
	if recs, _, ok := r.still(path); !ok || len(recs) != 1 {
		t.Fatal("the same file: not taken")
	}
	if _, _, ok := (*readResumed)(nil).still(path); ok {
		t.Fatal("nothing read before: taken")
	}
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write([]byte("{}\n")) // a record appended since
	fh.Close()
	if _, _, ok := r.still(path); ok {
		t.Fatal("a file appended to since: taken")
	}
	// Replaced by another file of the same size and time.
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := r.still(path); ok {
		t.Fatal("another file in its place: taken")
	}
}
