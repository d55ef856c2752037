package arch

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/isa"
)

// A released reader's buffers go back whole (a chunk buffer of chunkLen,
// a ring of aheadSlots chunks) and are handed to one reader at a time: two
// readers started after releases never share storage, and each reads its
// own stream whole.
func TestStreamReleaseReuse(t *testing.T) {
	for _, a := range []*Ahead{nil, NewAhead()} {
		const n = 1000
		var rs [4]StreamReader
		for i := range rs[:2] {
			rs[i].StartAhead(numbered(n), a)
			rs[i].Next()
		}
		for i := range rs[:2] {
			rs[i].Release()
			if rs[i].buf != nil || rs[i].ring != nil || rs[i].Next() != nil {
				t.Fatalf("read ahead %v: reader %d holds its buffers or reads after Release", a != nil, i)
			}
		}
		// The released reader 1 started again, beside two new ones.
		for _, i := range []int{1, 2, 3} {
			rs[i].StartAhead(numbered(n), a)
		}
		seen := map[*isa.Instr]int{}
		for _, i := range []int{1, 2, 3} {
			store := rs[i].buf[:cap(rs[i].buf)]
			if a != nil {
				store = rs[i].ring
				if len(store) != aheadSlots*chunkLen {
					t.Fatalf("read ahead: reader %d's ring holds %d instructions, want %d", i, len(store), aheadSlots*chunkLen)
				}
			} else if len(store) != chunkLen {
				t.Fatalf("reader %d's chunk buffer holds %d instructions, want %d", i, len(store), chunkLen)
			}
			if j, ok := seen[&store[0]]; ok {
				t.Fatalf("read ahead %v: readers %d and %d share storage", a != nil, j, i)
			}
			seen[&store[0]] = i
		}
		for _, i := range []int{1, 2, 3} {
			for k := range n {
				in := rs[i].Next()
				if in == nil || in.Line != k {
					t.Fatalf("read ahead %v: reader %d's instruction %d is %+v", a != nil, i, k, in)
				}
			}
			rs[i].Close()
		}
	}
}
