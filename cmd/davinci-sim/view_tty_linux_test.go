//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The real haveTerminal (the other tests replace it) finds a terminal
// where the process has one — a pseudo-terminal made its controlling
// terminal, as a shell's is — and refuses without one. (It had failed on
// every terminal: view and run --view could not be used.)
func TestHaveTerminalOnARealTerminal(t *testing.T) {
	if os.Getenv("DAVINCI_HAVE_TERMINAL_CHILD") == "1" {
		if err := haveTerminal(); err != nil {
			fmt.Fprintln(os.Stderr, "no terminal:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals here:", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	// run runs this test again as a child in a session of its own, with
	// the pseudo-terminal as its controlling terminal (ctty) or none.
	run := func(ctty bool) error {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHaveTerminalOnARealTerminal$")
		cmd.Env = append(os.Environ(), "DAVINCI_HAVE_TERMINAL_CHILD=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if ctty {
			cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
			cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
		}
		return cmd.Run()
	}
	if err := run(true); err != nil {
		t.Errorf("on a terminal: %v (exit 3: haveTerminal found none)", err)
	}
	var exit *exec.ExitError
	if err := run(false); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("without a controlling terminal: %v, want haveTerminal's refusal (exit 3)", err)
	}
}
