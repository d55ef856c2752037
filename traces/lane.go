package traces

import (
	"encoding/binary"
	"iter"
	"slices"
	"sort"
	"unsafe"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/sim"
)

// A Lane keeps its newest slices in a small hot tail of plain Slices, reused
// in place; whenever the tail holds tailMax slices, its oldest blockLen are
// sealed: encoded, each relative to the slice before it, into the timeline's
// block arena — one sequential byte stream shared by all lanes.
//
// Why: a recorder keeps every slice of every pipe of every core (millions in
// a long run; a live view holds them while the engine runs). Fixed 16-byte
// slots in per-lane chunks were hundreds of interleaved write streams of
// fresh memory; sealed blocks take about 4 bytes a slice (most slices start
// where the one before ended, a lane has few kinds of slices, pipelines
// repeat lengths, ref steps are small) in one stream, and the tails (1 KiB
// a lane) stay in the cache. A live view of LU 32k now keeps the whole run
// within DefaultLiveLimit (0.66 GB peak; the slots needed 1.5 GB and
// dropped the older half).
//
// Random access decodes a block from its start (at most blockLen slices);
// Scan and ScanBack iterate in order without that cost.

// blockShift sets the slices per sealed block; tailMax is the tail length
// at which the oldest block is sealed: the tail keeps tailKeep slices, so
// that a slice arriving late by up to that many places (intervals close
// after the flag events at their end: usually one or two) is inserted in
// the tail, and sealing moves only those.
const (
	blockShift = 5
	blockLen   = 1 << blockShift
	tailKeep   = 8
	tailMax    = blockLen + tailKeep
)

// Lane is the slices of one pipe ordered by From (equal From in arrival
// order).
type Lane struct {
	blocks []laneBlock // sealed, in order, blockLen slices each
	tail   []Slice     // the newest slices, in order
	arena  *blockArena // where the blocks are (nil before the first seal)
	kinds  kindTable   // the slice kinds the blocks refer to
	last   sim.Time    // at least the largest From (appends go last when not below)
}

// laneBlock is a sealed block: the From of its first slice (searches need
// no decoding) and where its encoding starts.
type laneBlock struct {
	from  sim.Time
	chunk int32
	off   uint32
}

// Len returns the number of slices.
func (l *Lane) Len() int { return len(l.blocks)<<blockShift + len(l.tail) }

// sealed returns the number of slices in sealed blocks.
func (l *Lane) sealed() int { return len(l.blocks) << blockShift }

// At returns slice i (0 <= i < Len). A sealed slice costs decoding its
// block up to it; to visit many, use Scan or ScanBack.
func (l *Lane) At(i int) Slice {
	n := l.sealed()
	if i >= n {
		return l.tail[i-n]
	}
	d := l.reader(i >> blockShift)
	var s Slice
	for range i&(blockLen-1) + 1 {
		d.next(&s)
	}
	return s
}

// Scan returns the slices from index i on, in order, with their indices.
func (l *Lane) Scan(i int) iter.Seq2[int, Slice] {
	return func(yield func(int, Slice) bool) {
		i = max(i, 0)
		var s Slice
		for k := i >> blockShift; k < len(l.blocks); k++ {
			d := l.reader(k)
			for j := k << blockShift; j < (k+1)<<blockShift; j++ {
				d.next(&s)
				if j >= i && !yield(j, s) {
					return
				}
			}
		}
		n := l.sealed()
		for j := max(i-n, 0); j < len(l.tail); j++ {
			if !yield(n+j, l.tail[j]) {
				return
			}
		}
	}
}

// ScanBack returns the slices from index i (clamped to Len-1) down to 0,
// with their indices.
func (l *Lane) ScanBack(i int) iter.Seq2[int, Slice] {
	return func(yield func(int, Slice) bool) {
		n := l.sealed()
		i = min(i, l.Len()-1)
		for j := i - n; j >= 0; j-- {
			if !yield(n+j, l.tail[j]) {
				return
			}
		}
		var buf [blockLen]Slice
		for k := min(i, n-1) >> blockShift; k >= 0; k-- {
			l.decodeBlock(k, &buf)
			for j := min(i-k<<blockShift, blockLen-1); j >= 0; j-- {
				if !yield(k<<blockShift+j, buf[j]) {
					return
				}
			}
		}
	}
}

