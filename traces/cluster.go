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
	Spans  []ClusterSpan
	// Messages are arrows from a span of one rank to a span of another.
	Messages []ClusterMessage
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

// usec formats t in microseconds (the format's unit) with picosecond digits.
func usec(t sim.Time) json.Number {
	return json.Number(fmt.Sprintf("%d.%06d", t/1_000_000, t%1_000_000))
}

// WriteClusterJSON writes ct as a JSON trace.
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
		for t, tn := range ct.Tracks {
			if err := put(map[string]any{"ph": "M", "name": "thread_name", "pid": r, "tid": t, "args": map[string]any{"name": tn}}); err != nil {
				return err
			}
		}
	}
	for _, s := range ct.Spans {
		if err := put(map[string]any{"ph": "X", "name": s.Name, "pid": s.Rank, "tid": s.Track, "ts": usec(s.From), "dur": usec(s.To - s.From)}); err != nil {
			return err
		}
	}
	for i, m := range ct.Messages {
		if err := put(map[string]any{"ph": "s", "name": m.Name, "cat": "message", "id": i, "pid": m.From, "tid": m.Track, "ts": usec(m.Sent)}); err != nil {
			return err
		}
		if err := put(map[string]any{"ph": "f", "bp": "e", "name": m.Name, "cat": "message", "id": i, "pid": m.To, "tid": m.Track, "ts": usec(m.Arrived)}); err != nil {
			return err
		}
	}
	if _, err := bw.WriteString("]}\n"); err != nil {
		return err
	}
	return bw.Flush()
}
