package outfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file written to a symbolic link is written through it — the link
// stays and its destination gets the bytes, also where the destination
// does not exist yet; a destination that is not a regular file (here a
// directory; a device such as /dev/full alike) is refused and left as it
// was, directly or through links.
func TestWriteThroughLinks(t *testing.T) {
	dir := t.TempDir()
	put := func(path, s string) error {
		return Write(path, func(w io.Writer) error { _, err := io.WriteString(w, s); return err })
	}
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	// A link to a file that does not exist yet, relative, through a
	// second link.
	if err := os.Symlink("other/t.json", filepath.Join(dir, "l1.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("l1.json", filepath.Join(dir, "l2.json")); err != nil {
		t.Fatal(err)
	}
	for i, s := range []string{"first", "second"} {
		if err := put(filepath.Join(dir, "l2.json"), s); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if b, err := os.ReadFile(filepath.Join(other, "t.json")); err != nil || string(b) != s {
			t.Fatalf("write %d: the link's destination holds %q, %v; want %q", i, b, err, s)
		}
		for _, l := range []string{"l1.json", "l2.json"} {
			if st, err := os.Lstat(filepath.Join(dir, l)); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("write %d: %s is no longer a link (%v)", i, l, err)
			}
		}
	}
	// Create (a profile's Pending) alike.
	p, err := Create(filepath.Join(dir, "l2.json"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(p, "third")
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "t.json")); string(b) != "third" {
		t.Errorf("Create through links: %q", b)
	}
	// Not regular files: refused, directly or through a link.
	if err := os.Symlink("other", filepath.Join(dir, "ld.json")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{other, "not a regular file"},
		{filepath.Join(dir, "ld.json"), "which is not a regular file"},
	} {
		if err := put(c.path, "x"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("write to %s: %v, want an error saying %q", c.path, err, c.want)
		}
		if _, err := Create(c.path); err == nil {
			t.Errorf("Create %s: no error", c.path)
		}
	}
	if st, err := os.Stat(other); err != nil || !st.IsDir() {
		t.Errorf("the refused destination changed: %v", err)
	}
	// A loop of links.
	os.Symlink("loop2", filepath.Join(dir, "loop1"))
	os.Symlink("loop1", filepath.Join(dir, "loop2"))
	if err := put(filepath.Join(dir, "loop1"), "x"); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("a loop of links: %v", err)
	}
}

// A relative link's ".." is taken from the link's real directory, as the
// kernel takes it, not textually: a -> real/sub, a/out.json -> ../dest.json
// lands in real/dest.json (it went to ./dest.json).
func TestTargetDotDotThroughLinkedDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("real", "sub"), filepath.Join(dir, "a")); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink(filepath.Join("..", "dest.json"), filepath.Join(dir, "real", "sub", "out.json")); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "a", "out.json"), func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "real", "dest.json")); err != nil || string(b) != "x" {
		t.Errorf("real/dest.json: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dest.json")); err == nil {
		t.Errorf("written to dest.json beside a, not where the link leads")
	}
}
