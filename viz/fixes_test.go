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
