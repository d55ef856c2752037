package viz

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// Esc in an overview opened with o closes it (back to the core shown)
// instead of quitting the viewer.
func TestEscClosesOverview(t *testing.T) {
	s := newSim(t, 100, 24)
	v := NewViewer(s, StaticSource(repeatTrace()), false)
	v.Handle(key(tcell.KeyRune, 'o', 0))
	v.Draw()
	if !strings.Contains(screenText(s)[0], "chip overview") {
		t.Fatalf("o: %q", screenText(s)[0])
	}
	if !v.Handle(key(tcell.KeyEscape, 0, 0)) {
		t.Fatal("Esc in the overview quit the viewer")
	}
	v.Draw()
	if l := screenText(s)[0]; strings.Contains(l, "overview") || !strings.Contains(l, "core 0") {
		t.Errorf("Esc did not return to the core page: %q", l)
	}
	if v.Handle(key(tcell.KeyEscape, 0, 0)) {
		t.Error("Esc with nothing to go back to did not quit")
	}
}

// In follow mode the cursor is the timeline's last instant, not its end
// (past every slice): after a live run finishes, "at cursor" names what the
// pipes did last, not "-".
func TestFollowCursorAtLastInstant(t *testing.T) {
	r := traces.NewRecorder(traces.Window{})
	r.SetInfo("test-machine", "hand", testGeometry())
	s := newSim(t, 85, 24)
	v := NewViewer(s, r, true)
	mm := isa.Mmad(0, 0, 0, 16, 16, 16, 1, 0, true)
	r.Interval(0, int(isa.M), arch.Busy, 0, 160*sim.Nanosecond, &mm, nil)
	r.Finish(160 * sim.Nanosecond)
	v.Draw()
	if c := v.Cursor(); c != 160*sim.Nanosecond-1 {
		t.Errorf("follow: cursor %v, want the last instant", c)
	}
	for _, l := range screenText(s) {
		if strings.HasPrefix(l, "at cursor:") {
			if strings.Contains(l, "M:-") {
				t.Errorf("at the end of a followed run: %q", l)
			}
			return
		}
	}
	t.Error("no at cursor line")
}

// gmGauge returns the GM gauge's text on the screen.
func gmGauge(t *testing.T, s tcell.SimulationScreen) string {
	t.Helper()
	for _, l := range screenText(s) {
		if i := strings.Index(l, "GM   ["); i >= 0 {
			return strings.TrimSpace(l[i:])
		}
	}
	t.Fatal("no GM gauge")
	return ""
}

// The GM gauge is a share of the machine's GM bandwidth, not of the run's
// busiest sample (100 GB/s of 1 TB/s was "100.0%", red); a trace that does
// not state the machine's bandwidth gets a share of the peak seen, labelled
// so.
func TestGMGaugeShareOfMachine(t *testing.T) {
	tl := knownTrace() // 100 GB/s at the cursor (0), the peak
	tl.GMBandwidth = 1e12
	s := newSim(t, 85, 24)
	NewViewer(s, StaticSource(tl), false).Draw()
	if g := gmGauge(t, s); !strings.Contains(g, " 10.0% 100GB/s") || strings.Contains(g, "peak") {
		t.Errorf("GM gauge of a 1 TB/s machine at 100 GB/s: %q", g)
	}
	tl.GMBandwidth = 0
	NewViewer(s, StaticSource(tl), false).Draw()
	if g := gmGauge(t, s); !strings.Contains(g, "100.0% 100GB/s of peak seen") {
		t.Errorf("GM gauge without the machine's bandwidth: %q", g)
	}
}

