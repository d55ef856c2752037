package traces

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/davinci-sim/davinci-sim/sim"
)

// ClusterTrace is the rank-level timeline of a run on many NPUs: per rank
// (an NPU and its host share) named tracks of spans — the host's work and
// waits, the kernels on each core set — and the messages between ranks.
// WriteClusterJSON writes it in the Trace Event Format (chrome://tracing,
// Perfetto): one process per rank, one thread per track.
type ClusterTrace struct {
	// Ranks names each rank's process (index = rank).
	Ranks []string
	// Tracks names the threads of every rank (index = Span.Track).
	Tracks []string
	// RankTracks names further threads of single ranks (a drill-down into
	// one NPU's cores), numbered after Tracks.
	RankTracks map[int][]string
	Spans      []ClusterSpan
	// Messages are arrows from a span of one rank to a span of another.
	Messages []ClusterMessage

	// Filter: only spans and messages of these ranks (nil: all) that
	// overlap [From, To] (To = 0: no end) are kept, and at most Limit of
	// them (0: DefaultClusterTraceLimit); Dropped counts those left out
	// by the limit.
	Only     map[int]bool
	From, To sim.Time
	Limit    int
	Dropped  int
}

// DefaultClusterTraceLimit is the most spans and messages a cluster trace
// keeps (about 250 MB of JSON): a long run on hundreds of NPUs makes tens
// of millions; --trace-window and --trace-ranks choose which.
const DefaultClusterTraceLimit = 2_000_000

// overlaps reports whether [from, to] meets the trace's window.
func (ct *ClusterTrace) overlaps(from, to sim.Time) bool {
	return to >= ct.From && (ct.To == 0 || from <= ct.To)
}

// room reports whether one more record fits, counting it as dropped if not.
func (ct *ClusterTrace) room() bool {
	limit := ct.Limit
	if limit == 0 {
		limit = DefaultClusterTraceLimit
	}
	if len(ct.Spans)+len(ct.Messages) >= limit {
		ct.Dropped++
		return false
	}
	return true
}

// AddSpan records s if its rank and time pass the filter.
func (ct *ClusterTrace) AddSpan(s ClusterSpan) {
	if (ct.Only != nil && !ct.Only[s.Rank]) || !ct.overlaps(s.From, s.To) || !ct.room() {
		return
	}
	ct.Spans = append(ct.Spans, s)
}

// AddMessage records m if both its ranks and its time pass the filter (an
// arrow needs a slice at each end to be drawn).
func (ct *ClusterTrace) AddMessage(m ClusterMessage) {
	if (ct.Only != nil && (!ct.Only[m.From] || !ct.Only[m.To])) || !ct.overlaps(m.Sent, m.Arrived) || !ct.room() {
		return
	}
	ct.Messages = append(ct.Messages, m)
}

// ClusterSpan is one slice on a rank's track.
type ClusterSpan struct {
	Rank, Track int
	Name        string
	From, To    sim.Time
}

// ClusterMessage is a message (a collective's delivery) from rank From
// at time Sent to rank To at time Arrived, drawn on track Track.
type ClusterMessage struct {
	From, To      int
	Track         int
	Sent, Arrived sim.Time
	Name          string
}

// AddTimeline adds a chip timeline's busy slices (instructions, per core
// and lane) to rank's process as threads of their own, after the common
// tracks: the drill-down into one NPU of a cluster run.
func (ct *ClusterTrace) AddTimeline(rank int, tl *Timeline) {
	if ct.RankTracks == nil {
		ct.RankTracks = map[int][]string{}
	}
	for _, c := range tl.Cores {
		for p := range c.Lanes {
			track := len(ct.Tracks) + len(ct.RankTracks[rank])
			ct.RankTracks[rank] = append(ct.RankTracks[rank], fmt.Sprintf("core %d %s", c.ID, tl.LaneName(p)))
			for _, sl := range c.Lane(p).Scan(0) {
				if sl.Stall() || sl.Class == ClassFlag {
					continue
				}
				ct.AddSpan(ClusterSpan{Rank: rank, Track: track, Name: tl.Name(&sl), From: sl.From, To: sl.To})
			}
		}
	}
}

// usec formats t in microseconds (the format's unit) with picosecond digits.
func usec(t sim.Time) json.Number {
	return json.Number(fmt.Sprintf("%d.%06d", t/1_000_000, t%1_000_000))
}

// WriteClusterJSON writes ct as a JSON trace: process = rank, thread id =
// track + 1 (as chip traces number lanes, so davinci-sim view replays it
// with the ranks as cores and their tracks as lanes).
func WriteClusterJSON(w io.Writer, ct *ClusterTrace) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if _, err := bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[` + "\n"); err != nil {
		return err
	}
	first := true
	put := func(ev map[string]any) error {
		if !first {
			if _, err := bw.WriteString(","); err != nil {
				return err
			}
		}
		first = false
		return enc.Encode(ev)
	}
	for r, name := range ct.Ranks {
		if err := put(map[string]any{"ph": "M", "name": "process_name", "pid": r, "tid": 0, "args": map[string]any{"name": name}}); err != nil {
			return err
		}
		if err := put(map[string]any{"ph": "M", "name": "process_sort_index", "pid": r, "tid": 0, "args": map[string]any{"sort_index": r}}); err != nil {
			return err
		}
		for t, tn := range append(ct.Tracks[:len(ct.Tracks):len(ct.Tracks)], ct.RankTracks[r]...) {
			if err := put(map[string]any{"ph": "M", "name": "thread_name", "pid": r, "tid": t + 1, "args": map[string]any{"name": tn}}); err != nil {
				return err
			}
		}
	}
	for _, s := range ct.Spans {
		if err := put(map[string]any{"ph": "X", "name": s.Name, "pid": s.Rank, "tid": s.Track + 1, "ts": usec(s.From), "dur": usec(s.To - s.From)}); err != nil {
			return err
		}
	}
	for i, m := range ct.Messages {
		if err := put(map[string]any{"ph": "s", "name": m.Name, "cat": "message", "id": i, "pid": m.From, "tid": m.Track + 1, "ts": usec(m.Sent)}); err != nil {
			return err
		}
		// The arrow ends 1 ps before the arrival, inside the receiver's wait
		// (which ends at the arrival: a flow's end binds to the slice that
		// encloses it, and viewers take slices as open at their end).
		end := m.Arrived
		if end > m.Sent {
			end--
		}
		if err := put(map[string]any{"ph": "f", "bp": "e", "name": m.Name, "cat": "message", "id": i, "pid": m.To, "tid": m.Track + 1, "ts": usec(end)}); err != nil {
			return err
		}
	}
	if _, err := bw.WriteString("]}\n"); err != nil {
		return err
	}
	return bw.Flush()
}
