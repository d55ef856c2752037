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

// heapReserve is what a process of the simulator holds resident outside
// the Go runtime's soft memory limit, or past it: the executable's pages
// read from its file (RssFile, 17 MiB of this binary's 31 MB while it
// runs), which the limit does not count, and the collector's overshoot of
// the limit where the live heap nears it (up to 13 MiB measured).
// Measured 2026-12-04 on a trace held to its cap (hgemm 8192³ numerics
// off, --trace, `/usr/bin/time -v`): with the limit at --max-memory the
// run peaked at 162–180 MiB under 150MiB and 262–264 MiB under 250MiB;
// with it 32 MiB lower, at 134–137 and 230–231 MiB.
const heapReserve = 32 << 20

// HeapLimit returns the Go runtime's soft memory limit
// (runtime/debug.SetMemoryLimit) under which a process of the simulator
// stays within bound bytes of resident memory (peak RSS): bound less what
// the process holds outside the limit or past it (32 MiB), and at least
// half the bound (a bound of a few tens of MiB refuses any run anyway).
// With the limit at the bound itself, a run whose live heap nears it —
// one whose trace fills what --max-memory leaves it — peaked 10–20 % above
// the bound.
func HeapLimit(bound int64) int64 {
	if bound <= 0 {
		return bound
	}
	return max(bound-heapReserve, bound/2)
}
