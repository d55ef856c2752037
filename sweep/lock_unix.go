//go:build unix

package sweep

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir locks the directory itself (flock on its descriptor) without
// waiting: errLocked when another process holds it.
func lockDir(dir string) (release func(), err error) {
	fh, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(fh.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		fh.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return func() {
		unix.Flock(int(fh.Fd()), unix.LOCK_UN)
		fh.Close()
	}, nil
}
