package programs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
	"github.com/davinci-sim/davinci-sim/version"
)

// badInput marks errors caused by the program file, its parameters or the
// machine (exit code 2).
func badInput(err error) error { return badinput.Wrap(err) }

// Result is what one run produces.
type Result struct {
	Report  *report.Report
	Outputs []Output
	Stats   *arch.Stats
	// Failure is set when the run completed but a check failed (the report
	// is still complete; it wraps ErrCheckFailed), or when it deadlocked
	// (a *sim.DeadlockError, which Execute also returns: the report covers
	// the run up to the deadlock). Report.Failure describes it.
	Failure error
	// run is the simulation, kept where RunHooks.keep asked.
	run *simulation
}

// RunHooks are optional observers of a run, and what it may take from its
// caller instead of making (Machines).
type RunHooks struct {
	Observer      arch.Observer
	Progress      func(now sim.Time, events uint64)
	ProgressEvery uint64
	// Context, when not nil, stops the run soon after it is done (an
	// interrupt, a time limit): Execute returns an error wrapping
	// context.Cause. It is checked every 4096 events (cancelEveryTiming;
	// a cluster's run: CancelEvery).
	Context context.Context
	// Meter, when not nil, is set up to measure the run's progress (read
	// it from Progress); see WorkMeter.
	Meter *WorkMeter
	// ClusterTrace, when not nil, receives the ranks' timeline of a run on
	// a cluster or node description (--trace of such a run).
	ClusterTrace *traces.ClusterTrace
	// ObserveRank is the rank whose NPU Observer watches in a cluster run
	// (fidelity full: the drill-down into one NPU's cores).
	ObserveRank int
	// Machines, when not nil, keeps the machines runs on one chip load,
	// for the runs after them: Execute takes the run's machine from it
	// where it holds it, and gives it the machine it loads otherwise. A
	// study's probes of its points (sweep), thousands of them on a few
	// machines, each loaded its machine again: 65–80 % of a probe. Runs
	// on a cluster or node description, and the runs a build makes for
	// its own purposes (scheme auto's), load theirs.
	Machines MachineCache
	// stage says what a run a build makes is for, on the progress line
	// (subRun); "" for the run itself.
	stage string
	// runsBefore counts the runs the build made (executeAgain) and the
	// wall time they took (report: sim.runs_before).
	runsBefore     int
	runsBeforeWall time.Duration
	// keep asks Execute to keep the run's simulation in its Result
	// (Result.run), for a build to hand back as reuse.
	keep bool
	// reuse, set by the build, is the simulation the build made already
	// (scheme auto's chosen candidate's timing run): Execute reports from
	// it instead of simulating again, where the job's mode is timing
	// (numerics off or sampled: the same simulation) and no observer
	// watches.
	reuse *simulation
}

// MachineCache keeps loaded machines for runs after the one that loaded
// them (RunHooks.Machines). The machines it holds and returns are shared
// by the runs that take them: no run modifies its machine (Execute on one
// chip reads it only), and neither may the cache or its owner.
type MachineCache interface {
	// Machine returns the machine machines.Load(ref, overrides) returned
	// before, as Loaded recorded it, or nil where the cache has none: the
	// one machine Load returns for these — the same file, with the same
	// text, and overrides (Load reads those whose path starts with
	// "machine." only).
	Machine(ref string, overrides []machines.Override) *machines.Machine
	// Loaded records m, the machine machines.Load(ref, overrides)
	// returned (a run's, which MachineFor loaded).
	Loaded(ref string, overrides []machines.Override, m *machines.Machine)
}

// machineFor is MachineFor(f, opts), taken from h.Machines where it holds
// the run's machine, and recorded there where it does not.
func (h RunHooks) machineFor(f *File, opts Options) (*machines.Machine, error) {
	if h.Machines == nil {
		return MachineFor(f, opts)
	}
	ref := machineRef(f, opts)
	if m := h.Machines.Machine(ref, opts.Overrides); m != nil {
		if opts.Machine != "" {
			f.runMachine = opts.Machine // (as MachineFor records it)
		}
		return m, nil
	}
	m, err := MachineFor(f, opts)
	if err == nil {
		h.Machines.Loaded(ref, opts.Overrides, m)
	}
	return m, err
}

// executeAgain is Execute of a fresh copy of f (File.again): for the runs
// a build makes for its own purposes, whose overrides must not stay in
// the file the build and its other runs read.
func executeAgain(f *File, opts Options, hooks RunHooks) (*Result, error) {
	res, took, err := runAgain(f, opts, hooks)
	opts.countRuns(1, took)
	return res, err
}

// runAgain is executeAgain but for the count: for runs a build makes at
// once, on several goroutines (countRuns, when all are done).
func runAgain(f *File, opts Options, hooks RunHooks) (*Result, time.Duration, error) {
	g, err := f.Again()
	if err != nil {
		return nil, 0, badInput(err)
	}
	g.given = opts.given
	start := time.Now()
	res, err := Execute(g, opts, hooks)
	took := time.Since(start)
	if res != nil && res.run != nil {
		res.run.took = took
	}
	return res, took, err
}

// countRuns adds runs that took wall time took to the runs the build of
// o's program made before it (report: sim.runs_before).
func (o Options) countRuns(runs int, took time.Duration) {
	if p := o.run; p != nil {
		p.runsBefore += runs
		p.runsBeforeWall += took
	}
}

// subRun returns the hooks for a run the build of o's program makes for
// its own purposes (scheme auto's candidates): the building run's Context,
// so that an interrupt stops it too, and, given what it is for (stage),
// the building run's progress line, which says so; measuring runs too
// short to show progress pass "".
func (o Options) subRun(stage string) RunHooks {
	if o.run == nil {
		return RunHooks{}
	}
	h := RunHooks{Context: o.run.Context}
	if stage != "" && o.run.Meter != nil && o.run.Progress != nil {
		h.Meter, h.Progress, h.ProgressEvery, h.stage = o.run.Meter, o.run.Progress, o.run.ProgressEvery, stage
	}
	return h
}

// runContext is embedded by jobs with long work outside the event loop (a
// golden model, the refinement of a solution): Execute gives them
// RunHooks.Context, and that work checks it, so that an interrupted run
// stops there too.
type runContext struct{ ctx context.Context }

// setContext sets the run's context.
func (r *runContext) setContext(ctx context.Context) { r.ctx = ctx }

// stop returns a check of the run's context for the job's work outside
// the event loop, Finish's numerics (nil without one: DaVinci's shim of
// an Ozaki job).
func (r *runContext) stop() func() bool { return stopOf(r.ctx) }

// stoppedNumerics is the error of numerics the run's context stopped.
func (r *runContext) stoppedNumerics() error {
	return stopped(r.runCtx(), "computing the numerics")
}

// runCtx returns the run's context (Background when none was set).
func (r *runContext) runCtx() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// stopped returns the error of work (what) stopped by ctx, or nil (also
// without a context).
func stopped(ctx context.Context, what string) error {
	if ctx == nil || ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("stopped %s: %w", what, context.Cause(ctx))
}

// stop returns a check of the building run's context for the long work a
// build does itself (nil without a context to check): true once the run
// was interrupted.
func (o Options) stop() func() bool {
	if o.run == nil {
		return nil
	}
	return stopOf(o.run.Context)
}

