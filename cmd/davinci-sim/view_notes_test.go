package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/spf13/cobra"

	"github.com/davinci-sim/davinci-sim/traces"
)

// TestViewNotesInOrder: what the view leaves out is printed once it ends,
// in order — the cores not shown, then the trace's notes as it holds them
// — even where it ends at once (no terminal here). A defer each, in a
// loop, had printed them last first.
func TestViewNotesInOrder(t *testing.T) {
	old := newScreen
	t.Cleanup(func() { newScreen = old })
	newScreen = func() (tcell.Screen, error) { return nil, errors.New("no tty here") }
	tl := &traces.Timeline{From: 0, To: 1000, Cores: []*traces.CoreTimeline{{ID: 0}},
		Notes: []string{"first note", "second note", "third note"}}
	var stderr bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetErr(&stderr)
	if err := viewTrace(cmd, "t.json", "", tl, []int{5, 6, 7}, nil); err == nil || !strings.Contains(err.Error(), "no tty here") {
		t.Fatalf("viewTrace without a terminal: %v", err)
	}
	var order []int
	for _, s := range []string{"3 cores not shown (5-7)", "t.json: first note", "t.json: second note", "t.json: third note"} {
		order = append(order, strings.Index(stderr.String(), s))
	}
	for i, at := range order {
		if at < 0 || i > 0 && at < order[i-1] {
			t.Fatalf("stderr\n%s\nwant the cores not shown, then the notes in order (positions %v)", stderr.String(), order)
		}
	}
}

// TestViewTerminalFirst: view says it needs a terminal before it reads the
// trace (LU n = 32768's one-core trace took 22 s to read, then that line);
// but a trace that is not there is named first (the missing terminal hid
// it, 2026-12-06).
func TestViewTerminalFirst(t *testing.T) {
	old := haveTerminal
	t.Cleanup(func() { haveTerminal = old })
	haveTerminal = func() error { return errors.New("no tty here") }
	trace := filepath.Join(t.TempDir(), "trace.json.gz")
	if err := os.WriteFile(trace, []byte("not gzip: never read"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, code, err := runCLI(t, "view", trace)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "view needs a terminal: no tty here") {
		t.Errorf("view without a terminal: exit %d, %v; want 2, needs a terminal (before reading)", code, err)
	}
	if _, code, err := runCLI(t, "view", "/nonexistent/trace.json.gz"); code != 2 || err == nil || err.Error() != "open /nonexistent/trace.json.gz: no such file or directory" {
		t.Errorf("view of a missing trace without a terminal: exit %d, %v; want 2, the missing file named", code, err)
	}
	if _, code, err := runCLI(t, "view", "/nonexistent/trace.json.gz", "--cores", "x"); code != 2 || err == nil || !strings.Contains(err.Error(), "--cores") {
		t.Errorf("a bad --cores without a terminal: exit %d, %v; want 2 naming --cores", code, err)
	}
}
