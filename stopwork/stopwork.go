// Package stopwork lets a long host-side pass — drawing or reading an
// input, a plan's passes over A and B, an exact reference, counting the
// inputs against a range — hear an interrupt without asking for it at
// every element: a Stopper asks its stop function (a context's Err, which
// takes a lock) once every Every units of work.
package stopwork

// Every is the units of work (elements, values, products) a pass does
// between two questions to its stop: a context's Err is a lock, not one
// for a row of 16.
const Every = 1 << 16

// Stopper asks a stop function (nil: never) before the first unit of work
// of a pass and then again once Every units have passed since it last
// asked. The zero Stopper never asks.
type Stopper struct {
	stop  func() bool
	since int // units since the last question
}

// New returns a Stopper asking stop (nil: never).
func New(stop func() bool) Stopper {
	return Stopper{stop: stop, since: Every}
}

// StopBefore counts work units about to be done and reports whether stop
// said true, asking it when Every units have passed since it last asked
// (or it never asked).
func (s *Stopper) StopBefore(work int) bool {
	if s.stop == nil {
		return false
	}
	if s.since < Every {
		s.since += work
		return false
	}
	s.since = work
	return s.stop()
}
