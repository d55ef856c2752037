package mem

import (
	"bytes"
	"os"
	"strconv"
	"testing"
)

// anonHugeKiB returns the process's anonymous huge-page memory in KiB
// (/proc/self/smaps_rollup).
func anonHugeKiB(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(l); len(f) >= 2 && string(f[0]) == "AnonHugePages:" {
			n, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no AnonHugePages in /proc/self/smaps_rollup")
	return 0
}

// A directory's where index, grown to a span of 64 MiB of sectors and
// written at random, is backed by huge pages where the kernel gives them
// on madvise.
func TestWhereIndexHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) && !bytes.Contains(mode, []byte("[always]")) {
		t.Skipf("transparent huge pages not on madvise: %q %v", mode, err)
	}
	before := anonHugeKiB(t)
	c := NewL2(4<<20, 128, 1, 16)
	c.SpanIndex(8 << 30) // 64 Mi sectors of 128 bytes
	for i := int64(0); i < 1<<16; i++ {
		sec := (i * 1_000_003) & (1<<26 - 1)
		c.touch(sec, 1)
	}
	if int64(len(c.where)) != 1<<26 {
		t.Fatalf("where index of %d entries, want %d", len(c.where), 1<<26)
	}
	after := anonHugeKiB(t)
	if after-before < 16<<10 {
		t.Errorf("AnonHugePages grew by %d KiB after writing a 64 MiB where index at random (want at least 16 MiB: adviseHuge)", after-before)
	}
}
