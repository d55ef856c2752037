package traces

import (
	"slices"
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
// (HostLanes), the kernel launches, the GM bandwidth samples and the power
// samples. Memory beyond the timeline: one core's flag marks with an arrow.
//
// Idle cores are left out (shownCore): a trace lists the cores that did
// something in its window — ran an instruction, or waited in one (for a
// flag, bandwidth, latency, a full queue). A core whose window holds
// nothing but waits at barriers (a DaVinci core without a tile of a small
// GEMM, waiting at sync_all for the others) is not written, as a GPU SM
// that ran no block has no event at all; the header's idle_cores names
// the left-out cores (IdleCores).

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
	// kernels writes the kernel launches (not called when there are
	// none); lanes gives each one's row (kernelLanes).
	kernels(ks []Kernel, lanes []int, nlanes int) error
}

// shownCore reports whether the trace writers write core c: whether it has
// a slice other than a barrier wait, or a buffer sample (see above).
func shownCore(c *CoreTimeline) bool {
	for b := range c.Occ {
		if len(c.Occ[b]) > 0 {
			return true
		}
	}
	for p := range c.Lanes {
		for _, s := range c.Lanes[p].Scan(0) {
			if s.Cause != arch.Barrier {
				return true
			}
		}
	}
	return false
}

// IdleCores returns the IDs of the cores of tl that the trace writers
// leave out, in order: nothing but barrier waits in the window (see
// above), and those a trace tl was read from had left out (tl.Idle).
func IdleCores(tl *Timeline) []int {
	ids := slices.Clone(tl.Idle)
	for _, c := range tl.Cores {
		if !shownCore(c) {
			ids = append(ids, c.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// NoCoreEvents reports whether a trace of tl holds no core's events
// although its window holds some of the run: every core selected did
// nothing in it (ran no instruction — a GPU SM that ran no block — or
// only waited at barriers, IdleCores).
func NoCoreEvents(tl *Timeline) bool {
	if tl.To <= tl.From {
		return false // (a window after the run's end: said otherwise)
	}
	for _, c := range tl.Cores {
		if shownCore(c) {
			return false
		}
	}
	return true
}

// kernelLanes assigns each kernel launch (in launch order) the first row
// free at its launch, so that the launches of a row do not overlap (a
// chip's grids run one after another: one row); it returns the rows and
// their number.
func kernelLanes(ks []Kernel) (lanes []int, n int) {
	var ends []sim.Time // per row, the end of its last launch
	lanes = make([]int, len(ks))
	for i, k := range ks {
		l := 0
		for l < len(ends) && ends[l] > k.Launched {
			l++
		}
		if l == len(ends) {
			ends = append(ends, 0)
		}
		ends[l] = k.Finished
		lanes[i] = l
	}
	return lanes, len(ends)
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
		ev.text = tl.instrText(in, g)
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
		if !shownCore(c) {
			continue
		}
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
	if len(tl.Kernels) > 0 {
		lanes, n := kernelLanes(tl.Kernels)
		if err := sink.kernels(tl.Kernels, lanes, n); err != nil {
			return err
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
