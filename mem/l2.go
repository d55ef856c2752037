package mem

import (
	"math"
	"math/bits"
	"unsafe"
)

// L2 is a set-associative, LRU, write-allocate cache directory in front of
// global memory. It tracks which lines are present (no data: the GM store
// holds the bytes), so that transfers can be split into the part served by
// the L2 and the part that goes to HBM. A directory entry (tag) covers a
// "sector" of 1 to MaxTagLines consecutive lines (NewL2's linesPerTag) with
// a valid bit per line — NVIDIA's L2 tags 128-byte lines of four 32-byte
// sectors, in this directory's terms lines of 32 bytes, four a tag —;
// replacement evicts a tag's lines together (LRU over tags). A line
// counts as present from the moment a request for it is issued (requests to
// a line in flight merge, as in a cache with miss-status registers), which
// is what lets many cores that read the same block at about the same time
// share one HBM read.
type L2 struct {
	lineBits   uint
	sectorBits uint // log2 of the sector size in bytes
	sets       uint64
	setMask    uint64     // sets−1 when sets is a power of two
	pow2       bool       // sets is a power of two
	hash       bool       // the sector number hashed (XOR-fold or polynomial) into the set index
	poly       *polyTable // the polynomial index's (PolySets), nil for the XOR-fold
	setBits    uint       // bits of a set index
	ways       int
	set        []l2Set
	// init is the recency order of a set no access has touched: way 0
	// least recently used, then 1, 2, …; a set's order is 0 until its
	// first miss (no order of two ways or more is 0; of one way it is
	// init), so that the directory of a huge L2 costs only the pages a
	// run touches (the allocation is zeroed memory the OS maps on first
	// use). A hit needs a sector a miss allocated: its set has its order.
	// touched marks the pages of setsPerPage sets a miss has allocated in
	// (Age ages only those).
	init    uint64
	touched []bool
	// orderShift and orderMask are the shift of a recency order's least
	// recent nibble and the mask of its ways' nibbles.
	orderShift uint
	orderMask  uint64
	// modM is ⌈2^64 / sets⌉ for Lemire's remainder by multiplication
	// (setIndex; sets not a power of two).
	modM uint64
	// where maps a sector number to 1 + the way last given it (0 =
	// never): an O(1) lookup instead of a scan of the set's ways, valid
	// when that way's tag is still the sector's — a replacement does not
	// clear the evicted sector's entry (a store to a random byte of an
	// index of tens of MiB, a host-cache miss per replacement: GB200
	// Ozaki 16384³ 54 → 48 s). It grows, doubling, to cover the highest
	// sector used, up to whereCap entries (maxWhere, or the span SpanIndex
	// gives: what IndexFootprint counts); sectors beyond fall back to a
	// scan. Where SpanIndex gave the program's span (spanned), it grows at
	// once to the whole of it: each doubling copied the index and faulted
	// its new pages in (MI300X markidis 8192³: nine directories' 63
	// growths, 118 MB moved, 14 % of the run's CPU time).
	where    []uint8
	whereCap int64
	spanned  bool

	// recording marks an access whose absent lines are listed in missed
	// (Access2DThrough), in the order it found them.
	recording bool
	missed    []lineMiss

	// fetched counts the lines the directory found absent (and made
	// present), each a fetch of a whole line from the level below (miss).
	fetched int64

	// Statistics in bytes: the hits are the bytes asked for of lines
	// present; Access2D's misses the bytes asked for of lines absent, a
	// read's the whole lines it fetches (Read2D), a write through's every
	// byte (Write2D).
	HitBytes, MissBytes int64
	// Allocs counts the sectors allocated (each replacing its set's least
	// recently used one): the pressure a run puts on the directory (Age).
	Allocs int64
}

// l2Set is one set of the directory: its recency order, valid bits and
// tags, together — a hit reads all three (the where index names the way,
// the way's tag says whether the entry is current) and a replacement
// writes them. With 2 KiB tags the tags had lived apart so that the sets
// of a 50 MiB L2 fit 64 KiB of the host's caches; with 128-byte tags they
// do not fit anyway, and beside their sets they cost one host-cache miss
// fewer a lookup (MI300X SGEMM-cube 8192³ paired 0.89, A100 0.96, RTX PRO
// 6000 Ape FP32-T 0.94). The tags are 32-bit (MaxSector): 104 bytes a set
// where 64-bit tags took 168, and the directory's lookups miss the host's
// caches less (MI300X SGEMM-cube 8192³ paired 0.84: its 256 MiB LLC's
// sets 21 → 13 MiB beside 10 MiB of where index, against the host's
// 32 MiB last-level cache). (Tags apart from the order and valid bits
// again, in one 64-byte line a set: no faster; a branch-free scan of them
// in place of the where index: MI300X 1.5× slower, the walk benchmarks
// 2.4×, for the instructions a lookup then takes.)
type l2Set struct {
	// order holds the ways in recency order, one 4-bit way number per
	// nibble, most recent in the lowest nibble: LRU replacement in O(1)
	// (at most 16 ways; 0, standing for L2.init, until the set's first
	// miss).
	order uint64
	valid [MaxL2Ways]uint16 // one bit per line of the sector
	// tags holds 1 + the sector number of each way (0 = invalid).
	tags [MaxL2Ways]uint32
}

// MaxSector is the highest sector the directory caches: a tag holds 1 +
// the sector number in 32 bits (2^32 sectors: 512 GiB of global memory in
// 128-byte tags). A sector beyond it (or negative) is never present: its
// accesses miss and allocate nothing. machines.Validate keeps a machine's
// gm.capacity within it (L2Sectors).
const MaxSector = 1<<32 - 2

