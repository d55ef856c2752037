package arch

import (
	"iter"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/davinci-sim/davinci-sim/isa"
)

// Ahead generates instruction streams ahead of the cores that read them,
// on a goroutine of its own: the program generators (a tenth to a fifth of
// a timing-only run's time: the AI cores' pipe programs, a GPU's resident
// CTAs') then run on the host's other processor while the engine runs on
// one. What a core reads is the same either way — a stream is a function
// of its core or block (and of the steps its reader asks it to skip, which
// the reader drops up to wherever the generator was: isa.StepCursor) — so
// results do not depend on how far ahead the generator got. A reader that
// finds no chunk ready generates it itself: the engine never waits for
// the other goroutine.
type Ahead struct {
	mu      sync.Mutex
	pending []*feed // started streams not yet taken by the worker
	running bool    // the worker goroutine runs
	active  []*feed // (the worker's)
	// The worker sleeps when every stream is full, until the readers have
	// taken wakeAt chunks (a quarter of the slots), one finds its next
	// chunk missing, or the last stream closes.
	sleeping atomic.Bool
	taken    atomic.Int64
	wakeAt   atomic.Int64
	open     atomic.Int64 // streams started, not closed
	wake     chan struct{}
}

// aheadSlots is the number of chunks a stream's generator may run ahead
// of its reader (each chunkLen instructions).
const aheadSlots = 4

// noReadAhead is SetReadAhead's setting (false: on).
var noReadAhead atomic.Bool

// SetReadAhead turns streams read ahead on (the default) or off for the
// chips made from then on. Callers that already run several simulations
// at once (design-space sweeps) turn it off, as they bound
// cube.SetMaxWorkers: the processors are busy (two runs at once took 13 %
// longer with it). Results do not depend on it.
func SetReadAhead(on bool) { noReadAhead.Store(!on) }

// NewAhead returns a generator for streams read ahead, or nil where it is
// off (SetReadAhead) or the process has one processor to run on
// (GOMAXPROCS 1: the worker would take turns with the engine).
func NewAhead() *Ahead {
	if noReadAhead.Load() || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	return &Ahead{wake: make(chan struct{}, 1)}
}

// took counts n chunks taken by the readers (urgent: one found none
// ready), waking the worker where it sleeps and they are enough.
func (a *Ahead) took(n int64, urgent bool) {
	if !a.sleeping.Load() {
		return
	}
	if a.taken.Add(n) < a.wakeAt.Load() && !urgent {
		return
	}
	a.wakeUp()
}

