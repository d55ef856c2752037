package viz

import (
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// knownTrace records a small hand-made run on cores 0 and 2: core 0's MTE2
// copies during [0,400ns), M waits for it until 400ns, then computes until
// 800ns; core 2 only runs vector work. 1 ns per column at width 80+5.
func knownTrace() *traces.Timeline {
	r := traces.NewRecorder(traces.Window{})
	cp := isa.CopyGM2L1(0, 0, 4096)
	mm := isa.Mmad(0, 0, 0, 16, 16, 16, 1, 0, true)
	vec := isa.VecBinary(isa.VAdd, 0, 256, 512, 1, 4)
	ns := sim.Nanosecond
	r.Interval(0, int(isa.MTE2), arch.Busy, 0, 400*ns, &cp, nil)
	r.Flag(0, int(isa.MTE2), int(isa.M), 0, true, 400*ns)
	r.Flag(0, int(isa.MTE2), int(isa.M), 0, false, 400*ns)
	r.Interval(0, int(isa.M), arch.WaitFlag, 0, 400*ns, nil, nil)
	r.Interval(0, int(isa.M), arch.Busy, 400*ns, 800*ns, &mm, nil)
	r.Occupancy(0, int(isa.L1), 512<<10, 0)
	r.Occupancy(0, int(isa.L1), 0, 600*ns)
	r.Bandwidth(0, 100e9)
	r.Bandwidth(400*ns, 0)
	r.Interval(2, int(isa.V), arch.Busy, 100*ns, 700*ns, &vec, nil)
	r.SetInfo("test-machine", "hand", testGeometry())
	r.Finish(800 * ns)
	return r.Timeline()
}

func newSim(t *testing.T, w, h int) tcell.SimulationScreen {
	t.Helper()
	s := tcell.NewSimulationScreen("UTF-8")
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	s.SetSize(w, h)
	t.Cleanup(s.Fini)
	return s
}

// screenText returns the simulated screen as lines of text.
func screenText(s tcell.SimulationScreen) []string {
	cells, w, h := s.GetContents()
	lines := make([]string, max(h, 1))
	for y := 0; y < h; y++ {
		var sb strings.Builder
		for x := 0; x < w; x++ {
			c := cells[y*w+x]
			if len(c.Runes) > 0 {
				sb.WriteRune(c.Runes[0])
			} else {
				sb.WriteByte(' ')
			}
		}
		lines[y] = sb.String()
	}
	return lines
}

// lane returns the lane text of pipe p (label stripped).
func lane(t *testing.T, lines []string, p isa.Pipe) string {
	t.Helper()
	for _, l := range lines {
		if strings.HasPrefix(l, p.String()+" ") && len(l) > labelW {
			return string([]rune(l)[labelW:])
		}
	}
	t.Fatalf("no lane %v on screen:\n%s", p, strings.Join(lines, "\n"))
	return ""
}

func key(k tcell.Key, r rune, mod tcell.ModMask) tcell.Event { return tcell.NewEventKey(k, r, mod) }

func TestDrawKnownTrace(t *testing.T) {
	s := newSim(t, 85, 24) // 80 lane columns: 10 ns each
	v := NewViewer(s, StaticSource(knownTrace()), false)
	v.Draw()
	lines := screenText(s)
	if got, want := lane(t, lines, isa.MTE2), strings.Repeat("C", 40)+strings.Repeat(".", 40); got != want {
		t.Errorf("MTE2 lane\n got %q\nwant %q", got, want)
	}
	if got, want := lane(t, lines, isa.M), strings.Repeat("w", 40)+strings.Repeat("M", 40); got != want {
		t.Errorf("M lane\n got %q\nwant %q", got, want)
	}
	if got := lane(t, lines, isa.V); got != strings.Repeat(".", 80) {
		t.Errorf("V lane of core 0 should be idle: %q", got)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"core 0 (1/2)", "L1   [", "50.0% 512K", "GM", "100GB/s", "pipe", "wait_flag", "test-machine hand"} {
		if !strings.Contains(all, want) {
			t.Errorf("screen lacks %q:\n%s", want, all)
		}
	}
	// The stall summary: M is busy half the time and waits half.
	for _, l := range lines {
		if strings.HasPrefix(l, "M    ") && strings.Contains(l, "%") {
			if f := strings.Fields(l); len(f) < 3 || f[1] != "50.0%" || f[2] != "50.0%" {
				t.Errorf("M summary %q", l)
			}
		}
	}
	// The cursor column is drawn reversed.
	cells, w, _ := s.GetContents()
	for y := 2; y < 9; y++ {
		if _, _, attr := cells[y*w+labelW].Style.Decompose(); attr&tcell.AttrReverse == 0 {
			t.Errorf("row %d: cursor column not reversed", y)
		}
	}
}

func TestKeys(t *testing.T) {
	s := newSim(t, 85, 24)
	v := NewViewer(s, StaticSource(knownTrace()), false)
	v.Draw()
	ns := sim.Nanosecond
	if from, to := v.View(); from != 0 || to != 800*ns {
		t.Fatalf("initial view %v..%v", from, to)
	}
	v.Handle(key(tcell.KeyRune, 'n', 0)) // next stall after the cursor: none after 0 except... the wait at 0 is at the cursor
	v.Handle(key(tcell.KeyRune, 'G', 0))
	if v.Cursor() != 800*ns-1 {
		t.Errorf("G: cursor %v", v.Cursor())
	}
	v.Handle(key(tcell.KeyRune, 'p', 0))
	if v.Cursor() != 0 || !strings.Contains(v.Status(), "wait_flag on M") {
		t.Errorf("p: cursor %v status %q", v.Cursor(), v.Status())
	}
	v.Handle(key(tcell.KeyRune, '+', 0))
	if from, to := v.View(); to-from != 400*ns || from != 0 {
		t.Errorf("zoom in at 0: %v..%v", from, to)
	}
	v.Handle(key(tcell.KeyRight, 0, 0))
	if from, _ := v.View(); from != 50*ns || v.Cursor() != 50*ns {
		t.Errorf("pan right: view from %v cursor %v", from, v.Cursor())
	}
	v.Handle(key(tcell.KeyLeft, 0, 0))
	v.Handle(key(tcell.KeyRune, '-', 0))
	if from, to := v.View(); to-from != 800*ns {
		t.Errorf("zoom out: %v..%v", from, to)
	}
	v.Handle(key(tcell.KeyRight, 0, tcell.ModShift))
	if v.Cursor() != 10*ns {
		t.Errorf("shift+right: cursor %v", v.Cursor())
	}
	v.Handle(key(tcell.KeyDown, 0, 0))
	if v.Core() != 2 {
		t.Errorf("down: core %d", v.Core())
	}
	v.Draw()
	if got := lane(t, screenText(s), isa.V); got != strings.Repeat(".", 10)+strings.Repeat("V", 60)+strings.Repeat(".", 10) {
		t.Errorf("core 2 V lane %q", got)
	}
	v.Handle(key(tcell.KeyTab, 0, 0))
	if v.Core() != 0 {
		t.Errorf("tab wraps: core %d", v.Core())
	}
	// Search.
	for _, r := range "/mmad" {
		v.Handle(key(tcell.KeyRune, r, 0))
	}
	v.Draw()
	if last := screenText(s)[23]; !strings.HasPrefix(last, "/mmad_") {
		t.Errorf("search prompt %q", last)
	}
	v.Handle(key(tcell.KeyEnter, 0, 0))
	if v.Cursor() != 400*ns || !strings.Contains(v.Status(), "m.mmad") {
		t.Errorf("search: cursor %v status %q", v.Cursor(), v.Status())
	}
	for _, r := range "/nothing" {
		v.Handle(key(tcell.KeyRune, r, 0))
	}
	v.Handle(key(tcell.KeyEnter, 0, 0))
	if !strings.Contains(v.Status(), "not found") {
		t.Errorf("search miss: %q", v.Status())
	}
	v.Handle(key(tcell.KeyRune, 'g', 0))
	if v.Cursor() != 0 {
		t.Errorf("g: %v", v.Cursor())
	}
	// Help overlay, closed by any key.
	v.Handle(key(tcell.KeyRune, '?', 0))
	v.Draw()
	if !strings.Contains(strings.Join(screenText(s), "\n"), "any key closes this help") {
		t.Error("no help overlay")
	}
	if !v.Handle(key(tcell.KeyRune, 'x', 0)) {
		t.Error("a key on the help overlay must not quit")
	}
	// Mouse: wheel zooms, click sets the cursor.
	v.Handle(tcell.NewEventMouse(labelW+20, 3, tcell.Button1, 0))
	if v.Cursor() != 200*ns {
		t.Errorf("click: cursor %v", v.Cursor())
	}
	v.Handle(tcell.NewEventMouse(labelW+20, 3, tcell.WheelUp, 0))
	if from, to := v.View(); to-from != 400*ns || from != 100*ns {
		t.Errorf("wheel zoom: %v..%v", from, to)
	}
	if v.Handle(key(tcell.KeyRune, 'q', 0)) {
		t.Error("q must quit")
	}
}

// TestResizeAndSmall: the viewer draws at any size without panicking and
// fits the lanes to the new width.
func TestResizeAndSmall(t *testing.T) {
	s := newSim(t, 80, 24)
	v := NewViewer(s, StaticSource(knownTrace()), false)
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {30, 8}, {10, 2}, {1, 1}, {80, 24}} {
		s.SetSize(sz[0], sz[1])
		v.Handle(tcell.NewEventResize(sz[0], sz[1]))
		v.Draw()
		for _, r := range "+-np/x" {
			v.Handle(key(tcell.KeyRune, r, 0))
			v.Draw()
		}
		v.Handle(key(tcell.KeyEscape, 0, 0))
	}
	lines := screenText(s)
	if !strings.HasPrefix(lines[0], " core 0") {
		t.Errorf("after resizing: %q", lines[0])
	}
}

