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
