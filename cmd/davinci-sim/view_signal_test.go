//go:build unix

package main

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// A SIGINT during a --view run stops the run as without --view (exit 130,
// the interruption said) and closes the view, restoring the terminal
// (before, the view ignored it and SIGTERM left the terminal raw).
func TestViewInterrupted(t *testing.T) {
	old, oldTTY := newScreen, haveTerminal
	t.Cleanup(func() { newScreen, haveTerminal = old, oldTTY })
	haveTerminal = func() error { return nil }
	started := make(chan struct{})
	newScreen = func() (tcell.Screen, error) {
		return &startedScreen{SimulationScreen: tcell.NewSimulationScreen("UTF-8"), started: started}, nil
	}
	go func() {
		<-started // the view polls: the run's signal handling is in place
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}()
	_, code, err := runCLI(t, "run", examplePath("lu-fused-32k.yaml"), "-q", "--numerics", "off", "--view")
	if code != 130 || err == nil || !strings.HasSuffix(err.Error(), "interrupted by SIGINT") {
		t.Fatalf("exit %d, %v; want 130 and the interruption", code, err)
	}
}

// startedScreen closes started at its first PollEvent and then waits for
// events as a terminal with no key pressed.
type startedScreen struct {
	tcell.SimulationScreen
	started chan struct{}
	once    sync.Once
}

func (s *startedScreen) PollEvent() tcell.Event {
	s.once.Do(func() { close(s.started) })
	return s.SimulationScreen.PollEvent()
}
