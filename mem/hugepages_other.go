//go:build !linux

package mem

// makeHuge returns a zeroed slice of n Ts: where transparent huge pages
// are not asked for by madvise, a plain one (see hugepages_linux.go).
func makeHuge[T any](n int64) []T { return make([]T, n) }
