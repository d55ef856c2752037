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
	sets     uint64
	setMask  uint64 // sets−1 when sets is a power of two, else 0
	ways     int
	entries  []l2Entry // sets·ways
	clock    uint64

	// Statistics in bytes.
	HitBytes, MissBytes int64
}

type l2Entry struct {
	tag   int64 // line number, −1 = invalid
	stamp uint64
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
	if ways < 1 {
		ways = 1
	}
	sets := uint64(capacity / int64(lineBytes) / int64(ways))
	if sets < 1 {
		sets = 1
	}
	c := &L2{lineBits: lb, sets: sets, ways: ways, entries: make([]l2Entry, int(sets)*ways)}
	if sets&(sets-1) == 0 {
		c.setMask = sets - 1
	}
	for i := range c.entries {
		c.entries[i].tag = -1
	}
	return c
}

// Access looks up [addr, addr+n), allocating missing lines, and returns the
// bytes that hit and those that missed (line-granular, clipped to the range).
func (c *L2) Access(addr, n int64) (hit, miss int64) {
	return c.Access2D(addr, 1, n, n)
}

// Access2D is Access over nburst bursts of burstLen bytes, stride bytes apart.
func (c *L2) Access2D(addr int64, nburst int, burstLen, stride int64) (hit, miss int64) {
	if burstLen <= 0 {
		return 0, 0
	}
	if stride == burstLen {
		burstLen *= int64(nburst)
		nburst = 1
	}
	for b := 0; b < nburst; b++ {
		lo := addr + int64(b)*stride
		end := lo + burstLen
		for line := lo >> c.lineBits; line<<c.lineBits < end; line++ {
			a := max(line<<c.lineBits, lo)
			z := min((line+1)<<c.lineBits, end)
			if c.touch(line) {
				hit += z - a
			} else {
				miss += z - a
			}
		}
	}
	c.HitBytes += hit
	c.MissBytes += miss
	return hit, miss
}

// touch marks line used and reports whether it was present.
func (c *L2) touch(line int64) bool {
	c.clock++
	var set uint64
	if c.setMask != 0 || c.sets == 1 {
		set = uint64(line) & c.setMask
	} else {
		set = uint64(line) % c.sets
	}
	es := c.entries[int(set)*c.ways : int(set+1)*c.ways]
	for w := range es {
		if es[w].tag == line {
			es[w].stamp = c.clock
			return true
		}
	}
	victim := 0
	for w := 1; w < len(es); w++ {
		if es[w].stamp < es[victim].stamp {
			victim = w
		}
	}
	es[victim] = l2Entry{tag: line, stamp: c.clock}
	return false
}
