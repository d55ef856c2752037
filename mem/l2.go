package mem

// L2 is a sectored, set-associative, LRU, write-allocate cache directory in
// front of global memory. It tracks which lines are present (no data: the GM
// store holds the bytes), so that transfers can be split into the part
// served by the L2 and the part that goes to HBM. A directory entry (tag)
// covers a sector of SectorLines consecutive lines with a valid bit per
// line, as in GPU L2 caches; replacement evicts whole sectors (LRU). A line
// counts as present from the moment a request for it is issued (requests to
// a line in flight merge, as in a cache with miss-status registers), which
// is what lets many cores that read the same block at about the same time
// share one HBM read.
type L2 struct {
	lineBits   uint
	sectorBits uint // log2 of the sector size in bytes
	sets       uint64
	setMask    uint64 // sets−1 when sets is a power of two, else 0
	ways       int
	tags       []int64   // sets·ways sector numbers (−1 = invalid), scanned on every access
	entries    []l2Entry // sets·ways LRU stamps and valid bits
	clock      uint64

	// Statistics in bytes.
	HitBytes, MissBytes int64
}

// SectorLines is the number of lines one directory entry covers.
const SectorLines = 16

type l2Entry struct {
	stamp uint64
	valid uint16 // one bit per line of the sector
}

// NewL2 returns a cache of the given capacity, line size and associativity
// (in sectors); nil when capacity is 0 (no L2).
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
	sectorBytes := int64(1) << lb * SectorLines
	sets := uint64(capacity / sectorBytes / int64(ways))
	if sets < 1 {
		sets = 1
	}
	c := &L2{lineBits: lb, sectorBits: lb + 4, sets: sets, ways: ways,
		tags: make([]int64, int(sets)*ways), entries: make([]l2Entry, int(sets)*ways)}
	if sets&(sets-1) == 0 {
		c.setMask = sets - 1
	}
	for i := range c.tags {
		c.tags[i] = -1
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
	lineSize := int64(1) << c.lineBits
	for b := 0; b < nburst; b++ {
		lo := addr + int64(b)*stride
		end := lo + burstLen
		for sec := lo >> c.sectorBits; sec<<c.sectorBits < end; sec++ {
			base := sec << c.sectorBits
			// Lines of this sector touched by [lo, end).
			first := max(lo, base)
			last := min(end, base+(int64(1)<<c.sectorBits)) - 1
			l0 := uint((first - base) >> c.lineBits)
			l1 := uint((last - base) >> c.lineBits)
			want := uint16((uint32(1)<<(l1+1) - 1) &^ (uint32(1)<<l0 - 1))
			have := c.touch(sec, want)
			for l := l0; l <= l1; l++ {
				a := max(base+int64(l)*lineSize, first)
				z := min(base+int64(l+1)*lineSize, last+1)
				if have&(1<<l) != 0 {
					hit += z - a
				} else {
					miss += z - a
				}
			}
		}
	}
	c.HitBytes += hit
	c.MissBytes += miss
	return hit, miss
}

// touch marks the lines want of sector sec used (allocating the sector if
// needed) and returns which of them were present before.
func (c *L2) touch(sec int64, want uint16) uint16 {
	c.clock++
	var set uint64
	if c.setMask != 0 || c.sets == 1 {
		set = uint64(sec) & c.setMask
	} else {
		set = uint64(sec) % c.sets
	}
	lo, hi := int(set)*c.ways, int(set+1)*c.ways
	tags := c.tags[lo:hi]
	for w, t := range tags {
		if t == sec {
			e := &c.entries[lo+w]
			have := e.valid & want
			e.valid |= want
			e.stamp = c.clock
			return have
		}
	}
	es := c.entries[lo:hi]
	victim := 0
	for w := 1; w < len(es); w++ {
		if es[w].stamp < es[victim].stamp {
			victim = w
		}
	}
	tags[victim] = sec
	es[victim] = l2Entry{stamp: c.clock, valid: want}
	return 0
}
