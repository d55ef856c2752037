package traces

import (
	"sort"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// The trace writers share one walk of the timeline (walkTimeline) and
// differ only in how they encode what it visits (a traceSink): the Chrome
// JSON writer (perfetto.go) and the Perfetto protobuf writer (pftrace.go).
//
// The walk, per core in ID order: the core and its lanes; each lane's
// slices in time order, except the flag marks with an arrow, which come
// after all lanes in time order with every set_flag before the wait_flags
// of its instant (a viewer that meets an arrow's end before its start — a
// wait on a lower lane at the set's time — drops the arrow); the buffer
// occupancy samples, buffer by buffer. Then the host's tasks, lane by lane
// (HostLanes), the GM bandwidth samples and the power samples.
// Memory beyond the timeline: one core's flag marks with an arrow.

// traceSink encodes the events of a timeline walk.
type traceSink interface {
	// core starts core c, which shows lanes lanes.
	core(c *CoreTimeline, lanes int) error
	// slice writes a slice of the current core.
	slice(ev *sliceEvent) error
	// occupancy writes a sample of the allocated bytes of buffer b of
	// the current core.
	occupancy(b int, s Sample) error
	// host writes a host task; first is set on the first one.
	host(t *HostTask, first bool) error
	// bandwidth writes a GM bandwidth sample (bytes/s); first is set on
	// the first one.
	bandwidth(s Sample, first bool) error
	// power writes a sample of the chip's power counter (W); first is set
	// on the first one.
	power(s Sample, first bool) error
}

// sliceEvent is a slice as the writers encode it, with everything derived
// from the timeline.
type sliceEvent struct {
	lane  int
	s     Slice
	name  string // the mnemonic or stall cause
	cat   string // the class name, "stall" or "flag"
	text  string // the instruction ("" for stalls)
	bytes int64
	flops float64
	bind  uint64 // the arrow of a flag mark (0: none drawn)
	set   bool   // a set_flag mark (the arrow's start)
}

// describe fills ev for slice s of lane p; bound holds the arrows drawn.
func (tl *Timeline) describe(ev *sliceEvent, p int, s *Slice, bound map[uint64]bool) {
	*ev = sliceEvent{lane: p, s: *s, name: tl.Name(s)}
	if in, g, ok := tl.instr(s); ok {
		ev.text = tl.instrNames().Format(in) + groupText(in.Op, g)
		if s.Class != ClassIssue {
			ev.bytes, ev.flops = amount(&in, g, tl.VectorRepeatBytes)
		}
	} else {
		ev.text = tl.Text(s)
		ev.bytes, ev.flops = tl.Args(s)
	}
	switch {
	case s.Class == ClassFlag:
		ev.cat = ClassFlag.String()
		if b := tl.Bind(s); b != 0 && bound[b] {
			ev.bind = b
			ev.set = ev.name == isa.OpSetFlag.String()
		}
	case s.Cause != arch.Busy:
		ev.cat = "stall"
	default:
		ev.cat = s.Class.String()
	}
}

// laneSlice is a slice of a lane, held back to be written in another order.
type laneSlice struct {
	lane int
	s    Slice
	set  bool // a set_flag mark
}

// walkTimeline walks tl into sink (see above).
func walkTimeline(tl *Timeline, sink traceSink) error {
	var ev sliceEvent
	for _, c := range tl.Cores {
		if err := sink.core(c, max(len(tl.Lanes), len(c.Lanes))); err != nil {
			return err
		}
		bound := make(map[uint64]bool, len(c.Flows))
		for _, f := range c.Flows {
			bound[f.Bind] = true
		}
		var arrows []laneSlice
		for p := range c.Lanes {
			for _, s := range c.Lanes[p].Scan(0) {
				if s.Class == ClassFlag && bound[tl.Bind(&s)] {
					arrows = append(arrows, laneSlice{p, s, tl.Name(&s) == isa.OpSetFlag.String()})
					continue
				}
				tl.describe(&ev, p, &s, bound)
				if err := sink.slice(&ev); err != nil {
					return err
				}
			}
		}
		sort.SliceStable(arrows, func(i, j int) bool {
			a, b := &arrows[i], &arrows[j]
			if a.s.From != b.s.From {
				return a.s.From < b.s.From
			}
			return a.set && !b.set
		})
		for i := range arrows {
			tl.describe(&ev, arrows[i].lane, &arrows[i].s, bound)
			if err := sink.slice(&ev); err != nil {
				return err
			}
		}
		for b := range c.Occ {
			for _, s := range c.Occ[b] {
				if err := sink.occupancy(b, s); err != nil {
					return err
				}
			}
		}
	}
	first := true
	for l := range HostLanes {
		for i := range tl.Host {
			if t := &tl.Host[i]; t.Lane() == l {
				if err := sink.host(t, first); err != nil {
					return err
				}
				first = false
			}
		}
	}
	for i, s := range tl.Bandwidth {
		if err := sink.bandwidth(s, i == 0); err != nil {
			return err
		}
	}
	for i, s := range tl.Power {
		if err := sink.power(s, i == 0); err != nil {
			return err
		}
	}
	return nil
}

// traceSpan returns the time span a trace of tl states: from the first
// event kept to the end.
func traceSpan(tl *Timeline) (from, to sim.Time) { return max(tl.From, tl.Dropped), tl.To }
