package hostmem

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// physical returns the host's physical memory (sysinfo(2)).
func physical() (int64, bool) {
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		return 0, false
	}
	b := uint64(info.Totalram) * uint64(max(info.Unit, 1))
	if b == 0 || b > 1<<62 {
		return 0, false
	}
	return int64(b), true
}

// cgroupLimit returns the memory limit of the process's control group:
// cgroup v2's memory.max, or v1's memory.limit_in_bytes, read at the
// usual mount point ("max", or v1's near-2^63 figure, is no limit).
func cgroupLimit() (int64, bool) {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, ok := parseLimit(f); ok {
			return b, true
		}
	}
	return 0, false
}

// parseLimit reads a cgroup limit file: a byte count below 2^62.
func parseLimit(file string) (int64, bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	return limitValue(string(data))
}

// limitValue parses a cgroup limit file's text.
func limitValue(text string) (int64, bool) {
	b, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil || b <= 0 || b >= 1<<62 {
		return 0, false
	}
	return b, true
}