// TestRunLoop drives Run on a simulation screen: it draws, handles keys and
// returns on q, restoring the screen.
func TestRunLoop(t *testing.T) {
	s := tcell.NewSimulationScreen("UTF-8")
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() { done <- Run(s, StaticSource(knownTrace()), Options{started: started}) }()
	// Keys can be injected once Run has initialized the screen.
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("Run ended early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not draw")
	}
	for _, r := range "+n" {
		s.InjectKey(tcell.KeyRune, r, 0)
	}
	s.InjectKey(tcell.KeyRune, 'q', 0)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestLiveSource: the live view follows a growing recorder and stops
// redrawing when the timeline is done.
func TestLiveSource(t *testing.T) {
	r := traces.NewRecorder(traces.Window{})
	r.SetInfo("test-machine", "hand", testGeometry())
	s := newSim(t, 85, 24)
	v := NewViewer(s, r, true)
	v.Draw()
	if !strings.Contains(screenText(s)[1], "no events recorded yet") {
		t.Errorf("empty live view: %q", screenText(s)[1])
	}
	mm := isa.Mmad(0, 0, 0, 16, 16, 16, 1, 0, true)
	r.Interval(0, int(isa.M), arch.Busy, 0, 80*sim.Nanosecond, &mm, nil)
	r.Flush() // the engine hands its events over in batches; a reader sees them after a flush
	v.Draw()
	if got := lane(t, screenText(s), isa.M); got != strings.Repeat("M", 80) {
		t.Errorf("live M lane %q", got)
	}
	if !strings.Contains(screenText(s)[0], "running") {
		t.Errorf("header %q", screenText(s)[0])
	}
	r.Interval(0, int(isa.M), arch.Busy, 80*sim.Nanosecond, 160*sim.Nanosecond, &mm, nil)
	r.Finish(160 * sim.Nanosecond)
	v.Draw()
	if from, to := v.View(); from != 0 || to != 160*sim.Nanosecond {
		t.Errorf("follow: view %v..%v", from, to)
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[sim.Time]string{0: "0ps", 1500: "1.5ns", 12345678: "12.35µs", 999: "999ps", 2 * sim.Second: "2s"} {
		if got := fmtTime(in); got != want {
			t.Errorf("fmtTime(%d) = %q, want %q", in, got, want)
		}
	}
	if fmtBytes(135168) != "132K" || fmtBytes(1<<20) != "1.0M" || fmtBytes(12) != "12B" {
		t.Error("fmtBytes")
	}
}

// A value that rounds up to 1000 of its unit (1024 of a byte unit) is
// printed in the next one: "1µs", not "1000ns" (the precision was picked
// before rounding).
func TestFormatRoundsIntoNextUnit(t *testing.T) {
	for in, want := range map[sim.Time]string{999_960: "1µs", 999_960_000: "1ms", 999_999: "1µs", 99_996: "100ns",
		9_999_900: "10µs", 999_940: "999.9ns", 999_960_000_000_000: "1000s"} {
		if got := fmtTime(in); got != want {
			t.Errorf("fmtTime(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{1048575: "1.0M", 1<<30 - 1: "1.0G", 1023.7: "1K", 1047552: "1023K"} {
		if got := fmtBytes(in); got != want {
			t.Errorf("fmtBytes(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestDroppedStart: events a memory-limited recorder dropped show as empty
// columns, and the header says from when the timeline is kept.
func TestDroppedStart(t *testing.T) {
	tl := knownTrace()
	tl.Dropped = 200 * sim.Nanosecond
	s := newSim(t, 85, 24)
	v := NewViewer(s, StaticSource(tl), false)
	v.Draw()
	lines := screenText(s)
	if got, want := lane(t, lines, isa.MTE2), strings.Repeat(" ", 20)+strings.Repeat("C", 20)+strings.Repeat(".", 40); got != want {
		t.Errorf("MTE2 lane\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(lines[0], "kept from 200ns") {
		t.Errorf("header %q", lines[0])
	}
}

// testGeometry is the lanes and buffers of the ascend-910a.
func testGeometry() *machines.Geometry {
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		panic(err)
	}
	return m.Geometry()
}

// The chip overview shows a row per core with the matrix unit's lane by
// default; ↓ selects the next core, Enter opens it, [ and ] change the lane.
func TestChipOverview(t *testing.T) {
	s := newSim(t, 85, 24)
	v := NewViewer(s, StaticSource(knownTrace()), false)
	v.Handle(key(tcell.KeyRune, 'o', 0))
	v.Draw()
	lines := screenText(s)
	if !strings.Contains(lines[0], "chip overview: lane M, 2 cores") {
		t.Fatalf("header %q", lines[0])
	}
	row := func(lines []string, core string) string {
		for _, l := range lines[2:] {
			if strings.HasPrefix(l, core+" ") {
				return string([]rune(l)[labelW:])
			}
		}
		t.Fatalf("no row for core %s:\n%s", core, strings.Join(lines, "\n"))
		return ""
	}
	// Core 0's M lane: 400 columns' worth of wait, then the MMAD.
	if r := row(lines, "0"); !strings.HasPrefix(r, "wwww") || !strings.Contains(r, "MMMM") {
		t.Errorf("core 0 row %q", r)
	}
	if r := row(lines, "2"); strings.ContainsAny(r, "MVw") {
		t.Errorf("core 2 row shows %q on M", r)
	}
	v.Handle(key(tcell.KeyRune, ']', 0)) // M → V
	v.Draw()
	if lines = screenText(s); !strings.Contains(lines[0], "lane V") || !strings.Contains(row(lines, "2"), "VVVV") {
		t.Errorf("] did not show the V lane:\n%s", strings.Join(lines, "\n"))
	}
	v.Handle(key(tcell.KeyDown, 0, 0))
	v.Handle(key(tcell.KeyEnter, 0, 0))
	v.Draw()
	if v.Core() != 2 || !strings.HasPrefix(screenText(s)[0], " core 2 (2/2)") {
		t.Errorf("Enter opened core %d: %q", v.Core(), screenText(s)[0])
	}
}
