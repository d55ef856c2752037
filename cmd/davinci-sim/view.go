package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
	"github.com/davinci-sim/davinci-sim/viz"
)

func init() { subcommands = append(subcommands, newViewCmd) }

// newScreen opens the terminal; tests replace it with a simulation screen.
var newScreen = func() (tcell.Screen, error) { return tcell.NewScreen() }

// haveTerminal reports whether the terminal a screen would open is there,
// without taking it over (tests replace it with newScreen's fake): the
// process's controlling terminal, /dev/tty, which tcell opens (on Windows
// the console, CONOUT$). (It had asked tcell for its /dev/tty
// and closed it unstarted, whose Close fails — "invalid argument" — on
// every terminal.)
var haveTerminal = func() error {
	dev := "/dev/tty"
	if runtime.GOOS == "windows" {
		dev = "CONOUT$" // (the console, whatever standard output is)
	}
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if !term.IsTerminal(int(f.Fd())) {
		return fmt.Errorf("%s is not a terminal", dev)
	}
	return nil
}

func newViewCmd() *cobra.Command {
	var cores string
	cmd := &cobra.Command{
		Use:   "view TRACE.pftrace|TRACE.json[.gz]",
		Short: "Replay a trace (written by run --trace) in the terminal visualizer",
		Long: `Replay a trace written by "davinci-sim run --trace FILE" (.pftrace or
.json[.gz]) in the terminal: per core one lane per pipe over time (letters = instruction class,
lower case = stall cause), buffer occupancy at the cursor and the core's stall
summary.

The events are held compactly (a few bytes a slice); a trace too large for
1 GiB of memory shows the cores read before the limit was
reached (and says which were left out): pick others with --cores.

Keys: ←/→ pan, Shift+←/→ move the cursor, +/- zoom, ↑/↓ or Tab change core,
n/p next/previous stall (after a / search: n or Enter the next match, N the
previous, as in less), o chip overview (Enter opens a core), g/G start/end,
? help, Esc back (closes the overview, clears the search, returns to the
overview, then quits), q quit.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lim := traces.ReadLimits{Bytes: traces.DefaultLiveLimit}
			if cores != "" {
				sel, err := traces.ParseCores(cores)
				if err != nil {
					return badInput(fmt.Errorf("--cores: %v", err))
				}
				lim.Cores = sel
			}
			// A trace that is not there, or is no file, is the first thing
			// to say (it was hidden behind the missing terminal).
			if err := badinput.NotFile(args[0], "a trace"); err != nil {
				return badInput(err)
			}
			if _, err := os.Stat(args[0]); err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				return badInput(fmt.Errorf("open %s: %w", args[0], err))
			}
			// Then a terminal: reading a large trace takes a while (LU
			// n = 32768's one core, 44 MB gzipped: 22 s), only to be
			// told then that there is nothing to show it on.
			if err := haveTerminal(); err != nil {
				return badInput(fmt.Errorf("view needs a terminal: %w", err))
			}
			stop := func() {}
			if isTerminal(cmd.ErrOrStderr()) { // a progress line while reading (LU n = 32768's 5 M-slice JSON trace: ~5 s)
				lim.Progress = new(atomic.Int64)
				size := int64(0)
				if fi, err := os.Stat(args[0]); err == nil {
					size = fi.Size()
				}
				stop = readProgress(cmd.ErrOrStderr(), args[0], size, lim.Progress, time.Second)
			}
			tl, skipped, err := traces.ReadTraceFileWithin(args[0], lim)
			stop()
			return viewTrace(cmd, args[0], cores, tl, skipped, err)
		},
	}
	cmd.Flags().StringVar(&cores, "cores", "", "show only these cores, e.g. 0-3,8 (default: all that fit in memory)")
	return cmd
}

// readProgress prints, every interval until stop is called, how much of
// the trace file name (size bytes; 0: not known) has been read (n) on
// stderr — a terminal: one line, rewritten, cleared at the end, as run's
// progress line; nothing for a file read within the first interval.
func readProgress(stderr io.Writer, name string, size int64, n *atomic.Int64, interval time.Duration) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		printed := false
		for {
			select {
			case <-done:
				if printed {
					fmt.Fprint(stderr, "\r\033[K")
				}
				return
			case <-t.C:
				line := fmt.Sprintf("reading %s: %.1f MiB", name, float64(n.Load())/(1<<20))
				if size > 0 {
					line += fmt.Sprintf(" of %.1f MiB (%.0f %%)", float64(size)/(1<<20), 100*float64(n.Load())/float64(size))
				}
				fmt.Fprintf(stderr, "\r\033[K  %s", line)
				printed = true
			}
		}
	}()
	return func() { close(done); <-finished }
}

// viewTrace shows the trace read from file (ReadTraceFileWithin's
// results) in the terminal visualizer.
func viewTrace(cmd *cobra.Command, file, cores string, tl *traces.Timeline, skipped []int, err error) error {
	if err != nil {
		return badInput(err)
	}
	// Printed once the view ends, in order: the cores not shown, then
	// what the trace leaves out (the footer shows its first words). (A
	// defer each, in a loop, printed them last first.)
	defer func() {
		if len(skipped) > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "davinci-sim: %s: %d cores not shown (%s): the trace holds more than the view's %d MiB; pick cores with --cores\n",
				file, len(skipped), traces.FormatCores(skipped), traces.DefaultLiveLimit>>20)
		}
		for _, n := range tl.Notes {
			fmt.Fprintf(cmd.ErrOrStderr(), "davinci-sim: %s: %s\n", file, n)
		}
	}()
	// (A window that holds nothing of the run, [end, end], is shown:
	// the view says so, and when the run ended.)
	if len(tl.Cores) == 0 && (cores != "" || tl.To > tl.From || tl.To == 0) {
		if cores != "" {
			return badInput(fmt.Errorf("--cores %s: %s holds no events of these cores", cores, file))
		}
		if len(tl.Idle) > 0 {
			return badInput(fmt.Errorf("%s: the trace holds no core events: its cores %s did nothing in its window but wait at barriers", file, traces.FormatCores(tl.Idle)))
		}
		return badInput(fmt.Errorf("%s: the trace holds no core events", file))
	}
	s, err := newScreen() // (its callers checked for a terminal before reading or running)
	if err != nil {
		return failure(fmt.Errorf("view needs a terminal: %w", err))
	}
	if err := viz.Run(s, viz.StaticSource(tl), viz.Options{}); err != nil {
		return failure(err)
	}
	return nil
}

// runWithView runs the program with the live visualizer: the engine runs in
// a goroutine feeding rec; the UI redraws at most 20 times a second. When
// the user quits before the run ends, the run still completes and its
// summary is printed (a deadlock's too: its report up to the deadlock).
func runWithView(stdout, stderr io.Writer, file *programs.File, opts programs.Options, f runFlags, rec *traces.Recorder) error {
	s, err := newScreen()
	if err == nil {
		err = haveTerminal() // before the run: without a terminal there is nothing to run it for
	}
	if err != nil {
		return badInput(fmt.Errorf("--view needs a terminal: %w", err))
	}
	type outcome struct {
		res *programs.Result
		err error
	}
	// A SIGINT or SIGTERM stops the run as without --view, and closes the
	// view (restoring the terminal); so does a run that cannot start.
	sigCtx, stop := interruptible(context.Background())
	var release sync.Once // (stop, once)
	defer release.Do(stop)
	// Ctrl-C in the view — a key in the terminal's raw mode, not a signal
	// — stops the run as a SIGINT does: the run ends "interrupted by
	// SIGINT" (exit 130), and the signals are released, so that the next
	// Ctrl-C, the terminal restored, kills the process.
	runCtx, cancelRun := context.WithCancelCause(sigCtx)
	defer cancelRun(nil)
	interrupt := func() {
		cancelRun(&interrupted{sig: os.Interrupt})
		release.Do(stop)
	}
	if f.trace != "" {
		// A recording stopped at its cap stops the run (finishRun refuses
		// it), as without --view.
		rec.OnCap(func(err error) { cancelRun(err) })
	}
	ctx, closeView := context.WithCancel(sigCtx) // done: the view closes
	defer closeView()
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			// A panic here would end the process with the terminal
			// still in the view's raw mode and alternate screen: the
			// view closes and the run ends with an internal error.
			if p := recover(); p != nil {
				closeView()
				done <- outcome{nil, internalError(p, debug.Stack())}
			}
		}()
		res, err := programs.Execute(file, opts, programs.RunHooks{Observer: rec, Context: runCtx})
		var end = outcome{res, err}
		if res != nil { // (a deadlock's: up to it)
			if res.Failure != nil {
				rec.SetEnding(viewEnding(res.Failure))
			}
			rec.Finish(res.Stats.Time)
		} else {
			if err != nil && !badinput.Is(err) && interruptExit(err) == nil {
				rec.SetEnding(viewEnding(err))
			}
			rec.Finish(0)
			if badinput.Is(err) {
				closeView()
			}
		}
		done <- end
	}()
	uiErr := viz.Run(s, rec, viz.Options{Live: true, Quit: ctx.Done(), Interrupt: interrupt})
	var out outcome
	select {
	case out = <-done:
	default:
		if runCtx.Err() == nil { // (an interrupted run stops at once)
			fmt.Fprintln(stderr, "davinci-sim: waiting for the run to finish… (Ctrl-C stops it)")
		}
		out = <-done
	}
	if uiErr != nil {
		fmt.Fprintln(stderr, "davinci-sim:", uiErr)
	}
	return finishRun(stdout, stderr, file, out.res, out.err, rec, programs.RunHooks{}, f)
}

// viewEnding is how the live view says a run that did not complete ended
// (traces.Timeline.Ending): at a deadlock, its time; a check that failed,
// the run complete; another failure, its message's first line, clipped.
func viewEnding(err error) string {
	var dl *sim.DeadlockError
	switch {
	case errors.As(err, &dl):
		return fmt.Sprintf("deadlock at %v", dl.Time)
	case errors.Is(err, programs.ErrCheckFailed):
		return "complete, check failed"
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if r := []rune(msg); len(r) > 80 {
		msg = string(r[:79]) + "…"
	}
	return "failed: " + msg
}
