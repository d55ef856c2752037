package traces

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

func TestParseTime(t *testing.T) {
	good := map[string]sim.Time{
		"0": 0, "50us": 50 * sim.Microsecond, "1.5µs": 1500 * sim.Nanosecond, "200ns": 200 * sim.Nanosecond,
		"3ms": 3 * sim.Millisecond, "1234ps": 1234, "2s": 2 * sim.Second, "0.000001us": 1, ".5ns": 500,
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
}

// TestRecorderWindowAndFlags feeds a recorder by hand: clipping to the
// window, cores filtered out, FIFO matching of counted flags, occupancy
// before the window carried to its start, flag marks kept in time order.
func TestRecorderWindowAndFlags(t *testing.T) {
	r := NewRecorder(Window{Cores: map[int]bool{1: true}, From: 100, To: 1000})
	mm := isa.Mmad(0, 0, 0, 16, 16, 16, 0, 0, true)
	r.Occupancy(1, isa.L1, 64, 10) // before the window: value at 100
	r.Interval(0, isa.M, arch.Busy, 0, 500, &mm)
	r.Interval(1, isa.M, arch.Busy, 50, 150, &mm)        // clipped to [100,150)
	r.Interval(1, isa.M, arch.QueueEmpty, 150, 200, nil) // idle: not stored
	r.Flag(1, isa.MTE2, isa.M, 0, true, 50)              // set before the window
	r.Flag(1, isa.MTE2, isa.M, 0, true, 120)             // second set (flags count)
	r.Flag(1, isa.MTE2, isa.M, 0, false, 300)            // consumes the set at 50: no arrow
	r.Flag(1, isa.MTE2, isa.M, 0, false, 400)            // consumes the set at 120
	r.Interval(1, isa.M, arch.WaitFlag, 200, 400, nil)   // closes after the flag event
	r.Interval(1, isa.M, arch.Busy, 400, 2000, &mm)      // clipped to [400,1000)
	r.Interval(1, isa.M, arch.Busy, 2000, 3000, &mm)     // outside
	r.Occupancy(1, isa.L1, 128, 500)
	r.Occupancy(1, isa.L1, 0, 1500) // after the window
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
	for _, s := range c.Pipes[isa.M].Slices() {
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
	if len(c.Flows) != 1 || c.Flows[0].Set != 120 || c.Flows[0].Wait != 400 || c.Flows[0].Src != isa.MTE2 {
		t.Errorf("flows: %+v", c.Flows)
	}
	m3, s0 := c.Pipes[isa.M].At(3), c.Pipes[isa.MTE2].At(0)
	if tl.Bind(&m3) != c.Flows[0].Bind || tl.Bind(&s0) != c.Flows[0].Bind || c.Flows[0].Bind == 0 {
		t.Errorf("bind ids of the flag slices do not match the flow")
	}
	if v := c.OccAt(isa.L1, 100); v != 64 {
		t.Errorf("L1 at window start = %v, want 64", v)
	}
	if v := c.OccAt(isa.L1, 999); v != 128 || len(c.Occ[isa.L1]) != 2 {
		t.Errorf("L1 samples %+v", c.Occ[isa.L1])
	}
	tot := c.Totals(isa.M)
	if tot[arch.Busy] != 50+600 || tot[arch.WaitFlag] != 200 {
		t.Errorf("totals %v", tot)
	}
	if i := c.SliceAt(isa.M, 420); i != 4 {
		t.Errorf("SliceAt(420) = %d", i)
	}
	if i := c.SliceAt(isa.M, 170); i != -1 {
		t.Errorf("SliceAt(170) = %d", i)
	}
}

func TestInstrBytes(t *testing.T) {
	cp := isa.CopyGM2L1(0, 0, 4096)
	if b, f := InstrBytes(&cp); b != 4096 || f != 0 {
		t.Errorf("copy: %v %v", b, f)
	}
	mm := isa.Mmad(0, 0, 0, 32, 64, 16, 1, 0, true)
	if b, f := InstrBytes(&mm); b != 0 || f != 2*32*64*16 {
		t.Errorf("mmad: %v %v", b, f)
	}
	if ClassOf(&mm) != ClassMmad || ClassOf(&cp) != ClassCopy || ParseClass("vector") != ClassVector || ParseClass("zzz") != ClassOther {
		t.Error("classes")
	}
}

// TestAddSliceOrder checks that lanes keep the slices in From order, equal
// From in arrival order, when slices arrive late by a few places, also
// across chunk boundaries.
func TestAddSliceOrder(t *testing.T) {
	var tl Timeline
	c := tl.core(0)
	var want []Slice
	seed := uint64(1)
	rnd := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for i := 0; i < 5*laneChunk; i++ {
		from := sim.Time(i/3*10 - rnd(4)*10)                                   // some go back up to three places
		s := Slice{From: from, To: from + 5, Cause: arch.Busy, ref: uint32(i)} // ref tells equal From apart
		c.addSlice(&tl, isa.M, s)
		want = insertByFrom(want, s)
	}
	got := c.Pipes[isa.M].Slices()
	if len(got) != len(want) || tl.nchunks != 5 {
		t.Fatalf("got %d slices in %d chunks, want %d in 5", len(got), tl.nchunks, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("slice %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if c.Totals(isa.M)[arch.Busy] != sim.Time(5*len(want)) {
		t.Errorf("busy total %v, want %v", c.Totals(isa.M)[arch.Busy], 5*len(want))
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
	r.Interval(0, isa.S, arch.Busy, 0, 10, &a) // the issue slot
	r.Interval(0, isa.M, arch.Busy, 10, 50, &a)
	r.Interval(1, isa.M, arch.Busy, 10, 50, &a) // another core, same code
	r.Interval(0, isa.M, arch.Busy, 50, 90, &b)
	tl := r.Timeline()
	size := len(appendPacked(nil, ptr(pack(&a, r)))) + len(appendPacked(nil, ptr(pack(&b, r))))
	if len(tl.code) != 1 || len(tl.code[0]) != size {
		t.Errorf("packed %d bytes, want %d (one copy each of two instructions)", len(tl.code[0]), size)
	}
	c0, c1 := tl.Core(0), tl.Core(1)
	for _, s := range []Slice{c0.Pipes[isa.S].At(0), c0.Pipes[isa.M].At(0), c1.Pipes[isa.M].At(0)} {
		if got, want := tl.Text(&s), isa.Format(a); got != want {
			t.Errorf("text %q, want %q", got, want)
		}
	}
	if m1 := c0.Pipes[isa.M].At(1); tl.Text(&m1) != isa.Format(b) {
		got, want := tl.Text(&m1), isa.Format(b)
		t.Errorf("text %q, want %q", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// TestSlotEscape checks that slices which do not fit a 16-byte slot (From
// far from the chunk's base or before it, long durations) come back exact,
// also after moving across chunks and after dropping chunks.
func TestSlotEscape(t *testing.T) {
	var tl Timeline
	c := tl.core(0)
	var want []Slice
	seed := uint64(7)
	rnd := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	now := sim.Time(1000)
	escaped := 0
	for i := 0; i < 6*laneChunk; i++ {
		switch rnd(20) {
		case 0:
			now += 1 << 41 // beyond a slot's 40-bit offset
		case 1:
			now += sim.Time(rnd(1 << 20))
		}
		from, dur := now, sim.Time(rnd(1000))
		switch rnd(25) {
		case 0:
			from -= baseSlack + sim.Time(rnd(1<<26)) // before the chunk's base
		case 1:
			dur = 1<<33 + sim.Time(rnd(100)) // longer than 32 bits
		}
		now += 10
		s := Slice{From: from, To: from + dur, Cause: arch.Cause(rnd(int(arch.NumCauses))), Class: Class(rnd(int(NumClasses))), name: uint16(rnd(100)), ref: uint32(i)}
		c.addSlice(&tl, isa.V, s)
		want = insertByFrom(want, s)
	}
	l := &c.Pipes[isa.V]
	for _, o := range l.ovf {
		escaped += len(o)
	}
	if escaped == 0 {
		t.Fatalf("no slot escaped: the test does not cover escapes")
	}
	check := func(want []Slice) {
		t.Helper()
		got := l.Slices()
		if len(got) != len(want) {
			t.Fatalf("got %d slices, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("slice %d = %+v, want %+v", i, got[i], want[i])
			}
			if s := l.At(i); s != want[i] {
				t.Fatalf("At(%d) = %+v, want %+v", i, s, want[i])
			}
		}
	}
	check(want)
	cut := want[2*laneChunk].From
	if i := l.Search(func(s *Slice) bool { return s.From >= cut }); want[i].From != cut || (i > 0 && want[i-1].From >= cut) {
		t.Errorf("Search found %d", i)
	}
	// Drop the chunks that end by cut (the lane keeps whole chunks).
	k := 0
	for k < len(want)/laneChunk-1 {
		if want[(k+1)*laneChunk-1].To > cut {
			break
		}
		k++
	}
	if n := l.dropBefore(cut); n != k {
		t.Fatalf("dropped %d chunks, want %d", n, k)
	}
	check(want[k*laneChunk:])
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
