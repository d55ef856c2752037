package hostmem

import "golang.org/x/sys/unix"

// physical returns the host's physical memory (sysctl hw.memsize).
func physical() (int64, bool) {
	b, err := unix.SysctlUint64("hw.memsize")
	if err != nil || b == 0 || b > 1<<62 {
		return 0, false
	}
	return int64(b), true
}

// cgroupLimit: macOS has no control groups.
func cgroupLimit() (int64, bool) { return 0, false }