// maxWhere bounds the where index (entries, one byte each): 16 GiB of
// 128-byte tags (at 4 GiB, 1 << 25, GB200 Ozaki 16384³'s INT8 slices
// beyond it were looked up by scans: 106 s, 54 s with the index).
const maxWhere = 1 << 27

// MaxTagLines is the most lines one directory entry covers (a valid bit
// each).
const MaxTagLines = 16

// MaxL2Ways is the largest associativity the L2 directory supports.
const MaxL2Ways = 16

// l2Shape returns the line bits, the tag's bits beyond them, the ways and
// the sets of an L2 (see NewL2).
func l2Shape(capacity int64, lineBytes, linesPerTag, ways int) (lb, tb uint, w int, sets uint64) {
	lb, tb = tagBits(lineBytes, linesPerTag)
	w = min(max(ways, 1), MaxL2Ways)
	sectorBytes := int64(1) << (lb + tb)
	sets = uint64(capacity / sectorBytes / int64(w))
	if sets < 1 {
		sets = 1
	}
	return lb, tb, w, sets
}

// tagBits returns the bits of a line and those of a tag beyond them (a
// line size rounded up to a power of two; lines a tag, to one up to
// MaxTagLines).
func tagBits(lineBytes, linesPerTag int) (lb, tb uint) {
	for lb < 62 && 1<<lb < lineBytes {
		lb++
	}
	for tb < 4 && 1<<tb < linesPerTag {
		tb++
	}
	return lb, tb
}

// L2Footprint returns the host memory, in bytes, of the tags of NewL2's
// cache (0 without one), so that a huge capacity is refused before it is
// allocated.
func L2Footprint(capacity int64, lineBytes, linesPerTag, ways int) int64 {
	if capacity <= 0 {
		return 0
	}
	_, _, _, sets := l2Shape(capacity, lineBytes, linesPerTag, ways)
	return int64(sets) * int64(unsafe.Sizeof(l2Set{}))
}

// L2Sectors returns the sectors (tags' worth of bytes) gmBytes of global
// memory span in NewL2's directory: at most MaxSector+1 for it to cache
// all of them.
func L2Sectors(gmBytes int64, lineBytes, linesPerTag int) int64 {
	lb, tb := tagBits(lineBytes, linesPerTag)
	return (gmBytes-1)>>(lb+tb) + 1
}

// IndexFootprint returns the most host memory, in bytes, the where index
// of NewL2's directory takes in front of gmBytes of global memory — the
// whole memory, or the span of it a program's tensors occupy, given to the
// directory by SpanIndex: a byte per tag's worth of addresses, at least
// minWhere and up to maxWhere (0 without a cache).
func IndexFootprint(capacity, gmBytes int64, lineBytes, linesPerTag int) int64 {
	if capacity <= 0 {
		return 0
	}
	return whereLen(L2Sectors(gmBytes, lineBytes, linesPerTag))
}

// minWhere is the where index's first size (entries).
const minWhere = 1 << 12

// whereLen is the most entries the where index of a directory in front of
// sectors sectors takes.
func whereLen(sectors int64) int64 { return min(max(sectors, minWhere), maxWhere) }

// BoundIndex bounds the directory's where index to the sectors of the
// first gmBytes of global memory (IndexFootprint's bytes for them), so
// that the index — grown by doubling as higher sectors are used — never
// takes more than the estimate counts. A sector beyond it is looked up by
// a scan of its set's ways (the same results, a little slower). NewL2's
// directory bounds it by maxWhere; call BoundIndex or SpanIndex before
// the directory's first access.
func (c *L2) BoundIndex(gmBytes int64) {
	c.whereCap = whereLen(L2Sectors(gmBytes, 1<<c.lineBits, 1<<(c.sectorBits-c.lineBits)))
	c.spanned = false
	if int64(len(c.where)) > c.whereCap {
		c.where = append([]uint8(nil), c.where[:c.whereCap]...)
	}
}

// SpanIndex is BoundIndex for gmBytes the span a program's tensors
// occupy, which its run will use: the index, once it grows past its first
// size, grows at once to all of it (not by doubling — each doubling copied
// the index and faulted its new pages in).
func (c *L2) SpanIndex(gmBytes int64) {
	c.BoundIndex(gmBytes)
	c.spanned = true
}

// Reach returns the bytes from address 0 to the end of the highest sector
// the directory has allocated, as far as its where index covers them
// (SpanIndex): how far a run's accesses reached, against the span a
// program said its tensors occupy (tests; it scans the index).
func (c *L2) Reach() int64 {
	for i := len(c.where) - 1; i >= 0; i-- {
		if c.where[i] != 0 {
			return int64(i+1) << c.sectorBits
		}
	}
	return 0
}

// NewL2 returns a cache of the given capacity, line size, lines per tag (a
// power of two up to MaxTagLines; rounded up to one) and associativity
// (in tags); nil when capacity is 0 (no L2).
func NewL2(capacity int64, lineBytes, linesPerTag, ways int) *L2 {
	if capacity <= 0 {
		return nil
	}
	lb, tb, ways, sets := l2Shape(capacity, lineBytes, linesPerTag, ways)
	c := &L2{lineBits: lb, sectorBits: lb + tb, sets: sets, ways: ways, set: makeHuge[l2Set](int64(sets)), whereCap: maxWhere}
	// Initially way 0 is the least recently used, then 1, 2, …
	for w := 0; w < ways; w++ {
		c.init |= uint64(ways-1-w) << (4 * w)
	}
	c.touched = make([]bool, (sets+setsPerPage-1)/setsPerPage)
	c.orderShift, c.orderMask = 4*uint(ways-1), ^uint64(0)>>(64-4*uint(ways))
	if sets&(sets-1) == 0 {
		c.setMask, c.pow2 = sets-1, true
	} else {
		c.modM = ^uint64(0)/sets + 1
	}
	c.setBits = uint(bits.Len64(sets - 1))
	return c
}

