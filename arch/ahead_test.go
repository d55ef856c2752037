package arch

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/isa"
)

// numbered is a stream of n instructions whose Line numbers them.
func numbered(n int) isa.Stream {
	return func(yield func(isa.Instr) bool) {
		for i := range n {
			if !yield(isa.Instr{Op: isa.OpNop, Line: i}) {
				return
			}
		}
	}
}

// readAll reads the rest of r's stream (Line of each).
func readAll(r *StreamReader) []int {
	var got []int
	for in := r.Next(); in != nil; in = r.Next() {
		got = append(got, in.Line)
	}
	return got
}

// waitFull waits for the worker to have filled every slot of r's feed it
// may (tests: the generator then runs as far ahead as it can).
func waitFull(r *StreamReader) {
	f := r.feed
	for f != nil && f.room() {
		f.ahead.took(0, true)
		time.Sleep(time.Microsecond)
	}
}

// Streams read ahead are the streams: every length about the chunks'
// and the ring's sizes, many streams read at once in turns, and streams
// closed part-way, the worker stopping once none is left.
func TestAheadSameStreams(t *testing.T) {
	a := aheadOrSkip(t)
	lens := []int{0, 1, chunkLen - 1, chunkLen, chunkLen + 1, aheadSlots * chunkLen, aheadSlots*chunkLen + 1, 1000}
	for _, n := range lens {
		var r StreamReader
		r.StartAhead(numbered(n), a)
		got := readAll(&r)
		r.Close()
		if want := readAll(startPlain(numbered(n))); !slices.Equal(got, want) {
			t.Errorf("%d instructions read ahead: got %d, want %d", n, len(got), len(want))
		}
	}
	// 50 streams read at once, an instruction each in turn; every third
	// closed after 70 instructions and started again on another.
	rs := make([]StreamReader, 50)
	want := make([][]int, len(rs))
	got := make([][]int, len(rs))
	for i := range rs {
		n := 300 + 37*i
		rs[i].StartAhead(numbered(n), a)
		want[i] = readAll(startPlain(numbered(n)))
	}
	for live := len(rs); live > 0; {
		live = 0
		for i := range rs {
			if rs[i].feed == nil && rs[i].pull == nil {
				continue
			}
			if i%3 == 0 && len(got[i]) == 70 {
				rs[i].Close()
				rs[i].StartAhead(numbered(100), a)
				want[i] = append(want[i][:70], readAll(startPlain(numbered(100)))...)
			}
			in := rs[i].Next()
			if in == nil {
				rs[i].Close()
				continue
			}
			got[i] = append(got[i], in.Line)
			live++
		}
	}
	for i := range rs {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("stream %d read ahead among others: %d instructions, want %d (first difference at %d)", i, len(got[i]), len(want[i]), firstDiff(got[i], want[i]))
		}
	}
	// The worker stops once every stream is closed.
	for range 1000 {
		a.mu.Lock()
		running := a.running
		a.mu.Unlock()
		if !running {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Error("the worker still runs with every stream closed")
}

func firstDiff(a, b []int) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// startPlain returns a reader of s generating as it reads.
func startPlain(s isa.Stream) *StreamReader {
	r := &StreamReader{}
	r.Start(s)
	return r
}

// stepped is a stream of 100 steps of 5 instructions each (Line 10·k+j),
// a marker (isa.Step) before each, resuming where cur asks.
func stepped(cur *isa.StepCursor) isa.Stream {
	return func(yield func(isa.Instr) bool) {
		for k := 0; k < 100; k++ {
			if to := cur.Take(); to > k {
				k = to
			}
			if !yield(isa.Step(k, 100, 1, 1, 99)) {
				return
			}
			for j := range 5 {
				if !yield(isa.Instr{Op: isa.OpNop, Line: 10*k + j}) {
					return
				}
			}
		}
	}
}

// readSkipping reads a stepped stream through r, asking at the marker of
// step 10 to resume at 60 and at 70 for 90, dropping what was generated
// before the step asked for (as a GPU core does): the steps it read.
func readSkipping(r *StreamReader, cur *isa.StepCursor, full bool) []int {
	var got []int
	skipTo := 0
	for {
		if full {
			waitFull(r)
		}
		in := r.Next()
		if in == nil {
			return got
		}
		if skipTo > 0 && (in.Op != isa.OpStep || in.M < skipTo) {
			continue
		}
		skipTo = 0
		if in.Op != isa.OpStep {
			got = append(got, in.Line)
			continue
		}
		switch in.M {
		case 10:
			skipTo = 60
		case 70:
			skipTo = 90
		default:
			continue
		}
		cur.Ask(skipTo)
	}
}

// Steps skipped through a cursor while the generator runs ahead — as far
// as it may, past the step asked for, or not — read the same as
// generated as read.
func TestAheadStepSkips(t *testing.T) {
	a := aheadOrSkip(t)
	var want []int
	for _, k := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99} {
		for j := range 5 {
			want = append(want, 10*k+j)
		}
	}
	// (Step 10's instructions follow its marker, which asks for 60.)
	cur := &isa.StepCursor{}
	if got := readSkipping(startPlain(stepped(cur)), cur, false); !slices.Equal(got, want) {
		t.Fatalf("read as generated: %v\nwant %v", got, want)
	}
	for _, full := range []bool{false, true} {
		var r StreamReader
		cur := &isa.StepCursor{}
		r.StartAhead(stepped(cur), a)
		if got := readSkipping(&r, cur, full); !slices.Equal(got, want) {
			t.Errorf("read ahead (as far as it may: %v): %v\nwant %v", full, got, want)
		}
		r.Close()
	}
}