// stopOf returns a check of ctx (nil for a context that is never done, or
// none): true once it is done.
func stopOf(ctx context.Context) func() bool {
	if ctx == nil || ctx.Done() == nil {
		return nil
	}
	return func() bool { return ctx.Err() != nil }
}

// stoppedBuilding returns the building run's interruption as an error
// naming the program file at path and what it stopped (nil when the run
// was not interrupted).
func (o Options) stoppedBuilding(path, what string) error {
	if o.run == nil {
		return nil
	}
	if err := stopped(o.run.Context, what); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// interruptOr returns err where it is the building run's interruption
// (stoppedBuilding's), else other (err as bad input).
func (o Options) interruptOr(err, other error) error {
	if o.run != nil && o.run.Context != nil && o.run.Context.Err() != nil && errors.Is(err, context.Cause(o.run.Context)) {
		return err
	}
	return other
}

// giveContext hands the run's context to a job that checks it.
func giveContext(job any, ctx context.Context) {
	if c, ok := job.(interface{ setContext(context.Context) }); ok && ctx != nil {
		c.setContext(ctx)
	}
}

// CancelEvery is how often (in events) a run on a cluster checks
// RunHooks.Context and tells its progress (lu_cluster.go): a few
// milliseconds of simulation. A run on one chip checks every
// cancelEveryTiming events.
const CancelEvery = 1 << 16

// cancelEveryTiming is how often (in events) a run on one chip checks
// RunHooks.Context: a non-blocking receive from its Done channel, a few
// nanoseconds every 4096 events (~0.1 µs each). At CancelEvery a heavy
// run's first check came 1–2.4 s into it under load.
const cancelEveryTiming = 1 << 12

// cancelEveryFunctional is cancelEveryTiming for functional runs, whose
// events compute data (a bit-accurate MMA of a whole tile can take
// milliseconds: at CancelEvery an interrupt or a sweep's point time limit
// waited minutes).
const cancelEveryFunctional = 1 << 4

// progress returns the engine progress callback and its period for hooks:
// the caller's — in a functional run at least every functionalProgressWall
// too, and never more often than its ProgressEvery events — plus the
// context check (every cancelEveryTiming events, or cancelEveryFunctional
// in a functional run); chip is set once it exists.
func (h RunHooks) progress(chip **arch.Chip, mode arch.Mode) (func(sim.Time, uint64), uint64) {
	ctx := h.Context
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	user, every := h.Progress, h.ProgressEvery
	if done == nil && (user == nil || mode != arch.Functional) {
		return user, every
	}
	period := uint64(cancelEveryTiming)
	if mode == arch.Functional {
		period = cancelEveryFunctional
	}
	if user != nil && every == 0 {
		every = 1 << 20 // arch.Options' default
	}
	next, last := every, time.Now()
	return func(now sim.Time, events uint64) {
		select {
		case <-done: // (nil without a context: never)
			(*chip).Fail(fmt.Errorf("stopped after %v of simulated time: %w", now, context.Cause(ctx)))
			return
		default:
		}
		if user == nil {
			return
		}
		// A functional run's events compute data: far fewer of them a
		// second, so its progress is also told by the wall clock (a
		// 1024³ emulated GEMM, 49 k events in 5 s, showed none).
		if events >= next || mode == arch.Functional && time.Since(last) >= functionalProgressWall {
			for next <= events {
				next += every
			}
			last = time.Now()
			user(now, events)
		}
	}, period
}

// functionalProgressWall is how often a functional run tells its progress
// at least (RunHooks.Progress), however few its events.
var functionalProgressWall = 250 * time.Millisecond

// Execute runs a program file with the given options: it loads the machine,
// builds the job, runs it and fills the report. Errors are marked bad input (package badinput) for
// bad input; a deadlock is a *sim.DeadlockError, returned (on one chip
// or a cluster) with a Result too: the report of the run up to the deadlock, whose
// Failure describes it (see deadlockResult); other errors are simulation
// failures, returned with a nil Result.
func Execute(f *File, opts Options, hooks RunHooks) (res *Result, err error) {
	opts.run = &hooks
	// The run's one estimate of its host memory, for all its checks (a
	// run a build makes has its own).
	opts.est = newRunEstimates(f, opts)
	f.runNumerics, f.runNumericsFrom = opts.Numerics, opts.NumericsFrom // (a refusal of key numerics is the run's: NamedOverrideBy)
	f.runOverrides = opts.Overrides                                     // (and of a limit a machine.* --set gave)
	if err := f.Kind.checkKindKept(opts); err != nil {                  // one chip or many
		return nil, badInput(err)
	}
	if err := f.Kind.checkOptions(f, opts); err != nil {
		return nil, badInput(err)
	}
	if name := ClusterMachine(f, opts); name != "" {
		if err := checkClusterOverrides(opts.Overrides); err != nil {
			return nil, badInput(err)
		}
		return executeCluster(f, name, opts, hooks)
	}
	if err := CheckOverrides(opts.Overrides); err != nil {
		return nil, badInput(err)
	}
	for _, o := range opts.Overrides {
		if p := strings.ToLower(o.Path); strings.HasPrefix(p, "node.") || strings.HasPrefix(p, "cluster.") {
			return nil, badInput(fmt.Errorf("--set %s: node.* and cluster.* keys apply to runs on a cluster or node description (-m cloudbrain2-node, -m cloudbrain2)", o))
		}
	}
	m, err := hooks.machineFor(f, opts)
	if err != nil {
		return nil, badInput(err)
	}
	opts.machine = m
	noBatch, err := checkKBatch(f, m, opts)
	if err != nil {
		return nil, badInput(err)
	}
	if opts.FastForward != nil {
		if none := fastForwardNone(f, m); none != "" {
			opts.FastForward = nil // (simulated in full, as without it)
			defer func() {
				if res != nil && res.Report != nil {
					res.Report.Notes = append(res.Report.Notes, none)
				}
			}()
		}
	}
	defer func() { // what a timing-only run does not use, said (a study may give it to every point)
		if res == nil || res.Report == nil || res.Report.Program["numerics"] != NumericsOff {
			return
		}
		if _, auto := res.Report.Program["auto"]; opts.Seed != nil && !auto { // (scheme auto's accuracy sample is drawn)
			res.Report.Notes = append(res.Report.Notes, fmt.Sprintf("--seed %d: not used (numerics off draws no inputs)", *opts.Seed))
		}
		if f.keyGiven("sample_tiles") {
			res.Report.Notes = append(res.Report.Notes, "sample_tiles applies to numerics sampled: not used (numerics off computes no tile)")
		}
		if f.keyGiven("baselines") {
			res.Report.Notes = append(res.Report.Notes, "baselines applies to numerics sampled or full: not used (numerics off computes no error)")
		}
	}()
	if noBatch != "" {
		opts.KBatch = 1
		defer func() {
			if res != nil && res.Report != nil {
				res.Report.Notes = append(res.Report.Notes, noBatch)
			}
		}()
	}
	oneNPU := f.Kind.BuildCluster != nil && m.DaVinci() != nil && m.HasHost()
	if opts.Fidelity != "" && opts.Fidelity != "full" {
		if !oneNPU {
			return nil, badInput(fmt.Errorf("--fidelity %s: applies to lu-fused on NPUs (a cluster or node description, or one DaVinci chip with a host, run as a node of one NPU); %s on %s is simulated in full", opts.Fidelity, f.Kind.Name, m.Name))
		}
		return executeOneNPU(f, machineRef(f, opts), m, opts, hooks)
	}
	if fid := FileFidelity(f, opts); opts.Fidelity == "" && oneNPU && fid != "" && fid != "full" {
		// The file's fidelity (or --set program.fidelity), as --fidelity
		// (which, given, wins: --fidelity full runs the chip in full).
		return executeOneNPU(f, machineRef(f, opts), m, opts, hooks)
	}
	job, err := f.Kind.BuildFor(f, m, opts)
	if err != nil {
		// Interrupted while building (scheme auto's runs, Ozaki's plan,
		// the split), else bad input.
		return nil, opts.interruptOr(err, badInput(err))
	}
	giveContext(job, hooks.Context)
	if opts.KBatch > 1 {
		switch {
		case job.Mode() == arch.Functional:
			return nil, badInput(fmt.Errorf("--k-batch %d: timing only (numerics off or sampled): a batch of k-steps moves no data as the kernel does", opts.KBatch))
		case hooks.Observer != nil:
			return nil, badInput(KBatchObservedError(opts.KBatch))
		}
	}
	// Work that does not depend on the simulation (sampled numerics) runs
	// beside it, until the run is done or fails.
	var stop atomic.Bool
	defer stop.Store(true)
	if ctx := hooks.Context; ctx != nil {
		defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	}
	var run *simulation
	if r := hooks.reuse; r != nil && r.mode == job.Mode() && job.Mode() == arch.Timing && hooks.Observer == nil {
		// The build made this very simulation already (scheme auto's
		// chosen candidate, timing only): it is the run's, not one of the
		// runs before it; sampled numerics' golden tiles are the job's
		// own work.
		run = r
		hooks.runsBefore--
		hooks.runsBeforeWall -= r.took
		if hooks.Meter != nil {
			hooks.Meter.chip = r.chip
			prog := job.Program()
			hooks.startMeter(&prog)
		}
		if b, ok := job.(besideRun); ok {
			b.startBeside(r.chip.Cube(), &stop)
		}
	} else {
		hooks.reuse = nil // (not this run's simulation: its chip need not stay)
		if run, err = simulate(f, m, opts, hooks, job, &stop); err != nil {
			return nil, err
		}
	}
	chip, st, prog, discarded := run.chip, run.st, run.prog, run.discarded
	opts.FastForward = run.ff
	wall := run.wall
	if err := run.err; err != nil {
		var ce *isa.CheckError
		if errors.As(err, &ce) {
			return nil, badInput(err) // (names the file and line)
		}
		var fe *arch.FootprintError
		if errors.As(err, &fe) {
			return nil, badInput(err) // (a kernel's data above the run's bound)
		}
		if errors.Is(err, sim.ErrTimeOverflow) {
			// A cost too large to simulate is the input's. A written
			// program's is named by its file (the core's fault names core
			// and line); the others' name the key of the cost.
			if f.Kind.Written {
				err = fmt.Errorf("%s (asm): %w", f.Path, err)
			}
			return nil, badInput(err)
		}
		var dl *sim.DeadlockError
		if errors.As(err, &dl) {
			return deadlockResult(f, chip, m, opts, prog, job.Mode(), st, dl, wall, discarded)
		}
		return nil, err
	}
	rep, err := simReport(chip, m, opts, prog, job.Mode(), st, wall, discarded)
	if err != nil {
		return nil, err
	}
	kernels := chip.Kernels(st.Time)
	rep.SetKernels(kernels)
	if k, ok := hooks.Observer.(arch.KernelObserver); ok {
		k.SetKernels(kernels) // a trace's kernels track
	}
	if run == hooks.reuse {
		rep.Notes = append(rep.Notes, "this run is the timing run scheme auto made of its choice, kept, not made again (the same simulation: numerics off or sampled, unobserved); its wall time is that run's")
	}
	res = &Result{Report: rep, Stats: st}
	ferr := job.Finish(chip, st, rep)
	if err := stopped(hooks.Context, "after the simulation, computing its numerics"); err != nil {
		return nil, err // a result cut short (Finish's numerics, a refinement)
	}
	if ferr != nil {
		if !errors.Is(ferr, ErrCheckFailed) {
			return nil, ferr
		}
		res.Failure = ferr
		rep.Failure = &report.Failure{Kind: report.FailureCheck, Message: ferr.Error(), Seconds: st.Time.Seconds(), Cycles: st.Cycles}
	}
	// (the job's build decoded the file with the --set overrides applied)
	check, _ := f.Config.Viper().Get("check").(bool)
	if f.Kind.HasKey("check") && rep.Program != nil {
		rep.Program["check"] = check // what was asked; what came of it is in the notes or failure
	}
	if check && job.Mode() != arch.Functional {
		rep.Notes = append(rep.Notes, checkNotMade)
	}
	if opts.KBatch > 1 {
		if kb, ok := job.(kBatchedJob); ok && kb.kBatched() {
			rep.Sim.KBatch = opts.KBatch
			rep.Notes = append(rep.Notes, fmt.Sprintf("k-batch %d: SIMT GEMM kernels (FMAs on the vector units) simulated up to %d of their k-steps as one — copies, fragment loads and FMA runs as deep, ramping at the ends of the k-loop, occupancy and resources the kernel's (program.tiling.k_batch: how many) — approximate: %s; the time is what was checked, the memory and pipe counts (L2 hits, HBM bytes, instructions) are the batched stream's (docs/design-notes.md, \"Batched k-steps\")", opts.KBatch, opts.KBatch, kBatchMeasured))
		} else {
			rep.Notes = append(rep.Notes, fmt.Sprintf("k-batch %d: no SIMT GEMM kernel in this run (tensor-core kernels are never batched): every k-step was simulated", opts.KBatch))
		}
	}
	for _, s := range st.FastForward {
		rep.Notes = append(rep.Notes, fastForwardNote(s))
	}
	for _, k := range st.FastForwardKernels {
		if k.FromCTA > 0 {
			like, work := "as many blocks, the same resources and instructions but for addresses", ""
			if k.OwnWork {
				like = "as many blocks, the same resources, and the same instructions but for addresses through its main loop: its epilogue differs"
				work = ", with the work of its own blocks (those not simulated: its prefix's last wave's of their class) and the L2, LLC and HBM reads of that rest scaled to its own reads"
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("fast-forward: kernel %s: its blocks from %d on were not simulated: its first waves took the time of kernel %s's before it, which it is like (%s), and its rest stands for that kernel's rest (%.6g s more, ~%d events)%s; approximate: the caches the skipped blocks would have filled are as its first waves left them",
				k.Grid, k.FromCTA, k.Like, like, k.Shift.Seconds(), k.Events, work))
			continue
		}
		which := "before it"
		if k.Index-k.LikeIndex == 2 {
			which = "two before it (the kernels before it alternate: the one three before agreed with the one before)"
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("fast-forward: kernel %s was not simulated: it stands for kernel %s %s (%.6g s, ~%d events), which it is like — as many blocks, the same resources and instructions but for addresses —, the two kernels before it having taken the same time within %.3g %%; approximate: the caches it would have filled are as the kernel before it left them",
			k.Grid, k.Like, which, k.Shift.Seconds(), k.Events, 100*float64(k.Spread)/float64(max(k.Shift, 1))))
	}
	back := st.FastForwardTakenBack
	if skipped, unc := fastForwardUncertainty(st.FastForward, st.FastForwardSteps, st.FastForwardKernels, back); skipped > 0 {
		rep.Sim.SkippedSeconds, rep.Sim.SkipUncertaintySeconds = skipped.Seconds(), unc.Seconds()
		rep.Sim.SkippedGMReadBytes = st.SkippedGMReadBytes
		rep.Notes = append(rep.Notes, skipUncertaintyNote(len(st.FastForward) > 0, len(st.FastForwardSteps) > 0, len(st.FastForwardKernels) > 0, len(back), skipped, unc, st.Time)+
			skippedBytesNote(st.SkippedGMReadBytes, st.GMReadBytes, st.Traffic.HBMRead))
	} else if len(back) > 0 {
		rep.Sim.SkipUncertaintySeconds = unc.Seconds()
		rep.Notes = append(rep.Notes, fmt.Sprintf("fast-forward: every block was simulated, but those of the %d %s taken back after a failed check ran after the blocks its check had run ahead of them, not in the hardware's order; had that moved the time by half a wave at each, the run's time would be within ±%.3g s (%.2g %%) of the full simulation's — an estimate, not a bound",
			len(back), plural(len(back), "skip", "skips"), unc.Seconds(), 100*unc.Seconds()/st.Time.Seconds()))
	}
	for _, s := range st.FastForwardTakenBack {
		rep.Notes = append(rep.Notes, fastForwardNote(s)+"; "+takenBackText(s))
	}
	if n := stepSkipsNote(st.FastForwardSteps); n != "" {
		rep.Notes = append(rep.Notes, n)
	}
	for _, s := range run.stepsFailed {
		rep.Notes = append(rep.Notes, fmt.Sprintf("fast-forward: CHECK FAILED: kernel %s: after a step skip (%d steps of %d blocks, %.4g µs each), the steps took %.4g µs; so the run was made again with %s",
			s.Grid, s.Steps, s.CTAs, s.Period.Seconds()*1e6, s.CheckPeriod.Seconds()*1e6, s.again))
	}
	for _, d := range st.FastForwardDeclined {
		rep.Notes = append(rep.Notes, fmt.Sprintf("fast-forward: kernel %s: its waves repeated but were simulated: a skip at %.6g s would have stood for ~%d events, under %.3g %% of the %d simulated before it (a failed check makes the whole run simulated again)",
			d.Grid, d.At.Seconds(), d.Events, 100*opts.FastForward.MinGain, d.SoFar))
	}
	for _, w := range st.StepWaits {
		if n := stepWaitNote(w, *opts.FastForward); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
	}
	for _, w := range st.FastForwardWaits {
		if n := fastForwardWaitNote(w, *opts.FastForward); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
	}
	switch {
	case opts.FastForward == nil || len(st.FastForward) > 0 || len(st.FastForwardTakenBack) > 0 || len(st.FastForwardDeclined) > 0 || len(st.FastForwardSteps) > 0 || len(run.stepsFailed) > 0 || len(st.FastForwardKernels) > 0:
	case len(prog.Grids) == 0:
		rep.Notes = append(rep.Notes, noGridsToSkip)
	default:
		rep.Notes = append(rep.Notes, "fast-forward: no kernel reached repeating waves (durations, stall mix and cache hit rates within the tolerances); every block was simulated")
	}
	rep.Memory.SetHBMIntensity()
	rep.SetEnergy(st, &m.Power)
	res.Outputs = job.Outputs()
	if hooks.keep {
		res.run = run
	}
	return res, nil
}

// simulation is a job's simulated run, what Execute reports from (and what
// a build that made the run already hands it: RunHooks.reuse).
type simulation struct {
	chip *arch.Chip
	st   *arch.Stats
	err  error // the run's (a deadlock, a cost too large to simulate…)
	prog isa.Program
	mode arch.Mode
	// ff is the fast-forward options of the last run made (after failed
	// checks, with their exclusions).
	ff          *arch.FastForward
	stepsFailed []failedStep
	discarded   discardedRuns
	wall        float64 // seconds, the runs made again included
	// took is the wall time of the run a build made it in (runAgain: its
	// build and report included), counted among the runs before a run
	// that reports it (RunHooks.reuse), which takes it off again.
	took time.Duration
}

// failedStep is a step skip whose check failed, and what the run made
// again changed.
type failedStep struct {
	arch.StepSkip
	again string
}

// startMeter gives the run of prog (on the meter's chip) to the meter,
// if any, and draws its first progress line.
func (h RunHooks) startMeter(prog *isa.Program) {
	if h.Meter == nil {
		return
	}
	h.Meter.begin(h.stage)
	if prog.Generated { // hand-written streams may not be re-iterable
		h.Meter.attach(prog)
	}
	if h.Progress != nil {
		// A line at once, in place of the last one of a run before it
		// (scheme auto's, whose last line would stay up through runs too
		// short to draw their own).
		h.Progress(0, 0)
	}
}

// simulate runs job on a new chip of machine m, again after each failed
// fast-forward check; stop, set, stops the job's work beside the
// simulation. Its error is the setup's (bad input, an interrupt) or giving
// up after more failed checks than maxRunsAgain allows; the run's own is
// the simulation's err.
func simulate(f *File, m *machines.Machine, opts Options, hooks RunHooks, job Job, stop *atomic.Bool) (*simulation, error) {
	var chip *arch.Chip
	progress, every := hooks.progress(&chip, job.Mode())
	// Fast-forward skips waves of kernel grids: where it can skip nothing
	// (a DaVinci chip, a host program) Execute has dropped it and notes
	// why (fastForwardNone).
	chipFF := func() *arch.FastForward {
		if !arch.FastForwardSkips(m) {
			return nil
		}
		return opts.FastForward // (with the exclusions of failed checks)
	}
	// The chip's caches' where indexes cover the span of GM the program's
	// tensors occupy (gmSpanOf; 0: the whole memory), as HostBytes counts.
	span := gmSpanOf(f, opts, m)
	// The chip model gets what the run's bound leaves beside its base and
	// data, as HostBytes sums them (modelRoom).
	beside := besideModels(f, opts)
	// newChip makes the run's chip (again after a failed fast-forward
	// check), prepares it and gives it to the meter.
	newChip := func() error {
		var err error
		o := arch.Options{Mode: job.Mode(), Observer: hooks.Observer,
			Progress: progress, ProgressEvery: every, FastForward: chipFF(), GMSpan: span,
			KeyOrigin: machineKeyOrigin(machineRef(f, opts), opts.Overrides)}
		opts.modelRoom(&o, beside, "")
		if chip, err = arch.NewChip(m, o); err != nil {
			return badInput(quoteWhole(err, f, opts))
		}
		if err := job.Prepare(chip); err != nil {
			if ctx := hooks.Context; ctx != nil && ctx.Err() != nil {
				return err // interrupted (a golden model)
			}
			return badInput(err)
		}
		if hooks.Meter != nil {
			hooks.Meter.chip = chip
		}
		return nil
	}
	if err := newChip(); err != nil {
		return nil, err
	}
	start := time.Now()
	prog := job.Program()
	hooks.startMeter(&prog)
	if _, _, hosted := chip.HostProgress(); hosted && chipFF() != nil {
		// (Not reached: hostProgram knows the jobs with a host.)
		return nil, fmt.Errorf("fast-forward: %s on %s is a host program that hostProgram does not know: please report this", f.Kind.Name, m.Name)
	}
	if ctx := hooks.Context; ctx != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("stopped before the run: %w", context.Cause(ctx))
	}
	if b, ok := job.(besideRun); ok {
		b.startBeside(chip.Cube(), stop)
	}
	st, err := chip.Run(prog)
	// A step skip whose check failed stops the run: run again without
	// skips in its blocks. (A wave skip whose check failed is taken back
	// in the run: arch.Stats.FastForwardTakenBack.)
	var stepsFailed []failedStep
	var discarded discardedRuns
	attempt := start
	for {
		var se *arch.StepCheckError
		if !errors.As(err, &se) {
			break
		}
		ff := *opts.FastForward // (a failed check means fast-forward was on)
		// The grid's steps are simulated, or some of them, and the later
		// grids' likewise (a program's kernels are often alike — H100
		// ape-int16 8192³'s four product GEMMs failed one after the
		// other, a run each): StepCheckError.Again.
		stepsFailed = append(stepsFailed, failedStep{se.Skip, se.Again(&ff, len(prog.Grids))})
		opts.FastForward = &ff
		if discarded.runs >= maxRunsAgain(len(prog.Grids)) {
			// Each failure excludes more blocks from skips, so the runs
			// made again are bounded (arch.StepCheckError.Again); one
			// more than that bound allows
			// means an exclusion that did not take (a bug): an error,
			// not a run made again forever.
			return nil, fmt.Errorf("fast-forward: %d runs made again after failed checks, and a check failed once more (%v): giving up — run without the fast-forward flags, and please report this", discarded.runs, err)
		}
		discarded.runs++
		discarded.events += chip.Engine().Events()
		discarded.wall += time.Since(attempt)
		attempt = time.Now()
		if err := newChip(); err != nil {
			return nil, err
		}
		st, err = chip.Run(job.Program())
	}
	if ctx := hooks.Context; ctx != nil && ctx.Err() != nil && !errors.Is(err, context.Cause(ctx)) {
		// Streams that look at the context themselves (an assembly
		// file's, whose core may take millions of instructions in one
		// event) end early when it is done: the run, or its static check,
		// saw a cut stream, and what came out is not the program's.
		return nil, fmt.Errorf("stopped during the run: %w", context.Cause(ctx))
	}
	return &simulation{chip: chip, st: st, err: err, prog: prog, mode: job.Mode(), ff: opts.FastForward,
		stepsFailed: stepsFailed, discarded: discarded, wall: time.Since(start).Seconds()}, nil
}

