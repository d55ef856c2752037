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

// hostedTrace is knownTrace with a host: its CPU computes [0,100ns),
// launches a kernel [100,200ns) and waits for it [200,600ns); the link
// carries a transfer [0,300ns). Written to JSON and read back, as view
// reads a hosted run's trace.
func hostedTrace(t *testing.T) *traces.Timeline {
	t.Helper()
	tl := knownTrace()
	ns := sim.Nanosecond
	tl.Host = []traces.HostTask{
		{Kind: "compute", Name: "diag", From: 0, To: 100 * ns},
		{Kind: "transfer", Name: "h2d panel", From: 0, To: 300 * ns},
		{Kind: "launch", Name: "launch gemm", From: 100 * ns, To: 200 * ns},
		{Kind: "wait", Name: "wait", From: 200 * ns, To: 600 * ns},
	}
	var buf bytes.Buffer
	if err := traces.WritePerfetto(&buf, tl); err != nil {
		t.Fatal(err)
	}
	back, err := traces.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Host) != 4 {
		t.Fatalf("read back %d host tasks", len(back.Host))
	}
	return back
}

// rowOf returns the line of the screen whose label (first column) is
// label, label stripped.
func rowOf(t *testing.T, lines []string, label string, lw int) string {
	t.Helper()
	for _, l := range lines {
		if strings.HasPrefix(l, label+" ") && !strings.Contains(l, "%") {
			return string([]rune(l)[lw:])
		}
	}
	t.Fatalf("no row %q on screen:\n%s", label, strings.Join(lines, "\n"))
	return ""
}

// A hosted run's trace has a host page before the cores (↑ from the first
// core, Tab from the last): the host's CPU and link lanes, their tasks by
// kind, and a summary with the columns that apply to them — busy, the
// kinds the trace records, idle — not the pipes' stall causes. n/p go to
// the host's waits, / searches its tasks, and the chip overview has a
// host row first.
func TestHostPage(t *testing.T) {
	s := newSim(t, 85, 24) // 80 lane columns: 10 ns each
	v := NewViewer(s, StaticSource(hostedTrace(t)), false)
	v.Draw()
	if first := screenText(s)[0]; !strings.HasPrefix(first, " core 0 (1/2)") {
		t.Fatalf("first page %q, want core 0", first)
	}
	v.Handle(key(tcell.KeyUp, 0, 0))
	v.Draw()
	lines := screenText(s)
	if !v.Host() || !strings.HasPrefix(lines[0], " host (CPU, link)") {
		t.Fatalf("↑ from core 0: host %v, header %q", v.Host(), lines[0])
	}
	if got, want := rowOf(t, lines, "CPU", labelW), strings.Repeat("C", 10)+strings.Repeat("L", 10)+strings.Repeat("w", 40)+strings.Repeat(".", 20); got != want {
		t.Errorf("CPU lane\n got %q\nwant %q", got, want)
	}
	if got, want := rowOf(t, lines, "link", labelW), strings.Repeat("T", 30)+strings.Repeat(".", 50); got != want {
		t.Errorf("link lane\n got %q\nwant %q", got, want)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"C=compute L=launch T=transfer w=wait | .=idle", "at cursor: CPU:compute diag link:transfer h2d panel"} {
		if !strings.Contains(all, want) {
			t.Errorf("screen lacks %q:\n%s", want, all)
		}
	}
	tab := tableAt(t, lines, "host")
	want := [][]string{
		{"host", "busy", "compute", "launch", "transfer", "wait", "idle"},
		{"CPU", "25.0%", "12.5%", "12.5%", "0.0%", "50.0%", "25.0%"},
		{"link", "37.5%", "0.0%", "0.0%", "37.5%", "0.0%", "62.5%"},
	}
	if !slices.EqualFunc(tab, want, slices.Equal) {
		t.Errorf("host summary\n got %q\nwant %q", tab, want)
	}
	for _, bad := range []string{"wait_flag", "barrier", "queue_full", "pipe "} {
		if strings.Contains(all, bad) {
			t.Errorf("the host page shows %q:\n%s", bad, all)
		}
	}
	// n: the host's next wait; / searches its tasks.
	v.Handle(key(tcell.KeyRune, 'n', 0))
	if v.Cursor() != 200*sim.Nanosecond || !strings.HasPrefix(v.Status(), "wait on CPU at 200ns") {
		t.Errorf("n on the host: cursor %v, status %q", v.Cursor(), v.Status())
	}
	v.Handle(key(tcell.KeyRune, '/', 0))
	typeText(v, "h2d")
	v.Handle(key(tcell.KeyEnter, 0, 0))
	if v.Cursor() != 0 || !strings.Contains(v.Status(), "transfer h2d panel on link") {
		t.Errorf("/h2d: cursor %v, status %q", v.Cursor(), v.Status())
	}
	v.Handle(key(tcell.KeyEscape, 0, 0)) // clears the search
	// ↓ goes back to the cores; Tab from the last one wraps to the host.
	v.Handle(key(tcell.KeyDown, 0, 0))
	if v.Host() || v.Core() != 0 {
		t.Errorf("↓ from the host: host %v core %d", v.Host(), v.Core())
	}
	v.Handle(key(tcell.KeyTab, 0, 0))
	v.Handle(key(tcell.KeyTab, 0, 0))
	if !v.Host() {
		t.Errorf("Tab from the last core: core %d, not the host", v.Core())
	}
	// The overview: the host's CPU lane first; Enter opens the host.
	v.Handle(key(tcell.KeyRune, 'o', 0))
	v.Draw()
	lines = screenText(s)
	if !strings.Contains(lines[0], "chip overview: lane M, 2 cores + host CPU") {
		t.Errorf("overview header %q", lines[0])
	}
	if !strings.HasPrefix(lines[2], "host ") || !strings.HasPrefix(string([]rune(lines[2])[labelW:]), "CCCCCCCCCCLLLLLLLLLLwww") {
		t.Errorf("overview's first row %q, want the host's CPU", lines[2])
	}
	v.Handle(key(tcell.KeyDown, 0, 0))
	v.Handle(key(tcell.KeyUp, 0, 0))
	v.Handle(key(tcell.KeyEnter, 0, 0))
	v.Draw()
	if !v.Host() || !strings.HasPrefix(screenText(s)[0], " host") {
		t.Errorf("Enter on the host row: %q", screenText(s)[0])
	}
}

