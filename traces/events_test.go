package traces

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

func TestParseTime(t *testing.T) {
	good := map[string]sim.Time{
		"0": 0, "50us": 50 * sim.Microsecond, "1.5µs": 1500 * sim.Nanosecond, "200ns": 200 * sim.Nanosecond,
		"3ms": 3 * sim.Millisecond, "1234ps": 1234, "2s": 2 * sim.Second, "0.000001us": 1, ".5ns": 500,
		// the whole time range (a window to the end of a 100-day run)
		"9223372.036854775807s": sim.MaxTime, "9223372036854775807ps": sim.MaxTime, "9000000s": 9e6 * sim.Second,
	}
	for in, want := range good {
		got, err := ParseTime(in)
		if err != nil || got != want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "5", "us", "-1us", "1.0001ns", "1e3ns", "x ms", "99999999999999999s"} {
		if _, err := ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q): want an error", in)
		}
	}
	// Past the range, and a unit it does not know, say so.
	for in, want := range map[string]string{"9223372.036854775808s": "too large: simulated time ends at 9223372036854775807 ps",
		"9223372036854775808ps": "too large", "107days": "needs a number and a unit (ps, ns, us, µs, ms, s)", "3 hours": "needs a number and a unit"} {
		if _, err := ParseTime(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTime(%q): %v, want %q", in, err, want)
		}
	}
}

func TestParseWindow(t *testing.T) {
	from, to, err := ParseWindow("10us..50us")
	if err != nil || from != 10*sim.Microsecond || to != 50*sim.Microsecond {
		t.Errorf("got %v %v %v", from, to, err)
	}
	if from, to, err = ParseWindow("2ns.."); err != nil || from != 2000 || to != 0 {
		t.Errorf("open end: got %v %v %v", from, to, err)
	}
	for _, in := range []string{"5us", "5us..1us", "a..b", "1us..1us"} {
		if _, _, err := ParseWindow(in); err == nil {
			t.Errorf("ParseWindow(%q): want an error", in)
		}
	}
}

