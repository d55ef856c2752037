//go:build unix

package programs

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A named pipe given as a .npy input is refused at once (opening it waits
// for a writer: for ever).
func TestNPYFIFORefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npy")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := CheckNPYFloat32(path); done <- err }()
	select {
	case err := <-done:
		if want := path + " is a named pipe (FIFO), not a .npy file"; err == nil || err.Error() != want {
			t.Errorf("%v, want %q", err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO hangs")
	}
}