// A generator that panics on the worker panics in its reader, with the
// same value, where it would have without reading ahead.
func TestAheadPanic(t *testing.T) {
	a := aheadOrSkip(t)
	var r StreamReader
	r.StartAhead(failing(func() { panic("generator failed") }), a)
	n := 0
	func() {
		defer func() {
			if p := recover(); p != "generator failed" {
				t.Errorf("recovered %v, want the generator's panic", p)
			}
		}()
		waitFull(&r)
		for in := r.Next(); in != nil; in = r.Next() {
			n++
		}
	}()
	if n != 500-500%chunkLen {
		t.Errorf("read %d instructions before the panic, want %d (the chunks filled before it)", n, 500-500%chunkLen)
	}
	r.Close()
}

// A generator that ends its goroutine (runtime.Goexit, as a test's
// t.Fatal does) on the worker ends its reader's goroutine instead, where
// it would have without reading ahead; the worker's lock is released and
// the next stream gets a worker again.
func TestAheadGoexit(t *testing.T) {
	a := aheadOrSkip(t)
	var r StreamReader
	n, exited := 0, make(chan bool)
	go func() {
		returned := false
		defer func() { exited <- returned }()
		r.StartAhead(failing(runtime.Goexit), a)
		waitFull(&r)
		for in := r.Next(); in != nil; in = r.Next() {
			n++
		}
		returned = true
	}()
	select {
	case returned := <-exited:
		if returned || n != 500-500%chunkLen {
			t.Errorf("reader returned %v after %d instructions: want it ended (Goexit) after %d", returned, n, 500-500%chunkLen)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader hangs")
	}
	r.Close()
	var next StreamReader
	next.StartAhead(numbered(1000), a)
	if got := readAll(&next); len(got) != 1000 {
		t.Errorf("the next stream read %d of 1000 instructions", len(got))
	}
	next.Close()
}

// A reader closed reads nothing more.
func TestAheadNextAfterClose(t *testing.T) {
	for _, a := range []*Ahead{nil, NewAhead()} {
		var r StreamReader
		r.StartAhead(numbered(100), a)
		r.Next()
		r.Close()
		if in := r.Next(); in != nil {
			t.Errorf("read ahead %v: Next after Close gave %+v", a != nil, in)
		}
	}
}

// failing is a stream of 1000 instructions that calls fail before its
// 500th (a generator that panics, or ends its goroutine).
func failing(fail func()) isa.Stream {
	return func(yield func(isa.Instr) bool) {
		for i := range 1000 {
			if i == 500 {
				fail()
			}
			if !yield(isa.Instr{Op: isa.OpNop, Line: i}) {
				return
			}
		}
	}
}

// aheadOrSkip returns a new Ahead, skipping the test where there is none
// (GOMAXPROCS 1).
func aheadOrSkip(t *testing.T) *Ahead {
	t.Helper()
	a := NewAhead()
	if a == nil {
		t.Skip("GOMAXPROCS 1")
	}
	return a
}