// At 80 columns the footer drops whole items and keeps "q quit" (it was
// cut mid-word), the headers keep "? help", and one core is "1 core".
func TestNarrowFooterAndHeader(t *testing.T) {
	tl := knownTrace()
	s := newSim(t, 80, 24)
	v := NewViewer(s, StaticSource(tl), false)
	v.Draw()
	lines := screenText(s)
	foot := strings.TrimRight(lines[len(lines)-1], " ")
	if !strings.HasSuffix(foot, "  q quit") {
		t.Errorf("footer at 80 columns: %q", foot)
	}
	items := map[string]bool{"test-machine hand  (complete)": true, "←/→ pan": true, "+/- zoom": true, "↑/↓ core": true,
		"o overview": true, "n/p stall": true, "/ search": true, "q quit": true}
	rest := foot
	for it := range items {
		rest = strings.Replace(rest, it, "", 1)
	}
	if strings.TrimSpace(rest) != "" {
		t.Errorf("footer %q has a cut item: %q left", foot, rest)
	}
	if !strings.HasSuffix(strings.TrimRight(lines[0], " "), "? help") {
		t.Errorf("header at 80 columns: %q", lines[0])
	}
	tl.Idle = []int{4, 5, 6, 7} // (a longer overview header)
	v.Handle(key(tcell.KeyRune, 'o', 0))
	v.Draw()
	lines = screenText(s)
	if !strings.HasSuffix(strings.TrimRight(lines[0], " "), "…  ? help") {
		t.Errorf("overview header at 80 columns: %q", lines[0])
	}
	if foot := strings.TrimRight(lines[len(lines)-1], " "); !strings.HasSuffix(foot, "  q quit") || !strings.HasPrefix(foot, "↑/↓ PgUp/PgDn select  Enter open core") {
		t.Errorf("overview footer at 80 columns: %q", foot)
	}
	one := knownTrace()
	one.Cores = one.Cores[:1]
	s = newSim(t, 120, 24)
	v = NewViewer(s, StaticSource(one), false)
	v.Handle(key(tcell.KeyRune, 'o', 0))
	v.Draw()
	if l := screenText(s)[0]; !strings.Contains(l, ", 1 core ") {
		t.Errorf("overview of one core: %q", l)
	}
}

func TestFitItems(t *testing.T) {
	items := []string{"info", "aa", "bb", "q quit"}
	for w, want := range map[int]string{100: "info  aa  bb  q quit", 19: "info  aa  q quit", 14: "info  q quit", 10: "i…  q quit"} {
		if got := fitItems(w, items); got != want {
			t.Errorf("fitItems(%d) = %q, want %q", w, got, want)
		}
	}
}

// With an interrupt callback (a live run), Ctrl-C calls it and closes the
// viewer — on a core page, in the help, while typing a search; q only
// closes it.
func TestCtrlCInterrupts(t *testing.T) {
	s := newSim(t, 85, 24)
	for _, first := range []rune{0, '?', '/'} {
		calls := 0
		v := NewViewer(s, StaticSource(knownTrace()), false)
		v.interrupt = func() { calls++ }
		if first != 0 {
			v.Handle(key(tcell.KeyRune, first, 0))
		}
		if v.Handle(key(tcell.KeyCtrlC, 0, tcell.ModCtrl)) || calls != 1 {
			t.Errorf("after %q: Ctrl-C kept the viewer or called the interrupt %d times", first, calls)
		}
	}
	calls := 0
	v := NewViewer(s, StaticSource(knownTrace()), false)
	v.interrupt = func() { calls++ }
	if v.Handle(key(tcell.KeyRune, 'q', 0)) || calls != 0 {
		t.Errorf("q: kept the viewer or interrupted (%d)", calls)
	}
}

// A run that did not complete says how it ended where a complete one says
// "(complete)".
func TestEndingShown(t *testing.T) {
	r := traces.NewRecorder(traces.Window{})
	r.SetInfo("test-machine", "hand", testGeometry())
	mm := isa.Mmad(0, 0, 0, 16, 16, 16, 1, 0, true)
	r.Interval(0, int(isa.M), arch.Busy, 0, 80*sim.Nanosecond, &mm, nil)
	r.SetEnding("deadlock at 80ns")
	r.Finish(80 * sim.Nanosecond)
	s := newSim(t, 120, 24)
	NewViewer(s, r, true).Draw()
	lines := screenText(s)
	if foot := lines[len(lines)-1]; !strings.Contains(foot, "(deadlock at 80ns)") || strings.Contains(foot, "complete") {
		t.Errorf("footer of a deadlocked run: %q", foot)
	}
}

// A complete timeline that holds nothing of the run says so in one line:
// its window starts at the run's end ([end, end]), or no core did
// anything in it.
func TestEmptyWindowLine(t *testing.T) {
	r := traces.NewRecorder(traces.Window{From: 100 * sim.Microsecond, To: 200 * sim.Microsecond})
	r.SetInfo("test-machine", "hand", testGeometry())
	r.Finish(8 * sim.Microsecond)
	s := newSim(t, 100, 24)
	NewViewer(s, r, true).Draw()
	if l := screenText(s)[1]; !strings.HasPrefix(l, "nothing of the run is in the window 100µs..200µs: the run ended at 8µs") {
		t.Errorf("empty window: %q", l)
	}
	tl := &traces.Timeline{Machine: "m", From: sim.Microsecond, To: 2 * sim.Microsecond, Done: true}
	NewViewer(s, StaticSource(tl), false).Draw()
	if l := screenText(s)[1]; !strings.HasPrefix(l, "no core did anything in the window 1µs..2µs") {
		t.Errorf("window without events: %q", l)
	}
}
