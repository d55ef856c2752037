package isa

import "iter"

// Stream is one core's instruction stream, produced lazily so that program
// generators can describe millions of instructions without holding them.
// A stream may be iterated more than once (static checks, then the run) and
// must yield the same instructions each time.
type Stream = iter.Seq[Instr]

// Program is a set of per-core instruction streams. Cores[i] runs on AI core
// i; a nil entry leaves that core idle.
type Program struct {
	Name  string
	Cores []Stream
	// Generated marks a program produced by one of the simulator's own
	// generators, whose output the generator's tests run through Check;
	// the run then skips the pre-run Check (a full walk of every stream,
	// as costly as generating it). Hand-written programs leave it false.
	Generated bool
}

// Slice returns a Stream over a fixed slice of instructions.
func Slice(instrs []Instr) Stream {
	return func(yield func(Instr) bool) {
		for _, in := range instrs {
			if !yield(in) {
				return
			}
		}
	}
}
