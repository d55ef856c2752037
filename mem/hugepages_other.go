//go:build !linux

package mem

import "unsafe"

// adviseHuge does nothing where transparent huge pages are not asked for
// by madvise (see hugepages_linux.go).
func adviseHuge(p unsafe.Pointer, n uintptr) {}
