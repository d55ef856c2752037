package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
)

// Handler receives events. arg is the value passed when the event was scheduled (for example an
// index), so components need not allocate a closure per event.
type Handler interface {
	Handle(now Time, arg int64)
}

// HandlerFunc adapts an ordinary function to a Handler.
type HandlerFunc func(now Time, arg int64)

// Handle calls f(now, arg).
func (f HandlerFunc) Handle(now Time, arg int64) { f(now, arg) }

// Hook observes every executed event, in execution order, just before its handler runs. Hooks must
// not change the simulation (they may record, count or print).
type Hook interface {
	OnEvent(now Time, prio int, h Handler, arg int64)
}

// Waiter is implemented by components that can hold outstanding work. When the event queue of
// Engine.Run runs dry, every registered Waiter is asked; blocked reports whether it still has
// work it cannot finish, and why names the component and the reason, e.g.
// "core 3 pipe MTE1: wait_flag MTE2->MTE1 id 0".
type Waiter interface {
	Blocked() (blocked bool, why string)
}

// Priority range accepted by At and After. Lower values run first at equal times.
const (
	MinPriority = -1 << (63 - seqBits)
	MaxPriority = 1<<(63-seqBits) - 1
)

// seqBits is the width of the scheduling sequence number packed under the priority in an event
// key. When 2^seqBits events have been scheduled the pending events are renumbered (preserving
// their order), so the sequence never overflows.
const seqBits = 44

// ErrPast is wrapped by the error a run stops with when an event was scheduled before Now.
var ErrPast = errors.New("sim: event scheduled in the past")

// ErrPriority is wrapped by the error a run stops with when a priority is outside
// [MinPriority, MaxPriority].
var ErrPriority = errors.New("sim: event priority out of range")

// overflowError is the error a run stops with when an event would be at or beyond MaxTime.
func overflowError(now Time) error {
	return fmt.Errorf("%w: after %v of simulated time an event fell beyond it (a latency, cycle count or bandwidth is out of range)", ErrTimeOverflow, now)
}

// ErrReentrant is returned by Run or RunUntil when called from inside an event handler.
var ErrReentrant = errors.New("sim: Run/RunUntil called from an event handler")

// entry is one queued event in the heap. key packs (priority+bias)<<seqBits | sequence, so that
// the total order (time, priority, sequence) is two integer comparisons. The handler and argument
// live in a side table at slot, which keeps heap entries small and free of pointers (no write
// barriers while sifting).
type entry struct {
	t    Time
	key  uint64
	slot uint32
}

// payload is what an event runs.
type payload struct {
	h   Handler
	arg int64
}

// Engine is a discrete-event simulation engine. Events run in the total order (time, priority,
// scheduling sequence). An Engine is not safe for concurrent use; run independent simulations on
// independent engines.
type Engine struct {
	q      []entry   // 4-ary min-heap on (t, key)
	pl     []payload // payloads, indexed by entry.slot
	pos    []int32   // the heap position of each slot's entry (valid while it is queued)
	free   []uint32  // free slots in pl
	vacant bool      // q[0] is the event being executed; its entry and slot may be reused
	now    Time
	seq    uint64
	seqMax uint64 // renumber when seq reaches this (1<<seqBits; lowered in tests)
	events uint64

	running bool
	stopped bool
	stopErr error

	hooks []Hook

	progressEvery uint64
	progressNext  uint64 // events count at which progressFn is next called; MaxUint64 = never
	progressFn    func(now Time, events uint64)

	waiters []Waiter
}

// NewEngine returns an empty engine at time 0.
func NewEngine() *Engine {
	return &Engine{
		q:            make([]entry, 0, 1024),
		pl:           make([]payload, 0, 1024),
		free:         make([]uint32, 0, 1024),
		seqMax:       1 << seqBits,
		progressNext: ^uint64(0),
	}
}

// Now returns the current simulated time: the time of the event being (or last) executed, or the
// limit of the last RunUntil.
func (e *Engine) Now() Time { return e.now }

// Events returns the number of events executed so far.
func (e *Engine) Events() uint64 { return e.events }

// Pending returns the number of events queued (not yet executed).
func (e *Engine) Pending() int {
	if e.vacant {
		return len(e.q) - 1
	}
	return len(e.q)
}