// maxRunsAgain bounds the runs a program of grids grids makes again after
// failed fast-forward step checks: eight a grid and eight more, beyond any
// seen (the 123 emulated GEMMs at 8192³ make at most one). A variable for
// tests.
var maxRunsAgain = func(grids int) int { return 8*grids + 8 }

// discardedRuns are the runs a failed fast-forward step check stopped and
// made again (report.SimReport.DiscardedRuns): how many, their events and wall
// time.
type discardedRuns struct {
	runs   int
	events uint64
	wall   time.Duration
}

// simReport returns the report of chip's run of prog up to st's time: the
// provenance (machine, its configuration, the overrides, the version),
// time, pipes, buffers, cores, memory traffic and the simulation's own
// figures; the program's job adds its sections.
func simReport(chip *arch.Chip, m *machines.Machine, opts Options, prog isa.Program, jobMode arch.Mode, st *arch.Stats, wall float64, d discardedRuns) (*report.Report, error) {
	rep := &report.Report{Machine: m.Name, Version: version.String(), Overrides: []string{}}
	for _, o := range opts.Overrides {
		rep.Overrides = append(rep.Overrides, o.Full())
	}
	if err := yaml.Unmarshal(m.YAML(nil), &rep.MachineConfig); err != nil {
		return nil, fmt.Errorf("machine %s: the effective configuration does not read back: %w", m.Name, err)
	}
	// The cores used: those given a stream, or where the block scheduler
	// (or the host's grids) placed blocks, the cores that executed some.
	var used []int
	if len(prog.Grids) > 0 || len(chip.GridTimes()) > 0 {
		for i, cs := range st.Cores {
			if cs.Instrs > 0 || cs.Finish > 0 {
				used = append(used, i)
			}
		}
	} else {
		for i, s := range prog.Cores {
			if s != nil {
				used = append(used, i)
			}
		}
	}
	rep.FromStats(st, chip.Clock().Hz(), used)
	mode := "functional"
	if jobMode == arch.Timing {
		mode = "timing"
	}
	rep.Sim = report.SimReport{Events: st.Events, WallSeconds: wall, Mode: mode,
		DiscardedRuns: d.runs, DiscardedEvents: d.events, DiscardedWallSeconds: d.wall.Seconds()}
	if r := opts.run; r != nil {
		rep.Sim.RunsBefore, rep.Sim.RunsBeforeWallSeconds = r.runsBefore, r.runsBeforeWall.Seconds()
	}
	if wall > 0 {
		rep.Sim.EventsPerSecond = float64(st.Events+d.events) / wall // (every event simulated)
	}
	return rep, nil
}

