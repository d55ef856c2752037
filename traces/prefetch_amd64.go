package traces

import "unsafe"

// prefetch asks the CPU to bring the cache line at p into its caches
// without waiting for it (PREFETCHT0; a hint, never a fault).
//
//go:noescape
func prefetch(p unsafe.Pointer)
