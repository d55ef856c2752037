//go:build windows

package sweep

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lockDir locks a file in the directory (a directory cannot be locked
// here) without waiting — errLocked when another process holds it — and
// removes the file on release.
func lockDir(dir string) (release func(), err error) {
	path := filepath.Join(dir, ".sweep.lock")
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	var ol windows.Overlapped
	if err := windows.LockFileEx(windows.Handle(fh.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol); err != nil {
		fh.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, errLocked
		}
		return nil, err
	}
	return func() {
		var ol windows.Overlapped
		windows.UnlockFileEx(windows.Handle(fh.Fd()), 0, 1, 0, &ol)
		fh.Close()
		os.Remove(path)
	}, nil
}
