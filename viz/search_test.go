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

// repeatTrace has three MTE2 copies on core 0 and one on core 1.
func repeatTrace() *traces.Timeline {
	r := traces.NewRecorder(traces.Window{})
	cp := isa.CopyGM2L1(0, 0, 4096)
	ns := sim.Nanosecond
	for i := range 3 {
		from := sim.Time(i) * 300 * ns
		r.Interval(0, int(isa.MTE2), arch.Busy, from, from+100*ns, &cp, nil)
	}
	r.Interval(1, int(isa.MTE2), arch.Busy, 0, 100*ns, &cp, nil)
	r.SetInfo("test-machine", "hand", testGeometry())
	r.Finish(900 * ns)
	return r.Timeline()
}

func typeText(v *Viewer, text string) {
	for _, c := range text {
		v.Handle(key(tcell.KeyRune, c, 0))
	}
}

// After a search, n and Enter go to the next match and N to the previous
// (as in less and vim), wrapping around; Esc clears the search (n is the
// next stall again), then goes back to the overview the core was opened
// from, closes it, and only then quits.
func TestSearchRepeatAndEscBack(t *testing.T) {
	s := newSim(t, 100, 24)
	v := NewViewer(s, StaticSource(repeatTrace()), false)
	ns := sim.Nanosecond
	v.Handle(key(tcell.KeyRune, '/', 0))
	typeText(v, "mte2")
	v.Handle(key(tcell.KeyEnter, 0, 0))
	if v.Cursor() != 300*ns {
		t.Fatalf("search from 0: cursor %v (%q), want the copy at 300ns", v.Cursor(), v.Status())
	}
	v.Handle(key(tcell.KeyRune, 'n', 0))
	if v.Cursor() != 600*ns {
		t.Errorf("n: cursor %v, want 600ns", v.Cursor())
	}
	v.Handle(key(tcell.KeyEnter, 0, 0))
	if v.Cursor() != 0 || !strings.HasPrefix(v.Status(), "(wrapped)") {
		t.Errorf("Enter: cursor %v (%q), want the wrapped match at 0", v.Cursor(), v.Status())
	}
	v.Handle(key(tcell.KeyRune, 'N', 0))
	if v.Cursor() != 600*ns {
		t.Errorf("N from 0: cursor %v, want the last match (600ns, wrapped)", v.Cursor())
	}
	v.Handle(key(tcell.KeyRune, 'N', 0))
	if v.Cursor() != 300*ns {
		t.Errorf("N: cursor %v, want 300ns", v.Cursor())
	}
	if !v.Handle(key(tcell.KeyEscape, 0, 0)) || v.Status() != "search cleared" {
		t.Fatalf("Esc with a search: quit or status %q", v.Status())
	}
	// Open core 1 from the overview; Esc goes back to the overview.
	v.Handle(key(tcell.KeyRune, 'o', 0))
	v.Handle(key(tcell.KeyDown, 0, 0))
	v.Handle(key(tcell.KeyEnter, 0, 0))
	if v.Core() != 1 {
		t.Fatalf("Enter in the overview opened core %d", v.Core())
	}
	if !v.Handle(key(tcell.KeyEscape, 0, 0)) {
		t.Fatal("Esc on a core opened from the overview quit")
	}
	v.Draw()
	if !strings.Contains(screenText(s)[0], "chip overview") {
		t.Errorf("Esc did not go back to the overview: %q", screenText(s)[0])
	}
	if !v.Handle(key(tcell.KeyEscape, 0, 0)) {
		t.Fatal("Esc in the overview quit")
	}
	if v.Handle(key(tcell.KeyEscape, 0, 0)) {
		t.Error("Esc with nothing to go back to did not quit")
	}
}
