package viz

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/traces"
)

// tableAt returns the rows of the table whose header starts with first
// (header included), split into fields, up to the first line that is not a
// row of percentages.
func tableAt(t *testing.T, lines []string, first string) [][]string {
	t.Helper()
	for i, l := range lines {
		if !strings.HasPrefix(l, first+" ") {
			continue
		}
		rows := [][]string{strings.Fields(l)}
		for _, r := range lines[i+1:] {
			if !strings.Contains(r, "%") {
				break
			}
			rows = append(rows, strings.Fields(r))
		}
		return rows
	}
	t.Fatalf("no %q table:\n%s", first, strings.Join(lines, "\n"))
	return nil
}

// The view's stall summary has the run summary's columns — the same
// causes, in its order, under its names (but the instruction counts,
// which a trace does not hold) — and, for a chip of one core, the same
// percentages.
func TestSummaryColumnsAsRun(t *testing.T) {
	f, err := programs.ReadFile("../programs/examples/hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var opts programs.Options
	for _, s := range []string{"machine.cores=1", "program.m=128", "program.n=128", "program.k=256", "program.numerics=off"} {
		ov, err := machines.ParseOverride(s)
		if err != nil {
			t.Fatal(err)
		}
		opts.Overrides = append(opts.Overrides, ov)
	}
	rec := traces.NewRecorder(traces.Window{})
	rec.SetInfo("ascend-910a", "hgemm", testGeometry())
	res, err := programs.Execute(f, opts, programs.RunHooks{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	rec.Finish(res.Stats.Time)
	var sum bytes.Buffer
	res.Report.WriteSummary(&sum)
	run := tableAt(t, strings.Split(sum.String(), "\n"), "pipe")
	if last := run[0][len(run[0])-1]; last != "instructions" {
		t.Fatalf("the run's summary's last column is %q", last)
	}
	s := newSim(t, 100, 30)
	v := NewViewer(s, rec, false)
	v.Draw()
	view := tableAt(t, screenText(s), "pipe")
	if want := run[0][:len(run[0])-1]; !slices.Equal(view[0], want) {
		t.Errorf("view's columns\n %q\nrun's\n %q", view[0], want)
	}
	if len(view) != len(run) {
		t.Fatalf("view has %d pipes, the run %d", len(view)-1, len(run)-1)
	}
	for i := 1; i < len(run); i++ {
		if want := run[i][:len(run[i])-1]; !slices.Equal(view[i], want) {
			t.Errorf("pipe %s: view %q, run %q", run[i][0], view[i], want)
		}
	}
}

// The summary abbreviates its columns only when the full names do not fit
// the screen, and then all of them, as the legend does its names.
func TestSummaryAbbreviatedWhenNarrow(t *testing.T) {
	full := []string{"pipe", "busy", "wait_flag", "barrier", "queue_empty", "queue_full", "bandwidth", "latency"}
	short := []string{"pipe", "busy", "wait", "barr", "empty", "full", "bw", "lat"}
	for _, c := range []struct {
		w    int
		want []string
	}{{85, full}, {71, full}, {70, short}, {60, short}} {
		s := newSim(t, c.w, 24)
		v := NewViewer(s, StaticSource(knownTrace()), false)
		v.Draw()
		lines := screenText(s)
		tab := tableAt(t, lines, "pipe")
		if !slices.Equal(tab[0], c.want) {
			t.Errorf("width %d: columns %q, want %q", c.w, tab[0], c.want)
		}
		// M waits for its flag half the time and computes the other half.
		for _, r := range tab[1:] {
			if r[0] == "M" && !slices.Equal(r[1:], []string{"50.0%", "50.0%", "0.0%", "0.0%", "0.0%", "0.0%", "0.0%"}) {
				t.Errorf("width %d: M %q", c.w, r)
			}
			if r[0] == "MTE2" && r[4] != "50.0%" {
				t.Errorf("width %d: MTE2's queue_empty %q, want 50.0%% (idle after its copy)", c.w, r[4])
			}
		}
	}
	// The legend: the stall marks in the summary's order, abbreviated as
	// it is (80 columns do not hold the full names).
	s := newSim(t, 80, 24)
	v := NewViewer(s, StaticSource(knownTrace()), false)
	v.Draw()
	legend := ""
	for _, l := range screenText(s) {
		if strings.HasPrefix(l, "C=copy") {
			legend = l
		}
	}
	if !strings.Contains(legend, "| w=wait b=barr f=full d=bw l=lat") {
		t.Errorf("legend %q", legend)
	}
	s = newSim(t, 140, 30)
	v = NewViewer(s, StaticSource(knownTrace()), false)
	v.Draw()
	if l := strings.Join(screenText(s), "\n"); !strings.Contains(l, "| w=wait_flag b=barrier f=queue_full d=bandwidth l=latency") {
		t.Errorf("a 140-column legend abbreviates:\n%s", l)
	}
}
