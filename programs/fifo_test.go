//go:build unix

package programs

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe given as an assembly file or a .npy input is refused at
// once, as such (opening it waits for a writer: for ever).
func TestFIFOInputsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		read func(path string) error
		want string // the error's end, after the path
	}{
		{"a.s", func(path string) error {
			_, err := Execute(programText(t, "kind: asm\nnumerics: off\nfile: "+path+"\n"), Options{}, RunHooks{})
			return err
		}, " is a named pipe (FIFO), not an assembly file"},
		{"a.npy", func(path string) error { _, _, err := CheckNPYFloat32(path); return err }, " is a named pipe (FIFO), not a .npy file"},
	} {
		path := filepath.Join(t.TempDir(), c.name)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skip(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.read(path) }()
		select {
		case err := <-done:
			if want := path + c.want; err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("%v, want %q", err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("reading a FIFO as %s hangs", c.name)
		}
	}
}
