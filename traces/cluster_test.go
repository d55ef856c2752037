package traces_test

import (
	"bytes"
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
	ct.AddMessage(traces.ClusterMessage{From: 1, To: 2, Sent: 150, Arrived: 160})
	ct.AddMessage(traces.ClusterMessage{From: 0, To: 2, Sent: 150, Arrived: 160}) // its sender not kept
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

// A cluster trace reads back as a timeline of the ranks (as cores) and
// their tracks (as lanes), every span a slice: what davinci-sim view shows.
func TestClusterTraceReadsBack(t *testing.T) {
	ct := &traces.ClusterTrace{Ranks: []string{"r0", "r1"}, Tracks: []string{"host", "main"},
		RankTracks: map[int][]string{1: {"core 0 M"}}}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "diag 0", From: 0, To: 1000})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 1, Name: "p1-0", From: 500, To: 2000})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 2, Name: "mmad", From: 600, To: 700})
	ct.AddMessage(traces.ClusterMessage{From: 0, To: 1, Sent: 900, Arrived: 1500, Name: "bcast"})
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		t.Fatal(err)
	}
	tl, err := traces.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Cores) != 2 || len(tl.Lanes) < 3 || tl.Lanes[0] != "host" || tl.Lanes[1] != "main" || tl.Lanes[2] != "core 0 M" {
		t.Fatalf("cores %d, lanes %v", len(tl.Cores), tl.Lanes)
	}
	n := 0
	for _, c := range tl.Cores {
		for p := range c.Lanes {
			n += c.Lane(p).Len()
		}
	}
	if n < 3 {
		t.Errorf("%d slices read back, want the 3 spans", n)
	}
}
