package mem

import (
	"math"
	"math/bits"
	"math/rand"
	"slices"
	"testing"
)

func TestL2HitsMissesAndEviction(t *testing.T) {
	// 64 KiB, 128-byte lines, 2 ways: sectors of 2 KiB, 16 sets.
	c := NewL2(64<<10, 128, 16, 2)
	if NewL2(0, 128, 16, 2) != nil {
		t.Fatal("capacity 0 must mean no L2")
	}
	if h, m := c.Access(1000, 300); h != 0 || m != 300 {
		t.Fatalf("cold: hit %d miss %d", h, m)
	}
	if h, m := c.Access(1000, 300); h != 300 || m != 0 {
		t.Fatalf("warm: hit %d miss %d", h, m)
	}
	// Presence is per line: [1000, 1300) requested lines 7..10 (896..1407),
	// so [1000, 1408) hits and only line 11 misses.
	if h, m := c.Access(1000, 500); h != 408 || m != 92 {
		t.Fatalf("partial: hit %d miss %d", h, m)
	}
	// 2-D: bursts of 64 bytes at stride 4 KiB, twice.
	if h, m := c.Access2D(1<<20, 8, 64, 4096); h != 0 || m != 512 {
		t.Fatalf("2-D cold: hit %d miss %d", h, m)
	}
	if h, _ := c.Access2D(1<<20, 8, 64, 4096); h != 512 {
		t.Fatalf("2-D warm: hit %d", h)
	}
	// Three sectors mapping to one set of two ways: LRU evicts the oldest.
	setStride := int64(2048 * 16) // sectors·sets
	base := int64(8 << 20)
	c.Access(base, 128)
	c.Access(base+setStride, 128)
	c.Access(base, 128) // base is now most recent
	c.Access(base+2*setStride, 128)
	if h, _ := c.Access(base, 128); h != 128 {
		t.Fatal("the most recently used sector must survive")
	}
	if h, _ := c.Access(base+setStride, 128); h != 0 {
		t.Fatal("the least recently used sector must be evicted")
	}
	if c.HitBytes <= 0 || c.MissBytes <= 0 {
		t.Fatal("statistics not kept")
	}
}

// The directory (recency-ordered nibbles) agrees with a plain stamp-based
// set-associative LRU over a long random
// access sequence (every hit/miss decision and the final contents) — also
// over several pages of sets, each given its initial order by its first
// miss (setsPerPage).
func TestL2IndexMatchesScan(t *testing.T) {
	for _, ways := range []int{1, 4, 7, 16} {
		testL2AgainstScan(t, ways, 32, 40*ways+13)
	}
	testL2AgainstScan(t, 4, 3*setsPerPage+5, 5*(3*setsPerPage+5))
}

func testL2AgainstScan(t *testing.T, ways, sets, sectors int) {
	c := NewL2(int64(sets*ways)*2048, 128, 16, ways) // sectors of 2 KiB
	type ref struct {
		tag   int64
		stamp uint64
		valid uint16
	}
	r := make([]ref, sets*ways)
	for i := range r {
		r[i].tag = -1
	}
	var clock uint64
	refTouch := func(sec int64, want uint16) uint16 {
		clock++
		s := int(uint64(sec) % uint64(sets))
		es := r[s*ways : (s+1)*ways]
		for w := range es {
			if es[w].tag == sec {
				h := es[w].valid & want
				es[w].valid |= want
				es[w].stamp = clock
				return h
			}
		}
		v := 0
		for w := 1; w < ways; w++ {
			if es[w].stamp < es[v].stamp {
				v = w
			}
		}
		es[v] = ref{sec, clock, want}
		return 0
	}
	x := uint64(12345)
	for i := 0; i < 200000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		sec := int64(x % uint64(sectors))
		want := uint16(1) << (x >> 40 % 16)
		if got, w := c.touch(sec, want), refTouch(sec, want); got != w {
			t.Fatalf("%d ways, access %d (sector %d): directory gives %#x, reference LRU gives %#x", ways, i, sec, got, w)
		}
	}
}

// Access2D (with its fast paths for bursts inside one sector and for
// sector-aligned strides) gives the same hits and misses, and leaves the
// same directory, as the bursts accessed one at a time (a contiguous
// transfer as one burst).
func TestL2Access2DMatchesBursts(t *testing.T) {
	// Every set index: modulo, the XOR-fold, the polynomial.
	indexes := []string{"modulo", "xor", "ipoly"}
	for _, ways := range []int{4, 3} { // 8 sets (a power of two) and 10
		for _, index := range indexes {
			testAccess2D(t, ways, index, 128, 16)
		}
	}
	// Tags of 128 bytes (NVIDIA's: 32-byte lines, four a tag; AMD's: one
	// 128-byte line): rows of several tags (Access2D's wide-row walk).
	for _, index := range indexes {
		testAccess2D(t, 3, index, 32, 4)
		testAccess2D(t, 4, index, 128, 1)
	}
}

