package mem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// advisedHuge reports whether the mapping holding address a carries the
// MADV_HUGEPAGE advice (the "hg" flag of its VmFlags in /proc/self/smaps).
func advisedHuge(t *testing.T, a uintptr) bool {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(l + " ")[0], "-"); ok && !strings.HasSuffix(lo, ":") {
			x, err1 := strconv.ParseUint(lo, 16, 64)
			y, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				in = uint64(a) >= x && uint64(a) < y
				continue
			}
		}
		if in && strings.HasPrefix(l, "VmFlags:") {
			return strings.Contains(" "+strings.TrimPrefix(l, "VmFlags:")+" ", " hg ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Skipf("no mapping of %#x in /proc/self/smaps", a)
	return false
}

// A directory's where index grown to a span of 64 MiB of sectors, and a
// large directory's sets, lie in memory advised for transparent huge
// pages (makeHuge). Whether the kernel then gives huge pages depends on
// the host (its THP setting, free 2 MiB pages): the advice is what the
// code controls, so that is what is checked.
func TestDirectoriesAdvisedHuge(t *testing.T) {
	c := NewL2(256<<20, 128, 1, 16)
	c.SpanIndex(8 << 30) // 64 Mi sectors of 128 bytes
	c.touch(1<<26-1, 1)
	if int64(len(c.where)) != 1<<26 {
		t.Fatalf("where index of %d entries, want %d", len(c.where), 1<<26)
	}
	for name, a := range map[string]uintptr{
		"where index": uintptr(unsafe.Pointer(&c.where[len(c.where)/2])),
		"sets":        uintptr(unsafe.Pointer(&c.set[len(c.set)/2])),
	} {
		if !advisedHuge(t, a) {
			t.Errorf("the %s's middle (%#x) lies in a mapping without the huge-page advice", name, a)
		}
	}
}