// setsPerPage is the sets of a page of the directory that Age skips
// when no miss has touched it (104 KiB of sets: touched).
const setsPerPage = 1024

// HashSets makes the directory index its sets with the sector number's
// higher bits XOR-folded into the lower ones (the "xor" index): sectors a
// power of two apart then spread over the sets instead of crowding into
// a few (the rows of a tile of a matrix with a power-of-two row pitch) —
// a cheap stand-in for the polynomial hash GPU L2s use (PolySets), which
// leaves other patterns crowded (ipoly.go).
func (c *L2) HashSets() { c.hash, c.poly = true, nil }

// PolySets makes the directory index its sets by the sector number's
// remainder modulo an irreducible polynomial over GF(2) of degree the set
// index's bits (ipoly.go): sectors a power of two apart, and the chunks
// of an interleaved stream, spread over every set. With sets not a power
// of two the remainder has 16 bits more (up to 32) and is then taken
// modulo the sets, so that no set gets more than 2^−16 more sectors than
// another (with the index's bits alone the lowest sets would get twice
// the others'); beyond 2^32 sets (no host holds such a directory) the
// XOR-fold stands for it.
func (c *L2) PolySets() {
	c.hash, c.poly = true, nil
	d := c.setBits
	if !c.pow2 {
		d = min(d+16, maxPolyDegree)
	}
	if c.setBits > 0 && c.setBits <= maxPolyDegree {
		c.poly = polyIndex(d)
	}
}

// setIndex returns the set of sector sec (0 ≤ sec ≤ MaxSector where the
// polynomial indexes: its callers' bound).
func (c *L2) setIndex(sec int64) uint64 {
	s := uint64(sec)
	switch {
	case c.poly != nil:
		s = c.poly.index(s)
	case c.hash && c.setBits > 0:
		s ^= s>>c.setBits ^ s>>(2*c.setBits) ^ s>>(3*c.setBits)
	}
	if c.pow2 {
		return s & c.setMask
	}
	if s < 1<<32 && c.sets < 1<<32 {
		// Lemire, Kaser and Kurz, "Faster remainder by direct
		// computation" (2019): exact for 32-bit dividends and divisors,
		// two multiplications instead of a 64-bit division.
		hi, _ := bits.Mul64(c.modM*s, c.sets)
		return hi
	}
	return s % c.sets
}

// Access looks up [addr, addr+n), allocating missing lines, and returns the
// bytes that hit and those that missed (line-granular, clipped to the range).
func (c *L2) Access(addr, n int64) (hit, miss int64) {
	return c.Access2D(addr, 1, n, n)
}

// Access2D is Access over nburst bursts of burstLen bytes, stride bytes
// apart: the bytes requested that were in lines present and those that
// were not. It counts them as they are (HitBytes, MissBytes): a write's.
func (c *L2) Access2D(addr int64, nburst int, burstLen, stride int64) (hit, miss int64) {
	hit, miss = c.access2D(addr, nburst, burstLen, stride)
	c.HitBytes += hit
	c.MissBytes += miss
	return hit, miss
}

// Read2D is Access2D for a read: every line it finds absent is fetched
// whole (a line is what the directory makes present), so a request that
// covers part of an absent line pays for all of it — the rest of the line
// is no free hit later. It returns the bytes requested that were in lines
// present (served by the cache) and the bytes of the lines fetched, and
// counts them so (HitBytes, MissBytes): hit + miss counted is the bytes
// requested where the request covers whole lines, more where it covers
// part of an absent line.
func (c *L2) Read2D(addr int64, nburst int, burstLen, stride int64) (hit, fetched int64) {
	f0 := c.fetched
	hit, _ = c.access2D(addr, nburst, burstLen, stride)
	fetched = (c.fetched - f0) << c.lineBits
	c.HitBytes += hit
	c.MissBytes += fetched
	return hit, fetched
}

// Write2D is Access2D for a write through the cache: the lines written
// are made present (write-allocate) and every byte goes to the level
// below, so all of them count as misses (a write-through cache serves no
// write: its hits and misses then add up to the bytes requested as a
// read's do, and those below to its misses).
func (c *L2) Write2D(addr int64, nburst int, burstLen, stride int64) {
	hit, miss := c.access2D(addr, nburst, burstLen, stride)
	c.MissBytes += hit + miss
}

// Capacity returns the bytes the directory holds: its sets times its ways
// times the bytes a tag covers.
func (c *L2) Capacity() int64 {
	if c == nil {
		return 0
	}
	return int64(c.sets) * int64(c.ways) << c.sectorBits
}

// Install2D makes the lines of nburst bursts of burstLen bytes, stride
// apart, present and the most recently used, as a read of them would,
// counting nothing (HitBytes, MissBytes, Allocs): fast-forward's step
// skips put in a cache the lines the steps they skip would have read.
func (c *L2) Install2D(addr int64, nburst int, burstLen, stride int64) {
	f, a := c.fetched, c.Allocs
	c.access2D(addr, nburst, burstLen, stride)
	c.fetched, c.Allocs = f, a
}

