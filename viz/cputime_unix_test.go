//go:build unix

package viz

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time of the whole process (all threads: the
// engine, the recorder's consumer, the viewer, the garbage collector).
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
