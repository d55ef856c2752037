package hostmem

import (
	"os"
	"path/filepath"
	"slices"
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
// the smallest of cgroup v2's memory.max, or v1's memory.limit_in_bytes,
// over its group (/proc/self/cgroup) and the groups above it up to the
// usual mount point ("max", or v1's near-2^63 figure, is no limit).
func cgroupLimit() (int64, bool) {
	own, _ := os.ReadFile("/proc/self/cgroup")
	return groupLimit(string(own), parseLimit)
}

// groupLimit is cgroupLimit on the text of /proc/self/cgroup, reading a
// limit file with read.
func groupLimit(own string, read func(file string) (int64, bool)) (int64, bool) {
	var best int64
	found := false
	take := func(root, group, file string) { // group's directory under root, then each above it
		for d := filepath.Clean("/" + group); ; d = filepath.Dir(d) {
			if b, ok := read(filepath.Join(root, d, file)); ok && (!found || b < best) {
				best, found = b, true
			}
			if d == "/" {
				return
			}
		}
	}
	v2, v1 := "/", "/"
	for _, line := range strings.Split(own, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			v1 = parts[2]
		}
	}
	take("/sys/fs/cgroup", v2, "memory.max")
	take("/sys/fs/cgroup/memory", v1, "memory.limit_in_bytes")
	return best, found
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