// access2D is Access2D without the counting.
func (c *L2) access2D(addr int64, nburst int, burstLen, stride int64) (hit, miss int64) {
	if burstLen <= 0 {
		return 0, 0
	}
	if stride == burstLen {
		burstLen *= int64(nburst)
		nburst = 1
	}
	sectorMask := int64(1)<<c.sectorBits - 1
	if end := addr + burstLen; nburst > 1 && addr >= 0 && stride > 0 && stride&sectorMask == 0 &&
		addr>>c.sectorBits == (end-1)>>c.sectorBits && stride <= (math.MaxInt64-addr)/int64(nburst-1) && // the last row's address fits
		c.indexed((addr+int64(nburst-1)*stride)>>c.sectorBits) {
		// Every burst sits at the same offset of its own sector (a block
		// of a row-major matrix whose rows are whole sectors apart): the
		// same lines of a sector at a fixed step.
		l0 := uint((addr & sectorMask) >> c.lineBits)
		l1 := uint(((end - 1) & sectorMask) >> c.lineBits)
		return c.walk(addr, nburst, burstLen, stride, l0, l1)
	}
	if end := addr + burstLen; nburst > 1 && addr >= 0 && stride > 0 && stride&sectorMask == 0 &&
		(end-1)>>c.sectorBits-addr>>c.sectorBits < maxRowTags && stride <= (math.MaxInt64-addr-burstLen)/int64(nburst-1) && // the last row's end fits
		c.indexed((addr+int64(nburst-1)*stride+burstLen-1)>>c.sectorBits) {
		// Rows of several tags each, whole tags apart (a tile's rows
		// where a tag covers fewer bytes than a row: NVIDIA's 128-byte
		// tags): each row's tags in turn, in chunks as the walk above
		// (wideRows).
		return c.wideRows(addr, nburst, burstLen, stride)
	}
	if nburst > 1 && addr >= 0 && stride > 0 && burstLen <= sectorMask+1 &&
		stride <= (math.MaxInt64-addr-burstLen)/int64(nburst-1) && // the last row's end fits
		(addr+int64(nburst-1)*stride+burstLen-1)>>c.sectorBits <= MaxSector {
		// Rows of at most a sector each, any stride (a block of a
		// row-major matrix whose rows are not whole sectors apart: a
		// DaVinci LU's trailing matrix, 27 sectors and 1 KiB).
		return c.strideRows(addr, nburst, burstLen, stride)
	}
	for b := 0; b < nburst; b++ {
		lo := addr + int64(b)*stride
		end := lo + burstLen
		if lo>>c.sectorBits == (end-1)>>c.sectorBits && lo >= 0 {
			// The burst lies in one sector (the common case of strided
			// copies): one lookup.
			l0 := uint((lo & sectorMask) >> c.lineBits)
			l1 := uint(((end - 1) & sectorMask) >> c.lineBits)
			want := uint16((uint32(1)<<(l1+1) - 1) &^ (uint32(1)<<l0 - 1))
			switch have := c.touch(lo>>c.sectorBits, want); have {
			case want:
				hit += burstLen
			case 0:
				miss += burstLen
			default:
				h, m := c.split(have, l0, l1, lo&^sectorMask, lo, end)
				hit, miss = hit+h, miss+m
			}
			continue
		}
		for sec, lastSec := lo>>c.sectorBits, (end-1)>>c.sectorBits; sec <= lastSec; sec++ { // (sec<<sectorBits < end wrapped at the top of the range)
			if sec == lo>>c.sectorBits+1 && lastSec-sec >= 2 && sec >= 0 && c.indexed(lastSec-1) {
				// The whole sectors between the burst's first and last
				// (a long contiguous transfer): a walk of step one.
				top := uint(sectorMask >> c.lineBits)
				h, m := c.walk(sec<<c.sectorBits, int(lastSec-sec), sectorMask+1, sectorMask+1, 0, top)
				hit, miss = hit+h, miss+m
				sec = lastSec - 1
				continue
			}
			base := sec << c.sectorBits
			// Lines of this sector touched by [lo, end).
			first := max(lo, base)
			last := min(end-1, base|sectorMask) // (base + a sector overflows at the top of the range)
			l0 := uint((first - base) >> c.lineBits)
			l1 := uint((last - base) >> c.lineBits)
			want := uint16((uint32(1)<<(l1+1) - 1) &^ (uint32(1)<<l0 - 1))
			have := c.touch(sec, want)
			n := last + 1 - first
			switch have {
			case want: // every line present: the common case
				hit += n
				continue
			case 0:
				miss += n
				continue
			}
			h, m := c.split(have, l0, l1, base, first, last+1)
			hit, miss = hit+h, miss+m
		}
	}
	return hit, miss
}

