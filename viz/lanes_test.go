package viz

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// A cluster trace's drill-down into a 32-core NPU (--trace-npu) puts 3 +
// 32 × 7 threads in its rank's process; replayed, the rank's page has
// every one of them as a lane with its events. (The trace reader took 64
// threads a process: the lanes of cores 9–31 were not there.)
func TestReplayDrillDownOf32Cores(t *testing.T) {
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	us := sim.Microsecond
	r := traces.NewRecorder(traces.Window{})
	r.SetInfo(m.Name, "test", m.Geometry())
	lanes := m.Geometry().Lanes
	for c := range m.Cores {
		for p := range lanes {
			r.Interval(c, p, arch.WaitFlag, 0, us, nil, nil)
		}
	}
	r.Finish(us)
	ct := &traces.ClusterTrace{Machine: "cloudbrain2-node", Program: "lu-fused", Ranks: []string{"rank 0", "rank 1"},
		Tracks: []string{"host (work, transfers, collectives)", "NPU main cores", "NPU fusion cores"}}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "diag 0", From: 0, To: us})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 1, Name: "p1-0", From: 0, To: us})
	ct.AddTimeline(1, r.Timeline())
	tl := clusterTimeline(t, ct)
	threads := len(ct.Tracks) + m.Cores*len(lanes)
	s := newSim(t, 100, threads+12)
	v := NewViewer(s, StaticSource(tl), false)
	v.Handle(key(tcell.KeyDown, 0, 0)) // rank 1
	v.Draw()
	lines := screenText(s)
	if !strings.HasPrefix(lines[0], " rank 1 ") {
		t.Fatalf("header %q, want rank 1", lines[0])
	}
	rows := 0
	for c := range m.Cores {
		for _, name := range lanes {
			label := fmt.Sprintf("core %d %s", c, name)
			if got := strings.TrimSpace(rowOfLabel(t, lines, label)); got == "" || strings.Trim(got, "w") != "" {
				t.Errorf("lane %s: %q, want its wait_flag across the view", label, got)
			}
			rows++
		}
	}
	if rows <= 64 {
		t.Fatalf("only %d drill-down lanes to check", rows)
	}
}

// rowOfLabel returns the lane columns of the row labelled label (the label
// column is as wide as the longest label and a space).
func rowOfLabel(t *testing.T, lines []string, label string) string {
	t.Helper()
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, label+" "); ok {
			return strings.TrimLeft(rest, " ")
		}
	}
	t.Fatalf("no lane %q on screen", label)
	return ""
}