// Search returns the smallest index i in [0, Len) at which f is true,
// assuming f is false then true along the lane (as sort.Search); Len if
// none.
func (l *Lane) Search(f func(*Slice) bool) int {
	n := l.sealed()
	if len(l.tail) > 0 {
		if s := l.tail[0]; !f(&s) {
			return n + sort.Search(len(l.tail), func(j int) bool { s := l.tail[j]; return f(&s) })
		}
	}
	// The first block whose first slice satisfies f; the answer is in the
	// block before it, or its first slice.
	var s Slice
	b := sort.Search(len(l.blocks), func(k int) bool {
		d := l.reader(k)
		d.next(&s)
		return f(&s)
	})
	if b == 0 {
		return 0
	}
	d := l.reader(b - 1)
	for j := range blockLen {
		d.next(&s)
		if f(&s) {
			return (b-1)<<blockShift + j
		}
	}
	return b << blockShift
}

// Slices returns a copy of the lane's slices.
func (l *Lane) Slices() []Slice {
	out := make([]Slice, 0, l.Len())
	for _, s := range l.Scan(0) {
		out = append(out, s)
	}
	return out
}

// addSlice appends s to lane p keeping the stall totals.
func (c *CoreTimeline) addSlice(t *Timeline, p int, s Slice) {
	d := s.To - s.From
	if s.Class == ClassFlag {
		d = 0 // (a conditional move: flag marks and intervals come mixed)
	}
	if p >= len(c.Lanes) {
		c.grow(p, -1)
	}
	c.stall[p][s.Cause] += d
	l := &c.Lanes[p]
	if len(l.tail) >= tailMax {
		l.seal(t)
	}
	if s.From >= l.last {
		// The common case: s goes last.
		l.last = s.From
		if l.tail == nil {
			l.tail = make([]Slice, 0, tailMax)
		}
		l.tail = append(l.tail, s)
		return
	}
	l.insert(s)
}

// insert places s after the slices with From ≤ s.From. Intervals close
// after the flag events at their end, so s usually goes one or two places
// back, in the tail; a slice going back beyond the tail first brings the
// last sealed block back into it.
func (l *Lane) insert(s Slice) {
	for len(l.blocks) > 0 && (len(l.tail) == 0 || l.tail[0].From > s.From) && l.lastSealed().From > s.From {
		l.unseal()
	}
	i := len(l.tail)
	for i > 0 && l.tail[i-1].From > s.From {
		i--
	}
	l.tail = append(l.tail, Slice{})
	copy(l.tail[i+1:], l.tail[i:])
	l.tail[i] = s
}

// lastSealed returns the last slice of the last sealed block.
func (l *Lane) lastSealed() Slice {
	var buf [blockLen]Slice
	l.decodeBlock(len(l.blocks)-1, &buf)
	return buf[blockLen-1]
}

// seal encodes the oldest blockLen slices of the tail into a block.
func (l *Lane) seal(t *Timeline) {
	if l.arena == nil {
		if t.arena == nil {
			t.arena = new(blockArena)
		}
		l.arena = t.arena
	}
	ch, off := l.arena.put(l.tail[:blockLen], &l.kinds)
	l.blocks = append(l.blocks, laneBlock{from: l.tail[0].From, chunk: ch, off: off})
	n := copy(l.tail, l.tail[blockLen:])
	l.tail = l.tail[:n]
}

// unseal moves the last sealed block back to the front of the tail.
func (l *Lane) unseal() {
	k := len(l.blocks) - 1
	tail := make([]Slice, blockLen, blockLen+len(l.tail)+tailMax)
	l.decodeBlock(k, (*[blockLen]Slice)(tail))
	l.tail = append(tail, l.tail...)
	l.arena.release(l.blocks[k].chunk)
	l.blocks = l.blocks[:k]
}

