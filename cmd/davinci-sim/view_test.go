package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/traces"
)

// simScreen makes view/--view draw on a simulation screen whose first
// event is 'q'.
func simScreen(t *testing.T) {
	t.Helper()
	old, oldTTY := newScreen, haveTerminal
	t.Cleanup(func() { newScreen, haveTerminal = old, oldTTY })
	haveTerminal = func() error { return nil }
	newScreen = func() (tcell.Screen, error) {
		return &quitScreen{SimulationScreen: tcell.NewSimulationScreen("UTF-8")}, nil
	}
}

// quitScreen returns a 'q' key from the first PollEvent.
type quitScreen struct {
	tcell.SimulationScreen
	sent bool
}

func (q *quitScreen) PollEvent() tcell.Event {
	if !q.sent {
		q.sent = true
		return tcell.NewEventKey(tcell.KeyRune, 'q', 0)
	}
	return q.SimulationScreen.PollEvent()
}

func TestRunTraceThenView(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.json.gz")
	_, code, err := runCLI(t, "run", "../../programs/examples/hgemm.yaml", "-q", "--set", "program.m=128",
		"--set", "program.n=128", "--set", "program.k=128", "--set", "program.numerics=off",
		"--trace", trace, "--trace-cores", "0-1", "--trace-window", "0us..5us")
	if code != 0 {
		t.Fatalf("run --trace: exit %d: %v", code, err)
	}
	tl, err := traces.ReadTraceFile(trace)
	if err != nil || len(tl.Cores) == 0 || len(tl.Cores) > 2 {
		t.Fatalf("trace: %v cores, %v", len(tl.Cores), err)
	}
	simScreen(t)
	if _, code, err := runCLI(t, "view", trace); code != 0 {
		t.Fatalf("view: exit %d: %v", code, err)
	}
	// The protobuf trace of the same run opens too, and a core selection.
	pb := filepath.Join(dir, "t.pftrace")
	if _, code, err := runCLI(t, "run", "../../programs/examples/hgemm.yaml", "-q", "--set", "program.m=128",
		"--set", "program.n=128", "--set", "program.k=128", "--set", "program.numerics=off",
		"--trace", pb, "--trace-cores", "0-1", "--trace-window", "0us..5us"); code != 0 {
		t.Fatalf("run --trace .pftrace: exit %d: %v", code, err)
	}
	for _, args := range [][]string{{"view", pb}, {"view", pb, "--cores", "1"}} {
		if _, code, err := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %v", args, code, err)
		}
	}
	if out, code, err := runCLI(t, "run", "../../programs/examples/hgemm.yaml", "-q", "--set", "program.m=128",
		"--set", "program.n=128", "--set", "program.k=128", "--set", "program.numerics=off", "--view"); code != 0 || len(out) == 0 {
		t.Fatalf("run --view: exit %d: %v (%q)", code, err, out)
	}
}

func TestViewBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"traceEvents":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"traceEvents":[{`), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.pftrace")
	if err := os.WriteFile(truncated, []byte{0x0a, 0x20, 0x08}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"view", truncated},
		{"view", filepath.Join(dir, "missing.json"), "--cores", "x"},
		{"view", filepath.Join(dir, "missing.json")},
		{"view", empty},
		{"view", bad},
		{"run", "../../programs/examples/hgemm.yaml", "--trace", filepath.Join(dir, "t.txt")},
		{"run", "../../programs/examples/hgemm.yaml", "--trace", filepath.Join(dir, "t.json"), "--trace-window", "5us..1us"},
		{"run", "../../programs/examples/hgemm.yaml", "--trace", filepath.Join(dir, "t.json"), "--trace-cores", "x"},
		{"run", "../../programs/examples/hgemm.yaml", "--trace-cores", "0"},
	} {
		if _, code, err := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, code, err)
		}
	}
}

// Without a terminal, view (after reading the trace) and run --view (before
// running) end with exit 2 and one line saying so.
func TestViewNeedsTerminal(t *testing.T) {
	old := haveTerminal
	t.Cleanup(func() { haveTerminal = old })
	haveTerminal = func() error { return errors.New("no tty here") }
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.json")
	if err := os.WriteFile(trace, []byte(`{"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"a","ts":0,"dur":1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"view", trace},
		{"run", examplePath("cube-peak.yaml"), "--view"},
		{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--view"},
	} {
		_, code, err := runCLI(t, args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), "needs a terminal: no tty here") {
			t.Errorf("%v: exit %d, %v", args, code, err)
		}
	}
}

// A deadlocked run under --view writes its report up to the deadlock (-o
// DIR, the summary) and its trace, as without --view, and exits 1 with
// the deadlock: it printed the error alone.
func TestViewDeadlockWritesReport(t *testing.T) {
	simScreen(t)
	dir := t.TempDir()
	out, trace := filepath.Join(dir, "out"), filepath.Join(dir, "t.json")
	stdout, _, code, err := runSplit(t, "run", examplePath("deadlock.yaml"), "-q", "--view", "-o", out, "--trace", trace)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "wait_flag MTE1->M id 3") {
		t.Fatalf("exit %d, %v; want 1 and the deadlock", code, err)
	}
	if !strings.Contains(stdout, "FAILED    deadlock at 636.877ns: 1 blocked") {
		t.Errorf("summary lacks the deadlock:\n%s", stdout)
	}
	data, rerr := os.ReadFile(filepath.Join(out, "report.json"))
	if rerr != nil {
		t.Fatalf("-o wrote no report: %v", rerr)
	}
	_, rep := withoutWall(t, data)
	if fl, _ := rep["failure"].(map[string]any); fl["kind"] != "deadlock" || fl["message"] != err.Error() {
		t.Errorf("failure %v, want the deadlock %q", fl, err)
	}
	tl, terr := traces.ReadTraceFile(trace)
	if terr != nil {
		t.Fatalf("trace: %v", terr)
	}
	if tl.To != 636877 {
		t.Errorf("trace ends at %v, want the deadlock's 636.877ns", tl.To)
	}
}