func testAccess2D(t *testing.T, ways int, index string, line, perTag int) {
	sector := int64(line * perTag)
	capacity := 64 << 10 * sector / 2048 // 8 or 10 sets, as with sectors of 2 KiB
	a := NewL2(capacity, line, perTag, ways)
	b := NewL2(capacity, line, perTag, ways)
	for _, c := range []*L2{a, b} {
		switch index {
		case "xor":
			c.HashSets()
		case "ipoly":
			c.PolySets()
		}
	}
	rnd := xorshift(99)
	for i := 0; i < 20000; i++ {
		addr := rnd(1 << 20)
		nburst := int(rnd(12)) + 1
		burst := rnd(3000) + 1
		stride := burst + rnd(3000)
		switch rnd(6) {
		case 4:
			// Many rows of at most a sector, not whole sectors apart
			// (Access2D's stride rows: a DaVinci LU's trailing matrix),
			// some across two sectors, over a few addresses (hits).
			nburst = int(rnd(70)) + 1
			burst = rnd(uint64(sector)) + 1
			stride = rnd(6)*sector + rnd(uint64(sector)) + 1
			addr = rnd(8) * 3 * sector / 2
		case 0:
			stride = (rnd(4) + 1) * sector // whole sectors apart
			burst = min(burst, sector)
		case 1:
			// Many rows whole sectors apart, a step beyond the sets
			// (the set index wraps, rows share sets and evict each
			// other's sectors within one walk), far into the index.
			nburst = int(rnd(70)) + 1
			stride = (rnd(40) + 1) * sector
			burst = min(burst, sector-addr%sector)
			if rnd(2) == 0 {
				addr += rnd(1<<13) << 20
			}
		case 3:
			// Long bursts (up to 200 sectors: the whole sectors between
			// the first and the last walked in chunks), contiguous or
			// not.
			nburst = int(rnd(3)) + 1
			burst = rnd(uint64(200*sector)) + 1
			stride = burst + rnd(2)*rnd(uint64(4*sector))
		case 2:
			// Rows of several sectors, whole sectors apart (they may
			// overlap: a stride below the row).
			nburst = int(rnd(40)) + 1
			burst = rnd(uint64(6*sector)) + 1
			stride = (rnd(8) + 1) * sector
			if rnd(2) == 0 {
				addr += rnd(1<<13) << 20
			}
		}
		h1, m1 := a.Access2D(addr, nburst, burst, stride)
		var h2, m2 int64
		if stride == burst { // contiguous: one transfer
			nburst, burst = 1, burst*int64(nburst)
		}
		for k := 0; k < nburst; k++ {
			h, m := accessBySector(b, addr+int64(k)*stride, burst)
			h2, m2 = h2+h, m2+m
		}
		if h1 != h2 || m1 != m2 {
			t.Fatalf("access %d (addr %d, %d×%d every %d): Access2D hit %d miss %d, bursts hit %d miss %d",
				i, addr, nburst, burst, stride, h1, m1, h2, m2)
		}
	}
	if a.HitBytes != b.HitBytes || a.MissBytes != b.MissBytes {
		t.Fatal("statistics differ")
	}
	sameDirectory(t, a, b)
}

// xorshift returns a generator of pseudo-random numbers in [0, n) from
// seed (Marsaglia's xorshift64): the tests' accesses, the same every run.
func xorshift(seed uint64) func(n uint64) int64 {
	x := seed
	return func(n uint64) int64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int64(x % n)
	}
}

// accessBySector is Access of [lo, lo+n) one sector at a time (touch),
// the reference for Access2D's walks; it counts the directory's
// statistics as Access does.
func accessBySector(c *L2, lo, n int64) (hit, miss int64) {
	sectorMask := int64(1)<<c.sectorBits - 1
	for sec := lo >> c.sectorBits; sec <= (lo+n-1)>>c.sectorBits; sec++ {
		base := sec << c.sectorBits
		first, last := max(lo, base), min(lo+n-1, base|sectorMask)
		l0, l1 := uint((first-base)>>c.lineBits), uint((last-base)>>c.lineBits)
		want := uint16((uint32(1)<<(l1+1) - 1) &^ (uint32(1)<<l0 - 1))
		h, m := c.split(c.touch(sec, want), l0, l1, base, first, last+1)
		hit, miss = hit+h, miss+m
	}
	c.HitBytes += hit
	c.MissBytes += miss
	return hit, miss
}

