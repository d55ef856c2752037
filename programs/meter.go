package programs

import "github.com/davinci-sim/davinci-sim/isa"

// WorkMeter measures how much of a run's program has been issued, for a
// progress display: the instructions the cores have taken from their
// streams over the instructions of the whole program. It is known only for
// programs whose every instruction is in their per-core streams (the GEMMs,
// asm); for host-launched kernels (lu-fused) and GPU grids
// Fraction reports false. Counting walks the streams once before the run
// (about as costly as generating them), so ask for it only when it is shown.
type WorkMeter struct {
	issued, total int64
}

// Fraction returns the issued fraction of the program's instructions, and
// whether it is known.
func (m *WorkMeter) Fraction() (float64, bool) {
	if m == nil || m.total <= 0 {
		return 0, false
	}
	return min(float64(m.issued)/float64(m.total), 1), true
}

// Total returns the program's instruction count (0 when unknown).
func (m *WorkMeter) Total() int64 { return m.total }

// attach counts prog's instructions and wraps its streams to count the
// ones issued. Programs with grids, or with no instructions in their
// streams, stay unmetered.
func (m *WorkMeter) attach(prog *isa.Program) {
	if len(prog.Grids) > 0 {
		return
	}
	var total int64
	for _, s := range prog.Cores {
		if s == nil {
			continue
		}
		for range s {
			total++
		}
	}
	if total == 0 {
		return
	}
	m.total = total
	for i, s := range prog.Cores {
		if s == nil {
			continue
		}
		prog.Cores[i] = func(yield func(isa.Instr) bool) {
			for in := range s {
				m.issued++
				if !yield(in) {
					return
				}
			}
		}
	}
}