// deadlockResult returns the result of a run on chip that deadlocked
// (dl) with statistics st up to the deadlock, with dl: its report covers the run up to the deadlock — time
// reached, pipes and stalls by cause, buffers, cores, memory traffic,
// energy, the kernels that finished — and says so in Report.Failure, with
// the blocked components and the keys whose values are placeholders (the
// finish cycle of a core that had not finished; the operational
// intensities, which need the program's flop count). The job's Finish is
// not called: what it computes (the program's parameters, flops, error,
// outputs, its check) needs a run that completed; program holds the kind
// only, and there are no result arrays.
func deadlockResult(f *File, chip *arch.Chip, m *machines.Machine, opts Options, prog isa.Program, jobMode arch.Mode, st *arch.Stats, dl *sim.DeadlockError, wall float64, d discardedRuns) (*Result, error) {
	if st == nil { // (the chip's statistics did not close: report the deadlock alone)
		return nil, dl
	}
	rep, err := simReport(chip, m, opts, prog, jobMode, st, wall, d)
	if err != nil {
		return nil, dl
	}
	var done []arch.GridTimes // the kernels that finished (the others' times are not set)
	for _, g := range chip.Kernels(-1) {
		if g.Finished > 0 {
			done = append(done, g)
		}
	}
	rep.SetKernels(done)
	var notMeaningful []string
	for i, c := range rep.Cores {
		if st.Cores[c.Core].Running {
			notMeaningful = append(notMeaningful, fmt.Sprintf("cores.%d.finish_cycle", i))
		}
	}
	notMeaningful = append(notMeaningful, "memory.operational_intensity", "memory.operational_intensity_hbm", "energy.gflops_per_watt")
	markDeadlocked(rep, f.Kind.Name, dl, chip.Clock().CeilCycles(dl.Time), notMeaningful)
	rep.SetEnergy(st, &m.Power)
	if rep.Energy != nil {
		rep.Energy.GFLOPSPerWatt = 0 // (a placeholder, as the intensities: the program's flops are not known)
	}
	return &Result{Report: rep, Stats: st, Failure: dl}, dl
}

