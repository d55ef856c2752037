package viz

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// A cluster host's waits (for its kernels, at the barrier, in an HCCL
// collective) are not busy: the trace gives them category "wait", the
// view counts them in the track table's wait column, draws them as a
// wait, and n finds them as it finds a pipe's stalls. Before, every host
// span was category "host" and rank 0 of lu-cluster-small showed "host
// 100.0% busy".
func TestClusterHostWaits(t *testing.T) {
	ns := sim.Nanosecond
	ct := &traces.ClusterTrace{
		Ranks:     []string{"rank 0", "rank 1"},
		Tracks:    []string{"host (work, transfers, collectives)", "NPU main cores", "NPU fusion cores"},
		TrackCats: []string{"host", "kernel", "kernel"},
	}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "launch p1-0", Cat: "launch", From: 0, To: 100 * ns})
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "wait p1-0", Cat: "wait", From: 100 * ns, To: 400 * ns})
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "barrier (factorized)", Cat: "wait", From: 400 * ns, To: 500 * ns})
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 1, Name: "p1-0", From: 100 * ns, To: 400 * ns})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 0, Name: "refine 0", Cat: "compute", From: 0, To: 800 * ns})
	tl := clusterTimeline(t, ct)
	s := newSim(t, 97, 24) // 80 lane columns: 10 ns each
	v := NewViewer(s, StaticSource(tl), false)
	v.Draw()
	lines := screenText(s)
	tab := tableAt(t, lines, "track")
	want := [][]string{
		{"track", "busy", "wait", "idle"},
		{"host", "12.5%", "50.0%", "37.5%"},
		{"NPU", "main", "cores", "37.5%", "0.0%", "62.5%"},
		{"NPU", "fusion", "cores", "0.0%", "0.0%", "100.0%"},
	}
	if !slices.EqualFunc(tab, want, slices.Equal) {
		t.Errorf("summary\n got %q\nwant %q", tab, want)
	}
	lw := len("NPU fusion cores ")
	if got := rowOf(t, lines, "host", lw); !strings.HasPrefix(got, strings.Repeat("O", 10)+strings.Repeat("w", 40)+".") {
		t.Errorf("host track %q", got)
	}
	v.Handle(key(tcell.KeyRune, 'n', 0))
	if st := v.Status(); !strings.Contains(st, "stall wait p1-0 on host at 100") {
		t.Errorf("n: status %q, want the wait for p1-0", st)
	}
	v.Handle(key(tcell.KeyRune, 'n', 0))
	if st := v.Status(); !strings.Contains(st, "barrier (factorized)") {
		t.Errorf("second n: status %q, want the barrier", st)
	}
}

// A trace that says it leaves part of the run out (a cluster trace cut
// at its limit: Timeline.Notes) says so in the footer, with the time from
// which it is incomplete.
func TestFooterShowsTruncation(t *testing.T) {
	ns := sim.Nanosecond
	ct := &traces.ClusterTrace{Ranks: []string{"rank 0"}, Tracks: []string{"host (work)"}, TrackCats: []string{"host"}, Limit: 1}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "launch k", Cat: "launch", From: 0, To: 100 * ns})
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "wait k", Cat: "wait", From: 200 * ns, To: 400 * ns})
	tl := clusterTimeline(t, ct)
	s := newSim(t, 120, 24)
	v := NewViewer(s, StaticSource(tl), false)
	v.Draw()
	lines := screenText(s)
	if last := lines[len(lines)-1]; !strings.Contains(last, "(truncated from 200ns)") {
		t.Errorf("footer %q, want the truncation", last)
	}
}

// clusterTimeline writes ct as a JSON cluster trace and reads it back.
func clusterTimeline(t *testing.T, ct *traces.ClusterTrace) *traces.Timeline {
	t.Helper()
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		t.Fatal(err)
	}
	tl, err := traces.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}
