//go:build unix

package programs

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe given as an assembly file is refused at once, as such
// (opening it waits for a writer: for ever).
func TestAsmFileFIFORefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.s")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip(err)
	}
	f := programText(t, "kind: asm\nnumerics: off\nfile: "+path+"\n")
	done := make(chan error, 1)
	go func() {
		_, err := Execute(f, Options{}, RunHooks{})
		done <- err
	}()
	select {
	case err := <-done:
		if want := `key "file": assembly file: ` + path + ` is a named pipe (FIFO), not an assembly file`; err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%v, want %q", err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO hangs")
	}
}