func TestParseCores(t *testing.T) {
	got, err := ParseCores("0-2, 5")
	if err != nil || len(got) != 4 || !got[0] || !got[2] || !got[5] || got[3] {
		t.Errorf("got %v %v", got, err)
	}
	for _, in := range []string{"", "a", "3-1", "1,,2", "-1", "0-999999999"} {
		if _, err := ParseCores(in); err == nil {
			t.Errorf("ParseCores(%q): want an error", in)
		}
	}
	for in, want := range map[string]string{"0-2, 5": "0-2,5", "7": "7", "1,3-4,6-9": "1,3-4,6-9"} {
		m, _ := ParseCores(in)
		var ids []int
		for id := range m {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		if got := FormatCores(ids); got != want {
			t.Errorf("FormatCores(%v) = %q, want %q", ids, got, want)
		}
	}
}

// TestRecorderWindowAndFlags feeds a recorder by hand: clipping to the
// window, cores filtered out, FIFO matching of counted flags, occupancy
// before the window carried to its start, flag marks kept in time order.
func TestRecorderWindowAndFlags(t *testing.T) {
	r := NewRecorder(Window{Cores: map[int]bool{1: true}, From: 100, To: 1000})
	mm := isa.Mmad(0, 0, 0, 16, 16, 16, 0, 0, true)
	r.Occupancy(1, int(isa.L1), 64, 10) // before the window: value at 100
	r.Interval(0, int(isa.M), arch.Busy, 0, 500, &mm, nil)
	r.Interval(1, int(isa.M), arch.Busy, 50, 150, &mm, nil)        // clipped to [100,150)
	r.Interval(1, int(isa.M), arch.QueueEmpty, 150, 200, nil, nil) // idle: not stored
	r.Flag(1, int(isa.MTE2), int(isa.M), 0, true, 50)              // set before the window
	r.Flag(1, int(isa.MTE2), int(isa.M), 0, true, 120)             // second set (flags count)
	r.Flag(1, int(isa.MTE2), int(isa.M), 0, false, 300)            // consumes the set at 50: no arrow
	r.Flag(1, int(isa.MTE2), int(isa.M), 0, false, 400)            // consumes the set at 120
	r.Interval(1, int(isa.M), arch.WaitFlag, 200, 400, nil, nil)   // closes after the flag event
	r.Interval(1, int(isa.M), arch.Busy, 400, 2000, &mm, nil)      // clipped to [400,1000)
	r.Interval(1, int(isa.M), arch.Busy, 2000, 3000, &mm, nil)     // outside
	r.Occupancy(1, int(isa.L1), 128, 500)
	r.Occupancy(1, int(isa.L1), 0, 1500) // after the window
	r.Finish(5000)
	tl := r.Timeline()
	if len(tl.Cores) != 1 || tl.Cores[0].ID != 1 {
		t.Fatalf("cores: %+v", tl.Cores)
	}
	if tl.From != 100 || tl.To != 1000 || !tl.Done {
		t.Errorf("window: %v..%v done=%v", tl.From, tl.To, tl.Done)
	}
	c := tl.Cores[0]
	var got []string
	for _, s := range c.Lanes[isa.M].Slices() {
		got = append(got, tl.Name(&s)+"@"+s.From.String()+".."+s.To.String())
	}
	want := []string{"m.mmad@100ps..150ps", "wait_flag@200ps..400ps", "wait_flag@300ps..300ps", "wait_flag@400ps..400ps", "m.mmad@400ps..1ns"}
	if len(got) != len(want) {
		t.Fatalf("M slices %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("M slice %d = %s, want %s", i, got[i], want[i])
		}
	}
	if len(c.Flows) != 1 || c.Flows[0].Set != 120 || c.Flows[0].Wait != 400 || c.Flows[0].Src != int(isa.MTE2) {
		t.Errorf("flows: %+v", c.Flows)
	}
	m3, s0 := c.Lanes[isa.M].At(3), c.Lanes[isa.MTE2].At(0)
	if tl.Bind(&m3) != c.Flows[0].Bind || tl.Bind(&s0) != c.Flows[0].Bind || c.Flows[0].Bind == 0 {
		t.Errorf("bind ids of the flag slices do not match the flow")
	}
	if v := c.OccAt(int(isa.L1), 100); v != 64 {
		t.Errorf("L1 at window start = %v, want 64", v)
	}
	if v := c.OccAt(int(isa.L1), 999); v != 128 || len(c.Occ[int(isa.L1)]) != 2 {
		t.Errorf("L1 samples %+v", c.Occ[isa.L1])
	}
	tot := c.Totals(int(isa.M))
	if tot[arch.Busy] != 50+600 || tot[arch.WaitFlag] != 200 {
		t.Errorf("totals %v", tot)
	}
	if i := c.SliceAt(int(isa.M), 420); i != 4 {
		t.Errorf("SliceAt(420) = %d", i)
	}
	if i := c.SliceAt(int(isa.M), 170); i != -1 {
		t.Errorf("SliceAt(170) = %d", i)
	}
}

func TestInstrAmount(t *testing.T) {
	cp := isa.CopyGM2L1(0, 0, 4096)
	if b, f := cp.Amount(0); b != 4096 || f != 0 {
		t.Errorf("copy: %v %v", b, f)
	}
	mm := isa.Mmad(0, 0, 0, 32, 64, 16, 1, 0, true)
	if b, f := mm.Amount(0); b != 0 || f != 2*32*64*16 {
		t.Errorf("mmad: %v %v", b, f)
	}
	if ClassOf(&mm) != ClassMmad || ClassOf(&cp) != ClassCopy || ParseClass("vector") != ClassVector || ParseClass("zzz") != ClassOther {
		t.Error("classes")
	}
}

// TestAddSliceOrder checks that lanes keep the slices in From order, equal
// From in arrival order, when slices arrive late by a few places (in the
// tail) and now and then by many (back into sealed blocks).
func TestAddSliceOrder(t *testing.T) {
	var tl Timeline
	c := tl.core(0)
	var want []Slice
	rnd := lcg(1)
	for i := 0; i < 20*tailMax; i++ {
		from := sim.Time(i/3*10 - rnd(4)*10) // some go back up to three places
		if rnd(97) == 0 {
			from -= sim.Time(rnd(3*tailMax)) * 10 // back beyond the tail
		}
		s := Slice{From: from, To: from + 5, Cause: arch.Busy, ref: uint32(i)} // ref tells equal From apart
		c.addSlice(&tl, int(isa.M), s)
		want = insertByFrom(want, s)
	}
	l := &c.Lanes[isa.M]
	if len(l.blocks) < 10 {
		t.Fatalf("%d sealed blocks: the test does not cover sealing", len(l.blocks))
	}
	checkLane(t, l, want)
	if c.Totals(int(isa.M))[arch.Busy] != sim.Time(5*len(want)) {
		t.Errorf("busy total %v, want %v", c.Totals(int(isa.M))[arch.Busy], 5*len(want))
	}
}

// checkLane checks every way of reading lane l against want.
func checkLane(t *testing.T, l *Lane, want []Slice) {
	t.Helper()
	if l.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", l.Len(), len(want))
	}
	got := l.Slices()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Slices()[%d] = %+v, want %+v", i, got[i], want[i])
		}
		if s := l.At(i); s != want[i] {
			t.Fatalf("At(%d) = %+v, want %+v", i, s, want[i])
		}
	}
	for _, from := range []int{0, 1, blockLen - 1, blockLen, len(want) / 2, len(want) - 1, len(want)} {
		n := from
		for i, s := range l.Scan(from) {
			if i != n || s != want[i] {
				t.Fatalf("Scan(%d) gave %d: %+v, want %d: %+v", from, i, s, n, want[n])
			}
			n++
		}
		if n != max(len(want), from) {
			t.Fatalf("Scan(%d) stopped at %d", from, n)
		}
		n = min(from, len(want)-1)
		for i, s := range l.ScanBack(from) {
			if i != n || s != want[i] {
				t.Fatalf("ScanBack(%d) gave %d: %+v, want %d", from, i, s, n)
			}
			n--
		}
		if n != -1 {
			t.Fatalf("ScanBack(%d) stopped at %d", from, n)
		}
	}
	// Search finds the first slice from each From on (and one past the end).
	for k := 0; k < len(want); k += 1 + k/7 {
		at := want[k].From
		i := l.Search(func(s *Slice) bool { return s.From >= at })
		j := sort.Search(len(want), func(i int) bool { return want[i].From >= at })
		if i != j {
			t.Fatalf("Search(From >= %d) = %d, want %d", at, i, j)
		}
	}
	if i := l.Search(func(*Slice) bool { return false }); i != len(want) {
		t.Fatalf("Search(false) = %d, want %d", i, len(want))
	}
}

