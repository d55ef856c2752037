package traces

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/davinci-sim/davinci-sim/sim"
)

// ClusterTrace is the rank-level timeline of a run on many NPUs: per rank
// (an NPU and its host share) named tracks of spans — the host's work and
// waits, the kernels on each core set — and the messages between ranks.
// WriteClusterJSON writes it in the Trace Event Format (chrome://tracing,
// Perfetto): one process per rank, one thread per track.
type ClusterTrace struct {
	// Machine and Program name the run's cluster (or node) description and
	// its program kind: the trace's otherData, as in a chip trace (what
	// davinci-sim view shows in its header).
	Machine, Program string
	// Ranks names each rank's process (index = rank).
	Ranks []string
	// Tracks names the threads of every rank (index = Span.Track).
	Tracks []string
	// TrackCats gives the category of the spans of each of Tracks (a
	// span's own Cat wins; "" or none: "cluster").
	TrackCats []string
	// RankTracks names further threads of single ranks (a drill-down into
	// one NPU's cores), numbered after Tracks.
	RankTracks map[int][]string
	Spans      []ClusterSpan
	// Messages are arrows from a span of one rank to a span of another.
	Messages []ClusterMessage

	// Filter: only spans and messages of these ranks (nil: all) in the
	// window [From, To] (To = 0: no end) are kept, and at most Limit of
	// them (0: DefaultClusterTraceLimit); Dropped counts those left out
	// by the limit. A span is kept if it overlaps the window (ends after
	// From and starts before To; one of no length: at a time in [From,
	// To)), cut to it, as a chip trace cuts its slices; a message only if
	// its arrow lies in the window at both ends, as a chip trace draws the
	// flag arrows of a set and a wait both in its window.
	Only     map[int]bool
	From, To sim.Time
	Limit    int
	Dropped  int
	// DroppedFrom is the earliest start of a record the limit dropped
	// (valid when Dropped > 0): from then on the trace misses some of the
	// run. otherData's dropped_records and dropped_from_ps state both.
	DroppedFrom sim.Time
	// End is the run's end (0: not known; the last span's end stands for
	// it): otherData's to_ps is the window's end or End, whichever is
	// earlier, as a chip trace's is.
	End sim.Time
	// Ending says how the run ended when it did not complete ("deadlock
	// at 1.5ms"; "": it completed): otherData's ending, as a chip
	// trace's (Timeline.Ending), which davinci-sim view shows.
	Ending string

	drills []drillDown // AddTimeline
}

// DefaultClusterTraceLimit is the most spans and messages a cluster trace
// keeps (about 250 MB of JSON): a long run on hundreds of NPUs makes tens
// of millions; --trace-window and --trace-ranks choose which.
const DefaultClusterTraceLimit = 2_000_000

// overlaps reports whether [from, to] overlaps the trace's window: ends
// after its start and starts before its end (touching it at an edge is
// not overlapping); [t, t] whether t is in [From, To), a chip trace's rule
// for an instant.
func (ct *ClusterTrace) overlaps(from, to sim.Time) bool {
	if from == to {
		return from >= ct.From && (ct.To == 0 || from < ct.To)
	}
	return to > ct.From && (ct.To == 0 || from < ct.To)
}

// cut returns [from, to] cut to the trace's window.
func (ct *ClusterTrace) cut(from, to sim.Time) (sim.Time, sim.Time) {
	from = max(from, ct.From)
	if ct.To > 0 {
		to = min(to, ct.To)
	}
	return from, to
}

// room reports whether one more record, starting at t, fits, counting it
// as dropped if not (and t in DroppedFrom).
func (ct *ClusterTrace) room(t sim.Time) bool {
	limit := ct.Limit
	if limit == 0 {
		limit = DefaultClusterTraceLimit
	}
	if len(ct.Spans)+len(ct.Messages) >= limit {
		if ct.Dropped == 0 || t < ct.DroppedFrom {
			ct.DroppedFrom = t
		}
		ct.Dropped++
		return false
	}
	return true
}

// AddSpan records s, cut to the window, if its rank and time pass the
// filter.
func (ct *ClusterTrace) AddSpan(s ClusterSpan) {
	if !ct.traced(s.Rank) || !ct.overlaps(s.From, s.To) || !ct.room(max(s.From, ct.From)) {
		return
	}
	s.From, s.To = ct.cut(s.From, s.To)
	ct.Spans = append(ct.Spans, s)
}

// AddMessage records m if both its ranks and both ends of its arrow pass
// the filter (an arrow needs a slice at each end to be drawn, and a chip
// trace draws no arrow with an end outside its window).
func (ct *ClusterTrace) AddMessage(m ClusterMessage) {
	if !ct.traced(m.From) || !ct.traced(m.To) || !ct.inWindow(m.Sent) || !ct.inWindow(m.arrowEnd()) || !ct.room(m.Sent) {
		return
	}
	ct.Messages = append(ct.Messages, m)
}