// Peek returns the time of the next queued event; ok is false when the queue is empty.
func (e *Engine) Peek() (t Time, ok bool) {
	e.fill()
	if len(e.q) == 0 {
		return 0, false
	}
	return e.q[0].t, true
}

// At schedules h.Handle(t, arg) at time t with priority prio. Among events at the same time, lower
// prio runs first; equal (time, prio) run in the order they were scheduled.
//
// Scheduling before Now, or with prio outside [MinPriority, MaxPriority], is a programming error:
// the event is dropped and the engine is stopped with an error wrapping ErrPast or ErrPriority,
// which Run/RunUntil return after the current event. Scheduling at MaxTime (the saturated result
// of Add, CeilPS or Clock.Cycles for a time that does not fit) stops it with ErrTimeOverflow.
func (e *Engine) At(t Time, prio int, h Handler, arg int64) {
	if t < e.now {
		e.Stop(fmt.Errorf("%w: at %v (priority %d, handler %T), now is %v", ErrPast, t, prio, h, e.now))
		return
	}
	if prio < MinPriority || prio > MaxPriority {
		e.Stop(fmt.Errorf("%w: %d not in [%d, %d] (handler %T at %v)", ErrPriority, prio, MinPriority, MaxPriority, h, t))
		return
	}
	if t >= MaxTime {
		e.Stop(overflowError(e.now))
		return
	}
	e.push(t, prio, h, arg)
}

// push queues an event whose time and priority have been checked and
// returns its slot.
func (e *Engine) push(t Time, prio int, h Handler, arg int64) uint32 {
	if e.seq >= e.seqMax {
		e.renumber()
	}
	ev := entry{t: t, key: uint64(prio-MinPriority)<<seqBits | e.seq}
	e.seq++
	if e.vacant {
		// The executing event's entry and slot are free: replace the root and sift down, which
		// costs one sift instead of a pop plus a push in the common "handle one, schedule one"
		// pattern.
		e.vacant = false
		ev.slot = e.q[0].slot
		e.pl[ev.slot] = payload{h, arg}
		e.siftDown(0, ev)
		return ev.slot
	}
	if n := len(e.free); n > 0 {
		ev.slot = e.free[n-1]
		e.free = e.free[:n-1]
		e.pl[ev.slot] = payload{h, arg}
	} else {
		ev.slot = uint32(len(e.pl))
		e.pl = append(e.pl, payload{h, arg})
		e.pos = append(e.pos, 0)
	}
	e.q = append(e.q, ev)
	e.siftUp(len(e.q)-1, ev)
	return ev.slot
}

// move moves the queued event in slot to time t (prio unchanged), earlier
// or later, as if it had been dropped and scheduled anew now: it takes a
// new sequence number, so it runs after the events already scheduled at
// (t, prio) — the order a fresh At gives — and arg replaces its argument.
func (e *Engine) move(slot uint32, t Time, prio int, arg int64) {
	e.fill() // the executing event's vacant root must not be sifted past
	if e.seq >= e.seqMax {
		e.renumber()
	}
	i := int(e.pos[slot])
	old, ev := e.q[i], e.q[i]
	ev.t, ev.key = t, uint64(prio-MinPriority)<<seqBits|e.seq
	e.seq++
	e.pl[slot].arg = arg
	if before(&ev, &old) {
		e.siftUp(i, ev)
	} else {
		e.siftDown(i, ev)
	}
}

// After schedules h.Handle(Now()+d, arg) with priority prio; see At. A negative d is scheduling in
// the past.
func (e *Engine) After(d Time, prio int, h Handler, arg int64) {
	if d < 0 {
		e.Stop(fmt.Errorf("%w: negative delay %v (priority %d, handler %T), now is %v", ErrPast, d, prio, h, e.now))
		return
	}
	e.At(Add(e.now, d), prio, h, arg) // an overflow saturates to MaxTime, which At refuses
}

// Stop ends Run or RunUntil after the current event; they return err. The first non-nil error
// passed to Stop wins; Stop(nil) stops without an error. Called while no run is in progress, Stop
// makes the next Run or RunUntil return at once, before executing any event. Events still queued
// stay queued, and a later Run or RunUntil continues with them.
func (e *Engine) Stop(err error) {
	e.stopped = true
	if e.stopErr == nil {
		e.stopErr = err
	}
}