// TestFlagQueueFIFO checks the flag queue's order with and without
// overflow.
func TestFlagQueueFIFO(t *testing.T) {
	var q flagQueue
	next, head := sim.Time(1), sim.Time(1)
	for round, depth := range []int{1, 2, 3, 7, 2, 0, 5, 1} {
		for range depth {
			q.push(pendingSet{t: next, bind: uint64(next)})
			next++
		}
		for range depth + 1 {
			ps := q.pop()
			if head == next {
				if ps != (pendingSet{}) {
					t.Fatalf("round %d: pop of an empty queue = %+v", round, ps)
				}
				continue
			}
			if ps.t != head || ps.bind != uint64(head) {
				t.Fatalf("round %d: pop = %+v, want t=%d", round, ps, head)
			}
			head++
		}
	}
}

// TestSharedPackedInstr checks that slices of the same instruction share
// one packed copy and that each slice still reads its own instruction.
func TestSharedPackedInstr(t *testing.T) {
	r := NewRecorder(Window{})
	a := isa.Mmad(0, 0, 0, 16, 16, 16, 0, 0, true)
	b := isa.Mmad(0, 0, 0, 16, 32, 16, 0, 0, true)
	r.Interval(0, int(isa.S), arch.Busy, 0, 10, &a, nil) // the issue slot
	r.Interval(0, int(isa.M), arch.Busy, 10, 50, &a, nil)
	r.Interval(1, int(isa.M), arch.Busy, 10, 50, &a, nil) // another core, same code
	r.Interval(0, int(isa.M), arch.Busy, 50, 90, &b, nil)
	tl := r.Timeline()
	size := len(appendPacked(nil, ptr(pack(&a)))) + len(appendPacked(nil, ptr(pack(&b))))
	if len(tl.code) != 1 || len(tl.code[0]) != size {
		t.Errorf("packed %d bytes, want %d (one copy each of two instructions)", len(tl.code[0]), size)
	}
	c0, c1 := tl.Core(0), tl.Core(1)
	for _, s := range []Slice{c0.Lanes[isa.S].At(0), c0.Lanes[isa.M].At(0), c1.Lanes[isa.M].At(0)} {
		if got, want := tl.Text(&s), isa.Format(a); got != want {
			t.Errorf("text %q, want %q", got, want)
		}
	}
	if m1 := c0.Lanes[isa.M].At(1); tl.Text(&m1) != isa.Format(b) {
		got, want := tl.Text(&m1), isa.Format(b)
		t.Errorf("text %q, want %q", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// TestLaneEncoding checks that sealed blocks give back every slice exactly
// (From jumps, zero and huge lengths, big and shrinking refs, large name
// indices), also after dropping blocks under a memory limit.
func TestLaneEncoding(t *testing.T) {
	var tl Timeline
	c := tl.core(0)
	var want []Slice
	rnd := lcg(7)
	now := sim.Time(1000)
	for i := 0; i < 30*blockLen; i++ {
		switch rnd(20) {
		case 0:
			now += 1 << 41
		case 1:
			now += sim.Time(rnd(1 << 20))
		}
		from, dur := now, sim.Time(rnd(1000))
		switch rnd(25) {
		case 0:
			from -= sim.Time(rnd(1 << 26)) // late
		case 1:
			if i > 20*blockLen { // (early ones would keep every block from being dropped)
				dur = 1<<60 + sim.Time(rnd(100))
			}
		case 2:
			dur = 0
		}
		now += sim.Time(rnd(3)) * 10
		ref := uint32(rnd(1 << 16))
		switch rnd(4) {
		case 0:
			ref = 0
		case 1:
			ref = 1<<32 - 1 - uint32(rnd(10))
		}
		name := uint16(rnd(10))
		if rnd(5) == 0 {
			name = 65535 - uint16(rnd(3))
		}
		s := Slice{From: from, To: from + dur, Cause: arch.Cause(rnd(int(arch.NumCauses))), Class: Class(rnd(int(NumClasses))), name: name, ref: ref}
		c.addSlice(&tl, int(isa.V), s)
		want = insertByFrom(want, s)
	}
	l := &c.Lanes[isa.V]
	checkLane(t, l, want)
	// Drop the leading blocks whose slices all end by cut.
	cut := want[len(want)/2].From
	k := 0
	for k < len(l.blocks) {
		end := sim.Time(0)
		for _, s := range want[k*blockLen : (k+1)*blockLen] {
			end = max(end, s.To)
		}
		if end > cut {
			break
		}
		k++
	}
	if k == 0 {
		t.Fatal("no block to drop: the test does not cover dropping")
	}
	live := tl.arena.live[0]
	if n := l.dropBefore(cut); n != k*blockLen {
		t.Fatalf("dropped %d slices, want %d", n, k*blockLen)
	}
	checkLane(t, l, want[k*blockLen:])
	if tl.arena.live[0] != live-int32(k) {
		t.Errorf("arena chunk uses %d blocks after the drop, %d before", tl.arena.live[0], live)
	}
}

// FuzzBlockEncoding checks the block encoding's round trip on any slices
// (sorted by From as lanes are; lengths may be negative, causes and classes
// beyond 4 bits).
func FuzzBlockEncoding(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21})
	f.Add(make([]byte, 200))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var ss [blockLen]Slice
		word := func(i, n int) uint64 {
			var v uint64
			for j := range n {
				if k := i + j; k >= 0 && k < len(data) {
					v = v<<8 | uint64(data[k])
				}
			}
			return v
		}
		from := sim.Time(int64(word(0, 8)))
		for j := range ss {
			b := j * 11
			switch word(b, 1) % 4 {
			case 1:
				from += sim.Time(word(b+1, 2))
			case 2:
				from += sim.Time(int64(word(b+1, 8)) >> 3)
			}
			ss[j] = Slice{From: from, To: from + sim.Time(int64(int32(word(b+3, 4)))), ref: uint32(word(b+7, 4)),
				name: uint16(word(b+5, 2)), Cause: arch.Cause(word(b+9, 1)), Class: Class(word(b+10, 1))}
		}
		sort.SliceStable(ss[:], func(i, j int) bool { return ss[i].From < ss[j].From })
		var kt kindTable
		kt.n = uint8(word(len(data)-1, 1) % (maxKinds + 1)) // some kinds taken before
		for i := range kt.n {
			kt.keys[i] = uint32(word(int(i)*3, 4))
		}
		enc := appendBlock(nil, ss[:], &kt)
		if len(enc) > maxBlock {
			t.Fatalf("block of %d bytes, bound %d", len(enc), maxBlock)
		}
		d := newBlockReader(enc, ss[0].From, &kt)
		for j := range ss {
			var s Slice
			d.next(&s)
			if s != ss[j] {
				t.Fatalf("slice %d = %+v, want %+v", j, s, ss[j])
			}
		}
		if len(d.b) != 0 {
			t.Fatalf("%d bytes left over", len(d.b))
		}
	})
}

