package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/outfile"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
	"github.com/davinci-sim/davinci-sim/viz"
)

func init() {
	subcommands = append(subcommands, newRunCmd, newProgramsCmd)
}

type runFlags struct {
	// profiles are the root's --cpuprofile and --memprofile (outputs the
	// run's must not collide with).
	profiles [2]string
	machine  string
	sets     []string
	out      string
	numerics string
	fidelity string
	json     bool
	seed     int64
	quiet    bool

	trace       string // --trace FILE.pftrace|FILE.json[.gz]
	traceCores  string // --trace-cores 0-3
	traceWindow string // --trace-window 0us..50us
	traceRanks  string // --trace-ranks 0-7 (cluster runs)
	traceNPU    int    // --trace-npu R (cluster runs, fidelity full; -1: none)
	ffTuned     string // the first --fast-forward-* setting given ("": none)
	view        bool   // --view: live terminal visualizer

	fastForward  bool    // --fast-forward: skip repeated waves of GPU grids
	ffTolerance  float64 // --fast-forward-tolerance
	ffMix        float64 // --fast-forward-mix
	ffStationary bool    // --fast-forward-stationary
	ffHits       float64 // --fast-forward-hits
	ffMinGain    float64 // --fast-forward-min-gain
	ffWarmUp     float64 // --fast-forward-warm-up
	ffSteps      bool    // --fast-forward-steps
	ffKernels    bool    // --fast-forward-kernels
	kBatch       int     // --k-batch: GPU GEMM k-steps simulated as one
	maxMemory    string  // --max-memory: the host memory the run may take by its estimate ("": the host's default)

	// startProfiles starts the profiles, once the outputs are checked
	// (nil: nothing to start).
	startProfiles func() error
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
On a cluster or node description (-m cloudbrain2, -m cloudbrain2-node)
machine.<path> sets each NPU, node.<path> the node and cluster.<path> the
cluster, e.g. --set cluster.nodes=4.

A summary table goes to stdout (or report.json with --json). -o DIR writes
report.json and, with full numerics, the result arrays (GEMM kinds: A.npy,
B.npy, C.npy; ozaki: those and C0.npy where beta ≠ 0; asm: its outputs; LU kinds: none, a note says so),
replacing a previous run's files there; DIR must be new, empty or such a
previous output, and hold none of the run's inputs (a previous run's A.npy
given as inputs.a: copy it out first). -o and --trace are checked before the
run — no output may replace the program, machine or input files the run
reads —, and every file is written atomically (--cpuprofile and --memprofile
too, once the outputs are checked): through a symbolic link to its
destination, the link kept; a destination that is not a regular file (a
device, a pipe) is refused.

A run that fails (exit 1) still prints and writes its report, whose key
"failure" says what failed: a failed check's report is complete; a deadlock's
covers the run up to it (time reached, pipes, stalls, what each blocked core
waits for) without the program's results (flops, error, result arrays), and
names the keys whose values mean nothing (docs/report.md). Its trace is written
too.

