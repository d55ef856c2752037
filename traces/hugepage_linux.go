package traces

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks the kernel to back the 2 MiB-aligned part of the n bytes
// at p — a fresh pointer-free allocation not yet touched — with
// transparent huge pages, so that filling it takes one page fault per
// 2 MiB instead of one per 4 KiB. It is a hint: where THP is off (or no
// huge page is free) nothing changes. It returns whether the kernel took
// the hint.
func adviseHuge(p unsafe.Pointer, n uintptr) bool {
	a := uintptr(p)
	start := (a + hugePage - 1) &^ (hugePage - 1)
	end := (a + n) &^ (hugePage - 1)
	if end <= start {
		return false
	}
	return unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, start-a)), end-start), unix.MADV_HUGEPAGE) == nil
}
