//go:build !linux && !darwin

package hostmem

// physical: not read on this platform (callers fall back to a fixed
// bound).
func physical() (int64, bool) { return 0, false }

// cgroupLimit: none on this platform.
func cgroupLimit() (int64, bool) { return 0, false }