// wakeUp wakes the worker if it sleeps.
func (a *Ahead) wakeUp() {
	if a.sleeping.CompareAndSwap(true, false) {
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

// feed is a stream read ahead: a ring of aheadSlots chunks, filled in
// order by whoever holds mu (the worker, or the reader when it finds the
// next chunk missing), taken in order by the reader.
type feed struct {
	ahead  *Ahead     // whose worker fills it
	mu     sync.Mutex // held while pulling, filling a slot or closing
	pull   func() ([]isa.Instr, bool)
	stop   func()
	dst    []isa.Instr // the slot chunks() writes the next chunk into
	slots  [aheadSlots][]isa.Instr
	failed any           // (under mu) what the generator panicked with
	head   atomic.Uint32 // chunks the reader is done with
	tail   atomic.Uint32 // chunks filled
	// ended: no chunk after tail — the stream ended, failed, or its
	// reader closed it (set under mu: a fill under mu that finds it unset
	// may pull).
	ended atomic.Bool
}

// fill generates the next chunk into its slot (f.mu held; room for it).
// A generator that panics, or ends its goroutine (runtime.Goexit: a test's
// t.Fatal), ends the feed with that (failed), for its reader to raise
// where it would have without reading ahead.
func (f *feed) fill() {
	returned := false
	defer func() {
		if returned {
			return
		}
		p := recover() // (nil: runtime.Goexit, which goes on)
		if p == nil {
			p = errGoexit
		}
		f.failed = p
		f.ended.Store(true)
	}()
	t := f.tail.Load()
	f.dst = f.slots[t%aheadSlots][:0]
	ch, ok := f.pull()
	returned = true
	if !ok || len(ch) == 0 {
		f.ended.Store(true)
		return
	}
	f.slots[t%aheadSlots] = ch
	f.tail.Store(t + 1)
}

// errGoexit stands for a generator that called runtime.Goexit.
var errGoexit = new(int)

// aheadFilled counts the chunks generated ahead (AheadFilled).
var aheadFilled atomic.Int64

// AheadFilled returns the number of chunks the workers generated ahead of
// their readers in this process (tests check that a run read ahead).
func AheadFilled() int64 { return aheadFilled.Load() }

// fillOne has the worker fill one chunk of f if it has room and no one
// else holds it; it reports whether it did.
func (f *feed) fillOne() bool {
	if !f.room() || !f.mu.TryLock() {
		return false
	}
	defer f.mu.Unlock()
	if !f.room() {
		return false
	}
	t := f.tail.Load()
	f.fill()
	if f.tail.Load() > t {
		aheadFilled.Add(1)
	}
	return true
}

// room reports whether f has a free slot and a stream left.
func (f *feed) room() bool {
	return !f.ended.Load() && f.tail.Load()-f.head.Load() < aheadSlots
}

// add hands f to the worker, starting it if it is not running.
func (a *Ahead) add(f *feed) {
	a.open.Add(1)
	a.mu.Lock()
	a.pending = append(a.pending, f)
	if !a.running {
		a.running = true
		a.sleeping.Store(false)
		go a.run()
	}
	a.mu.Unlock()
	a.took(aheadSlots-1, false) // (its slots but the first are free)
}

// run fills the streams' free slots until none is left open; it sleeps
// when all are full.
func (a *Ahead) run() {
	stopped := false
	defer func() {
		if !stopped { // (a generator ended the goroutine: the next add starts another)
			a.mu.Lock()
			a.running = false
			a.mu.Unlock()
		}
	}()
	for {
		a.mu.Lock()
		a.active = append(a.active, a.pending...)
		clear(a.pending)
		a.pending = a.pending[:0]
		if len(a.active) == 0 {
			a.running = false
			stopped = true
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
		did := false
		keep := a.active[:0]
		for _, f := range a.active {
			if f.ended.Load() {
				continue
			}
			keep = append(keep, f)
			if f.fillOne() { // (a chunk a feed a round: the readers wait for one at most)
				did = true
			}
		}
		clear(a.active[len(keep):])
		a.active = keep
		if !did {
			a.taken.Store(0)
			a.wakeAt.Store(int64(len(a.active)*aheadSlots/4 + 1))
			a.sleeping.Store(true)
			if a.open.Load() == 0 { // (the last closed before it slept)
				a.sleeping.Store(false)
				continue
			}
			<-a.wake
			a.sleeping.Store(false) // (woken by a token left from before it slept)
		}
	}
}

// startAhead begins reading s through a (r's ring reused).
func (r *StreamReader) startAhead(s isa.Stream, a *Ahead) {
	if cap(r.ring) < aheadSlots*chunkLen {
		r.ring = takeInstrs(&ringPool, aheadSlots*chunkLen)
	}
	f := &feed{ahead: a}
	for i := range f.slots {
		f.slots[i] = r.ring[i*chunkLen : i*chunkLen : (i+1)*chunkLen]
	}
	f.pull, f.stop = iter.Pull(chunks(s, &f.dst))
	r.feed = f
	// The first chunk here: a block's start does not wait for the worker.
	f.fillAt(0)
	a.add(f)
}

// refillAhead takes the next chunk of r's feed (generating it if the
// worker has not) and returns its first instruction (nil at the end).
// r.chunk, if not nil, is the slot r is done with.
func (r *StreamReader) refillAhead() *isa.Instr {
	f := r.feed
	h := f.head.Load()
	if r.chunk != nil {
		h++
		f.head.Store(h)
		r.chunk = nil
		f.ahead.took(1, false)
	}
	for {
		if f.tail.Load() > h {
			ch := f.slots[h%aheadSlots]
			r.chunk, r.at = ch, 1
			return &ch[0]
		}
		if f.ended.Load() {
			if f.tail.Load() > h { // filled before it ended
				continue
			}
			f.mu.Lock()
			p := f.failed
			f.mu.Unlock()
			if p == errGoexit {
				runtime.Goexit()
			}
			if p != nil {
				panic(p)
			}
			return nil
		}
		f.ahead.took(0, true)
		f.fillAt(h)
	}
}

// fillAt has the reader fill chunk h of f unless someone did.
func (f *feed) fillAt(h uint32) {
	f.mu.Lock()
	defer f.mu.Unlock() // (also where the generator ends the goroutine)
	if f.tail.Load() == h && !f.ended.Load() {
		f.fill()
	}
}

// closeAhead stops r's feed (the worker then drops it).
func (r *StreamReader) closeAhead() {
	f := r.feed
	r.feed = nil
	defer func() {
		if f.ahead.open.Add(-1) == 0 {
			f.ahead.wakeUp() // (to stop)
		}
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended.Store(true)
	f.stop()
}
