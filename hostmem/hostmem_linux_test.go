package hostmem

import "testing"

// TestTotalLinux: the host's memory is read, and agrees with /proc/meminfo's
// MemTotal where no smaller cgroup limit applies.
func TestTotalLinux(t *testing.T) {
	b, ok := Total()
	if !ok || b < 64<<20 {
		t.Fatalf("Total() = %d, %v; want the host's memory", b, ok)
	}
	phys, ok := physical()
	if !ok {
		t.Fatal("physical memory not read")
	}
	if b > phys {
		t.Errorf("Total %d above the physical memory %d", b, phys)
	}
}

// TestLimitValue: cgroup limit files' forms.
func TestLimitValue(t *testing.T) {
	for _, c := range []struct {
		text string
		want int64
		ok   bool
	}{
		{"max\n", 0, false},
		{"9223372036854771712\n", 0, false}, // cgroup v1's "no limit"
		{"4294967296\n", 4 << 30, true},
		{"0\n", 0, false},
		{"", 0, false},
		{"-1", 0, false},
	} {
		got, ok := limitValue(c.text)
		if got != c.want || ok != c.ok {
			t.Errorf("limitValue(%q) = %d, %v; want %d, %v", c.text, got, ok, c.want, c.ok)
		}
	}
}

// groupLimit takes the smallest limit over the process's group and those
// above it, v2 and v1 alike, and none where no file gives one.
func TestGroupLimit(t *testing.T) {
	files := map[string]string{
		"/sys/fs/cgroup/job/memory.max":                        "4294967296",
		"/sys/fs/cgroup/job/step/memory.max":                   "max",
		"/sys/fs/cgroup/memory.max":                            "max",
		"/sys/fs/cgroup/memory/slurm/memory.limit_in_bytes":    "9223372036854771712",
		"/sys/fs/cgroup/memory/slurm/u1/memory.limit_in_bytes": "2147483648",
	}
	read := func(file string) (int64, bool) {
		text, ok := files[file]
		if !ok {
			return 0, false
		}
		return limitValue(text)
	}
	for _, c := range []struct {
		own  string
		want int64
		ok   bool
	}{
		{"0::/job/step\n", 4 << 30, true},
		{"4:memory:/slurm/u1\n0::/\n", 2 << 30, true},
		{"5:cpu,memory:/slurm/u1\n0::/job/step\n", 2 << 30, true},
		{"0::/\n", 0, false},
		{"", 0, false},
		{"0::/../../etc\n", 0, false},
	} {
		got, ok := groupLimit(c.own, read)
		if got != c.want || ok != c.ok {
			t.Errorf("groupLimit(%q) = %d, %v; want %d, %v", c.own, got, ok, c.want, c.ok)
		}
	}
}
