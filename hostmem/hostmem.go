// Package hostmem tells how much memory the host running the simulator
// has: the bound a run's (and a sweep's) estimated host memory is checked
// against before anything large is allocated, so that a run too large for
// the machine is refused with one line instead of dying out of memory.
package hostmem

import "sync"

// Total returns the memory this process may use, in bytes: the host's
// physical memory, or the memory limit of the control group it runs in
// (Linux containers) where that is smaller; false where neither can be
// read (then callers fall back to a fixed bound).
func Total() (int64, bool) {
	return total()
}

var total = sync.OnceValues(func() (int64, bool) {
	phys, ok := physical()
	if limit, lok := cgroupLimit(); lok && (!ok || limit < phys) {
		return limit, true
	}
	return phys, ok
})
