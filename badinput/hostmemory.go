package badinput

import "errors"

// HostMemoryError is a refusal of a run because, by its estimate, it would
// take more host memory than its bound: this host's default (3/4 of its
// memory) or the bound --max-memory gave. Unlike the rest of bad input it
// is not the input's fault alone: the same run may go on a host with more
// memory, or under a larger bound — a sweep's --resume runs such a point
// again where its bound is now larger. It marks an error without changing
// its message or its kind: whether it is bad input (Is) is the wrapped
// error's, as before it was marked (the refusals of a single run are,
// exit code 2).
type HostMemoryError struct {
	// Err is the refusal, whose message the error's is.
	Err error
	// Bound is the bound on the run's host memory, in bytes, that the
	// estimate passed.
	Bound int64
}

func (e *HostMemoryError) Error() string { return e.Err.Error() }

// Unwrap returns the refusal HostMemory marked.
func (e *HostMemoryError) Unwrap() error { return e.Err }

// HostMemory marks err as a refusal for host memory under bound bytes (nil
// stays nil), its message and kind unchanged.
func HostMemory(err error, bound int64) error {
	if err == nil {
		return nil
	}
	return &HostMemoryError{Err: err, Bound: bound}
}

// HostMemoryBound returns the bound of the refusal for host memory that
// err is or wraps (HostMemory), and whether it is or wraps one.
func HostMemoryBound(err error) (int64, bool) {
	var he *HostMemoryError
	if !errors.As(err, &he) {
		return 0, false
	}
	return he.Bound, true
}
