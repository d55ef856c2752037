package mem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on amd64 and arm64
// Linux (4 KiB base pages).
const hugePage = 2 << 20

// makeHuge returns a zeroed slice of n Ts, its whole huge pages asked
// for as transparent huge pages (adviseHuge): for the directories' sets
// and where index, made before anything touches them.
func makeHuge[T any](n int64) []T {
	s := make([]T, n)
	var zero T
	adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), uintptr(n)*unsafe.Sizeof(zero))
	return s
}

// adviseHuge asks the kernel to back the whole huge pages inside the n
// bytes at p with transparent huge pages (madvise MADV_HUGEPAGE, where
// /sys/kernel/mm/transparent_hugepage/enabled says "madvise", as on this
// project's VM: the Go runtime itself asks for none). The directories'
// sets and where index are tens of MiB read at random, a TLB miss a
// lookup in 4 KiB pages (BenchmarkL2GEMMWalk*: geomean −19 % with huge
// pages; MI300X ape-int16 8192³ timing-only ~8 % faster). Pages the
// kernel has already given stay small; a failure (no THP) changes
// nothing but speed.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	lo := (uintptr(p)+hugePage-1)&^(hugePage-1) - uintptr(p)
	hi := (uintptr(p)+n)&^(hugePage-1) - uintptr(p)
	if hi <= lo || hi > n {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, lo)), hi-lo), unix.MADV_HUGEPAGE)
}