// traced reports whether rank r is among those the trace keeps (Only).
func (ct *ClusterTrace) traced(r int) bool { return ct.Only == nil || ct.Only[r] }

// inWindow reports whether instant t is in the window [From, To).
func (ct *ClusterTrace) inWindow(t sim.Time) bool {
	return t >= ct.From && (ct.To == 0 || t < ct.To)
}

// ClusterSpan is one slice on a rank's track, in category Cat ("": its
// track's, ClusterTrace.TrackCats). A host's spans take the categories of
// a chip trace's host tasks (HostTask.Kind: compute, launch, transfer,
// wait); davinci-sim view reads a "wait" as a stall, the host waiting.
// Cat is no instruction class's name (Class.String: "mmad", "copy", …):
// a track holding only such spans would read back as a pipe's lane,
// whose slices may not overlap, and a trace of overlapping ones would be
// refused.
type ClusterSpan struct {
	Rank, Track int
	Name, Cat   string
	From, To    sim.Time
}

// spanCat returns the category of span s.
func (ct *ClusterTrace) spanCat(s *ClusterSpan) string {
	switch {
	case s.Cat != "":
		return s.Cat
	case s.Track >= 0 && s.Track < len(ct.TrackCats) && ct.TrackCats[s.Track] != "":
		return ct.TrackCats[s.Track]
	}
	return "cluster"
}

// ClusterMessage is a message (a collective's delivery) from rank From
// at time Sent to rank To at time Arrived, drawn on track Track.
type ClusterMessage struct {
	From, To      int
	Track         int
	Sent, Arrived sim.Time
	Name          string
}

// arrowEnd returns the time the arrow of m ends: 1 ps before the arrival,
// inside the receiver's wait (which ends at the arrival: a flow's end
// binds to the slice that encloses it, and viewers take slices as open at
// their end).
func (m *ClusterMessage) arrowEnd() sim.Time {
	if m.Arrived > m.Sent {
		return m.Arrived - 1
	}
	return m.Arrived
}

// AddTimeline adds a chip timeline — one NPU's recorder (--trace-npu),
// finished — to rank's process as threads of their own, one per core and
// lane, after the common tracks: the drill-down into one NPU of a cluster
// run. The trace then carries the NPU's events as a chip trace does
// (WriteClusterJSON): every instruction with its category, text, bytes and
// flops, the stalls, the flag marks and their arrows, each core's buffer
// occupancy and the NPU's GM bandwidth and power (W) as counters of the
// rank. Cores that did nothing but wait at barriers are left out, as from
// a chip trace (walk.go). The NPU's kernels and host tasks are the rank's
// common tracks already. The timeline's slices do not count against Limit
// (the recorder's window and cores bound them, as for a chip trace).
func (ct *ClusterTrace) AddTimeline(rank int, tl *Timeline) {
	if ct.RankTracks == nil {
		ct.RankTracks = map[int][]string{}
	}
	d := drillDown{rank: rank, tl: tl, first: map[int]int{}}
	for _, c := range tl.Cores {
		if !shownCore(c) {
			continue
		}
		d.first[c.ID] = len(ct.Tracks) + len(ct.RankTracks[rank])
		for p := range max(len(tl.Lanes), len(c.Lanes)) {
			ct.RankTracks[rank] = append(ct.RankTracks[rank], fmt.Sprintf("core %d %s", c.ID, tl.LaneName(p)))
		}
	}
	ct.drills = append(ct.drills, d)
}

// drillDown is a chip timeline added to a rank (AddTimeline): first gives
// the track of each written core's lane 0.
type drillDown struct {
	rank  int
	tl    *Timeline
	first map[int]int
}

// span returns the time span the trace states: its window cut to the
// run, [min(From, End), min(To, End)] (To = 0: End), as a chip trace
// states its own (from = to = the run's end when the window starts at or
// after it). With End not known, the last span's, message's or drilled-in
// timeline's end stands for it.
func (ct *ClusterTrace) span() (from, to sim.Time) {
	end := ct.End
	if end == 0 {
		for _, s := range ct.Spans {
			end = max(end, s.To)
		}
		for _, m := range ct.Messages {
			end = max(end, m.Arrived)
		}
		for _, d := range ct.drills {
			end = max(end, d.tl.To)
		}
		end = max(end, ct.From)
	}
	to = end
	if ct.To > 0 {
		to = min(to, ct.To)
	}
	return min(ct.From, to), to
}