// AddHook attaches a hook that observes every event executed from now on. Hooks run in the order
// they were added.
func (e *Engine) AddHook(h Hook) {
	if h != nil {
		e.hooks = append(e.hooks, h)
	}
}

// OnProgress makes the engine call fn(Now(), Events()) after every everyEvents-th executed event
// (when Events() becomes a multiple of everyEvents). The check is one integer comparison per
// event; no wall-clock time is read by the engine. fn may call Stop (for example to enforce a
// wall-clock limit it measures itself). everyEvents == 0 or fn == nil disables progress reports.
// A later call replaces the earlier one.
func (e *Engine) OnProgress(everyEvents uint64, fn func(now Time, events uint64)) {
	if everyEvents == 0 || fn == nil {
		e.progressEvery, e.progressFn, e.progressNext = 0, nil, ^uint64(0)
		return
	}
	e.progressEvery, e.progressFn = everyEvents, fn
	e.progressNext = e.events - e.events%everyEvents + everyEvents
}

// Register adds a component to the deadlock check performed when Run's event queue runs dry.
func (e *Engine) Register(w Waiter) {
	if w != nil {
		e.waiters = append(e.waiters, w)
	}
}

// Run executes events until none are left or Stop is called. If stopped, it returns the error
// passed to Stop (nil for Stop(nil)). If the queue ran dry, it asks every registered Flusher to
// book what it held back and goes on while any did; then it asks every registered Waiter and
// returns a *DeadlockError if any is blocked, else nil.
func (e *Engine) Run() error {
	for {
		if err, done := e.run(MaxTime, false); done {
			return err
		}
		if !e.flush() {
			return e.CheckDeadlock()
		}
	}
}

// Flusher is a Waiter that may hold back events it could still book: a
// component that books only the wake-ups something waits for, and does
// the rest when it next wakes up. When the queue runs dry (nothing else
// will happen: a deadlock, or the end) it must book them, so that the run
// ends when, and reports what, it would have had it booked everything.
type Flusher interface {
	// Flush books the held-back events and reports whether there were
	// any (a component that had some should book every event from then
	// on: the run is at its end or in a deadlock).
	Flush() bool
}

// flush asks every registered Flusher to book what it held back.
func (e *Engine) flush() bool {
	booked := false
	for _, w := range e.waiters {
		if f, ok := w.(Flusher); ok && f.Flush() {
			booked = true
		}
	}
	return booked
}

// RunUntil executes all events with time <= t and then sets Now() to t; later events stay queued
// and a further Run or RunUntil continues with them. If Stop is called it returns that error and
// Now() stays at the time of the last executed event. t before Now() is an error. RunUntil does no
// deadlock check; call CheckDeadlock if needed.
func (e *Engine) RunUntil(t Time) error {
	if t < e.now {
		return fmt.Errorf("sim: RunUntil(%v) is before now (%v)", t, e.now)
	}
	if err, done := e.run(t, true); done {
		return err
	}
	e.now = t
	return nil
}

// run is the event loop. done reports that the loop ended because of Stop (or reentrance).
func (e *Engine) run(limit Time, inclusive bool) (err error, done bool) {
	if e.running {
		return ErrReentrant, true
	}
	e.running = true
	defer func() { e.running = false }()
	for !e.stopped {
		if len(e.q) == 0 {
			return nil, false
		}
		ev := &e.q[0]
		if ev.t > limit {
			return nil, false
		}
		p := &e.pl[ev.slot]
		t, h, arg := ev.t, p.h, p.arg
		e.now = t
		e.events++
		e.vacant = true // from here on the event is no longer pending
		if e.hooks != nil {
			prio := int(ev.key>>seqBits) + MinPriority
			for _, hk := range e.hooks {
				hk.OnEvent(t, prio, h, arg)
			}
		}
		h.Handle(t, arg)
		if e.vacant {
			e.pop()
		}
		if e.events >= e.progressNext {
			e.progressNext += e.progressEvery
			e.progressFn(e.now, e.events)
		}
	}
	err = e.stopErr
	e.stopped, e.stopErr = false, nil
	return err, true
}

// fill removes the vacant root, if any, restoring a valid heap.
func (e *Engine) fill() {
	if e.vacant {
		e.pop()
	}
}