// machineKeyOrigin says where the value of a key of machine ref (as given:
// an embedded name or a file's path) was given, for messages about it —
// the key as the file names it ("gm.bandwidth"): the --set among overrides
// that gave its value (the last of the key or of a section or list
// holding it, else of a key under it: machines.Covers), or the machine
// (arch.Options.KeyOrigin).
func machineKeyOrigin(ref string, overrides []machines.Override) func(key string) string {
	return func(key string) string {
		os := machines.OverridesOf(overrides, "machine."+key)
		for _, o := range slices.Backward(os) { // the last --set of the key or of a section holding it gave its value
			if machines.Covers("machine."+key, o.Path) {
				return fmt.Sprintf("--set %s: key %q", o, key)
			}
		}
		if len(os) > 0 { // (else a --set of a key under it)
			return fmt.Sprintf("--set %s: key %q", os[len(os)-1], key)
		}
		return fmt.Sprintf("machine %s: key %q", ref, key)
	}
}

// takenBackText says what became of skip s, whose check failed
// (arch.gridRunner.takeBack): its waves were simulated after its check's,
// and where later skips of its kernel may not go (s.KeptOut, by its
// grid's failed check s.Failure).
func takenBackText(s arch.FastForwardSkip) string {
	to := s.FromCTA + s.Waves*s.WaveCTAs
	text := fmt.Sprintf("so the skip was taken back: its blocks %d–%d were simulated after those its check ran ahead of them (%d–%d)", s.FromCTA, to-1, to, s.AheadTo-1)
	switch {
	case s.KeptOut.To == math.MaxInt:
		return text + ", and the rest of that kernel was simulated (its third failed check)"
	case s.Failure == 1:
		return text + fmt.Sprintf(", and no later skip reaches into the check's blocks nor starts in blocks %d–%d (a skip after them is measured on other waves, and checked)", s.KeptOut.From, s.KeptOut.To-1)
	}
	return text + fmt.Sprintf(", and no later skip starts in or reaches into blocks %d–%d (its kernel's failed check %d)", s.KeptOut.From, s.KeptOut.To-1, s.Failure)
}