// sameDirectory fails unless a and b hold the same sectors, lines and
// recency orders.
func sameDirectory(t *testing.T, a, b *L2) {
	t.Helper()
	for i := range a.set {
		if a.set[i] != b.set[i] {
			t.Fatalf("set %d: %+v, want %+v", i, a.set[i], b.set[i])
		}
	}
	for i := range max(len(a.where), len(b.where)) {
		var wa, wb uint8
		if i < len(a.where) {
			wa = a.where[i]
		}
		if i < len(b.where) {
			wb = b.where[i]
		}
		if wa != wb {
			t.Fatalf("where[%d]: %d, want %d", i, wa, wb)
		}
	}
	for i := range a.touched {
		if a.touched[i] != b.touched[i] {
			t.Fatalf("page %d touched: %v, want %v", i, a.touched[i], b.touched[i])
		}
	}
}

// Sectors a power of two apart crowd into one set of a modulo-indexed
// directory (16 ways: the rest miss on every pass); with HashSets they
// spread over the sets and a working set far below capacity stays.
func TestL2HashedSetsSpreadPowerOfTwoStrides(t *testing.T) {
	const line, ways = 128, 16
	capacity := int64(4 << 20)
	sector := int64(line * 16)
	sets := capacity / sector / ways
	stride := sets * sector // every sector maps to set 0 under modulo indexing
	passes := func(c *L2) (hit int64) {
		for p := 0; p < 3; p++ {
			for i := int64(0); i < 64; i++ {
				h, _ := c.Access(i*stride, line)
				if p > 0 {
					hit += h
				}
			}
		}
		return hit
	}
	plain := NewL2(capacity, line, 16, ways)
	hashed := NewL2(capacity, line, 16, ways)
	hashed.HashSets()
	if got := passes(plain); got != 0 {
		t.Errorf("modulo index: %d bytes hit; 64 sectors in one 16-way set should thrash", got)
	}
	if got, want := passes(hashed), int64(2*64*line); got != want {
		t.Errorf("hashed index: %d bytes hit, want %d (64 sectors of a 4 MiB cache stay)", got, want)
	}
}

// toFront moves a way to the front of a recency order as moving it by
// hand does: every way of 1…16-way orders (random ones beyond 6 ways).
func TestToFront(t *testing.T) {
	ref := func(order []uint64, w uint64) []uint64 {
		out := []uint64{w}
		for _, v := range order {
			if v != w {
				out = append(out, v)
			}
		}
		return out
	}
	pack := func(order []uint64) (o uint64) {
		for i, v := range order {
			o |= v << (4 * i)
		}
		return o
	}
	r := rand.New(rand.NewSource(1))
	for ways := 1; ways <= MaxL2Ways; ways++ {
		for it := 0; it < 3000; it++ {
			order := make([]uint64, ways)
			for i, v := range r.Perm(ways) {
				order[i] = uint64(v)
			}
			for _, w := range order {
				if got, want := toFront(pack(order), w), pack(ref(order, w)); got != want {
					t.Fatalf("%d ways, order %x, way %d: %x, want %x", ways, pack(order), w, got, want)
				}
			}
		}
	}
}

// TestSetIndexRemainder checks the remainder by multiplication against
// the division it replaces: set counts of real L2s (800, 1280, 1600 sets
// are not powers of two), the edges of the 32-bit range, and sector
// numbers beyond it (which fall back to the division).
func TestSetIndexRemainder(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, sets := range []uint64{3, 5, 7, 800, 1280, 1600, 4095, 1<<20 + 1, 1<<31 - 1, 1<<32 - 1} {
		c := &L2{sets: sets, modM: ^uint64(0)/sets + 1}
		check := func(s uint64) {
			if got, want := c.setIndex(int64(s)), s%sets; got != want {
				t.Fatalf("sets %d: sector %d in set %d, want %d", sets, s, got, want)
			}
		}
		for _, s := range []uint64{0, 1, sets - 1, sets, sets + 1, 1<<32 - 1, 1 << 32, 1<<40 + 3} {
			check(s)
		}
		for i := 0; i < 100000; i++ {
			check(uint64(rng.Uint32()))
			check(rng.Uint64() >> 2)
		}
	}
}

// Rows whose last address would pass the int64 range take the general
// loop, not the strided-rows path (where the wrapped address looked like
// a small sector and the walk indexed past the where index: a panic).
func TestL2Access2DHugeStride(t *testing.T) {
	c := NewL2(1<<20, 128, 16, 16)
	if hit, miss := c.Access2D(0, 5, 64, 1<<62); hit+miss != 5*64 {
		t.Errorf("hit %d + miss %d, want %d bytes", hit, miss, 5*64)
	}
}

// A burst ending at the top of the address range walks its sectors and
// stops (the loop's bound, a sector's start below the end, wrapped past
// the last sector and ran for about 2^52 more).
func TestL2Access2DTopOfRange(t *testing.T) {
	c := NewL2(1<<20, 128, 16, 16)
	const n = 3 * 2048
	if hit, miss := c.Access2D(math.MaxInt64-n, 1, n, n); hit+miss != n {
		t.Errorf("hit %d + miss %d, want %d bytes", hit, miss, n)
	}
}