// dropBefore drops the leading sealed blocks whose slices all end by t and
// returns how many slices it dropped (the tail is kept).
func (l *Lane) dropBefore(t sim.Time) int {
	var buf [blockLen]Slice
	k := 0
	for ; k < len(l.blocks); k++ {
		l.decodeBlock(k, &buf)
		end := buf[0].To
		for j := range buf {
			end = max(end, buf[j].To)
		}
		if end > t {
			break
		}
		l.arena.release(l.blocks[k].chunk)
	}
	if k > 0 {
		l.blocks = append([]laneBlock(nil), l.blocks[k:]...)
	}
	return k << blockShift
}

// release gives the lane's sealed blocks back to the arena.
func (l *Lane) release() {
	for _, b := range l.blocks {
		l.arena.release(b.chunk)
	}
}

// footprint returns the bytes the lane holds outside the arena.
func (l *Lane) footprint() int64 {
	return int64(cap(l.tail))*int64(unsafe.Sizeof(Slice{})) + int64(cap(l.blocks))*int64(unsafe.Sizeof(laneBlock{}))
}

// ---- the block encoding ----

// Each slice is a control byte, then what it does not imply:
//
//	ctrl bits 0–1: From is the To of the slice before (fromTo), its From
//	               (fromFrom), that From plus a uvarint (fromDelta), or
//	               that From plus a varint, with a varint length following
//	               (fromRaw: out of order or negative lengths; never
//	               recorded, but kept exact)
//	ctrl bit 2:    ref is not 0: a zigzag uvarint step from the block's
//	               previous ref follows
//	ctrl bit 3:    the length is that of the block's previous slice of the
//	               same kind (pipelines repeat: same instruction shapes,
//	               one-cycle issue slots): no length field
//	ctrl bits 4–7: the kind — cause, class and name — as an index into the
//	               lane's table of its first 15 kinds; 15: a cause byte, a
//	               class byte and a uvarint name follow
//
// in the order: kind bytes, From delta, length (uvarint), ref step. The
// first slice's "slice before" is an empty one at the block's From.
const (
	fromTo      = 0
	fromFrom    = 1
	fromDelta   = 2
	fromRaw     = 3
	ctrlRef     = 1 << 2
	ctrlRepeat  = 1 << 3
	kindShift   = 4
	kindInline  = 15
	maxKinds    = kindInline
	maxEntry    = 3 + 4*binary.MaxVarintLen64
	maxBlock    = blockLen * maxEntry
	uvarintFast = 1 << 7
)

// kindKey is a slice's kind: cause, class and name.
func kindKey(s *Slice) uint32 { return uint32(s.Cause) | uint32(s.Class)<<8 | uint32(s.name)<<16 }

// kindTable is a lane's kinds, in order of first use (never changed, so
// every block decodes with the table as it is now), and a direct-mapped
// index of them for the encoder.
type kindTable struct {
	keys [maxKinds]uint32
	n    uint8
	slot [16]uint8 // 1 + the index of a key hashing there (0: none)
}

// index returns the index of key, adding it while there is room
// (kindInline when there is none).
func (t *kindTable) index(key uint32) uint {
	h := key * 0x9E3779B1 >> 28
	if i := uint(t.slot[h]) - 1; i < maxKinds && t.keys[i] == key {
		return i
	}
	return t.find(key, h)
}

// find is index past the direct-mapped slot: a scan, remembering its
// result in the slot.
func (t *kindTable) find(key, h uint32) uint {
	i := uint8(0)
	for i < t.n && t.keys[i] != key {
		i++
	}
	if i == t.n {
		if t.n == maxKinds {
			return kindInline
		}
		t.keys[i] = key
		t.n++
	}
	t.slot[h&15] = i + 1
	return uint(i)
}

