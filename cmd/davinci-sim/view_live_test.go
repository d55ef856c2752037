package main

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

// keyScreen returns key from its first PollEvent, after waiting until the
// screen shows until (if set; at most 20 s) and noting whether it did.
type keyScreen struct {
	tcell.SimulationScreen
	key   *tcell.EventKey
	until string
	once  sync.Once
	shown bool
}

func (k *keyScreen) PollEvent() tcell.Event {
	var ev tcell.Event
	k.once.Do(func() {
		for deadline := time.Now().Add(20 * time.Second); k.until != "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if k.shows(k.until) {
				k.shown = true
				break
			}
		}
		ev = k.key
	})
	if ev != nil {
		return ev
	}
	return k.SimulationScreen.PollEvent()
}

// shows reports whether the screen holds text. (GetContents returns the
// screen's own cells, which the view redraws: they are read under the
// screen's lock — read without it, a torn slice header crashed the test.)
func (k *keyScreen) shows(text string) bool {
	cells, w, _ := k.GetContents()
	lock := k.SimulationScreen.(sync.Locker) // tcell's screens are
	lock.Lock()
	defer lock.Unlock()
	var sb strings.Builder
	for i, c := range cells {
		if i%w == 0 {
			sb.WriteByte('\n')
		}
		if len(c.Runes) > 0 {
			sb.WriteRune(c.Runes[0])
		} else {
			sb.WriteByte(' ')
		}
	}
	return strings.Contains(sb.String(), text)
}

// useKeyScreen makes run --view draw on a keyScreen (returned).
func useKeyScreen(t *testing.T, key *tcell.EventKey, until string) *keyScreen {
	t.Helper()
	old, oldTTY := newScreen, haveTerminal
	t.Cleanup(func() { newScreen, haveTerminal = old, oldTTY })
	haveTerminal = func() error { return nil }
	k := &keyScreen{SimulationScreen: tcell.NewSimulationScreen("UTF-8"), key: key, until: until}
	newScreen = func() (tcell.Screen, error) { return k, nil }
	return k
}

// Ctrl-C in the view of a --view run — a key, the terminal being raw —
// stops the run as a SIGINT does (exit 130, the interruption said); it had
// closed the view as q does and left the run going.
func TestViewCtrlCStopsRun(t *testing.T) {
	useKeyScreen(t, tcell.NewEventKey(tcell.KeyCtrlC, 0, tcell.ModCtrl), "")
	start := time.Now()
	_, code, err := runCLI(t, "run", examplePath("lu-fused-32k.yaml"), "-q", "--numerics", "off", "--view")
	if code != 130 || err == nil || !strings.HasSuffix(err.Error(), "interrupted by SIGINT") {
		t.Fatalf("exit %d, %v (after %v); want 130 and the interruption", code, err, time.Since(start))
	}
}

// The live view of a run that deadlocked says so ("deadlock at T"), not
// "(complete)".
func TestViewSaysDeadlock(t *testing.T) {
	k := useKeyScreen(t, tcell.NewEventKey(tcell.KeyRune, 'q', 0), "(deadlock at 636.877ns)")
	if _, code, _ := runCLI(t, "run", examplePath("deadlock.yaml"), "-q", "--view"); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !k.shown || k.shows("(complete)") {
		t.Error("the view of the deadlocked run did not say (deadlock at 636.877ns)")
	}
	// Its trace file says so too (the trace's header), and view shows it.
	path := filepath.Join(t.TempDir(), "dl.pftrace")
	if _, code, _ := runCLI(t, "run", examplePath("deadlock.yaml"), "-q", "--trace", path); code != 1 {
		t.Fatalf("--trace: exit %d, want 1", code)
	}
	k = useKeyScreen(t, tcell.NewEventKey(tcell.KeyRune, 'q', 0), "(deadlock at 636.877ns)")
	if _, code, _ := runCLI(t, "view", path); code != 0 {
		t.Fatalf("view: exit %d, want 0", code)
	}
	if !k.shown {
		t.Error("view of the deadlocked run's trace did not say (deadlock at 636.877ns)")
	}
}

// A window that holds nothing of the run shows one line saying so, the
// window and the run's end — live and read back, a chip's and a
// cluster's — where it showed "core -1 (1/0)" and "no events recorded
// yet", or a cluster's rank 0 over 0ps..83ps with 0 % tables.
func TestViewEmptyWindow(t *testing.T) {
	dir := t.TempDir()
	hgemm := []string{"run", examplePath("hgemm.yaml"), "-q", "--set", "program.m=256", "--set", "program.n=256",
		"--set", "program.k=256", "--numerics", "off"}
	lu := []string{"run", examplePath("lu-cluster-small.yaml"), "-q", "--numerics", "off", "--set", "program.check=false"}
	chip, clus := filepath.Join(dir, "chip.json"), filepath.Join(dir, "cluster.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(hgemm), "--view", "--trace-window", "100us..200us"),
			"nothing of the run is in the window 100µs..200µs: the run ended at 7.922µs"},
		{append(slices.Clone(lu), "--view", "--trace-window", "1s..2s"),
			"nothing of the run is in the window 1s..2s: the run ended at 286.5µs"},
		{append(slices.Clone(hgemm), "--trace", chip, "--trace-window", "100us..200us"), ""},
		{[]string{"view", chip}, "nothing of the run is in the window: the run ended at 7.922µs"},
		{append(slices.Clone(lu), "--trace", clus, "--trace-window", "1s..2s"), ""},
		{[]string{"view", clus}, "nothing of the run is in the window: the run ended at 286.5µs"},
	} {
		k := useKeyScreen(t, tcell.NewEventKey(tcell.KeyRune, 'q', 0), c.want)
		if _, code, err := runCLI(t, c.args...); code != 0 {
			t.Fatalf("%v: exit %d: %v", c.args, code, err)
		}
		if c.want != "" && (!k.shown || k.shows("core -1") || k.shows("busy")) {
			t.Errorf("%v: the view did not say %q alone", c.args, c.want)
		}
	}
}