// Age stands sector allocations for accesses not simulated: a set's share
// of n evicts its least recently used sectors (the most recent stay while
// the share is under its ways), without counting hits, misses or Allocs;
// Allocs counts the sectors allocated by lookups.
func TestL2Age(t *testing.T) {
	// 64 KiB, 128-byte lines, 2 ways: sectors of 2 KiB, 16 sets; sector s
	// is in set s mod 16.
	c := NewL2(64<<10, 128, 16, 2)
	const sec = 2 << 10
	for s := int64(0); s < 32; s++ { // two sectors a set: s and s+16
		c.Access(s*sec, 128)
	}
	if c.Allocs != 32 {
		t.Fatalf("allocs %d, want 32", c.Allocs)
	}
	h0, m0, a0 := c.HitBytes, c.MissBytes, c.Allocs
	c.Age(16, 0) // one sector a set: the older of the two (s < 16) goes
	if c.HitBytes != h0 || c.MissBytes != m0 || c.Allocs != a0 {
		t.Errorf("Age counted: hits %d → %d, misses %d → %d, allocs %d → %d", h0, c.HitBytes, m0, c.MissBytes, a0, c.Allocs)
	}
	for s := int64(31); s >= 0; s-- { // the newer first: a miss evicts
		h, _ := c.Access(s*sec, 128)
		if want := s >= 16; (h > 0) != want {
			t.Errorf("sector %d after aging by one a set: hit %v, want %v", s, h > 0, want)
		}
	}
	// Aging by a whole set's ways leaves nothing.
	c.Age(32, 0)
	for s := int64(0); s < 32; s++ {
		if h, _ := c.Access(s*sec, 128); h > 0 {
			t.Errorf("sector %d hit after aging by every way", s)
		}
	}
	// Uneven shares: 8 over 16 sets ages every other set by one.
	c = NewL2(64<<10, 128, 16, 2)
	for s := int64(0); s < 32; s++ {
		c.Access(s*sec, 128)
	}
	c.Age(8, 0)
	evicted := 0
	for s := int64(0); s < 16; s++ {
		if h, _ := c.Access((s+16)*sec, 128); h > 0 {
			continue // the newer sector stays in every set
		}
		t.Errorf("sector %d (newer) evicted by aging 8 over 16 sets", s+16)
	}
	for s := int64(0); s < 16; s++ {
		if h, _ := c.Access(s*sec, 128); h == 0 {
			evicted++
		}
	}
	if evicted != 8 {
		t.Errorf("aging 8 over 16 sets evicted %d of the older sectors, want 8", evicted)
	}
	// Kept sectors: aging by both ways of every set but keeping the most
	// recent of each evicts only the older, and the kept one stays the
	// most recent — the next miss takes the evicted way, not it.
	c = NewL2(64<<10, 128, 16, 2)
	for s := int64(0); s < 32; s++ {
		c.Access(s*sec, 128)
	}
	c.Age(32, 16)
	for s := int64(32); s < 48; s++ { // a new sector a set
		if h, _ := c.Access(s*sec, 128); h > 0 {
			t.Errorf("new sector %d hit", s)
		}
	}
	for s := int64(31); s >= 0; s-- { // the newer first: a miss evicts
		if h, _ := c.Access(s*sec, 128); (h > 0) != (s >= 16) {
			t.Errorf("sector %d after aging every way but the kept newest and a miss a set: hit %v, want %v", s, h > 0, s >= 16)
		}
	}
	var nilL2 *L2
	nilL2.Age(5, 0) // no L2: nothing to age
}