// appendBlock appends the encoding of ss (From-ordered, at most blockLen
// slices) to dst, with the kinds of lane table kt (which it extends). Two
// passes, each with few live variables: the first picks every slice's
// control byte, the second writes the fields it calls for.
func appendBlock(dst []byte, ss []Slice, kt *kindTable) []byte {
	var ctrls [blockLen]byte
	ctrls = blockControls(ss, kt, ctrls)
	n := len(dst)
	dst = slices.Grow(dst, maxBlock)[:n+maxBlock]
	w := dst[n:]
	k := 0
	prevFrom := ss[0].From
	var prevRef int64
	for i := range ss {
		s := &ss[i]
		ctrl := ctrls[i&(blockLen-1)]
		w[k] = ctrl
		k++
		if ctrl>>kindShift == kindInline {
			w[k], w[k+1] = byte(s.Cause), byte(s.Class)
			k = putUvarint(w, k+2, uint64(s.name))
		}
		switch ctrl & 3 {
		case fromDelta:
			k = putUvarint(w, k, uint64(s.From-prevFrom))
		case fromRaw:
			k += binary.PutVarint(w[k:], int64(s.From-prevFrom))
			k += binary.PutVarint(w[k:], int64(s.To-s.From))
		}
		if ctrl&(ctrlRepeat|3) < fromRaw { // neither a repeat nor raw
			k = putUvarint(w, k, uint64(s.To-s.From))
		}
		if ctrl&ctrlRef != 0 {
			d := int64(s.ref) - prevRef
			k = putUvarint(w, k, uint64(d<<1^d>>63)) // zigzag, as binary.PutVarint
			prevRef = int64(s.ref)
		}
		prevFrom = s.From
	}
	return dst[:n+k]
}

// blockControls returns the control bytes of ss (appendBlock's first pass).
func blockControls(ss []Slice, kt *kindTable, ctrls [blockLen]byte) [blockLen]byte {
	prevFrom, prevTo := ss[0].From, ss[0].From
	var lastDur [kindInline + 1]sim.Time
	var seen uint32 // kinds with a lastDur in this block (never kindInline)
	for i := range ss {
		s := &ss[i]
		dur := s.To - s.From
		ctrl := byte(fromDelta)
		switch {
		case s.From < prevFrom || dur < 0:
			ctrl = fromRaw
		case s.From == prevTo:
			ctrl = fromTo
		case s.From == prevFrom:
			ctrl = fromFrom
		}
		kind := kt.index(kindKey(s)) & kindInline
		bit := uint32(1) << kind
		if ctrl != fromRaw && seen&bit != 0 && lastDur[kind] == dur {
			ctrl |= ctrlRepeat
		}
		lastDur[kind] = dur
		seen |= bit &^ (1 << kindInline)
		if s.ref != 0 {
			ctrl |= ctrlRef
		}
		ctrls[i&(blockLen-1)] = ctrl | byte(kind)<<kindShift
		prevFrom, prevTo = s.From, s.To
	}
	return ctrls
}

// putUvarint writes v as a uvarint at w[k:] and returns the index after
// it: one-byte values inline, the rest in putUvarintLong.
func putUvarint(w []byte, k int, v uint64) int {
	if v < uvarintFast {
		w[k] = byte(v)
		return k + 1
	}
	return putUvarintLong(w, k, v)
}

// putUvarintLong is putUvarint for values of two bytes or more.
func putUvarintLong(w []byte, k int, v uint64) int {
	switch {
	case v < 1<<14:
		_ = w[k+1]
		w[k], w[k+1] = byte(v)|0x80, byte(v>>7)
		return k + 2
	case v < 1<<21:
		_ = w[k+2]
		w[k], w[k+1], w[k+2] = byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14)
		return k + 3
	}
	return k + binary.PutUvarint(w[k:], v)
}

// blockReader decodes a block's slices in order.
type blockReader struct {
	b                []byte
	kinds            *kindTable
	prevFrom, prevTo sim.Time
	prevRef          int64
	lastDur          [maxKinds]sim.Time
}