// header returns the trace's otherData: machine, program and ending, the time span
// it states (span), the ranks left out (untraced_ranks: not in Only, as a
// chip trace's idle_cores names the cores it leaves out), the records the
// limit dropped and the earliest time one started (dropped_records,
// dropped_from_ps: the trace is complete only before it), and the
// drilled-in NPUs' buffer capacities (by their counters' names, "core 0
// L1").
func (ct *ClusterTrace) header() *traceHeader {
	h := &traceHeader{Generator: generator, Machine: ct.Machine, Program: ct.Program, Ending: ct.Ending}
	from, to := ct.span()
	h.FromPs, h.ToPs = int64(from), int64(to)
	var untraced []int
	for r := range ct.Ranks {
		if !ct.traced(r) {
			untraced = append(untraced, r)
		}
	}
	h.UntracedRanks = FormatCores(untraced)
	if ct.Dropped > 0 {
		h.DroppedRecords, h.DroppedFromPs = int64(ct.Dropped), int64(ct.DroppedFrom)
	}
	for _, d := range ct.drills {
		for _, c := range d.tl.Cores {
			if _, ok := d.first[c.ID]; !ok {
				continue
			}
			for b := range c.Occ {
				if capacity := d.tl.BufferCapacity(b); capacity > 0 && len(c.Occ[b]) > 0 {
					if h.Capacity == nil {
						h.Capacity = map[string]int64{}
					}
					h.Capacity[fmt.Sprintf("core %d %s", c.ID, d.tl.BufferName(b))] = capacity
				}
			}
		}
	}
	return h
}

// WriteClusterJSON writes ct as a JSON trace: process = rank (those not
// in Only left out, named in otherData's untraced_ranks), thread id =
// track + 1 (as chip traces number lanes, so davinci-sim view replays it
// with the ranks as cores and their tracks as lanes); otherData as a chip
// trace's (machine, program, time span). Spans have their category
// (spanCat), messages are flow arrows in category "message", and a
// drilled-in NPU (AddTimeline) is written as a chip trace writes its cores
// (walk.go), on its rank's threads, its counters named after their core
// ("core 0 L1") or the NPU ("NPU GM bandwidth", "NPU power").
func WriteClusterJSON(w io.Writer, ct *ClusterTrace) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	h := ct.header()
	hb, err := json.Marshal(h)
	if err != nil {
		return err
	}
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":`)
	bw.Write(hb)
	bw.WriteString(",\n\"traceEvents\":[\n")
	e := &eventWriter{w: bw, first: true}
	for r, name := range ct.Ranks {
		if !ct.traced(r) {
			continue
		}
		e.meta(r, 0, "process_name", "name", name)
		e.metaInt(r, 0, "process_sort_index", r)
		for t, tn := range append(ct.Tracks[:len(ct.Tracks):len(ct.Tracks)], ct.RankTracks[r]...) {
			e.meta(r, t+1, "thread_name", "name", tn)
			e.metaInt(r, t+1, "thread_sort_index", t)
		}
	}
	for i := range ct.Spans {
		s := &ct.Spans[i]
		e.begin("X", s.Rank, s.Track+1)
		e.time("ts", s.From)
		e.time("dur", s.To-s.From)
		e.str("name", s.Name)
		e.str("cat", ct.spanCat(s))
		e.end()
	}
	for i := range ct.Messages {
		m := &ct.Messages[i]
		e.begin("s", m.From, m.Track+1)
		e.time("ts", m.Sent)
		e.str("name", m.Name)
		e.str("cat", "message")
		e.buf = append(e.buf, `,"id":`...)
		e.buf = strconv.AppendInt(e.buf, int64(i), 10)
		e.end()
		e.begin("f", m.To, m.Track+1)
		e.time("ts", m.arrowEnd())
		e.str("name", m.Name)
		e.str("cat", "message")
		e.str("bp", "e")
		e.buf = append(e.buf, `,"id":`...)
		e.buf = strconv.AppendInt(e.buf, int64(i), 10)
		e.end()
	}
	for i := range ct.drills {
		d := &ct.drills[i]
		if err := walkTimeline(d.tl, &drillSink{eventWriter: e, d: d}); err != nil {
			return err
		}
		e.tl, e.tid0 = nil, 0
	}
	if e.events == 0 {
		e.runEnd(sim.Time(h.ToPs))
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// drillSink writes a drilled-in NPU's timeline into a cluster trace: its
// slices on its rank's threads, its counters on its rank.
type drillSink struct {
	*eventWriter
	d      *drillDown
	prefix string // of the current core's counters
}

func (s *drillSink) core(c *CoreTimeline, _ int) error {
	s.tl, s.pid, s.tid0 = s.d.tl, s.d.rank, s.d.first[c.ID]
	s.prefix = fmt.Sprintf("core %d ", c.ID)
	return nil
}

func (s *drillSink) occupancy(b int, smp Sample) error {
	s.counter(s.d.rank, s.prefix+s.d.tl.BufferName(b), "bytes", smp)
	return nil
}

// host writes nothing: the rank's host track has the host's work.
func (s *drillSink) host(*HostTask, bool) error { return nil }

// kernels writes nothing: the rank's kernel tracks have them.
func (s *drillSink) kernels([]Kernel, []int, int) error { return nil }

func (s *drillSink) bandwidth(smp Sample, _ bool) error {
	smp.Value /= 1e9
	s.counter(s.d.rank, "NPU GM bandwidth", "GB/s", smp)
	return nil
}

func (s *drillSink) power(smp Sample, _ bool) error {
	s.counter(s.d.rank, "NPU power", "W", smp)
	return nil
}