// noGridsToSkip is the note of a fast-forwarded run with no kernel grids
// (a DaVinci chip's).
const noGridsToSkip = "fast-forward: only kernel grids (GPU machines) have waves to skip; everything was simulated"

// noSkipsInHostProgram is the note of a fast-forwarded host program on a
// machine with kernel grids (%s: the program's kind).
const noSkipsInHostProgram = "fast-forward: %s is a host program, whose host waits for its kernels by time (skipped waves would move every later task): not fast-forwarded; everything was simulated"

// noSkipsOnClusters is the note of a fast-forwarded run on a cluster or
// node description.
const noSkipsOnClusters = "fast-forward: not on a cluster or node description (its ranks' hosts wait for their kernels by time, and its DaVinci NPUs run no kernel grids); everything was simulated"

// fastForwardNone returns, where --fast-forward can skip nothing in f's
// run on machine m, the note saying why, "" where it may skip: only kernel
// grids have waves to skip (GPU machines), and not in a host program,
// whose host waits for its kernels by time. Where it can skip nothing the
// run is simulated in full, as without it, and the note says so — decided
// before the run is built, so that a sweep can give fast-forward to every
// point (as --k-batch) and a trace of such a run misses nothing.
func fastForwardNone(f *File, m *machines.Machine) string {
	switch {
	case !arch.FastForwardSkips(m):
		return noGridsToSkip
	case hostProgram(f, m):
		return fmt.Sprintf(noSkipsInHostProgram, f.Kind.Name)
	}
	return ""
}

// hostProgram reports whether f's run on machine m is a host program — a
// modeled host CPU that launches the kernels and waits for them by time
// (arch.Host) — before the run is built: lu-fused everywhere (the kind
// that also runs on clusters, rank by rank), ozaki on DaVinci machines
// (its host slices and recombines). TestHostProgramKnown checks it
// against the jobs built.
func hostProgram(f *File, m *machines.Machine) bool {
	return f.Kind.BuildCluster != nil || f.Kind.Name == "ozaki" && m.DaVinci() != nil
}

// FastForwardApplies reports whether --fast-forward may skip anything in
// the run of f with opts (fastForwardNone; not on a cluster or node
// description): where it cannot, the run is simulated in full and a trace
// of it misses nothing. True where the machine cannot be loaded (the run
// says why).
func FastForwardApplies(f *File, opts Options) bool {
	if ClusterMachine(f, opts) != "" {
		return false
	}
	m, err := MachineFor(f, opts)
	return err != nil || fastForwardNone(f, m) == ""
}

// markDeadlocked makes rep, the report of a run of a program of kind
// kind simulated up to deadlock dl (on one chip or a cluster), a
// deadlocked run's: its program section holds the kind only (the
// program's parameters and results need a run that completed), and its
// failure section says when (cycles: in core clock cycles), what was
// blocked and which keys (notMeaningful, dotted paths) hold placeholders.
func markDeadlocked(rep *report.Report, kind string, dl *sim.DeadlockError, cycles int64, notMeaningful []string) {
	rep.Program = report.Program{"kind": kind}
	rep.Failure = &report.Failure{Kind: report.FailureDeadlock, Message: dl.Error(), Seconds: dl.Time.Seconds(),
		Cycles: cycles, Blocked: dl.Blocked, NotMeaningful: notMeaningful}
}

// checkNotMade is the note of a run asked to check (check: true) that
// computes no values to check.
const checkNotMade = "check: not made — it compares the simulated outputs with the golden model bit for bit, and a run at numerics sampled or off computes none: run at numerics full to check"

// FileFidelity returns the program's fidelity key, with --set
// program.fidelity applied ("" when absent).
func FileFidelity(f *File, opts Options) string {
	fid := ""
	if v, ok := f.Config.Viper().Get("fidelity").(string); ok {
		fid = v
	}
	for _, o := range opts.Overrides {
		if strings.EqualFold(o.Path, "program.fidelity") {
			fid = o.Value
		}
	}
	return fid
}

// KBatchObservedError is the error of --k-batch n with a trace or the
// live view (which would show the batches, not the kernel's k-steps).
func KBatchObservedError(n int) error {
	return fmt.Errorf("--k-batch %d: a trace or live view would show the batches, not the kernel's k-steps: use it without --trace and --view", n)
}

// kBatchedJob is a job that can tell whether a kernel ran batched
// k-steps (--k-batch).
type kBatchedJob interface{ kBatched() bool }

// checkKBatch checks --k-batch's range and returns, where it has nothing
// to batch — it batches the k-steps of GPU GEMM kernels (Kind.KBatch kinds
// on nvidia-sm and amd-cu machines) — the note saying so: like
// fast-forward, it is a speed-up taken where it applies, so that a sweep
// over machines or kinds can give it to every point ("": it applies).
func checkKBatch(f *File, m *machines.Machine, opts Options) (none string, err error) {
	if opts.KBatch > MaxKBatch {
		return "", fmt.Errorf("--k-batch %d: must be in 1..%d", opts.KBatch, MaxKBatch)
	}
	if opts.KBatch <= 1 || KBatchApplies(f, m) {
		return "", nil
	}
	var kinds []string
	for _, k := range Kinds() {
		if k.KBatch {
			kinds = append(kinds, k.Name)
		}
	}
	return fmt.Sprintf("k-batch %d: applies to the GEMM kernels of %s on GPU machines (nvidia-sm, amd-cu); %s on %s (%s) has none: every k-step was simulated", opts.KBatch, strings.Join(kinds, ", "), f.Kind.Name, m.Name, m.Kind), nil
}

// KBatchApplies reports whether --k-batch can batch anything in f's run on
// machine m (see checkKBatch): a run where it cannot is simulated as
// without it, so a trace of it misses nothing.
func KBatchApplies(f *File, m *machines.Machine) bool {
	_, gpu := newGPUTarget(m)
	return gpu && f.Kind.KBatch
}