Exit codes: 0 success; 1 the simulation found a failure (deadlock, failed
check) or an output (-o, --trace) could not be written after the run; 2 bad
input (also a time or size beyond what can be simulated); 3 an internal
error (a bug in davinci-sim, not the input: its message and stack);
130 (143) interrupted by SIGINT (SIGTERM).`,
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{deferProfiles: ""},
		RunE: func(cmd *cobra.Command, args []string) error {
			seedSet := cmd.Flags().Changed("seed")
			for _, name := range []string{"fast-forward-tolerance", "fast-forward-mix", "fast-forward-min-gain", "fast-forward-warm-up", "fast-forward-hits", "fast-forward-stationary", "fast-forward-steps", "fast-forward-kernels"} {
				if cmd.Flags().Changed(name) && f.ffTuned == "" {
					f.ffTuned = "--" + name
				}
			}
			f.profiles[0], _ = cmd.Flags().GetString("cpuprofile")
			f.profiles[1], _ = cmd.Flags().GetString("memprofile")
			f.startProfiles = func() error { return startProfiles(cmd) }
			return runProgram(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f, seedSet)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.machine, "machine", "m", "", "machine: embedded name or YAML file (default: the program's, else ascend-910a)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a parameter: program.<path>=value or machine.<path>=value, and on a cluster or node description node.<path>=value and cluster.<path>=value (repeatable; program.<path>= resets a text key to its default)")
	fl.StringVarP(&f.out, "out", "o", "", "write report.json and result arrays (.npy) to this directory")
	fl.StringVar(&f.numerics, "numerics", "", "full | sampled | off (default: the program's)")
	fl.StringVar(&f.fidelity, "fidelity", "", "lu-fused on NPUs: full | isolated | sampled — every NPU cycle-level, each distinct kernel alone, or a sample of windows with the rest predicted (default: the program's, else full; isolated and sampled imply --numerics off, with a note naming the program's numerics and check they leave unused; on one chip they run it as a node of that one NPU)")
	fl.BoolVar(&f.json, "json", false, "print report.json to stdout instead of the summary table")
	fl.Int64Var(&f.seed, "seed", 0, "override the program's random seed")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output on stderr")
	fl.StringVar(&f.trace, "trace", "", traces.TraceFlagHelp)
	fl.StringVar(&f.traceCores, "trace-cores", "", "trace/view only these cores, e.g. 0-3,8 (default: all)")
	fl.StringVar(&f.traceWindow, "trace-window", "", "trace/view only this simulated time window, e.g. 0us..50us")
	fl.StringVar(&f.traceRanks, "trace-ranks", "", "cluster runs: trace only these ranks, e.g. 0-7 (a node) (default: all)")
	f.traceNPU = -1
	fl.Var(intOrNone{&f.traceNPU}, "trace-npu", "cluster runs at fidelity full: also trace this rank's NPU core by core (its pipes as threads of the rank; --trace-cores narrows them) (default: none)")
	fl.BoolVar(&f.fastForward, "fast-forward", false, "GPU kernels, timing only: measure waves of blocks and skip the repeated ones (approximate, checked; the notes say what was skipped, report.json's sim section the time skipped and an estimate of the error); where it can skip nothing — a DaVinci machine, a host program such as lu-fused, a cluster — the run is simulated in full and a note says why")
	fl.Float64Var(&f.ffTolerance, "fast-forward-tolerance", arch.DefaultFastForward.Tolerance, "with --fast-forward: the largest relative spread of the measured waves' durations that allows a skip (inf: any)")
	fl.Float64Var(&f.ffMix, "fast-forward-mix", arch.DefaultFastForward.Mix, "with --fast-forward: the largest spread of a lane's fraction of time in a cause over the measured waves that allows a skip (inf: any)")
	fl.Float64Var(&f.ffMinGain, "fast-forward-min-gain", arch.DefaultFastForward.MinGain, "with --fast-forward: the smallest share of the events simulated so far that a skip must stand for (a failed step check makes the run start again from the beginning, and a failed wave check simulates the skipped waves after its own, so a short kernel late in a long run is not worth the risk; 0: any skip)")
	fl.Float64Var(&f.ffWarmUp, "fast-forward-warm-up", arch.DefaultFastForward.WarmUp, "with --fast-forward: the smallest share of a kernel's waves (of one GEMM's, in a grouped launch) simulated before the waves a skip measures (a kernel's first waves can repeat at a pace it leaves later; 0: from its second wave)")
	fl.Float64Var(&f.ffHits, "fast-forward-hits", arch.DefaultFastForward.Hits, "with --fast-forward: the largest spread of the L2's (and LLC's) hit fraction over the measured waves that allows a skip, or between each measured wave and the wave 4 before it (hits that swing in a repeating pattern; larger: more skips on GEMMs whose hits swing from wave to wave, at the risk of missing a slide into thrashing; inf: any)")
	fl.BoolVar(&f.ffSteps, "fast-forward-steps", false, "with --fast-forward: also skip k-steps inside waves — every resident block the same number, together, where two windows of their steps agree (or one, at the pace an earlier skip's check kept) — for kernels of too few waves to skip and the simulated waves of the others (the notes say what was skipped; opt-in: HBM bytes come out further off, and kernels whose steps have slow episodes short; docs/design-notes.md, \"Step skips inside waves\")")
	fl.BoolVar(&f.ffKernels, "fast-forward-kernels", false, "with --fast-forward: also skip whole kernels like the two before them (as many blocks, the same resources and instructions but for addresses) where those two took the same time within 1 % and agreed in hits, misses and stall mix — ape-int16's four INT8 GEMMs — (or, where they alternate in misses, like the one two before), and the rest of a kernel like the one before it (or like it through its main loop, with its own blocks' work) whose first waves (a quarter, at least 5) took the same time — ape-fp32f's third GEMM, sgemm-cube's hh (the notes say which stood for which; opt-in; docs/design-notes.md, \"Kernel skips\")")
	fl.BoolVar(&f.ffStationary, "fast-forward-stationary", false, "with --fast-forward: also skip waves that vary from one to the next without a pattern but whose means over two windows of 4 waves agree (durations, hits and stall mix within the settings above; the skip stands for their mean and its check allows for their noise; not yet the default)")
	fl.IntVar(&f.kBatch, "k-batch", 1, "(1.."+strconv.Itoa(programs.MaxKBatch)+") GPU SIMT GEMM kernels (SGEMM, DGEMM on the CUDA cores; in kinds sgemm, dgemm, emulated-gemm's native scheme, ozaki's fallback), timing only: simulate up to this many of a block's k-steps as one — copies, fragment loads and FMA runs as deep, occupancy and resources the kernel's — for about as many times fewer events (approximate: the notes say so; tensor-core kernels are simulated in full; docs/design-notes.md, \"Batched k-steps\")")
	fl.StringVar(&f.maxMemory, "max-memory", "", maxMemoryHelp("the run may take by its estimate — its base, its data and its chip model(s) together; with --trace or --view, the trace's events get what that leaves —, checked before anything large is allocated (a run past it is refused)"))
	fl.BoolVar(&f.view, "view", false, "show the run live in the terminal visualizer (without --trace: no flag marks, at most ~1 GiB of events)")
	return cmd
}

func runProgram(stdout, stderr io.Writer, path string, f runFlags, seedSet bool) (err error) {
	ovs, err := machines.ParseSetFlags(f.sets)
	if err != nil {
		return badInput(err)
	}
	if err := programs.CheckOverrides(ovs); err != nil {
		return badInput(err)
	}
	// A flag and a --set of the key it sets: the flag won, the --set
	// dropped without a word (--set program.seed=3 --seed 5 ran seed 5).
	for _, o := range ovs {
		for _, fl := range []struct {
			key, flag string
			given     bool
		}{{"program.seed", "--seed", seedSet}, {"program.numerics", "--numerics", f.numerics != ""}, {"program.fidelity", "--fidelity", f.fidelity != ""}} {
			if fl.given && strings.EqualFold(o.Path, fl.key) {
				return badInput(fmt.Errorf("--set %s and %s both set %s: give one", o, fl.flag, fl.key))
			}
		}
	}
	// A file named on the command line: relative to where it is typed
	// (messages quote it so: typed holds each as typed and as resolved).
	var typed [][2]machines.Override
	for i, o := range ovs {
		if programs.IsFileKey(o.Path) && o.Value != "" && !filepath.IsAbs(o.Value) {
			if abs, err := filepath.Abs(o.Value); err == nil {
				ovs[i].Value = abs
				typed = append(typed, [2]machines.Override{o, ovs[i]})
			}
		}
	}
	if typed != nil {
		defer func() { err = quotedAsTyped(err, typed) }()
	}
	switch f.numerics {
	case "", programs.NumericsFull, programs.NumericsSampled, programs.NumericsOff:
	default:
		return badInput(fmt.Errorf("--numerics %+q: must be full, sampled or off", f.numerics))
	}
	switch f.fidelity {
	case "", "full", "isolated", "sampled":
	default:
		return badInput(fmt.Errorf("--fidelity %+q: must be full, isolated or sampled", f.fidelity))
	}
	opts := programs.Options{Machine: f.machine, Overrides: ovs, Numerics: f.numerics, NumericsFrom: "--numerics", Fidelity: f.fidelity}
	if f.numerics == "" && (f.fidelity == "isolated" || f.fidelity == "sampled") {
		opts.Numerics, opts.NumericsFrom = programs.NumericsOff, "--fidelity "+f.fidelity+" implies it"
	}
	d := arch.DefaultFastForward
	for _, v := range []struct {
		flag    string
		x, dflt float64
	}{{"--fast-forward-tolerance", f.ffTolerance, d.Tolerance}, {"--fast-forward-mix", f.ffMix, d.Mix}, {"--fast-forward-hits", f.ffHits, d.Hits}} {
		if !(v.x >= 0) {
			return badInput(fmt.Errorf("%s %v: must be a spread ≥ 0, or inf for any (the default is %v)", v.flag, v.x, v.dflt))
		}
	}
	if !(f.ffMinGain >= 0) {
		return badInput(fmt.Errorf("--fast-forward-min-gain %v: must be a share of the events simulated so far ≥ 0 (0: any skip; the default is %v)", f.ffMinGain, d.MinGain))
	}
	if !(f.ffWarmUp >= 0 && f.ffWarmUp < 1) {
		return badInput(fmt.Errorf("--fast-forward-warm-up %v: must be a share of a kernel's waves in [0, 1) (0: none; the default is %v)", f.ffWarmUp, d.WarmUp))
	}
	if f.ffTuned != "" && !f.fastForward {
		return badInput(fmt.Errorf("%s: tunes --fast-forward, which is not given", f.ffTuned))
	}
	if f.fastForward {
		ff := arch.DefaultFastForward
		ff.Tolerance, ff.Mix, ff.Hits, ff.MinGain, ff.WarmUp, ff.Stationary, ff.Steps, ff.Kernels = f.ffTolerance, f.ffMix, f.ffHits, f.ffMinGain, f.ffWarmUp, f.ffStationary, f.ffSteps, f.ffKernels
		opts.FastForward = &ff
	}
	if f.kBatch < 1 || f.kBatch > programs.MaxKBatch {
		return badInput(fmt.Errorf("--k-batch %d: must be in 1..%d (1: every k-step simulated)", f.kBatch, programs.MaxKBatch))
	}
	opts.KBatch = f.kBatch
	if opts.MaxHostBytes, err = parseMaxMemory(f.maxMemory, "the host memory the run may take by its estimate"); err != nil {
		return badInput(err)
	}
	noteAboveHost(stderr, opts.MaxHostBytes)
	defer limitHeap(opts.MaxHostBytes)()
	if seedSet {
		opts.Seed = &f.seed
	}
	file, err := programs.ReadFile(path)
	if err != nil {
		return badInput(err)
	}
	if f.machine != "" {
		if err := programAsMachine("-m "+f.machine, f.machine); err != nil {
			return err
		}
	}
	if err := checkOutputs(f, programs.InputFiles(file, opts)); err != nil {
		return badInput(err)
	}
	if f.startProfiles != nil { // only now: a profile must not replace a file the checks refuse
		if err := f.startProfiles(); err != nil {
			return err
		}
	}
	var hooks programs.RunHooks
	clusterName := programs.ClusterMachine(file, opts)
	fid := f.fidelity // the run's fidelity: --fidelity, else the file's
	if fid == "" {
		fid = programs.FileFidelity(file, opts)
	}
	switch {
	case f.fastForward && (f.trace != "" || f.view) && programs.FastForwardApplies(file, opts):
		// (Where it can skip nothing — a DaVinci chip, a host program, a
		// cluster — the run is simulated in full, and a trace misses
		// nothing.)
		return badInput(arch.ErrFastForwardObserved)
	case f.kBatch > 1 && (f.trace != "" || f.view) && (clusterName != "" || appliesWhere(file, opts, func(m *machines.Machine) bool { return programs.KBatchApplies(file, m) })):
		// (Where it has nothing to batch, the run is as without it.)
		return badInput(programs.KBatchObservedError(f.kBatch))
	case clusterName == "" && (fid == "isolated" || fid == "sampled") && (f.trace != "" || f.view):
		return badInput(fmt.Errorf("--trace and --view: not with fidelity %s on one chip (its kernels are timed apart: no pipes to show); -m cloudbrain2-node --set node.npus=1 --trace FILE.json gives the rank's timeline", fid))
	case clusterName != "" && f.trace != "" && !strings.HasSuffix(f.trace, ".json") && !strings.HasSuffix(f.trace, ".json.gz"):
		return badInput(fmt.Errorf("--trace %s: a run on a cluster or node description writes a JSON trace (FILE.json or FILE.json.gz)", f.trace))
	case clusterName == "" && (f.traceRanks != "" || f.traceNPU >= 0):
		return badInput(errors.New("--trace-ranks and --trace-npu: for runs on a cluster or node description"))
	case clusterName != "" && f.trace == "" && !f.view && (f.traceRanks != "" || f.traceNPU >= 0 || f.traceWindow != "" || f.traceCores != ""):
		return badInput(errors.New("--trace-ranks, --trace-npu, --trace-window and --trace-cores need --trace FILE.json or --view"))
	case clusterName != "" && f.traceCores != "" && f.traceNPU < 0:
		return badInput(errors.New("--trace-cores: on a cluster run it narrows --trace-npu's cores; give --trace-npu RANK"))
	case clusterName != "" && (f.trace != "" || f.view):
		hooks.ClusterTrace, err = newClusterTrace(f)
		if err != nil {
			return badInput(err)
		}
	}
	var rec *traces.Recorder
	if clusterName == "" {
		rec, err = newTraceRecorder(file, opts, f)
	} else if f.traceNPU >= 0 {
		rec, err = newNPURecorder(clusterName, file, opts, f)
		hooks.Observer, hooks.ObserveRank = rec, f.traceNPU
	}
	if err == nil && rec != nil {
		err = boundRecorder(rec, file, opts, f)
	}
	if err != nil {
		return badInput(err)
	}
	if rec != nil {
		hooks.Observer = rec
	}
	if f.view && clusterName == "" {
		return runWithView(stdout, stderr, file, opts, f, rec)
	}
	if f.view { // a cluster's view comes after the run: is there a terminal to show it on?
		if err := haveTerminal(); err != nil {
			return badInput(fmt.Errorf("--view needs a terminal: %w", err))
		}
	}
	ctx, stop := interruptible(context.Background())
	defer stop()
	if rec != nil && f.trace != "" {
		// A recording stopped at its cap (boundRecorder) stops the run:
		// finishRun refuses it.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		rec.OnCap(func(err error) { cancel(err) })
	}
	hooks.Context = ctx
	progress := !f.quiet && isTerminal(stderr)
	wallStart := time.Now()
	if progress {
		hooks.Meter = &programs.WorkMeter{}
		hooks.ProgressEvery = 1 << 20
		skips := f.fastForward && programs.FastForwardApplies(file, opts)
		hooks.Progress = func(now sim.Time, events uint64) {
			wall := time.Since(wallStart)
			fmt.Fprintf(stderr, "\r\033[K  %s", progressLine(hooks.Meter, now, events, wall, min(wall, time.Since(hooks.Meter.Started())), skips))
		}
	}
	res, err := programs.Execute(file, opts, hooks)
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	return finishRun(stdout, stderr, file, res, err, rec, hooks, f)
}

// quotedAsTyped returns err quoting each override of typed as typed —
// a file key's relative path (--set program.inputs.a=in/A.npy), its first
// — where it quotes it as resolved, the absolute path the command made of
// it, its second (the file's own errors name that path).
func quotedAsTyped(err error, typed [][2]machines.Override) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, t := range typed {
		msg = strings.ReplaceAll(msg, "--set "+t[1].String(), "--set "+t[0].String())
	}
	if msg == err.Error() {
		return err
	}
	return &renamedError{msg, err}
}

// finishRun prints and writes what a run that ended with res and err
// left: its report, its trace (rec, or hooks.ClusterTrace; the cluster's
// view), -o DIR. A run that failed with a result — a deadlock, whose
// report covers the run up to it — is written as one that completed, its
// trace closed at the deadlock; one that failed without a result writes
// its trace (what led to the failure) alone.
func finishRun(stdout, stderr io.Writer, file *programs.File, res *programs.Result, err error, rec *traces.Recorder, hooks programs.RunHooks, f runFlags) error {
	if rec != nil {
		if cerr := rec.Err(); cerr != nil { // (the trace is not written)
			return badInput(fmt.Errorf("--trace: %v: trace less with --trace-window or --trace-cores, or raise --max-memory", cerr))
		}
	}
	if err != nil {
		if badinput.Is(err) {
			return badInput(file.NamedOverride(err))
		}
		if ierr := interruptExit(err); ierr != nil {
			return ierr
		}
		if res == nil {
			if terr := finishTrace(stderr, rec, nil, f); terr != nil {
				fmt.Fprintln(stderr, "davinci-sim:", terr)
			}
			return failure(err)
		}
		// A deadlock: res.Failure is err, returned by writeResults.
	}
	noteImpliedNumerics(stderr, f, file, res)
	if hooks.ClusterTrace != nil {
		end := sim.Time(math.Round(res.Report.Time.Seconds * 1e12))
		noteLateWindow(stderr, f, end)
		if res.Failure != nil {
			hooks.ClusterTrace.Ending = viewEnding(res.Failure) // the trace's header says so; view shows it
		}
		if rec != nil {
			rec.Finish(end)
			hooks.ClusterTrace.AddTimeline(f.traceNPU, rec.Timeline())
		}
		var err error
		if f.trace != "" {
			err = writeClusterTrace(f.trace, hooks.ClusterTrace)
		}
		if err == nil && f.view {
			err = viewCluster(hooks.ClusterTrace)
		}
		return writeResults(stdout, stderr, res, f, err)
	}
	return writeResults(stdout, stderr, res, f, finishTrace(stderr, rec, res, f))
}

// writeResults writes -o DIR, then prints the summary or JSON report, and
// returns the first of: traceErr (writing --trace failed), the -o error,
// the run's failure (a failed check, a deadlock). An output that cannot be
// written never costs the printed result, nor a closed stdout (a pipe into
// head, whose SIGPIPE ends the process) the -o directory; other errors are
// printed on stderr.
func writeResults(stdout, stderr io.Writer, res *programs.Result, f runFlags, traceErr error) error {
	rep := res.Report
	var errs []error
	if traceErr != nil {
		errs = append(errs, traceErr)
	}
	if f.out != "" {
		if err := writeOutDir(f.out, rep, res.Outputs); err != nil {
			errs = append(errs, fmt.Errorf("writing -o %s: %w", f.out, err))
		} else {
			noteMissingArrays(stderr, f, res)
		}
	}
	if f.json {
		if err := rep.WriteJSON(stdout); err != nil {
			errs = append(errs, err)
		}
	} else {
		rep.WriteSummary(stdout)
	}
	if res.Failure != nil {
		errs = append(errs, res.Failure)
	}
	if len(errs) == 0 {
		return nil
	}
	for _, err := range errs[1:] {
		fmt.Fprintln(stderr, "davinci-sim:", err)
	}
	return failure(errs[0])
}

// writeClusterTrace writes a cluster run's timeline to path (.json or
// .json.gz).
func writeClusterTrace(path string, ct *traces.ClusterTrace) error {
	if err := outfile.WriteWith(path, func(tmp string) error { return traces.WriteClusterFile(tmp, ct) }); err != nil {
		return fmt.Errorf("writing trace: %w", err)
	}
	return nil
}

// viewCluster opens the terminal viewer on a finished cluster run's
// timeline: each rank a core, its tracks (host, NPU core sets, and the
// pipes of a --trace-npu drill-down) its lanes.
func viewCluster(ct *traces.ClusterTrace) error {
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		return err
	}
	tl, err := traces.ReadTrace(&buf)
	if err != nil {
		return fmt.Errorf("--view: %w", err)
	}
	tl.AskedFrom, tl.AskedTo = ct.From, ct.To // (to say what a window holding nothing of the run was)
	if len(tl.Cores) == 0 {
		return errors.New("--view: the run recorded nothing to show (see --trace-ranks and --trace-window)")
	}
	s, err := newScreen()
	if err != nil {
		return fmt.Errorf("--view needs a terminal: %w", err)
	}
	return viz.Run(s, viz.StaticSource(tl), viz.Options{})
}

// newClusterTrace returns the ranks' timeline to record for --trace of a
// cluster run, filtered by --trace-window and --trace-ranks.
func newClusterTrace(f runFlags) (*traces.ClusterTrace, error) {
	w, err := traceWindow(f)
	if err != nil {
		return nil, err
	}
	ct := &traces.ClusterTrace{From: w.From, To: w.To}
	if f.traceRanks != "" {
		only, err := traces.ParseIDs(f.traceRanks, "rank", maxRanks)
		if err != nil {
			return nil, fmt.Errorf("--trace-ranks: %v", err)
		}
		if f.traceNPU >= 0 && !only[f.traceNPU] {
			return nil, fmt.Errorf("--trace-npu %d: not among --trace-ranks %s (the drill-down is drawn in its rank's track)", f.traceNPU, f.traceRanks)
		}
		ct.Only = only
	}
	return ct, nil
}

// maxRanks bounds the ranks --trace-ranks may name: one per NPU of the
// largest cluster (cluster.MaxNodes nodes of at most 8 NPUs).
const maxRanks = cluster.MaxNodes * 8

// traceWindow returns what --trace-cores and --trace-window select.
func traceWindow(f runFlags) (traces.Window, error) {
	var w traces.Window
	if f.traceCores != "" {
		cores, err := traces.ParseCores(f.traceCores)
		if err != nil {
			return w, fmt.Errorf("--trace-cores: %v", err)
		}
		w.Cores = cores
	}
	if f.traceWindow != "" {
		from, to, err := traces.ParseWindow(f.traceWindow)
		if err != nil {
			return w, fmt.Errorf("--trace-window: %v", err)
		}
		w.From, w.To = from, to
	}
	return w, nil
}

// newNPURecorder returns the recorder of --trace-npu: one rank's NPU, core
// by core, in --trace-window and --trace-cores.
func newNPURecorder(clusterName string, file *programs.File, opts programs.Options, f runFlags) (*traces.Recorder, error) {
	w, err := traceWindow(f)
	if err != nil {
		return nil, err
	}
	m, err := programs.ClusterNPU(clusterName, opts)
	if err != nil {
		return nil, err
	}
	if c := slices.Max(append(slices.Collect(maps.Keys(w.Cores)), -1)); c >= m.Cores {
		return nil, fmt.Errorf("--trace-cores %s: core %d does not exist; machine %s has cores 0-%d", f.traceCores, c, m.Name, m.Cores-1)
	}
	rec := traces.NewRecorder(w)
	rec.SetInfo(m.Name, file.Kind.Name, m.Geometry())
	return rec, nil
}

// newTraceRecorder returns the event recorder for --trace/--view (nil when
// neither is asked for).
func newTraceRecorder(file *programs.File, opts programs.Options, f runFlags) (*traces.Recorder, error) {
	if f.trace == "" && !f.view {
		if f.traceCores != "" || f.traceWindow != "" {
			return nil, errors.New("--trace-cores and --trace-window need --trace or --view")
		}
		return nil, nil
	}
	if f.trace != "" {
		if err := traces.CheckTracePath(f.trace); err != nil {
			return nil, fmt.Errorf("--trace: %v", err)
		}
	}
	w, err := traceWindow(f)
	if err != nil {
		return nil, err
	}
	rec := traces.NewRecorder(w)
	m, err := programs.MachineFor(file, opts)
	if err != nil {
		return nil, err
	}
	if c := slices.Max(append(slices.Collect(maps.Keys(w.Cores)), -1)); c >= m.Cores {
		return nil, fmt.Errorf("--trace-cores %s: core %d does not exist; machine %s has cores 0-%d", f.traceCores, c, m.Name, m.Cores-1)
	}
	rec.SetInfo(m.Name, file.Kind.Name, m.Geometry())
	if f.view && f.trace == "" {
		rec.SetFlagMarks(false) // the terminal view draws no flag marks or arrows (a third of the observer calls)
	}
	return rec, nil
}

// boundRecorder bounds the memory rec may hold to what the run's bound on
// its host memory (--max-memory, or its default) leaves beside the run's
// own estimate (programs.HostBytes: its base, data and chip models, the
// sum the run itself is refused by): a trace to write stops at it (the
// run stops, and is refused: finishRun); a live view without --trace
// keeps the most recent events within it, and within
// traces.DefaultLiveLimit. Where the estimate leaves nothing, the run is
// refused before it starts.
func boundRecorder(rec *traces.Recorder, file *programs.File, opts programs.Options, f runFlags) error {
	bound := opts.MaxHostBytes
	if bound <= 0 {
		bound = programs.DefaultMaxHostBytes()
	}
	run, _ := programs.HostBytes(file, opts) // (0: a kind without an estimate)
	left := bound - run
	flag := "--trace"
	if f.trace == "" {
		flag = "--view"
	}
	room := fmt.Sprintf("what --max-memory %s leaves beside the run's estimate of %s", mib(bound), mib(run))
	if f.maxMemory == "" {
		room = fmt.Sprintf("what the default --max-memory, %s, leaves beside the run's estimate of %s", mib(bound), mib(run))
	}
	if left <= 0 {
		return fmt.Errorf("%s: the run's estimate, %s of host memory, takes all of --max-memory %s: nothing is left for the trace's events; raise --max-memory", flag, mib(run), mib(bound))
	}
	if f.trace == "" {
		rec.SetLimit(min(traces.DefaultLiveLimit, left)) // live only: keep the most recent events of long runs
		return nil
	}
	rec.SetCap(left, room)
	return nil
}

// mib writes b bytes in MiB, to a tenth where not whole (GiB from 10 GiB).
func mib(b int64) string {
	switch {
	case b >= 10<<30:
		return fmt.Sprintf("%.1fGiB", float64(b)/(1<<30))
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", b>>20)
	}
	return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20))
}

// finishTrace closes the recorded timeline and writes --trace (warning on
// stderr first when it is too large for a viewer).
func finishTrace(stderr io.Writer, rec *traces.Recorder, res *programs.Result, f runFlags) error {
	if rec == nil {
		return nil
	}
	end := sim.Time(0)
	if res != nil && res.Stats != nil {
		end = res.Stats.Time
	}
	if res != nil && res.Failure != nil && rec.Timeline().Ending == "" { // (the live view's set it already)
		rec.SetEnding(viewEnding(res.Failure)) // the trace's header says so; view shows it
	}
	rec.Finish(end)
	if res != nil {
		noteLateWindow(stderr, f, end)
	}
	if f.traceCores != "" && traces.NoCoreEvents(rec.Timeline()) {
		idle := ""
		if ids := traces.IdleCores(rec.Timeline()); len(ids) > 0 {
			idle = fmt.Sprintf("; %s only waited at barriers", traces.FormatCores(ids))
		}
		fmt.Fprintf(stderr, "davinci-sim: warning: --trace-cores %s: none of these cores did anything in the traced window (ran no instruction: on a GPU, an SM that ran no block%s): the trace holds no core events\n", f.traceCores, idle)
	}
	if f.trace == "" {
		return nil
	}
	if w := traces.SizeWarning(f.trace, rec.Timeline()); w != "" {
		fmt.Fprintln(stderr, "davinci-sim:", w)
	}
	err := outfile.WriteWith(f.trace, func(tmp string) error { return traces.WriteTraceFile(tmp, rec.Timeline()) })
	if err != nil {
		return fmt.Errorf("writing trace: %w", err)
	}
	return nil
}

// noteLateWindow says so when --trace-window starts after the run ended
// at end: the trace holds nothing of it.
func noteLateWindow(stderr io.Writer, f runFlags, end sim.Time) {
	if f.traceWindow == "" {
		return
	}
	if w, err := traceWindow(f); err == nil && w.From >= end {
		fmt.Fprintf(stderr, "davinci-sim: note: --trace-window %s starts after the run ended (at %v): nothing of the run is in it\n", f.traceWindow, end)
	}
}

// noteImpliedNumerics says what --fidelity isolated or sampled, which
// imply numerics off when --numerics is not given, left unused of the
// program's own settings — its numerics (full or sampled) and its check,
// given in the file or by --set — in the report's notes and on stderr.
// (Given together in the file, fidelity sampled and numerics full are
// refused: the flag is the one that implies.)
func noteImpliedNumerics(stderr io.Writer, f runFlags, file *programs.File, res *programs.Result) {
	if f.numerics != "" || (f.fidelity != "isolated" && f.fidelity != "sampled") {
		return
	}
	v := file.Config.Viper() // as the run decoded it, with the --set overrides
	n, _ := v.Get("numerics").(string)
	if n == programs.NumericsOff {
		return // the program's own choice: the flag turned nothing off
	}
	var unused []string
	if n != "" {
		unused = append(unused, "numerics: "+n)
	}
	if c, _ := v.Get("check").(bool); c {
		unused = append(unused, "check: true")
	}
	if len(unused) == 0 {
		return
	}
	verb := "is"
	if len(unused) > 1 {
		verb = "are"
	}
	note := fmt.Sprintf("--fidelity %s runs with numerics off (kernels timed apart compute no values): the program's %s %s not used", f.fidelity, strings.Join(unused, " and "), verb)
	res.Report.Notes = append(res.Report.Notes, note)
	if f.json { // (the summary lists the report's notes)
		fmt.Fprintln(stderr, "davinci-sim: note:", note)
	}
}

// progressLine is the TTY progress of a run: the issued share of the
// program's work (programs.WorkMeter) and the time left at the rate of the
// run metered so far (own: the wall time since the meter was given it, not
// that of the runs a scheme auto made before it), when the
// program's size is known (see programs.WorkMeter), then simulated time,
// events and wall time. Where fast-forward may skip (skips), the time left
// is at most that: "ETA ≤ 15s (fast-forward)" — a skip takes the share
// done to where the skipped blocks end at once (T4 Markidis 8192³: ETA
// 15 s at 7.5 s, 33 %, then 90 % at 9.1 s and done at 10.9 s).
func progressLine(m *programs.WorkMeter, now sim.Time, events uint64, wall, own time.Duration, skips bool) string {
	line := fmt.Sprintf("simulated %v, %d events, %.1f s wall", now, events, wall.Seconds())
	frac, ok := m.Fraction()
	if !ok {
		if m != nil && m.Stage() != "" {
			// (what the run does before its work can be metered: a
			// cluster's sampled kernels simulated before it starts)
			return m.Stage() + "; " + line
		}
		return line
	}
	pct := fmt.Sprintf("%5.1f %% of %s", 100*frac, m.Of())
	if frac >= 0.01 && own > time.Second {
		left := time.Duration(float64(own) * (1 - frac) / frac).Round(time.Second)
		if skips && frac < 1 {
			pct += fmt.Sprintf(", ETA ≤ %v (fast-forward)", left)
		} else {
			pct += fmt.Sprintf(", ETA %v", left)
		}
	}
	if s := m.Stage(); s != "" {
		pct = s + ": " + pct
	}
	return pct + "; " + line
}

func isTerminal(w io.Writer) bool {
	if f, ok := w.(*os.File); ok {
		return term.IsTerminal(int(f.Fd()))
	}
	return false
}

// intOrNone is the value of an int flag whose default, -1, stands for
// none: an IntVar's help printed it as "(default -1)", a placeholder
// that means nothing to the user; this one's default prints as nothing
// (its help says "(default: none)"). It parses as an IntVar does.
type intOrNone struct{ v *int }

func (f intOrNone) Type() string { return "int" }

func (f intOrNone) String() string {
	if f.v == nil || *f.v == -1 {
		return ""
	}
	return strconv.Itoa(*f.v)
}

func (f intOrNone) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return err
	}
	if n < 0 {
		// (-1 is the flag's "none": given, it was taken silently.)
		return fmt.Errorf("a rank (0 … NPUs − 1), not %d", n)
	}
	*f.v = int(n)
	return nil
}

func newProgramsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "programs",
		Short: "List program kinds with their example files",
		Long: `List the program kinds (the values of a program file's kind key), each with
what it runs and, below it, the example file built into the binary:
programs/examples/NAME.yaml runs from any directory (a file of that path, if
there is one, wins), e.g. davinci-sim run programs/examples/hgemm.yaml.
"davinci-sim formats" lists each kind's keys.

Exit codes: 0 success; 2 bad input (an argument: it takes none).`,
		Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			w := cmd.OutOrStdout()
			width := 0 // the longest name's
			for _, k := range programs.Kinds() {
				width = max(width, len(k.Name))
			}
			for _, k := range programs.Kinds() {
				fmt.Fprintf(w, "%-*s  %s\n", width, k.Name, k.Summary)
				if k.Example != "" {
					fmt.Fprintf(w, "%-*s  example: programs/examples/%s\n", width, "", k.Example)
				}
			}
		},
	}
}

// appliesWhere reports whether a speed-up option applies where file runs
// (applies: arch.FastForwardSkips, programs.KBatchApplies on the run's
// machine); true where the machine cannot be loaded — the run says why.
func appliesWhere(file *programs.File, opts programs.Options, applies func(*machines.Machine) bool) bool {
	m, err := programs.MachineFor(file, opts)
	return err != nil || applies(m)
}