// strideRows is access2D of nburst rows of rowBytes ≤ a sector each,
// stride > 0 apart, every row's sectors in 0..MaxSector: as the general
// loop does it — each row in one sector one lookup, a row across two
// sectors each of them — with the row's sector and offset stepped from
// the row before (an addition and a compare), the lookup's range check
// left out and a hit of the whole row found here (touchSet's first path,
// the common case). Why: the general loop cost ~10 ns a row
// (BenchmarkL2StrideRows 39 → 25 µs), and a 256-NPU LU's sampled kernels
// spent a quarter of their CPU time in it.
func (c *L2) strideRows(addr int64, nburst int, rowBytes, stride int64) (hit, miss int64) {
	sb, lb := c.sectorBits, c.lineBits
	size := int64(1) << sb
	top := uint((size - 1) >> lb) // a sector's last line
	sec, off := addr>>sb, addr&(size-1)
	dsec, doff := stride>>sb, stride&(size-1)
	// A power of two of sets, unhashed (the 910A's): the set is the
	// sector's low bits, here rather than in setIndex (not inlined).
	mask, plain := c.setMask, c.pow2 && !c.hash && c.poly == nil
	for range nburst {
		base := sec << sb
		if end := off + rowBytes; end <= size {
			l0, l1 := uint(off>>lb), uint((end-1)>>lb)
			want := uint16((uint32(1)<<(l1+1) - 1) &^ (uint32(1)<<l0 - 1))
			si := uint64(sec) & mask
			if !plain {
				si = c.setIndex(sec)
			}
			set, w := &c.set[si], uint64(0)
			if sec < int64(len(c.where)) {
				w = uint64(c.where[sec]) // 1 + the way, 0: none
			}
			if k := (w - 1) & (MaxL2Ways - 1); w != 0 && set.tags[k] == uint32(sec+1) && set.valid[k]&want == want {
				if set.order&0xF != k {
					set.order = toFront(set.order, k)
				}
				hit += rowBytes
			} else {
				h, m := c.rowPart(sec, si, want, l0, l1, base, base+off, base+end)
				hit, miss = hit+h, miss+m
			}
		} else {
			// Across two sectors: the first's lines from off, the
			// second's up to the row's end.
			l0 := uint(off >> lb)
			want := uint16((uint32(1)<<(top+1) - 1) &^ (uint32(1)<<l0 - 1))
			h, m := c.rowPart(sec, c.setIndex(sec), want, l0, top, base, base+off, base+size)
			hit, miss = hit+h, miss+m
			l1 := uint((end - size - 1) >> lb)
			h, m = c.rowPart(sec+1, c.setIndex(sec+1), uint16(uint32(1)<<(l1+1)-1), 0, l1, base+size, base+size, base+end)
			hit, miss = hit+h, miss+m
		}
		sec, off = sec+dsec, off+doff
		if off >= size {
			sec, off = sec+1, off-size
		}
	}
	return hit, miss
}

// rowPart looks up lines want (l0..l1) of sector sec (0 ≤ sec ≤
// MaxSector), in set si, at base, for the bytes [lo, end) of a row, and
// returns those that hit and missed.
func (c *L2) rowPart(sec int64, si uint64, want uint16, l0, l1 uint, base, lo, end int64) (hit, miss int64) {
	switch have := c.touchSet(sec, si, want); have {
	case want:
		return end - lo, 0
	case 0:
		return 0, end - lo
	default:
		return c.split(have, l0, l1, base, lo, end)
	}
}

// walk looks up nburst rows of one sector each, every sector indexed: row
// b the bytes [addr + b·stride, + rowBytes), lines l0..l1 of its sector,
// the sectors stride apart (a whole number of them). The rows' set
// indices first, a chunk at a time (setIndices), then their lookups
// (lookupRows): two loops of few live values each, where one loop doing
// both kept its locals on the stack (under cachegrind,
// BenchmarkL2GEMMWalk 4.83 → 3.71 M instructions an op).
func (c *L2) walk(addr int64, nburst int, rowBytes, stride int64, l0, l1 uint) (hit, miss int64) {
	sectorMask := int64(1)<<c.sectorBits - 1
	want := uint16((uint32(1)<<(l1+1) - 1) &^ (uint32(1)<<l0 - 1))
	sec, step := addr>>c.sectorBits, stride>>c.sectorBits
	var sis [walkChunk]uint64
	for b0 := 0; b0 < nburst; b0 += walkChunk {
		rows := sis[:min(walkChunk, nburst-b0)]
		c.setIndices(rows, sec, step)
		for b := b0; len(rows) > 0; {
			h, m, have := c.lookupRows(rows, sec, step, want)
			hit, miss = hit+int64(h)*rowBytes, miss+int64(m)*rowBytes
			n := h + m
			if n < len(rows) {
				// Row b+n had some of the lines: its bytes split.
				c.miss(sec+int64(n)*step, want&^have)
				lo := addr + int64(b+n)*stride
				h, m := c.split(have, l0, l1, lo&^sectorMask, lo, lo+rowBytes)
				hit, miss = hit+h, miss+m
				n++
			}
			rows, sec, b = rows[n:], sec+int64(n)*step, b+n
		}
	}
	return hit, miss
}

// lookupRows looks up sectors sec, sec+step, … in sets sis[0], sis[1], …
// (indexed sectors) for lines want, marking them present, and returns
// the rows that hit (want all present) and that missed (none of them: a
// sector allocated, or its lines added), stopping after the first row
// that had some of them (have, its lines present before; hits + misses
// is then its index). A loop of its own: few live values, held in
// registers.
func (c *L2) lookupRows(sis []uint64, sec, step int64, want uint16) (hits, misses int, have uint16) {
	where, sets := c.where, c.set
	for i, si := range sis {
		w := where[sec]
		if w == 0 || sets[si].tags[(w-1)&(MaxL2Ways-1)] != uint32(sec+1) {
			// Never given a way, or a stale entry: its way holds
			// another sector now.
			c.allocate(sec, si, want)
			misses++
			sec += step
			continue
		}
		set := &sets[si]
		w = (w - 1) & (MaxL2Ways - 1)
		if set.order&0xF != uint64(w) {
			set.order = toFront(set.order, uint64(w))
		}
		have = set.valid[w] & want
		if have == want {
			hits++
			sec += step
			continue
		}
		set.valid[w] |= want
		if have != 0 {
			return hits, i - hits, have
		}
		c.miss(sec, want)
		misses++
		sec += step
	}
	return hits, misses, 0
}

// walkChunk is the rows whose set indices a walk computes at a time.
const walkChunk = 64

