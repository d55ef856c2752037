//go:build !amd64

package traces

import "unsafe"

// prefetch does nothing outside amd64 (see prefetch_amd64.go).
func prefetch(p unsafe.Pointer) {}
