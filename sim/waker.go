package sim

// Waker wakes a sleeping component without duplicate events. A component keeps a Waker for its
// handler and calls Wake(t) whenever something may give it work at t; the handler then runs once
// at the earliest requested time. Wake(t) does nothing if a wake-up at or before t is already
// pending. The Waker itself is the Handler queued in the engine: it clears its pending state and
// then calls the component's handler with arg 0, so the handler may call Wake again at once.
//
// A Wake earlier than a pending one moves the pending engine event to the earlier time, with a new
// sequence number: it runs where a newly scheduled event would, and no superseded event is left
// to run as a no-op.
type Waker struct {
	e       *Engine
	prio    int
	h       Handler
	at      Time
	gen     int64
	pending bool
	slot    uint32 // the engine slot of the pending event
}

// NewWaker returns a Waker that schedules h on e with priority prio.
func NewWaker(e *Engine, prio int, h Handler) *Waker {
	return &Waker{e: e, prio: prio, h: h}
}

// Wake makes the handler run at t unless a wake-up at or before t is already pending. t before
// Now is a programming error (see Engine.At).
func (w *Waker) Wake(t Time) {
	if w.pending && w.at <= t {
		return
	}
	w.book(t)
}

// Rebook makes the handler run at t and not before: Wake, except that a
// pending wake-up before t moves later, to t, as if booked now. For a
// component that knows exactly when it next has work (a bandwidth channel,
// whose flows all slow down when another starts, so its first finish
// moves later), it saves the event that would run early as a no-op only
// to book t. t before Now is a programming error (see Engine.At).
func (w *Waker) Rebook(t Time) {
	if w.pending && w.at == t {
		return
	}
	w.book(t)
}

// book makes the handler run at t: the pending wake-up's engine event
// moved there (earlier or later, with a new sequence number: it runs where
// a newly scheduled event would, and no superseded event is left to run as
// a no-op), or a new one.
func (w *Waker) book(t Time) {
	if t < w.e.now {
		w.e.At(t, w.prio, w, 0) // reports the error
		return
	}
	w.gen++
	if t >= MaxTime || w.prio < MinPriority || w.prio > MaxPriority {
		w.e.At(t, w.prio, w, w.gen) // reports the error
		return
	}
	w.at = t
	if w.pending {
		w.e.move(w.slot, t, w.prio, w.gen)
		return
	}
	w.pending = true
	w.slot = w.e.push(t, w.prio, w, w.gen)
}

// Pending reports whether a wake-up is scheduled, and when.
func (w *Waker) Pending() (at Time, ok bool) { return w.at, w.pending }

// Target returns the handler the Waker wakes (useful to hooks, which see the Waker as handler).
func (w *Waker) Target() Handler { return w.h }

// Handle implements Handler for the engine; components do not call it.
func (w *Waker) Handle(now Time, arg int64) {
	if !w.pending || arg != w.gen {
		return // superseded by an earlier wake-up
	}
	w.pending = false
	w.h.Handle(now, 0)
}