// fastForwardUncertainty returns the time skips stand for and how far it
// could be off had each skip's waves varied as much as its measured waves
// (their spread) or its checked waves (their mean's distance from the
// measured period) did, whichever is more, plus half a wave per skip: the
// blocks in flight at a skip are others than in the full run (which SM
// holds which tile), which moves the kernel's end by a fraction of a wave
// (A100 HGEMM 8192×8192×4096: 5 % of one); and half a wave (of its
// measured period) for each skip taken back after a failed check (back),
// whose blocks ran after those its check had run ahead: where blocks meet
// that the hardware would not have run one after the other, the L2 holds
// the others' tiles for a while (T4 Ootomo 8192×1536×4096, its skip at
// wave 7 of 39 taken back and nothing skipped in that kernel: +1.2 % of
// the full run, 0.45 of a wave; over the 14 of the 123 emulated GEMMs at
// 8192³ that took a skip back, each within 0.83 % of its full run).
func fastForwardUncertainty(skips []arch.FastForwardSkip, steps []arch.StepSkip, kernels []arch.KernelSkip, back []arch.FastForwardSkip) (skipped, unc sim.Time) {
	for _, s := range back {
		unc += s.Period / 2
	}
	// A kernel skip: had its kernel differed from the one it stands for
	// by as much as the rule allows between the two before it.
	for _, k := range kernels {
		skipped += k.Shift
		unc += max(k.Spread, k.Allowed)
	}
	for _, s := range skips {
		skipped += s.Shift
		if !s.Exact {
			d := s.TailPeriod - s.Period
			unc += sim.Time(s.Waves)*max(d, -d, s.Spread) + s.Period/2
		}
	}
	// A step skip: its steps had they varied as much as the measured and
	// checked intervals, and a step (the CTAs take it at their next
	// markers).
	for _, s := range steps {
		skipped += s.Shift
		d := s.CheckPeriod - s.Period
		if s.CheckPeriod == 0 {
			d = 0
		}
		unc += sim.Time(s.Steps)*max(d, -d, s.Spread) + s.Period
	}
	return skipped, unc
}

// skipUncertaintyNote is the note on the time a run's skips stand for
// and the estimate of its error (waves, steps, kernels: wave, step or
// kernel skips were taken; back: the wave skips taken back).
func skipUncertaintyNote(waves, steps, kernels bool, back int, skipped, unc, total sim.Time) string {
	var what, measured, inFlight []string
	if waves {
		what, measured, inFlight = append(what, "waves"), append(measured, "waves"), append(inFlight, "the blocks in flight at each wave skip by half a wave")
	}
	if steps {
		what, measured, inFlight = append(what, "k-steps"), append(measured, "steps"), append(inFlight, "a step at each step skip")
	}
	if kernels {
		what, measured = append(what, "kernels"), append(measured, "compared kernels")
	}
	list := func(x []string) string {
		if len(x) < 2 {
			return strings.Join(x, "")
		}
		return strings.Join(x[:len(x)-1], ", ") + " and " + x[len(x)-1]
	}
	if back > 0 {
		inFlight = append(inFlight, fmt.Sprintf("the blocks of the %d %s taken back by half a wave each: they ran after the blocks their checks had run ahead", back, plural(back, "skip", "skips")))
	}
	flight := ""
	if len(inFlight) > 0 {
		flight = " (and " + list(inFlight) + ")"
	}
	return fmt.Sprintf("fast-forward: the skipped %s stand for %.4g s of the run's %.4g s; had they varied as much as the measured and checked %s did%s, its time would be within ±%.3g s (%.2g %%) of the full simulation's — an estimate, not a bound: a kernel that changes inside a skipped range (an L2 sliding into thrashing, blocks in lockstep falling apart — V100 Ootomo 8192³ came out −3.6 %% against ±0.64 %%) can be further off, and the kernels after a skip start from the caches its measured %s left — a step skip installs in an LLC (the Infinity Cache) the lines its steps would have read and ages the L2s by as many as they would have fetched, a wave or kernel skip touches neither (not covered: MI300X ape-int16 8192³ −0.5 %% after an exact skip; before step skips installed, MI300X Ape FP32-F 6144×8192×4096 −4.4 %% against ±0.95 %%); the skipped %s' bytes are divided among the caches and HBM at the measured %s' rates",
		list(what), skipped.Seconds(), total.Seconds(), list(measured), flight, unc.Seconds(), 100*unc.Seconds()/total.Seconds(), list(measured), list(what), list(measured))
}

// skippedBytesNote ends skipUncertaintyNote with the share of the run's
// GM reads the skips stand for and what a point of their hit fraction is
// worth in HBM reads: where few bytes miss, a small change in the skipped
// bytes' hits — which the measured rates cannot show — moves the HBM reads
// by much more than the time (docs/report.md, "Fast-forward and bytes").
func skippedBytesNote(skipped, gmRead, hbmRead int64) string {
	if skipped <= 0 || gmRead <= 0 {
		return ""
	}
	s := fmt.Sprintf("; those bytes are %.3g %% of the run's GM reads", 100*float64(skipped)/float64(gmRead))
	if hbmRead > 0 {
		s += fmt.Sprintf(", and a point more or less of them served by the caches (the L2 and any LLC) moves the run's HBM reads by %.3g %%", float64(skipped)/float64(hbmRead))
	}
	return s + ": so its bytes can be much further off than its time (docs/report.md, \"Fast-forward and bytes\")"
}

// hitsText prints a hit fraction (−1: "no traffic").
func hitsText(h float64) string {
	if h < 0 {
		return "no traffic"
	}
	return fmt.Sprintf("%.3g", h)
}

// stepSkipsNote sums up a run's step skips (FastForward.Steps) by kernel
// ("" without any).
func stepSkipsNote(steps []arch.StepSkip) string {
	if len(steps) == 0 {
		return ""
	}
	type sum struct {
		n, unchecked, moved, paced int
		steps                      int64
		shift                      sim.Time
		lo, hi                     float64
		hits, checkHits            float64 // of the skip whose hits moved the most
	}
	var order []string
	by := map[string]*sum{}
	for _, s := range steps {
		x := by[s.Grid]
		if x == nil {
			x = &sum{lo: math.Inf(1), hi: math.Inf(-1)}
			by[s.Grid] = x
			order = append(order, s.Grid)
		}
		x.n++
		x.steps += int64(s.Steps) * int64(s.CTAs)
		x.shift += s.Shift
		if !s.Checked {
			x.unchecked++
		}
		if s.Paced {
			x.paced++
		}
		if s.HitsMoved {
			if x.moved++; x.moved == 1 || math.Abs(s.CheckHits-s.Hits) > math.Abs(x.checkHits-x.hits) {
				x.hits, x.checkHits = s.Hits, s.CheckHits
			}
		}
		p := s.Period.Seconds() * 1e6
		x.lo, x.hi = min(x.lo, p), max(x.hi, p)
	}
	var parts []string
	for _, g := range order {
		x := by[g]
		part := fmt.Sprintf("kernel %s: %d skips, %d block-steps standing for %.4g s (steps of %.4g–%.4g µs)", g, x.n, x.steps, x.shift.Seconds(), x.lo, x.hi)
		if x.unchecked > 0 {
			part += fmt.Sprintf(", %d not checked (blocks started or finished first)", x.unchecked)
		}
		if x.paced > 0 {
			part += fmt.Sprintf(", %d measured at the pace an earlier skip's check kept, which stands for their own (their hits after them not measured)", x.paced)
		}
		if x.moved > 0 {
			part += fmt.Sprintf(", %d whose check's L2 hit fraction moved (the largest move: %s against the measured steps' %s): the skipped steps' bytes (and L2 hits) may be off more than their time", x.moved, hitsText(x.checkHits), hitsText(x.hits))
		}
		parts = append(parts, part)
	}
	return "fast-forward step skips (every resident block skipped the same k-steps together where their intervals repeated; approximate: the skipped steps stand for the measured ones, their work for the step before each block's skip): " + strings.Join(parts, "; ")
}

