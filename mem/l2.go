package mem

// L2 is a set-associative, LRU, write-allocate cache directory in front of
// global memory. It tracks which lines are present (no data: the GM store
// holds the bytes), so that transfers can be split into the part served by
// the L2 and the part that goes to HBM. A line counts as present from the
// moment a request for it is issued (requests to a line in flight merge, as
// in a cache with miss-status registers), which is what lets many cores that
// read the same block at about the same time share one HBM read.
type L2 struct {
	lineBits uint
	sets     int
	ways     int
	tags     []int64  // sets·ways entries; -1 = invalid
	stamp    []uint64 // last use, for LRU
	clock    uint64

	// Statistics in bytes.
	HitBytes, MissBytes int64
}

// NewL2 returns a cache of the given capacity, line size and associativity;
// nil when capacity is 0 (no L2).
func NewL2(capacity int64, lineBytes, ways int) *L2 {
	if capacity <= 0 {
		return nil
	}
	lb := uint(0)
	for 1<<lb < lineBytes {
		lb++
	}
	sets := int(capacity / int64(lineBytes) / int64(ways))
	if sets < 1 {
		sets = 1
	}
	c := &L2{lineBits: lb, sets: sets, ways: ways, tags: make([]int64, sets*ways), stamp: make([]uint64, sets*ways)}
	for i := range c.tags {
		c.tags[i] = -1
	}
	return c
}

// Access looks up [addr, addr+n), allocating missing lines, and returns the
// bytes that hit and those that missed (line-granular, clipped to the range).
func (c *L2) Access(addr, n int64) (hit, miss int64) {
	if n <= 0 {
		return 0, 0
	}
	lineSize := int64(1) << c.lineBits
	for line := addr >> c.lineBits; line<<c.lineBits < addr+n; line++ {
		lo, hi := line<<c.lineBits, (line+1)<<c.lineBits
		if lo < addr {
			lo = addr
		}
		if hi > addr+n {
			hi = addr + n
		}
		_ = lineSize
		if c.touch(line) {
			hit += hi - lo
		} else {
			miss += hi - lo
		}
	}
	c.HitBytes += hit
	c.MissBytes += miss
	return hit, miss
}

// touch marks line used and reports whether it was present.
func (c *L2) touch(line int64) bool {
	c.clock++
	set := int(uint64(line) % uint64(c.sets))
	base := set * c.ways
	victim := base
	for w := base; w < base+c.ways; w++ {
		if c.tags[w] == line {
			c.stamp[w] = c.clock
			return true
		}
		if c.stamp[w] < c.stamp[victim] {
			victim = w
		}
	}
	c.tags[victim] = line
	c.stamp[victim] = c.clock
	return false
}
