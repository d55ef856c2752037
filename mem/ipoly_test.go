package mem

import (
	"math/bits"
	"slices"
	"testing"
)

// Every degree's polynomial is irreducible: no polynomial of degree 1 to
// d/2 divides it (trial division, independent of Ben-Or's test), and its
// table agrees with the remainder computed bit by bit.
func TestIrreducible(t *testing.T) {
	for d := uint(1); d <= maxPolyDegree; d++ {
		p := irreducible(d)
		if 63-bits.LeadingZeros64(p) != int(d) || p&1 == 0 {
			t.Fatalf("degree %d: %#x", d, p)
		}
		{ // trial division by every polynomial of degree 1 to d/2 (2^17 of them for d = 32: quick)
			for q := uint64(2); q < 1<<(d/2+1); q++ {
				if polyMod(p, q) == 0 {
					t.Fatalf("degree %d: %#x divisible by %#x", d, p, q)
				}
			}
		}
		tab := polyIndex(d)
		x := uint64(0x9E3779B97F4A7C15)
		for i := 0; i < 2000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			s := x >> (32 + i%32) // (sector numbers have 32 bits)
			if got, want := tab.index(s), polyMod(s, p); got != want {
				t.Fatalf("degree %d: %#x mod %#x = %#x, table %#x", d, s, p, want, got)
			}
		}
	}
	// x^11 + x^9 + 1 (the reciprocal of x^11 + x^2 + 1); x^8 + x^7 +
	// x^6 + x^5 + x^4 + … — no trinomial of degree 8 is irreducible.
	if p := irreducible(11); p != 1<<11|1<<9|1 {
		t.Errorf("degree 11: %#x", p)
	}
	if p := irreducible(8); bits.OnesCount64(p) != 5 {
		t.Errorf("degree 8: %#x, want a pentanomial", p)
	}
}

// The polynomial index spreads what the XOR-fold crowds: a private L2
// partition's chunks of an interleaved stream (MI300X's l2-bandwidth
// test: 32 KiB chunks, every eighth to one of 8 partitions of 4 MiB, a
// tag a 128-byte line) fit the partition and hit when read again; with
// the fold they fall into an eighth of the sets and miss every time. And
// 2^d sectors a power of two apart (their bits clear of the base's) take
// distinct sets.
func TestPolySetsSpread(t *testing.T) {
	for _, poly := range []bool{false, true} {
		c := NewL2(4<<20, 128, 1, 16)
		if poly {
			c.PolySets()
		} else {
			c.HashSets()
		}
		var hit int64
		for pass := 0; pass < 2; pass++ {
			hit = 0
			for j := int64(0); j < 32; j++ {
				h, _ := c.Access(j*8*32768, 32768)
				hit += h
			}
		}
		if want := int64(32 * 32768); poly && hit != want || !poly && hit != 0 {
			t.Errorf("poly %v: the second pass hit %d bytes", poly, hit)
		}
	}
	c := NewL2(4<<20, 128, 1, 16)
	c.PolySets()
	for k := uint(0); k < 20; k++ {
		seen := map[uint64]bool{}
		base := int64(3)<<31 | 12345&(1<<k-1) // bits clear of j·2^k's
		for j := int64(0); j < int64(c.sets); j++ {
			seen[c.setIndex(base+j<<k)] = true
		}
		if len(seen) != int(c.sets) {
			t.Errorf("stride 2^%d: %d of %d sets", k, len(seen), c.sets)
		}
	}
}

// With sets not a power of two the polynomial index spreads consecutive
// sectors evenly (the remainder's 16 extra bits): the sets' counts over
// 2^20 of them within 1 %, where reducing the index's bits alone modulo
// the sets gave the lowest sets twice the others'.
func TestPolySetsNotPow2(t *testing.T) {
	for _, sets := range []int64{3, 1000, 1536} {
		c := NewL2(sets*16*128, 128, 1, 16)
		c.PolySets()
		if int64(c.sets) != sets {
			t.Fatalf("%d sets, want %d", c.sets, sets)
		}
		count := make([]int, sets)
		var si [walkChunk]uint64
		for s := int64(0); s < 1<<20; s += walkChunk {
			c.setIndices(si[:], s, 1)
			for i, x := range si {
				if x != c.setIndex(s+int64(i)) {
					t.Fatalf("%d sets: sector %d: setIndices %d, setIndex %d", sets, s+int64(i), x, c.setIndex(s+int64(i)))
				}
				count[x]++
			}
		}
		lo, hi := slices.Min(count), slices.Max(count)
		if float64(hi-lo) > 0.01*float64(lo) {
			t.Errorf("%d sets: %d to %d sectors a set", sets, lo, hi)
		}
	}
}