// fastForwardWaitNote says why kernel w.Grid's waves were simulated
// where a wave skip could have measured them (settings ff), or "" where
// nothing but its warm-up held a skip back.
func fastForwardWaitNote(w arch.FastForwardWait, ff arch.FastForward) string {
	if w.Spread+w.Moved+w.Apart+w.Unlike == 0 {
		return ""
	}
	hint := ""
	if !ff.Stationary {
		hint = "; --fast-forward-stationary skips waves that vary about a steady mean"
	}
	var why reasons
	why.add(w.Spread, "the measured waves' durations spread beyond the tolerance (%s, the last by %.3g %% of their mean against %.3g %%: --fast-forward-tolerance%s)", 100*w.LastSpread, 100*ff.Tolerance, hint)
	why.add(w.Apart, "the mean durations of the two windows a stationary skip compares lay further apart than the tolerance (%s, the last by %.3g %% against %.3g %%: the waves were still changing)", 100*w.LastGap, 100*ff.Tolerance)
	why.add(w.Moved, "the measured waves' cache hit fractions or lanes' stall mix moved beyond the settings (%s: --fast-forward-hits, --fast-forward-mix)")
	why.add(w.Unlike, "the measured or the next blocks ran other instructions (%s)")
	why.add(w.WarmUp, "the measured waves lay in the kernel's warm-up (%s: --fast-forward-warm-up)")
	end := fmt.Sprintf("none of its %d waves was skipped", w.Waves)
	if w.FirstSkip >= 0 {
		end = fmt.Sprintf("its first wave skip came at wave %d of %d", w.FirstSkip, w.Waves)
	}
	return fmt.Sprintf("fast-forward: kernel %s: %s; where a skip could have measured the waves before it and left a check after it, none was taken because %s",
		w.Grid, end, strings.Join(why, "; "))
}

// stepWaitNote says how kernel w.Grid's steps went where they could be
// skipped (settings ff): the steps simulated, whether two windows of
// intervals ever formed, and why no skip was taken where they did ("" for
// a kernel that simulated no steps).
func stepWaitNote(w arch.StepWait, ff arch.FastForward) string {
	if w.Steps == 0 {
		return ""
	}
	head := fmt.Sprintf("fast-forward step skips: kernel %s: %d block-steps simulated", w.Grid, w.Steps)
	if w.Paced > 0 {
		head += fmt.Sprintf("; one window of %d intervals at the pace an earlier skip's check kept decided a skip %s", ff.Measure, times(w.Paced))
	}
	if w.Windows == 0 {
		if w.Paced > 0 {
			return head
		}
		return head + fmt.Sprintf("; two windows of %d intervals never formed (every resident block in its k-loop and none starting or finishing for %d intervals of a step each): its blocks started and finished too often — waves drifted apart — for step skips, which wave skips stand in for", ff.Measure, 2*ff.Measure)
	}
	var why reasons
	why.add(w.Unsteady, "a window's intervals spread beyond the tolerance, or the two windows' means lay apart beyond a fifth of it (%s; the closest: spread %.3g %%, means %.3g %% apart, against %.3g %% and %.3g %%: --fast-forward-tolerance)",
		100*w.Spread, 100*w.Gap, 100*ff.Tolerance, 100*ff.Tolerance/5)
	why.add(w.Moved, "the windows' cache hit fractions or lanes' stall mix moved beyond the settings (%s: --fast-forward-hits, --fast-forward-mix)")
	why.add(w.WarmUp, "a block was still in its warm-up (%s: --fast-forward-warm-up)")
	why.add(w.Short, "too few steps were left for a skip and its check (%s)")
	why.add(w.Unpaced, "the windows' pace differed from the one this kernel's last checked skip kept, and a block had not yet passed that skip's step (%s)")
	head += fmt.Sprintf("; two windows of %d intervals formed %s", ff.Measure, times(w.Windows))
	if len(why) == 0 {
		return head
	}
	return head + ", where no skip was taken because " + strings.Join(why, "; ")
}

// reasons are the clauses of a note saying why something was not done.
type reasons []string

// add appends the clause format, whose first verb takes how often it
// applied (times(n)) and the rest args, where it applied (n > 0).
func (r *reasons) add(n int, format string, args ...any) {
	if n > 0 {
		*r = append(*r, fmt.Sprintf(format, append([]any{times(n)}, args...)...))
	}
}

// times says n times in words ("once", "twice", "n times").
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// fastForwardNote describes one skip of a fast-forwarded run.
func fastForwardNote(s arch.FastForwardSkip) string {
	kind := "approximate (the skipped waves stand for waves like the measured ones)"
	if s.Exact {
		kind = "the measured waves were identical (duration and every counter): exact if the skipped ones are too"
	}
	if s.Checked {
		kind += fmt.Sprintf("; checked: the waves after the skip took %.6g s", s.TailPeriod.Seconds())
		if s.HitsMoved {
			kind += fmt.Sprintf(", but their L2 hit fraction was %.3g against the measured waves' %.3g: the skipped waves' bytes (and L2 hits) may be off more than their time", s.TailHits, s.Hits)
		}
	} else if s.TailPeriod == 0 {
		kind += "; not checked: the kernel ended before the waves after the skip (its uncertainty counts the skipped waves whole)"
	} else {
		kind += fmt.Sprintf("; CHECK FAILED: the waves after the skip took %.6g s", s.TailPeriod.Seconds())
	}
	measured := fmt.Sprintf("waves of %.6g s (spread %.3g %%)", s.Period.Seconds(), 100*float64(s.Spread)/float64(max(s.Period, 1)))
	if s.Centres {
		measured = fmt.Sprintf("%d waves of %.6g s between their centres (spread %.3g %%; the mean of each wave's blocks' dispatch times: the first dispatches jittered more)", s.Measured, s.Period.Seconds(), 100*float64(s.Spread)/float64(max(s.Period, 1)))
	}
	if s.Stationary {
		measured = fmt.Sprintf("%d waves of %.6g s on average (stationary: two windows' means within %.3g %% with a standard error; the waves' own noise %.3g %%; %d waves checked after it)",
			s.Measured, s.Period.Seconds(), 100*float64(s.Spread)/float64(max(s.Period, 1)), 100*float64(s.Noise)/float64(max(s.Period, 1)), s.Tail-1)
	}
	return fmt.Sprintf("fast-forward: kernel %s: skipped %d waves of %d blocks (blocks %d–%d, %.6g s) after measuring %s, not simulating ~%d events; %s",
		s.Grid, s.Waves, s.WaveCTAs, s.FromCTA, s.FromCTA+s.Waves*s.WaveCTAs-1, s.Shift.Seconds(), measured, s.Events, kind)
}
