package sim

// Waker wakes a sleeping component without duplicate events. A component keeps a Waker for its
// handler and calls Wake(t) whenever something may give it work at t; the handler then runs once
// at the earliest requested time. Wake(t) does nothing if a wake-up at or before t is already
// pending. The Waker itself is the Handler queued in the engine: it clears its pending state and
// then calls the component's handler with arg 0, so the handler may call Wake again at once.
//
// A Wake earlier than a pending one supersedes it; the superseded engine event still runs (it is
// counted by Engine.Events and seen by hooks, with the Waker as handler) but does nothing.
type Waker struct {
	e       *Engine
	prio    int
	h       Handler
	at      Time
	gen     int64
	pending bool
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
	if t < w.e.now {
		w.e.At(t, w.prio, w, 0) // reports the error
		return
	}
	w.gen++
	w.at, w.pending = t, true
	w.e.At(t, w.prio, w, w.gen)
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