// A tag covering many lines holds one row of a strided tile walk as it
// would a whole run of lines: rows 16 KiB apart (a half-precision 8192-wide
// matrix's) cost a tag each, so a directory of 2 KiB tags holds a sixteenth
// of the rows one of 128-byte tags does — NVIDIA's L2 tags 128 bytes
// (32-byte sectors × 4), and machine files say how many lines a tag covers.
func TestL2LinesPerTag(t *testing.T) {
	const capacity, rows, pitch = 1 << 20, 4096, 16 << 10 // 4096 rows of 128 B: half the capacity
	for _, c := range []struct {
		line, perTag int
		hits         bool
	}{{128, 1, true}, {32, 4, true}, {128, 16, false}, {512, 16, false}} {
		l2 := NewL2(capacity, c.line, c.perTag, 16)
		l2.HashSets()
		if h, m := l2.Access2D(0, rows, 128, pitch); h != 0 || m != rows*128 {
			t.Fatalf("%d-byte lines, %d a tag: cold walk hit %d, missed %d", c.line, c.perTag, h, m)
		}
		h, m := l2.Access2D(0, rows, 128, pitch)
		if c.hits && (h < rows*128*9/10) || !c.hits && h > rows*128/10 {
			t.Errorf("%d-byte lines, %d a tag: the walk again hit %d bytes, missed %d (want mostly %s)", c.line, c.perTag, h, m, map[bool]string{true: "hits", false: "misses"}[c.hits])
		}
	}
	if NewL2(capacity, 32, 4, 16).sectorBits != 7 || NewL2(capacity, 128, 1, 16).sectorBits != 7 {
		t.Error("a tag of 4 32-byte lines, or of one 128-byte line, covers 128 bytes")
	}
	// The sectors of a GM: 16 GiB in 2 KiB tags and in 128-byte ones
	// (rounded up).
	if got := L2Sectors(16<<30, 128, 16); got != 8<<20 {
		t.Errorf("16 GiB of 2 KiB tags: %d sectors, want %d", got, 8<<20)
	}
	if got := L2Sectors(16<<30+1, 32, 4); got != 128<<20+1 {
		t.Errorf("16 GiB + 1 byte of 128-byte tags: %d sectors, want %d", got, 128<<20+1)
	}
	// The where index: a byte per tag's worth of GM, up to maxWhere.
	if got := IndexFootprint(capacity, 16<<30, 128, 16); got != 8<<20 {
		t.Errorf("where index of 2 KiB tags over 16 GiB: %d bytes, want 8 MiB", got)
	}
	if got := IndexFootprint(capacity, 16<<30, 32, 4); got != maxWhere {
		t.Errorf("where index of 128-byte tags over 16 GiB: %d bytes, want the cap %d", got, maxWhere)
	}
	if IndexFootprint(0, 16<<30, 32, 4) != 0 {
		t.Error("no cache, no index")
	}
}

// A directory given a span (SpanIndex) keeps its where index within
// IndexFootprint's bytes for it however far its accesses reach — the
// index grows by doubling, so unbounded it passes the estimate (5 MiB of
// 128-byte tags: 40960 entries for the span, 65536 grown) — and gives
// the same hits and misses as one without (sectors beyond are scanned).
// Reach is how far the accesses reached.
func TestL2SpanIndex(t *testing.T) {
	const capacity, span, reach = 1 << 20, 5 << 20, 12 << 20
	bounded, free := NewL2(capacity, 128, 1, 16), NewL2(capacity, 128, 1, 16)
	bounded.SpanIndex(span)
	x := uint64(99)
	for i := range 100000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		addr, n := int64(x%(span+span/2)), int64(x>>40%4096+1)
		if i%64 == 0 {
			addr = int64(x % reach) // (beyond the span too)
		}
		h1, m1 := bounded.Access(addr, n)
		h2, m2 := free.Access(addr, n)
		if h1 != h2 || m1 != m2 {
			t.Fatalf("access %d of %d bytes at %d: bounded index hit %d missed %d, unbounded %d and %d", i, n, addr, h1, m1, h2, m2)
		}
	}
	if got, est := int64(len(bounded.where)), IndexFootprint(capacity, span, 128, 1); got > est || est != span/128 {
		t.Errorf("index of a %d-byte span: %d entries, estimate %d (want %d)", span, got, est, span/128)
	}
	if int64(len(free.where)) <= IndexFootprint(capacity, span, 128, 1) {
		t.Errorf("the unbounded index took %d entries: the test does not reach past the span", len(free.where))
	}
	if r := bounded.Reach(); r != span {
		t.Errorf("bounded Reach %d, want the span %d (the accesses beyond it are not indexed)", r, span)
	}
	if r := free.Reach(); r <= span || r > reach || r%128 != 0 {
		t.Errorf("unbounded Reach %d, want the end of a sector in (%d, %d]", r, span, reach)
	}
}

// A sector beyond MaxSector (its tag would not fit 32 bits) is never
// present: its accesses miss, allocate nothing and leave the sectors below
// it alone (a tag truncated to 32 bits would alias sector 0's).
func TestL2BeyondMaxSector(t *testing.T) {
	for _, hash := range []bool{false, true} {
		c := NewL2(1<<20, 128, 1, 16)
		if hash {
			c.HashSets()
		}
		c.Access(0, 128) // sector 0, tag 1
		top := int64(MaxSector+1) << 7
		for range 2 {
			for _, a := range []struct{ addr, n int64 }{{top, 128}, {top - 128, 256}, {top + 1<<32<<7, 128}} {
				h, m := c.Access(a.addr, a.n)
				if a.addr < top && h+m != a.n || a.addr >= top && (h != 0 || m != a.n) {
					t.Fatalf("hash %v: access [%#x, +%d): hit %d, missed %d", hash, a.addr, a.n, h, m)
				}
			}
			if h, m := c.Access2D(top, 4, 128, 1<<20); h != 0 || m != 512 {
				t.Fatalf("hash %v: rows beyond MaxSector: hit %d, missed %d", hash, h, m)
			}
		}
		if c.Allocs != 2 { // sector 0 and MaxSector, once each
			t.Errorf("hash %v: %d sectors allocated, want 2", hash, c.Allocs)
		}
		if h, _ := c.Access(0, 128); h != 128 {
			t.Errorf("hash %v: sector 0 evicted or aliased", hash)
		}
	}
}