// setIndices sets out[i] to the set of sector sec + i·step (sectors below
// maxWhere: indexed).
func (c *L2) setIndices(out []uint64, sec, step int64) {
	if !c.hash || c.setBits == 0 {
		// Without hashing the set index steps by step mod sets from row
		// to row ((s + step) mod sets = (s mod sets + step mod sets) mod
		// sets): an addition and a compare in place of a remainder.
		next, d, nsets := c.setIndex(sec), c.setIndex(step), c.sets
		for i := range out {
			out[i] = next
			if next += d; next >= nsets {
				next -= nsets
			}
		}
		return
	}
	if t := c.poly; t != nil {
		// The polynomial's remainder, the sectors below maxWhere (so
		// below 2^32: four bytes).
		s, d := uint64(sec), uint64(step)
		if c.pow2 {
			for i := range out {
				out[i] = t.index(s)
				s += d
			}
			return
		}
		modM, nsets := c.modM, c.sets
		for i := range out {
			out[i], _ = bits.Mul64(modM*t.index(s), nsets)
			s += d
		}
		return
	}
	// setIndex with the directory's shape in locals: the XOR-fold's
	// shifts below 64, the sectors below maxWhere, so below 2^32 for the
	// remainder by multiplication.
	sb := c.setBits & 63
	sb2, sb3 := 2*sb&63, 3*sb&63
	s, d := uint64(sec), uint64(step)
	switch {
	case sb >= 22 || !c.pow2 && c.sets >= 1<<32:
		for i := range out {
			out[i] = c.setIndex(int64(s))
			s += d
		}
	case c.pow2:
		mask := c.setMask
		for i := range out {
			out[i] = (s ^ s>>sb ^ s>>sb2 ^ s>>sb3) & mask
			s += d
		}
	default:
		modM, nsets := c.modM, c.sets
		for i := range out {
			out[i], _ = bits.Mul64(modM*(s^s>>sb^s>>sb2^s>>sb3), nsets)
			s += d
		}
	}
}

// maxRowTags bounds the tags a row of Access2D's wide-row walk spans.
const maxRowTags = 64

// wideRows is Access2D over rows of up to maxRowTags tags each, stride a
// multiple of the tag's bytes, every sector indexed (Access2D checks):
// each row's tags in turn, their set indices a chunk at a time
// (tagIndices), then their lookups (lookupTags), as walk.
func (c *L2) wideRows(addr int64, nburst int, burstLen, stride int64) (hit, miss int64) {
	sb := c.sectorBits
	sectorMask := int64(1)<<sb - 1
	end := addr + burstLen
	span := int((end-1)>>sb - addr>>sb) // tags after a row's first
	l0 := uint((addr & sectorMask) >> c.lineBits)
	l1 := uint(((end - 1) & sectorMask) >> c.lineBits)
	top := uint(1)<<(sb-c.lineBits) - 1 // a tag's last line
	all := uint16(uint32(1)<<(top+1) - 1)
	sectorBytes := sectorMask + 1
	// Each of a row's tags: the lines wanted and the bytes.
	var tags rowTags
	for j := 0; j <= span; j++ {
		tags.want[j], tags.bytes[j] = all, sectorBytes
	}
	tags.want[0] &^= uint16(uint32(1)<<l0 - 1)
	tags.bytes[0] = sectorBytes - addr&sectorMask
	tags.want[span] &= uint16(uint32(1)<<(l1+1) - 1)
	tags.bytes[span] -= sectorBytes - ((end-1)&sectorMask + 1)
	tags.span = span
	sec0, step := addr>>sb, stride>>sb
	var sis [walkChunk]uint64
	b, j := 0, 0 // the row and tag next
	for left := nburst * (span + 1); left > 0; {
		chunk := sis[:min(walkChunk, left)]
		c.tagIndices(chunk, sec0, step, j, span)
		for len(chunk) > 0 {
			h, m, n, have := c.lookupTags(chunk, sec0, step, j, &tags)
			hit, miss = hit+h, miss+m
			if n < len(chunk) {
				// Tag j of row b+⌊(j+n)/(span+1)⌋ had some of the lines:
				// its bytes split.
				r, t := b+(j+n)/(span+1), (j+n)%(span+1)
				sec := sec0 + int64((j+n)/(span+1))*step + int64(t)
				base := sec << sb
				row := addr + int64(r)*stride
				f, l := uint(0), top
				if t == 0 {
					f = l0
				}
				if t == span {
					l = l1
				}
				c.miss(sec, tags.want[t]&^have)
				h, m := c.split(have, f, l, base, max(base, row), min(base+sectorBytes, row+burstLen))
				hit, miss = hit+h, miss+m
				n++
			}
			rows := (j + n) / (span + 1)
			b, j, sec0 = b+rows, (j+n)%(span+1), sec0+int64(rows)*step
			chunk, left = chunk[n:], left-n
		}
	}
	return hit, miss
}

// rowTags is what wideRows wants of each tag of a row: its lines and
// bytes (tags 0..span).
type rowTags struct {
	want  [maxRowTags]uint16
	bytes [maxRowTags]int64
	span  int
}

// tagIndices sets out[i] to the set of the i-th tag from tag j of the row
// starting at sector sec0, the rows' tags in turn (span+1 a row, rows
// step sectors apart; sectors below maxWhere).
func (c *L2) tagIndices(out []uint64, sec0, step int64, j, span int) {
	if !c.hash || c.setBits == 0 {
		// A row's first set steps by step mod sets from row to row, a
		// row's tags by one (as setIndices).
		row, d, nsets := c.setIndex(sec0), c.setIndex(step), c.sets
		si := row + uint64(j)%nsets
		if si >= nsets {
			si -= nsets
		}
		for i := range out {
			out[i] = si
			if j == span {
				if row += d; row >= nsets {
					row -= nsets
				}
				si, j = row, 0
				continue
			}
			if si++; si == nsets {
				si = 0
			}
			j++
		}
		return
	}
	// Hashed: each row's run of consecutive sectors (setIndices).
	for i := 0; i < len(out); {
		k := min(span-j+1, len(out)-i)
		c.setIndices(out[i:i+k], sec0+int64(j), 1)
		i, j = i+k, j+k
		if j > span {
			sec0, j = sec0+step, 0
		}
	}
}