// newBlockReader returns a reader of the block encoded at b whose first
// slice starts at from, with kind table kt.
func newBlockReader(b []byte, from sim.Time, kt *kindTable) blockReader {
	return blockReader{b: b, kinds: kt, prevFrom: from, prevTo: from}
}

// reader returns a reader at the start of block k.
func (l *Lane) reader(k int) blockReader {
	bl := &l.blocks[k]
	return newBlockReader(l.arena.chunks[bl.chunk][bl.off:], bl.from, &l.kinds)
}

// decodeBlock decodes block k into buf.
func (l *Lane) decodeBlock(k int, buf *[blockLen]Slice) {
	d := l.reader(k)
	for j := range buf {
		d.next(&buf[j])
	}
}

// uvarint reads a uvarint (the arena only holds what appendBlock wrote).
func (d *blockReader) uvarint() uint64 {
	if b := d.b[0]; b < uvarintFast {
		d.b = d.b[1:]
		return uint64(b)
	}
	v, n := binary.Uvarint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *blockReader) varint() int64 {
	v, n := binary.Varint(d.b)
	d.b = d.b[n:]
	return v
}

// next decodes the next slice into s.
func (d *blockReader) next(s *Slice) {
	ctrl := d.b[0]
	d.b = d.b[1:]
	kind := int(ctrl >> kindShift)
	if kind == kindInline {
		s.Cause, s.Class = arch.Cause(d.b[0]), Class(d.b[1])
		d.b = d.b[2:]
		s.name = uint16(d.uvarint())
	} else {
		key := d.kinds.keys[kind]
		s.Cause, s.Class, s.name = arch.Cause(key), Class(key>>8), uint16(key>>16)
	}
	var dur sim.Time
	switch ctrl & 3 {
	case fromTo:
		s.From = d.prevTo
	case fromFrom:
		s.From = d.prevFrom
	case fromDelta:
		s.From = d.prevFrom + sim.Time(d.uvarint())
	case fromRaw:
		s.From = d.prevFrom + sim.Time(d.varint())
		dur = sim.Time(d.varint())
	}
	switch {
	case ctrl&3 == fromRaw:
	case ctrl&ctrlRepeat != 0:
		dur = d.lastDur[kind]
	default:
		dur = sim.Time(d.uvarint())
	}
	if kind != kindInline {
		d.lastDur[kind] = dur
	}
	s.To = s.From + dur
	s.ref = 0
	if ctrl&ctrlRef != 0 {
		z := d.uvarint()
		d.prevRef += int64(z>>1) ^ -int64(z&1)
		s.ref = uint32(d.prevRef)
	}
	d.prevFrom, d.prevTo = s.From, s.To
}

// blockArena holds the sealed blocks of a timeline's lanes in fixed
// chunks, never re-copied; a chunk is freed when the memory limit has
// dropped all its blocks.
type blockArena struct {
	chunks [][]byte // nil once freed
	live   []int32  // blocks in use per chunk
	held   int      // chunks not freed
}

// arenaChunk is the size of an arena chunk.
const arenaChunk = 256 << 10

// put encodes ss as a block and returns where it starts.
func (a *blockArena) put(ss []Slice, kt *kindTable) (chunk int32, off uint32) {
	n := len(a.chunks)
	if n == 0 || cap(a.chunks[n-1])-len(a.chunks[n-1]) < maxBlock {
		a.chunks = append(a.chunks, make([]byte, 0, arenaChunk))
		a.live = append(a.live, 0)
		a.held++
		n++
	}
	b := a.chunks[n-1]
	a.chunks[n-1] = appendBlock(b, ss, kt)
	a.live[n-1]++
	return int32(n - 1), uint32(len(b))
}

// release marks a block of chunk ch as no longer used.
func (a *blockArena) release(ch int32) {
	a.live[ch]--
	if a.live[ch] == 0 && int(ch) < len(a.chunks)-1 {
		a.chunks[ch] = nil
		a.held--
	}
}

// bytes returns the memory the arena holds.
func (a *blockArena) bytes() int64 {
	if a == nil {
		return 0
	}
	return int64(a.held) * arenaChunk
}