// refRead is a read of [lo, lo+n) sector by sector (touch): the bytes
// requested of lines present and the bytes of the lines absent, whole;
// each run of a sector's absent lines is passed to fetch.
func refRead(c *L2, lo, n int64, fetch func(addr, n int64)) (hit, fetched int64) {
	sector := int64(1) << c.sectorBits
	for sec := lo >> c.sectorBits; sec <= (lo+n-1)>>c.sectorBits; sec++ {
		base := sec << c.sectorBits
		first, last := max(lo, base), min(lo+n-1, base|(sector-1))
		l0, l1 := uint((first-base)>>c.lineBits), uint((last-base)>>c.lineBits)
		want := uint16((uint32(1)<<(l1+1) - 1) &^ (uint32(1)<<l0 - 1))
		have := c.touch(sec, want)
		h, _ := c.split(have, l0, l1, base, first, last+1)
		hit += h
		fetched += int64(bits.OnesCount16(want&^have)) << c.lineBits
		// Each run of consecutive absent lines, one access.
		for l := l0; l <= l1; {
			if (want&^have)&(1<<l) == 0 {
				l++
				continue
			}
			e := l
			for e+1 <= l1 && (want&^have)&(1<<(e+1)) != 0 {
				e++
			}
			if fetch != nil {
				fetch(base+int64(l)<<c.lineBits, int64(e-l+1)<<c.lineBits)
			}
			l = e + 1
		}
	}
	return hit, fetched
}

// Read2DThrough looks up below exactly the lines the directory found
// absent, in the order it found them: against a reference that walks the
// bursts sector by sector and sends each run of a sector's absent lines
// below as one access (directories below of other shapes besides: a tag
// of one 128-byte line, and one of four 32-byte lines). Both count whole
// lines fetched as misses, the rest of the bytes asked of them as hits:
// the hits and misses below add up to the misses above.
func TestL2Read2DThrough(t *testing.T) {
	for _, shape := range []struct{ line, perTag, belowLine, belowPerTag int }{{128, 1, 128, 1}, {32, 4, 32, 4}, {32, 4, 128, 1}, {128, 1, 32, 4}} {
		mk := func(line, perTag int, capacity int64) *L2 {
			c := NewL2(capacity, line, perTag, 4)
			c.HashSets()
			return c
		}
		a, b := mk(shape.line, shape.perTag, 16<<10), mk(shape.line, shape.perTag, 16<<10)
		la, lb := mk(shape.belowLine, shape.belowPerTag, 64<<10), mk(shape.belowLine, shape.belowPerTag, 64<<10)
		rnd := xorshift(7)
		sector := int64(shape.line * shape.perTag)
		var sumH, sumF, sumBH, sumBF int64
		for i := 0; i < 20000; i++ {
			addr := rnd(1 << 18)
			nburst := int(rnd(40)) + 1
			burst := rnd(uint64(3*sector)) + 1
			stride := burst + rnd(2000)
			if rnd(2) == 0 {
				stride = (rnd(6) + 1) * sector
			}
			h1, f1, bh1, bf1 := a.Read2DThrough(la, addr, nburst, burst, stride)
			sumH, sumF, sumBH, sumBF = sumH+h1, sumF+f1, sumBH+bh1, sumBF+bf1
			var h2, f2, bh2, bf2 int64
			if stride == burst { // contiguous: one transfer (as Access2D)
				nburst, burst = 1, burst*int64(nburst)
			}
			for k := 0; k < nburst; k++ {
				h, f := refRead(b, addr+int64(k)*stride, burst, func(addr, n int64) {
					bh, bf := refRead(lb, addr, n, nil)
					bh2, bf2 = bh2+bh, bf2+bf
				})
				h2, f2 = h2+h, f2+f
			}
			if h1 != h2 || f1 != f2 || bh1 != bh2 || bf1 != bf2 {
				t.Fatalf("%+v, access %d (addr %d, %d×%d every %d): hit %d fetched %d, below hit %d fetched %d; want %d %d %d %d",
					shape, i, addr, nburst, burst, stride, h1, f1, bh1, bf1, h2, f2, bh2, bf2)
			}
		}
		sameDirectory(t, a, b)
		sameDirectory(t, la, lb)
		if a.HitBytes != sumH || a.MissBytes != sumF {
			t.Errorf("%+v: counted hit %d, miss %d; want the hits %d and the bytes fetched %d", shape, a.HitBytes, a.MissBytes, sumH, sumF)
		}
		if la.HitBytes != sumBH || la.MissBytes != sumBF {
			t.Errorf("%+v: below counted hit %d, miss %d; want the hits %d and the bytes fetched %d", shape, la.HitBytes, la.MissBytes, sumBH, sumBF)
		}
		if shape.line == shape.belowLine && la.HitBytes+la.MissBytes != a.MissBytes {
			t.Errorf("%+v: below counted hit %d + miss %d, want the %d fetched above", shape, la.HitBytes, la.MissBytes, a.MissBytes)
		}
	}
}

