package traces

import "unsafe"

// hugePage is the size of a transparent huge page on the platforms Go runs
// Linux on (x86-64, and arm64 with 4 KiB base pages); slabs are aligned to
// it everywhere (see adviseHuge).
const hugePage = 2 << 20

// hugeSkip returns the number of bytes from p to the next huge-page
// boundary (0 if p is on one).
func hugeSkip(p unsafe.Pointer) int {
	return int((hugePage - uintptr(p)%hugePage) % hugePage)
}
