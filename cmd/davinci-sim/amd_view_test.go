package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/traces"
	"github.com/davinci-sim/davinci-sim/viz"
)

// A trace of an MI300X run (304 CUs) names the CU lanes, and the viewer's
// chip overview lists one row per CU that ran, scrolling past the screen.
func TestMI300XTraceOverview(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.json.gz")
	_, code, err := runCLI(t, "run", "../../programs/examples/mi210-hgemm.yaml", "-q", "-m", "mi300x",
		"--set", "program.m=2048", "--set", "program.n=2048", "--set", "program.k=64", "--set", "program.numerics=off",
		"--trace", trace)
	if code != 0 {
		t.Fatalf("run --trace: exit %d: %v", code, err)
	}
	tl, err := traces.ReadTraceFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Cores) < 128 {
		t.Fatalf("trace has %d cores, want the 128 CUs the 8×16 grid keeps busy", len(tl.Cores))
	}
	s := tcell.NewSimulationScreen("UTF-8")
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	s.SetSize(100, 30)
	v := viz.NewViewer(s, viz.StaticSource(tl), false)
	v.Handle(tcell.NewEventKey(tcell.KeyRune, 'o', 0))
	v.Draw()
	cells, w, h := s.GetContents()
	var lines []string
	for y := 0; y < h; y++ {
		var b strings.Builder
		for x := 0; x < w; x++ {
			b.WriteString(string(cells[y*w+x].Runes))
		}
		lines = append(lines, b.String())
	}
	if !strings.Contains(lines[0], "chip overview: lane mfma") {
		t.Fatalf("overview header %q, want the CU's mfma lane", lines[0])
	}
	for i := 0; i < 40; i++ {
		v.Handle(tcell.NewEventKey(tcell.KeyDown, 0, 0))
	}
	v.Handle(tcell.NewEventKey(tcell.KeyEnter, 0, 0))
	if v.Core() != 40 {
		t.Errorf("40 × ↓ then Enter opened core %d, want 40 (the overview scrolls)", v.Core())
	}
}