// insertByFrom inserts s into want after every slice with From ≤ s.From
// (stable insertion by From, as a lane must order its slices).
func insertByFrom(want []Slice, s Slice) []Slice {
	k := len(want)
	for k > 0 && want[k-1].From > s.From {
		k--
	}
	want = append(want, Slice{})
	copy(want[k+1:], want[k:])
	want[k] = s
	return want
}

// TestPeakBandwidth checks the peak kept while samples are added (samples
// at the same time replace the last one, also when it was the peak).
func TestPeakBandwidth(t *testing.T) {
	var tl Timeline
	rnd := lcg(3)
	at := sim.Time(0)
	for i := range 5000 {
		if rnd(3) != 0 {
			at += sim.Time(rnd(100))
		}
		tl.addBandwidth(at-50, float64(rnd(1000)), 0) // some before the window start (0)
		want := 0.0
		for _, s := range tl.Bandwidth {
			want = max(want, s.Value)
		}
		if tl.PeakBandwidth() != want {
			t.Fatalf("sample %d: peak %v, want %v", i, tl.PeakBandwidth(), want)
		}
	}
}

// lcg returns a deterministic pseudo-random source: rnd(n) is in [0, n).
func lcg(seed uint64) func(n int) int {
	return func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
}

// ParseIDs names what is wrong: a number past the limit (also one past
// int's range) is too large, a negative one (also past int's range) is
// not an ID.
func TestParseIDsMessages(t *testing.T) {
	for in, want := range map[string]string{
		"4096":                   `rank 4096: there are at most 4096 (ranks 0-4095)`,
		"0-99999999999999999999": `rank 99999999999999999999: there are at most 4096`,
		"-3":                     `"-3" is not a rank number (0 or more)`,
		"-99999999999999999999":  `"-99999999999999999999" is not a rank number (0 or more)`,
		"abc":                    `"abc" is not a rank number`,
		"5-2":                    `range "5-2" ends before it starts`,
	} {
		_, err := ParseIDs(in, "rank", 4096)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseIDs(%q): %v, want %q", in, err, want)
		}
	}
	// Without a known count (cores): too large, not "at most 9223372036854775807".
	if _, err := ParseCores("99999999999999999999"); err == nil || !strings.HasSuffix(err.Error(), "core 99999999999999999999: too large") {
		t.Errorf("ParseCores: %v", err)
	}
}

// FuzzParseTime: ParseTime never panics or wraps around (a time is ≥ 0),
// reads a whole number of picoseconds exactly, and gives a duration in
// another unit as that many picoseconds (--trace-window's times).
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"0", "50us", "1.5µs", ".5ns", "9223372.036854775807s", "9223372036854775808ps", "107days", "1e3ns", "-1us", "99999999999999999s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s)
		if err != nil {
			return
		}
		if got < 0 {
			t.Fatalf("ParseTime(%q) = %d: negative", s, got)
		}
		if ps, ok := strings.CutSuffix(s, "ps"); ok {
			if v, perr := strconv.ParseInt(strings.TrimSpace(ps), 10, 64); perr == nil && v != int64(got) {
				t.Fatalf("ParseTime(%q) = %d, want %d", s, got, v)
			}
		}
		if ns, ok := strings.CutSuffix(s, "ns"); ok {
			if v, perr := strconv.ParseInt(strings.TrimSpace(ns), 10, 64); perr == nil && v >= 0 && v <= math.MaxInt64/1000 && v*1000 != int64(got) {
				t.Fatalf("ParseTime(%q) = %d, want %d", s, got, v*1000)
			}
		}
	})
}
