package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

func init() {
	subcommands = append(subcommands, newRunCmd, newProgramsCmd)
}

type runFlags struct {
	machine  string
	sets     []string
	out      string
	numerics string
	json     bool
	seed     int64
	quiet    bool
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run PROGRAM.yaml",
		Short: "Run a program on a simulated machine and report time, stalls, occupancy and error",
		Long: `Run a program file (kind: sgemm-cube, hgemm, asm, …) on a simulated machine.

The machine is the one named by -m (an embedded name or a YAML file), else the
program file's "machine:" key, else ascend-910a. Any parameter can be changed
with --set: program.<path>=value for the program, machine.<path>=value for the
machine (sizes accept KiB/MiB/GiB), e.g.
  --set program.tiling.bm=96 --set machine.core.buffers.L1=512KiB

A summary table goes to stdout (or report.json with --json). -o DIR writes
report.json and the result arrays (C.npy, and with full numerics A.npy, B.npy).

Exit codes: 0 success; 1 the simulation found a failure (deadlock, failed
check); 2 bad input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			seedSet := cmd.Flags().Changed("seed")
			return runProgram(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f, seedSet)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.machine, "machine", "m", "", "machine: embedded name or YAML file (default: the program's, else ascend-910a)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a parameter: program.<path>=value or machine.<path>=value (repeatable)")
	fl.StringVarP(&f.out, "out", "o", "", "write report.json and result arrays (.npy) to this directory")
	fl.StringVar(&f.numerics, "numerics", "", "full | sampled | off (default: the program's)")
	fl.BoolVar(&f.json, "json", false, "print report.json to stdout instead of the summary table")
	fl.Int64Var(&f.seed, "seed", 0, "override the program's random seed")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

func runProgram(stdout, stderr io.Writer, path string, f runFlags, seedSet bool) error {
	ovs, err := machines.ParseOverrides(f.sets)
	if err != nil {
		return badInput(err)
	}
	if err := programs.CheckOverrides(ovs); err != nil {
		return badInput(err)
	}
	switch f.numerics {
	case "", programs.NumericsFull, programs.NumericsSampled, programs.NumericsOff:
	default:
		return badInput(fmt.Errorf("--numerics %q: must be full, sampled or off", f.numerics))
	}
	opts := programs.Options{Machine: f.machine, Overrides: ovs, Numerics: f.numerics}
	if seedSet {
		opts.Seed = &f.seed
	}
	file, err := programs.ReadFile(path)
	if err != nil {
		return badInput(err)
	}
	var hooks programs.RunHooks
	progress := !f.quiet && isTerminal(stderr)
	wallStart := time.Now()
	if progress {
		hooks.ProgressEvery = 1 << 20
		hooks.Progress = func(now sim.Time, events uint64) {
			fmt.Fprintf(stderr, "\r  simulated %v, %d events, %.1f s wall", now, events, time.Since(wallStart).Seconds())
		}
	}
	res, err := programs.Execute(file, opts, hooks)
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if errors.Is(err, programs.ErrBadInput) {
			return badInput(err)
		}
		return failure(err)
	}
	rep := res.Report
	if f.out != "" {
		if err := writeOutDir(f.out, rep, res.Outputs); err != nil {
			return failure(err)
		}
	}
	if f.json {
		if err := rep.WriteJSON(stdout); err != nil {
			return failure(err)
		}
	} else {
		rep.WriteSummary(stdout)
	}
	if res.Failure != nil {
		return failure(res.Failure)
	}
	return nil
}

func writeOutDir(dir string, rep *traces.Report, outs []programs.Output) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fh, err := os.Create(filepath.Join(dir, "report.json"))
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(fh); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return err
	}
	return programs.WriteOutputs(dir, outs)
}

func isTerminal(w io.Writer) bool {
	if f, ok := w.(*os.File); ok {
		return term.IsTerminal(int(f.Fd()))
	}
	return false
}

func newProgramsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "programs",
		Short: "List program kinds with their example files",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			w := cmd.OutOrStdout()
			for _, k := range programs.Kinds() {
				fmt.Fprintf(w, "%-12s %s\n", k.Name, k.Summary)
				if k.Example != "" {
					fmt.Fprintf(w, "%-12s example: programs/examples/%s\n", "", k.Example)
				}
			}
		},
	}
}
