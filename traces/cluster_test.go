package traces_test

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// The cluster trace keeps what overlaps its window on its ranks, up to its
// limit, and counts what the limit left out.
func TestClusterTraceFilter(t *testing.T) {
	ct := &traces.ClusterTrace{Only: map[int]bool{1: true, 2: true}, From: 100, To: 200, Limit: 3}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, From: 120, To: 130}) // other rank
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 10, To: 99})   // before the window
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 201, To: 300}) // after it
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 50, To: 100})  // touches its start: kept
	ct.AddMessage(traces.ClusterMessage{From: 0, To: 2, Sent: 150, Arrived: 160})
	ct.AddMessage(traces.ClusterMessage{From: 0, To: 3, Sent: 150, Arrived: 160}) // neither rank kept
	ct.AddSpan(traces.ClusterSpan{Rank: 2, From: 190, To: 250})
	ct.AddSpan(traces.ClusterSpan{Rank: 2, From: 150, To: 160}) // beyond the limit
	if len(ct.Spans) != 2 || len(ct.Messages) != 1 || ct.Dropped != 1 {
		t.Errorf("kept %d spans, %d messages, dropped %d; want 2, 1, 1", len(ct.Spans), len(ct.Messages), ct.Dropped)
	}
	open := &traces.ClusterTrace{}
	for i := range 5 {
		open.AddSpan(traces.ClusterSpan{Rank: i, From: sim.Time(i), To: sim.Time(i + 1)})
	}
	if len(open.Spans) != 5 || open.Dropped != 0 {
		t.Errorf("unfiltered trace kept %d of 5", len(open.Spans))
	}
}