// lookupTags is lookupRows over rows of several tags (wideRows): from tag
// j of the row at sector sec0, the tags in sets sis, the lines and bytes
// of rt's; it returns the bytes that hit and that missed and the tags
// done, stopping at the first tag that had some of its lines (have).
// (Its lookup repeats lookupRows's on purpose: one-tag rows sent here
// instead, through tagIndices, took BenchmarkL2GEMMWalk 3.71 → 5.56 M
// instructions an op, ...LLC 17.3 → 26.5.)
func (c *L2) lookupTags(sis []uint64, sec0, step int64, j int, rt *rowTags) (hit, miss int64, done int, have uint16) {
	where, sets, span := c.where, c.set, rt.span
	for i, si := range sis {
		sec := sec0 + int64(j)
		want, n := rt.want[j&(maxRowTags-1)], rt.bytes[j&(maxRowTags-1)]
		if j == span {
			sec0, j = sec0+step, 0
		} else {
			j++
		}
		w := where[sec]
		if w == 0 || sets[si].tags[(w-1)&(MaxL2Ways-1)] != uint32(sec+1) {
			c.allocate(sec, si, want) // never given a way, or a stale entry
			miss += n
			continue
		}
		set := &sets[si]
		w = (w - 1) & (MaxL2Ways - 1)
		if set.order&0xF != uint64(w) {
			set.order = toFront(set.order, uint64(w))
		}
		have = set.valid[w] & want
		if have == want {
			hit += n
			continue
		}
		set.valid[w] |= want
		if have != 0 {
			return hit, miss, i, have
		}
		c.miss(sec, want)
		miss += n
	}
	return hit, miss, len(sis), 0
}

// split counts the bytes of [lo, end) in lines l0..l1 of the sector at
// base that were present (bit set in have) and those that were not.
func (c *L2) split(have uint16, l0, l1 uint, base, lo, end int64) (hit, miss int64) {
	lineSize := int64(1) << c.lineBits
	for l := l0; l <= l1; l++ {
		a := max(base+int64(l)*lineSize, lo)
		z := min(base+int64(l+1)*lineSize, end)
		if have&(1<<l) != 0 {
			hit += z - a
		} else {
			miss += z - a
		}
	}
	return hit, miss
}

// touch marks the lines want of sector sec used (allocating the sector if
// needed, replacing the set's least recently used sector) and returns which
// of them were present before; a sector beyond MaxSector is never present
// (its lines are fetched at every access).
func (c *L2) touch(sec int64, want uint16) uint16 {
	if sec < 0 || sec > MaxSector {
		c.fetched += int64(bits.OnesCount16(want))
		return 0
	}
	return c.touchSet(sec, c.setIndex(sec), want)
}

// touchSet is touch of sector sec (0 ≤ sec ≤ MaxSector), in set si.
func (c *L2) touchSet(sec int64, si uint64, want uint16) uint16 {
	set := &c.set[si]
	tags, tag := &set.tags, uint32(sec+1)
	w := -1
	if c.indexed(sec) {
		w = int(c.where[sec]) - 1
		if w >= 0 && tags[w&(MaxL2Ways-1)] != tag {
			w = -1 // a stale entry
		}
	} else {
		for i, t := range tags[:c.ways] {
			if t == tag {
				w = i
				break
			}
		}
	}
	if w >= 0 {
		w &= MaxL2Ways - 1
		have := set.valid[w] & want
		set.valid[w] |= want
		if set.order&0xF != uint64(w) {
			set.order = toFront(set.order, uint64(w))
		}
		if have != want {
			c.miss(sec, want&^have)
		}
		return have
	}
	c.allocate(sec, si, want)
	return 0
}

// lineMiss is lines an access found absent in one sector.
type lineMiss struct {
	sec   int64
	lines uint16
}

// miss counts lines of sector sec the access found absent (fetched) and
// lists them when the access is recorded (Read2DThrough).
func (c *L2) miss(sec int64, lines uint16) {
	c.fetched += int64(bits.OnesCount16(lines))
	if c.recording {
		c.missed = append(c.missed, lineMiss{sec, lines})
	}
}

// Read2DThrough is Read2D, each line it fetches then looked up in below,
// the directory behind it (an LLC: a memory-side cache sees the lines the
// L2 fetches, not the L2's hits), in the order found. It returns Read2D's
// hit and fetched, the bytes of the fetched lines below held (belowHit)
// and the bytes below fetched in turn (belowFetched, whole lines of its
// own). Both count as Read2D does, below's hits the bytes asked of it
// in lines it held and its misses the bytes it fetched: with alike lines
// below's hits and misses add up to this directory's misses.
func (c *L2) Read2DThrough(below *L2, addr int64, nburst int, burstLen, stride int64) (hit, fetched, belowHit, belowFetched int64) {
	c.recording, c.missed = true, c.missed[:0]
	hit, fetched = c.Read2D(addr, nburst, burstLen, stride)
	c.recording = false
	lb, sb := c.lineBits, c.sectorBits
	var listed int64 // the bytes of the lines listed (not those of sectors beyond MaxSector)
	if below.lineBits == lb && below.sectorBits == sb {
		// Alike directories (the MI300X's): each sector's absent lines,
		// one lookup — as the runs of them one by one: the same lines
		// present after, the same order.
		for _, m := range c.missed {
			belowHit += int64(bits.OnesCount16(below.touch(m.sec, m.lines))) << lb
			listed += int64(bits.OnesCount16(m.lines)) << lb
		}
		belowFetched = listed - belowHit
	} else {
		b0 := below.fetched
		for _, m := range c.missed {
			for lines := uint32(m.lines); lines != 0; {
				// Each run of consecutive absent lines of the sector, a
				// fetch of its own.
				l0 := uint(bits.TrailingZeros32(lines))
				l1 := l0 + uint(bits.TrailingZeros32(^(lines >> l0)))
				lines &^= (1<<l1 - 1) &^ (1<<l0 - 1)
				h, _ := below.access2D(m.sec<<sb+int64(l0)<<lb, 1, int64(l1-l0)<<lb, int64(l1-l0)<<lb)
				belowHit += h
				listed += int64(l1-l0) << lb
			}
		}
		belowFetched = (below.fetched - b0) << below.lineBits
	}
	below.HitBytes += belowHit
	below.MissBytes += belowFetched
	// Lines of sectors beyond MaxSector (never listed): fetched through
	// below without a lookup.
	belowFetched += fetched - listed
	return hit, fetched, belowHit, belowFetched
}