// clusterTrace is a cluster run's trace as lu-cluster writes it (two
// ranks, each a host track and the NPU's core sets), read back as view
// reads it.
func clusterTrace(t *testing.T) *traces.Timeline {
	t.Helper()
	ns := sim.Nanosecond
	ct := &traces.ClusterTrace{
		Ranks:  []string{"rank 0 (0,0) n0.npu0 n0.host0", "rank 1 (0,1) n0.npu1 n0.host0"},
		Tracks: []string{"host (work, transfers, collectives)", "NPU main cores", "NPU fusion cores"},
	}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "diag 0", From: 0, To: 200 * ns})
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "mpi-bcast L 0", From: 200 * ns, To: 400 * ns})
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 1, Name: "trsm0", From: 400 * ns, To: 800 * ns})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 0, Name: "mpi-bcast L 0", From: 200 * ns, To: 400 * ns})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 2, Name: "fusion0", From: 400 * ns, To: 600 * ns})
	ct.AddMessage(traces.ClusterMessage{From: 0, To: 1, Track: 0, Sent: 200 * ns, Arrived: 400 * ns, Name: "mpi-bcast L 0"})
	tl := clusterTimeline(t, ct)
	return tl
}

// A cluster trace's processes are ranks (an NPU each, with its host's
// share): the header, overview and footer say rank; the host track is
// labelled host; the tracks, which hold spans only, have a summary of busy,
// wait and idle — not the pipes' stall causes, nor a GM gauge.
func TestClusterRanks(t *testing.T) {
	s := newSim(t, 97, 24) // 80 lane columns: 10 ns each
	v := NewViewer(s, StaticSource(clusterTrace(t)), false)
	v.Draw()
	lines := screenText(s)
	if !strings.HasPrefix(lines[0], " rank 0 (1/2)") {
		t.Errorf("header %q, want rank 0", lines[0])
	}
	lw := len("NPU fusion cores ")
	if got := rowOf(t, lines, "host", lw); !strings.HasPrefix(got, strings.Repeat("O", 40)+".") {
		t.Errorf("host track %q", got)
	}
	if got, want := rowOf(t, lines, "NPU main cores", lw), strings.Repeat(".", 40)+strings.Repeat("O", 40); got != want {
		t.Errorf("NPU main cores track %q", got)
	}
	tab := tableAt(t, lines, "track")
	want := [][]string{
		{"track", "busy", "wait", "idle"},
		{"host", "50.0%", "0.0%", "50.0%"},
		{"NPU", "main", "cores", "50.0%", "0.0%", "50.0%"},
		{"NPU", "fusion", "cores", "0.0%", "0.0%", "100.0%"},
	}
	if !slices.EqualFunc(tab, want, slices.Equal) {
		t.Errorf("summary\n got %q\nwant %q", tab, want)
	}
	all := strings.Join(lines, "\n")
	for _, bad := range []string{"wait_flag", "barrier", "core 0", "GM ", "host (work"} {
		if strings.Contains(all, bad) {
			t.Errorf("the rank's page shows %q:\n%s", bad, all)
		}
	}
	if !strings.Contains(all, "O=span | w=wait .=idle") || !strings.Contains(lines[len(lines)-1], "↑/↓ rank") {
		t.Errorf("legend or footer:\n%s", all)
	}
	v.Handle(key(tcell.KeyDown, 0, 0))
	v.Handle(key(tcell.KeyRune, '/', 0))
	typeText(v, "nothing")
	v.Handle(key(tcell.KeyEnter, 0, 0))
	if !strings.Contains(v.Status(), "not found on rank 1") {
		t.Errorf("search status %q", v.Status())
	}
	v.Handle(key(tcell.KeyEscape, 0, 0))
	v.Handle(key(tcell.KeyRune, 'o', 0))
	v.Draw()
	lines = screenText(s)
	if !strings.Contains(lines[0], "cluster overview: track host, 2 ranks (NPUs)") || !strings.HasPrefix(lines[1], "rank ") {
		t.Errorf("overview:\n%s", strings.Join(lines, "\n"))
	}
	v.Handle(key(tcell.KeyEnter, 0, 0))
	if v.Status() != "rank 1" {
		t.Errorf("Enter in the overview: status %q", v.Status())
	}
}

// A chip trace is not taken for a cluster's: its lanes are pipes.
func TestChipIsNotCluster(t *testing.T) {
	tl := knownTrace()
	if isCluster(tl) || unit(tl) != "core" {
		t.Errorf("knownTrace taken for a cluster trace")
	}
	if p := pipeLanes(tl); len(p) != len(tl.Lanes) || slices.Contains(p, false) {
		t.Errorf("pipeLanes %v", p)
	}
}