// A read pays for the whole lines it fetches: a 128-byte row straddling
// two absent 128-byte lines fetches 256 bytes, and the rest of those
// lines is then served without another fetch. Counted, the hits are the
// bytes asked of lines present, the misses the bytes fetched.
// A write counts every byte a miss (it goes through) and makes its lines
// present.
func TestL2ReadFetchesWholeLines(t *testing.T) {
	for _, shape := range []struct{ line, perTag int }{{128, 1}, {32, 4}, {128, 16}} {
		c := NewL2(64<<10, shape.line, shape.perTag, 4)
		line := int64(shape.line)
		if h, f := c.Read2D(line/2, 1, line, line); h != 0 || f != 2*line {
			t.Errorf("%+v: straddling read: hit %d fetched %d, want 0 and %d", shape, h, f, 2*line)
		}
		// The two halves left: present, nothing fetched.
		if h, f := c.Read2D(0, 2, line/2, line+line/2); h != line || f != 0 {
			t.Errorf("%+v: the rest of the lines: hit %d fetched %d, want %d and 0", shape, h, f, line)
		}
		// Rows of a third of a line each, 2 lines apart: a line each.
		if h, f := c.Read2D(8*line, 4, line/3, 2*line); h != 0 || f != 4*line {
			t.Errorf("%+v: partial rows: hit %d fetched %d, want 0 and %d", shape, h, f, 4*line)
		}
		if c.HitBytes != line || c.MissBytes != 6*line {
			t.Errorf("%+v: counted hit %d miss %d, want %d and %d", shape, c.HitBytes, c.MissBytes, line, 6*line)
		}
		h0, m0 := c.HitBytes, c.MissBytes
		c.Write2D(32*line+1, 3, line, 4*line)
		if c.HitBytes != h0 || c.MissBytes != m0+3*line {
			t.Errorf("%+v: write counted hit +%d miss +%d, want 0 and %d", shape, c.HitBytes-h0, c.MissBytes-m0, 3*line)
		}
		if h, f := c.Read2D(32*line, 1, 2*line, 2*line); h != 2*line || f != 0 {
			t.Errorf("%+v: lines written: hit %d fetched %d, want %d and 0", shape, h, f, 2*line)
		}
	}
}

// Read2DThrough splits a fetch per line: of a request straddling a line
// below holds and one it does not, the first is a hit below, the second
// fetched from beyond; below's hits and misses add up to the bytes
// fetched above.
func TestL2Read2DThroughSplitsLines(t *testing.T) {
	a, b, llc := NewL2(64<<10, 128, 1, 4), NewL2(64<<10, 128, 1, 4), NewL2(1<<20, 128, 1, 16)
	a.Read2DThrough(llc, 128, 1, 128, 128) // line 1 into a and the LLC
	h, f, lh, lf := b.Read2DThrough(llc, 64, 1, 128, 128)
	if h != 0 || f != 256 || lh != 128 || lf != 128 {
		t.Errorf("straddling lines 0 (absent below) and 1 (present): hit %d fetched %d, below hit %d fetched %d; want 0 256 128 128", h, f, lh, lf)
	}
	if llc.HitBytes != 128 || llc.MissBytes != 256 || llc.HitBytes+llc.MissBytes != a.MissBytes+b.MissBytes {
		t.Errorf("below counted hit %d miss %d, want 128 and 256 (the 384 fetched above: %d + %d)", llc.HitBytes, llc.MissBytes, a.MissBytes, b.MissBytes)
	}
}

// A span's index (SpanIndex: the program's tensors, which its run will
// use) grows at once to the whole span past its first size; a bound
// (BoundIndex: the whole memory) grows by doubling, to what is used.
func TestL2SpanIndexGrowsOnce(t *testing.T) {
	const span = 64 << 20 // 524288 128-byte tags
	spanned, bounded := NewL2(1<<20, 128, 1, 16), NewL2(1<<20, 128, 1, 16)
	spanned.SpanIndex(span)
	bounded.BoundIndex(span)
	for _, c := range []*L2{spanned, bounded} {
		c.Access(0, 128)
		c.Access(minWhere*128, 128) // (the first sector past the first size)
	}
	if got := int64(len(spanned.where)); got != span/128 {
		t.Errorf("spanned index: %d entries after its first growth, want the span's %d", got, span/128)
	}
	if got := int64(len(bounded.where)); got != 2*minWhere {
		t.Errorf("bounded index: %d entries after its first growth, want %d (doubled)", got, 2*minWhere)
	}
}

