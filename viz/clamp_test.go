package viz

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// Panning and moving the cursor stop at the run's ends: ← past the start
// showed negative times ("view -100ns..."), → and Shift+→ moved the
// cursor past the run's end.
func TestPanStopsAtTheRunsEnds(t *testing.T) {
	tl := knownTrace()
	s := newSim(t, 100, 24)
	v := NewViewer(s, StaticSource(tl), false)
	v.Draw()
	for range 40 {
		v.Handle(key(tcell.KeyLeft, 0, 0))
		v.Handle(key(tcell.KeyLeft, 0, tcell.ModShift))
	}
	if v.t0 != tl.From || v.cursor != tl.From {
		t.Errorf("after ← and Shift+←: view from %v, cursor %v; want both at the start %v", v.t0, v.cursor, tl.From)
	}
	v.Draw()
	if head := screenText(s)[0]; strings.Contains(head, "view -") {
		t.Errorf("header %q shows a negative time", head)
	}
	v.Handle(key(tcell.KeyRune, '+', 0)) // zoomed in: a view narrower than the run
	for range 200 {
		v.Handle(key(tcell.KeyRight, 0, 0))
		v.Handle(key(tcell.KeyRight, 0, tcell.ModShift))
	}
	if v.cursor != tl.To || v.t0+v.span != tl.To {
		t.Errorf("after → and Shift+→: view %v..%v, cursor %v; want both at the end %v", v.t0, v.t0+v.span, v.cursor, tl.To)
	}
}
