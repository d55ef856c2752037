//go:build unix

package cube

import "syscall"

// cpuSeconds returns the process's user+system CPU time (0 if unavailable).
// The benchmarks report MAC per CPU second next to MAC per wall second, so
// that figures stay comparable on a loaded machine.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
