package traces

import (
	"testing"
	"unsafe"
)

// newChunk hands out distinct chunks from slabs growing 32, 64, … up to
// slabMax chunks, and every chunk starts empty.
func TestNewChunkSlabs(t *testing.T) {
	var tl Timeline
	seen := map[*[laneChunk]slot]bool{}
	const n = 3000
	for i := range n {
		c := tl.newChunk()
		if seen[c] {
			t.Fatalf("chunk %d handed out twice", i)
		}
		seen[c] = true
		if c[0] != (slot{}) || c[laneChunk-1] != (slot{}) {
			t.Fatalf("chunk %d is not empty", i)
		}
		c[0].off, c[laneChunk-1].off = 1, 1 // overlapping chunks would show up as non-empty ones
		// The big slabs (from chunk 992 on) start on a huge-page boundary.
		if (i == 992 || i == 992+slabMax) && hugeSkip(unsafe.Pointer(c)) != 0 {
			t.Errorf("slab at chunk %d is not huge-page aligned (%p)", i, c)
		}
	}
	// 32+64+128+256+512 = 992 chunks, then slabs of 1024: 3000 needs 2 more.
	if tl.slabs != 7 {
		t.Errorf("%d slabs for %d chunks, want 7", tl.slabs, n)
	}
}

// adviseHuge only advises whole, aligned 2 MiB pages: none in a buffer
// smaller than one.
func TestAdviseHugeAlignment(t *testing.T) {
	b := make([]byte, 2<<20-1)
	if adviseHuge(unsafe.Pointer(&b[0]), uintptr(len(b))) {
		t.Error("adviseHuge advised a buffer smaller than a huge page")
	}
}

// Slabs double from slabMin up to slabMax and stay there however many a
// long run allocates (a shift that grew with the count overflowed after 59
// slabs — a 16384³ live view).
func TestSlabLen(t *testing.T) {
	want := slabMin
	for i := range 200 {
		if got := slabLen(i); got != want {
			t.Fatalf("slab %d: %d chunks, want %d", i, got, want)
		}
		want = min(2*want, slabMax)
	}
}