// Install2D leaves the directory as a read of the same lines would —
// they hit after it, and evict what such a read evicts — counting
// nothing (fast-forward's step skips install what their skipped steps
// read without counting those bytes twice).
func TestL2Install2D(t *testing.T) {
	for _, lines := range []int{1, 16} { // an LLC's line tags, an L2's sectors
		installed, read := NewL2(256<<10, 128, lines, 4), NewL2(256<<10, 128, lines, 4)
		rng := rand.New(rand.NewSource(int64(lines)))
		for range 400 {
			addr, rows := int64(rng.Intn(4<<20)), 1+rng.Intn(64)
			burst, stride := int64(32+rng.Intn(512)), int64(8192)
			installed.Install2D(addr, rows, burst, stride)
			read.Read2D(addr, rows, burst, stride)
		}
		if installed.HitBytes != 0 || installed.MissBytes != 0 || installed.Allocs != 0 {
			t.Errorf("%d lines a tag: Install2D counted hits %d, misses %d, allocations %d", lines, installed.HitBytes, installed.MissBytes, installed.Allocs)
		}
		for range 200 { // the same contents: the same hits, line by line
			addr := int64(rng.Intn(4 << 20))
			h1, f1 := installed.Read2D(addr, 4, 256, 8192)
			if h2, f2 := read.Read2D(addr, 4, 256, 8192); h1 != h2 || f1 != f2 {
				t.Fatalf("%d lines a tag: after installs hit %d fetched %d, after reads %d and %d", lines, h1, f1, h2, f2)
			}
		}
	}
}

// An LRU cache given a stream of tiles holds the same lines after all of
// them as after only those whose bytes, counted from the end, reach three
// times its capacity (fast-forward's step skips install no more: arch's
// installReach) — with sets indexed plainly and hashed; not after those
// reaching once its capacity (sets fill unevenly).
func TestL2InstallTail(t *testing.T) {
	for _, index := range []string{"plain", "hashed", "poly"} {
		all, tail := NewL2(1<<20, 128, 1, 16), NewL2(1<<20, 128, 1, 16)
		for _, c := range []*L2{all, tail} {
			switch index {
			case "hashed":
				c.HashSets()
			case "poly":
				c.PolySets()
			}
		}
		// A GEMM's k-steps: each a 64-row slice of A (rows 32 KiB apart)
		// and a 64-row panel of B, then the next k; and tiles at random
		// places (whose lines fill the sets unevenly, as a Poisson draw).
		type tile struct{ addr, rows, row, stride int64 }
		var tiles []tile
		rng := rand.New(rand.NewSource(1))
		for k := range int64(400) {
			tiles = append(tiles, tile{k * 256, 64, 256, 32 << 10}, tile{64<<20 + k*64*1024, 64, 1024, 1024},
				tile{1<<30 + rng.Int63n(1<<30)&^127, 1 + rng.Int63n(64), 128 * (1 + rng.Int63n(4)), 64 << 10})
		}
		for _, reach := range []int64{3, 1} {
			all, tail := all.clone(), tail.clone()
			first, n := len(tiles), int64(0)
			for first > 0 && n < reach*tail.Capacity() {
				first--
				n += tiles[first].rows * tiles[first].row
			}
			if first == 0 {
				t.Fatalf("the tiles' bytes do not pass %d capacities: the test tells nothing", reach)
			}
			for i, x := range tiles {
				all.Install2D(x.addr, int(x.rows), x.row, x.stride)
				if i >= first {
					tail.Install2D(x.addr, int(x.rows), x.row, x.stride)
				}
			}
			differ := 0
			for si := range all.set {
				if !slices.Equal(all.holding(si), tail.holding(si)) {
					differ++
				}
			}
			if reach == 3 && differ > 0 || reach == 1 && differ == 0 {
				t.Errorf("%s sets: %d of %d sets hold other lines after all the tiles than after the last %d, reaching %d capacities", index, differ, len(all.set), len(tiles)-first, reach)
			}
		}
	}
}

// clone returns a copy of c (tests).
func (c *L2) clone() *L2 {
	x := *c
	x.set, x.where, x.touched = slices.Clone(c.set), slices.Clone(c.where), slices.Clone(c.touched)
	return &x
}

// holding returns the sectors set si holds and their lines present,
// sorted (tests).
func (c *L2) holding(si int) [][2]uint32 {
	var out [][2]uint32
	st := &c.set[si]
	for w, tag := range st.tags[:c.ways] {
		if tag != 0 && st.valid[w] != 0 {
			out = append(out, [2]uint32{tag, uint32(st.valid[w])})
		}
	}
	slices.SortFunc(out, func(a, b [2]uint32) int { return int(a[0]) - int(b[0]) })
	return out
}
