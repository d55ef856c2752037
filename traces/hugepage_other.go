//go:build !linux

package traces

import "unsafe"

// adviseHuge does nothing outside Linux (see hugepage_linux.go).
func adviseHuge(p unsafe.Pointer, n uintptr) bool { return false }