// allocate puts sector sec (0 ≤ sec ≤ MaxSector), absent from the
// directory, in set si with the lines want present, replacing the set's
// least recently used sector.
func (c *L2) allocate(sec int64, si uint64, want uint16) {
	c.miss(sec, want)
	set := &c.set[si]
	c.touched[si/setsPerPage] = true
	c.Allocs++
	o := set.order
	if o == 0 {
		o = c.init
	}
	victim := (o >> c.orderShift) & 0xF
	set.order = (o<<4 | victim) & c.orderMask
	set.tags[victim] = uint32(sec + 1)
	set.valid[victim] = want
	if sec < int64(len(c.where)) {
		c.where[sec] = uint8(victim) + 1
	}
}

// indexed reports whether sector sec is in the where index, growing the
// index to cover it when it may.
func (c *L2) indexed(sec int64) bool {
	if sec < int64(len(c.where)) {
		return sec >= 0
	}
	if sec < 0 || sec >= c.whereCap {
		return false
	}
	n := min(max(sec+1, 2*int64(len(c.where)), minWhere), c.whereCap)
	if c.spanned {
		n = c.whereCap // (the span the program's tensors occupy: it will be used)
	}
	w := makeHuge[uint8](n)
	copy(w, c.where)
	c.where = w
	return true
}

// toFront moves way w to the most-recent nibble of a recency order: the
// nibbles up to w's (found as the lowest zero nibble of o ^ w·0x1…1, whose
// high bit is the lowest of z) move up one, w takes the lowest.
func toFront(o, w uint64) uint64 {
	const ones, highs = 0x1111111111111111, 0x8888888888888888
	x := o ^ (w * ones) // the nibble holding w becomes 0
	z := (x - ones) & ^x & highs
	m := (z&-z)<<1 - 1 // the nibbles up to w's (all of them for the last: the shift wraps to 0)
	return o&^m | (o<<4)&m | w
}

// Age stands n sector allocations of sectors that no access will look up
// again, spread evenly over the sets, for accesses that were not simulated
// (fast-forward's skipped steps): in each set its least recently used
// sectors are evicted, as many as its share of n (all of them from a share
// of its ways on), and their ways become the most recent — so the sectors
// that were there age as the skipped accesses would have aged them. The
// keep most recently used sectors (their share in each set) are neither
// evicted nor aged: they stay the most recent, the evicted ways just
// older (aligned step skips: the CTAs behind the leader read, after the
// skip, what the leader fetched just before it). It counts neither hits,
// misses nor Allocs.
func (c *L2) Age(n, keep int64) {
	if c == nil || n <= 0 {
		return
	}
	keep = max(keep, 0)
	sets := int64(c.sets)
	ways := uint(c.ways)
	for pg, ok := range c.touched {
		if !ok {
			continue // every sector of its sets invalid: nothing to age
		}
		for si := int64(pg) * setsPerPage; si < min(int64(pg+1)*setsPerPage, sets); si++ {
			// The set's share of n: ⌊(si+1)·n/sets⌋ − ⌊si·n/sets⌋ (in
			// 128 bits: n·sets can pass int64).
			k := share(si+1, n, sets) - share(si, n, sets)
			if k <= 0 {
				continue
			}
			kp := min(share(si+1, keep, sets)-share(si, keep, sets), int64(ways))
			k = min(k, int64(ways)-kp)
			if k <= 0 {
				continue
			}
			set := &c.set[si]
			tags := &set.tags
			o := set.order
			if o == 0 {
				continue // no miss has allocated in it: every sector invalid
			}
			for j := int64(0); j < k; j++ {
				victim := (o >> c.orderShift) & 0xF
				o = (o<<4 | victim) & c.orderMask
				tags[victim] = 0
				set.valid[victim] = 0
			}
			if kp > 0 { // the kept sectors back to the most recent, the evicted ways below them
				inv, kept := nibbles(k), nibbles(kp)
				o = (o>>(4*k))&kept | (o&inv)<<(4*kp) | o&^nibbles(k+kp)
			}
			set.order = o
		}
	}
}

// nibbles returns a mask of the low j nibbles (0 ≤ j ≤ 16).
func nibbles(j int64) uint64 {
	if j >= 16 {
		return ^uint64(0)
	}
	return 1<<(4*uint(j)) - 1
}

// share returns ⌊i·n/sets⌋ for 0 ≤ i ≤ sets, n ≥ 0.
func share(i, n, sets int64) int64 {
	hi, lo := bits.Mul64(uint64(i), uint64(n))
	q, _ := bits.Div64(hi, lo, uint64(sets))
	return int64(q)
}
