package davinci_test

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// That deferred transitions give the same run as eager wake-ups (formerly
// TestDeferredTransitionsMatchEagerWakeUps here) is checked by the
// conformance suite: archtest's "eager" check on every case of
// conformance_test.go, which has the programs that test ran and more.

// intervalLog records every observed pipe interval, flag event and
// occupancy change (flagfilter_test.go).
type intervalLog struct{ lines []string }

func (l *intervalLog) Interval(core, pipe int, cause arch.Cause, from, to sim.Time, in *isa.Instr, _ *arch.Group) {
	op := ""
	if in != nil {
		op = in.Op.String()
	}
	l.lines = append(l.lines, fmt.Sprintf("c%d %s %s [%d,%d) %s", core, isa.Pipe(pipe), cause, from, to, op))
}

func (l *intervalLog) Flag(core, src, dst, id int, set bool, t sim.Time) {
	l.lines = append(l.lines, fmt.Sprintf("c%d flag %s->%s %d %v @%d", core, isa.Pipe(src), isa.Pipe(dst), id, set, t))
}

func (l *intervalLog) Occupancy(core, buf int, bytes int64, t sim.Time) {
	l.lines = append(l.lines, fmt.Sprintf("c%d occ %s %d @%d", core, isa.Buffer(buf), bytes, t))
}

func (l *intervalLog) Bandwidth(t sim.Time, bps float64) {}