// pop removes the root (which is vacant) and restores the heap.
func (e *Engine) pop() {
	e.vacant = false
	slot := e.q[0].slot
	e.pl[slot] = payload{} // drop the handler reference
	e.free = append(e.free, slot)
	n := len(e.q) - 1
	last := e.q[n]
	e.q = e.q[:n]
	if n > 0 {
		e.siftDown(0, last)
	}
}

// before reports whether a precedes b in the total order (time, key). It compares the 128-bit
// values (t, key) with one subtract-with-borrow chain, so that callers compile to conditional
// moves instead of hard-to-predict branches. Flipping the sign bit maps signed time onto
// unsigned order.
func before(a, b *entry) bool {
	_, borrow := bits.Sub64(a.key, b.key, 0)
	_, borrow = bits.Sub64(uint64(a.t)^(1<<63), uint64(b.t)^(1<<63), borrow)
	return borrow != 0
}

// b2i converts a bool to 0 or 1 without a branch.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

func (e *Engine) siftUp(i int, ev entry) {
	q := e.q
	for i > 0 {
		p := (i - 1) >> 2
		if !before(&ev, &q[p]) {
			break
		}
		q[i] = q[p]
		e.pos[q[i].slot] = int32(i)
		i = p
	}
	q[i] = ev
	e.pos[ev.slot] = int32(i)
}

func (e *Engine) siftDown(i int, ev entry) {
	q := e.q
	n := len(q)
	for {
		c := 4*i + 1
		var m int
		if c+3 < n {
			// Full node: a tournament of the four children.
			c4 := q[c : c+4 : c+4]
			m0 := b2i(before(&c4[1], &c4[0]))
			m1 := 2 + b2i(before(&c4[3], &c4[2]))
			w := b2i(before(&c4[m1], &c4[m0]))
			m0 += (m1 - m0) & -w
			m = c + m0
		} else {
			if c >= n {
				break
			}
			m = c
			for j := c + 1; j < n; j++ {
				m += (j - m) & -b2i(before(&q[j], &q[m]))
			}
		}
		if !before(&q[m], &ev) {
			break
		}
		q[i] = q[m]
		e.pos[q[i].slot] = int32(i)
		i = m
	}
	q[i] = ev
	e.pos[ev.slot] = int32(i)
}

// renumber reassigns sequence numbers 0..n-1 to the pending events, keeping their order, so the
// packed sequence field never overflows.
func (e *Engine) renumber() {
	e.fill()
	q := e.q
	sort.Slice(q, func(a, b int) bool {
		return q[a].t < q[b].t || q[a].t == q[b].t && q[a].key < q[b].key
	})
	const seqMask = 1<<seqBits - 1
	for i := range q {
		q[i].key = q[i].key&^seqMask | uint64(i)
		e.pos[q[i].slot] = int32(i)
	}
	// A sorted slice is a valid heap.
	e.seq = uint64(len(q))
}

// DeadlockError reports that the event queue ran dry while components still had outstanding work.
type DeadlockError struct {
	// Time is the simulated time at which the queue ran dry (the time of the last event).
	Time Time
	// Blocked names each blocked component and why, sorted.
	Blocked []string
}

// Error lists the blocked components, one per line.
func (d *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deadlock at %v: %d blocked", d.Time, len(d.Blocked))
	for _, s := range d.Blocked {
		b.WriteString("\n  ")
		b.WriteString(s)
	}
	return b.String()
}

// CheckDeadlock asks every registered Waiter whether it is blocked and returns a *DeadlockError
// listing those that are (sorted), or nil if none is. Run calls it when its queue runs dry.
func (e *Engine) CheckDeadlock() error {
	var blocked []string
	for _, w := range e.waiters {
		if ok, why := w.Blocked(); ok {
			if why == "" {
				why = fmt.Sprintf("%T: blocked (no reason given)", w)
			}
			blocked = append(blocked, why)
		}
	}
	if len(blocked) == 0 {
		return nil
	}
	slices.SortFunc(blocked, naturalCompare)
	return &DeadlockError{Time: e.now, Blocked: blocked}
}

// naturalCompare orders strings with their runs of digits compared as
// numbers ("core 2" before "core 10").
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitRun returns the length of s's leading run of ASCII digits.
func digitRun(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
