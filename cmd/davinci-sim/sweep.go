package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/sweep"
)

// maxSweepJobs bounds -j: a few times the largest CPU counts in use.
const maxSweepJobs = 1024

func init() {
	subcommands = append(subcommands, newSweepCmd)
}

type sweepFlags struct {
	out    string
	jobs   int
	shard  string
	resume bool
	quiet  bool

	rerunChanged bool
	pointTimeout time.Duration
	maxMemory    string
}

func newSweepCmd() *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep STUDY.yaml -o DIR",
		Short: "Run a design-space study: a grid or list of points, in parallel, with CSV, JSONL and plots",
		Long: `Run every point of a study file (a base program and machine, fixed --set
overrides, and the parameters to vary: lists, ranges such as "256KiB..4MiB ×2"
or "-20..10 +2", or explicit points) in parallel, one simulation per point.

Each finished point is appended at once to DIR/results.jsonl; at the end
results.jsonl is sorted by point index and DIR/results.csv (index, one
column per varied parameter — a size one also in bytes, NAME_bytes —,
status, one column per metric, error) and the plots (DIR/NAME.png, .svg, .pdf) are
written. DIR holding results.jsonl needs --resume; DIR holding a file the
study writes (results.csv, a plot) but no results.jsonl is refused (not a
study's output: the file would be replaced). The files do not depend on -j, nor on the current directory: program
and machine files are named as the study file writes them, relative to its
folder. A point that cannot run (e.g. a tile
that does not fit a buffer) is recorded with status "failed" and its message
in the error column; the study goes on.

--resume continues an interrupted study in DIR, skipping finished points
(failed ones too: they fail the same way again) — but for a point that
--point-timeout stopped, which runs again where the limit is now longer or
none, and a point refused because its estimated host memory passed its
bound (recorded with host_memory_bytes, the bound), which runs again where
the bound is now larger: on a host with more memory, or with a larger
--max-memory. On a finished study it only writes results.csv and the plots
again (after editing the study's plots, say). "davinci-sim sweep plot STUDY.yaml -o DIR"
draws the plots alone, also from results whose program or machine file was
edited since, which --resume refuses; --resume --rerun-changed runs those
points again instead (only them: after a machine file changed, say).
A last line of results.jsonl that a kill or a crash cut off (no end of
line, not a whole record) is dropped with a note, the file cut back to its
last whole record, and its point runs again; any other line that is not a
record of the study, or that gives a key twice, is refused (exit 2).
With -j above 1 the points start in index order while the host memory
estimated for those running stays within --max-memory (by default the bound
of one run's data: 3/4 of the host's memory); a point estimated past it runs
alone. Each point's own run may take the larger of --max-memory and that
default (a point past it is refused, as run refuses it). The results do not
change with it.

--shard I/N runs only the points whose index is I modulo N (0 ≤ I < N), e.g.
one Slurm array task each; "davinci-sim sweep merge STUDY.yaml -o DIR
SHARD_DIR..." then combines the shard directories into DIR.

Exit codes: 0 success (failed points are reported, not fatal); 1 a run or
merge failed (I/O, missing points after merge); 2 bad input — before any
point runs for a key, value or file the study names that suits none of its
points (an unknown key, set: program.m: -256, a varied value refused at each
of its points: vary: program.scheme: [hgemm, bogus]), and also when an unsharded
run's every point was refused as bad input (results are written, the first
refusal is quoted); 130 (143) interrupted by SIGINT (SIGTERM) — the points
in flight are dropped, the finished ones kept: continue with --resume.`,
		Example: `  davinci-sim sweep studies/l1-size.yaml -o out/l1-size        # all CPUs
  davinci-sim sweep studies/l1-size.yaml -o out/l1-size --resume

  # A Slurm job array of 16 shards (job.sh), then a merge:
  #   #SBATCH --array=0-15
  #   #SBATCH --cpus-per-task=8
  #   davinci-sim sweep studies/l1-size.yaml -j "$SLURM_CPUS_PER_TASK" \
  #       --shard "$SLURM_ARRAY_TASK_ID/16" -o "out/shard-$SLURM_ARRAY_TASK_ID" --resume
  # sbatch job.sh; when it is done (e.g. sbatch --dependency=afterok:JOBID):
  davinci-sim sweep merge studies/l1-size.yaml -o out/l1-size out/shard-*`,
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{outDirHolds: "the study's results and plots"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSweep(cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "output directory (required)")
	fl.IntVarP(&f.jobs, "jobs", "j", 0, fmt.Sprintf("points simulated at once, 0..%d (default, or 0: every CPU)", maxSweepJobs))
	fl.StringVar(&f.shard, "shard", "", "run only shard I of N (I/N, 0 ≤ I < N): the points with index ≡ I mod N")
	fl.BoolVar(&f.resume, "resume", false, "continue the study in DIR, skipping finished points (but those --point-timeout stopped, where the limit is longer now or none, and those refused for host memory, where the bound is larger now: a larger host or --max-memory)")
	fl.BoolVar(&f.rerunChanged, "rerun-changed", false, "with --resume: run again the points recorded from other inputs, options or metrics (a program or machine file edited since, a metric added) instead of refusing them")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar on stderr")
	fl.DurationVar(&f.pointTimeout, "point-timeout", 0, "stop a point after this wall time and record it as failed, e.g. 30m (default: no limit)")
	fl.StringVar(&f.maxMemory, "max-memory", "", maxMemoryHelp("the points running at once may hold together, by their estimates (a point past it runs alone; each point's own run is bounded by the larger of this and the default)"))
	cmd.AddCommand(newSweepMergeCmd(), newSweepPlotCmd())
	return cmd
}

func runSweep(stderr io.Writer, path string, f sweepFlags) error {
	if f.out == "" {
		return badInput(errors.New("sweep: -o DIR is required"))
	}
	if f.jobs < 0 || f.jobs > maxSweepJobs {
		return badInput(fmt.Errorf("-j %d: must be in 0..%d (0 = every CPU; points beyond the CPUs run no faster and each holds its run's memory)", f.jobs, maxSweepJobs))
	}
	var shard sweep.Shard
	if f.shard != "" {
		var err error
		if shard, err = sweep.ParseShard(f.shard); err != nil {
			return badInput(err)
		}
	}
	st, err := sweep.ReadStudy(path)
	if err != nil {
		return sweepError(err)
	}
	if f.rerunChanged && !f.resume {
		return badInput(errors.New("--rerun-changed: only with --resume (it says which recorded points to run again)"))
	}
	if f.pointTimeout < 0 {
		return badInput(fmt.Errorf("--point-timeout %v: must be ≥ 0 (0 = no limit)", f.pointTimeout))
	}
	budget, err := parseMaxMemory(f.maxMemory, "the host memory the points running at once may hold together")
	if err != nil {
		return badInput(err)
	}
	noteAboveHost(stderr, budget)
	defer limitHeap(budget)()
	ctx, stop := interruptible(context.Background())
	defer stop()
	opts := sweep.Options{Out: f.out, Jobs: f.jobs, Shard: shard, Resume: f.resume, RerunChanged: f.rerunChanged, Log: stderr,
		Context: ctx, PointTimeout: f.pointTimeout, MemoryBudget: int64(budget)}
	if !f.quiet && isTerminal(stderr) {
		opts.Progress = stderr
	}
	sum, err := sweep.Run(st, opts)
	if err != nil {
		if ierr := interruptExit(err); ierr != nil {
			return ierr
		}
		return sweepError(err)
	}
	if sum.Selected == 1 {
		fmt.Fprint(stderr, "sweep: 1 point")
	} else {
		fmt.Fprintf(stderr, "sweep: %d points", sum.Selected)
	}
	if shard.N > 1 {
		fmt.Fprintf(stderr, " (shard %s of %d)", shard, sum.Points)
	}
	fmt.Fprintf(stderr, ": %d run", sum.Ran)
	if sum.Rerun > 0 {
		fmt.Fprintf(stderr, " (%d of them again: recorded from other inputs, options or metrics)", sum.Rerun)
	}
	if sum.RerunTimedOut > 0 {
		fmt.Fprintf(stderr, " (%d of them again: stopped by a shorter --point-timeout before)", sum.RerunTimedOut)
	}
	if sum.RerunHostMemory > 0 {
		fmt.Fprintf(stderr, " (%d of them again: refused for host memory under a smaller bound before)", sum.RerunHostMemory)
	}
	fmt.Fprintf(stderr, ", %d already done, %d failed in %s; results in %s\n",
		sum.Skipped, sum.Failed, sum.Wall.Round(1e7), f.out)
	if sum.Failed > 0 {
		fmt.Fprintf(stderr, "sweep: failed points have status \"failed\" (or \"check-failed\") and their message in the error column of %s/results.csv\n", f.out)
	}
	if sum.HostMemory > 0 {
		fmt.Fprintf(stderr, "sweep: %d of them refused for host memory (host_memory_bytes in results.jsonl): --resume on a host with more memory, or with a larger --max-memory, runs them again\n", sum.HostMemory)
	}
	if sum.Ran > 0 && sum.BadInput == sum.Ran && sum.Failed >= sum.Ran+sum.Skipped && shard.N <= 1 {
		// Every point refused as bad input: the study's settings (its
		// set, program or machine, or a varied value's) are wrong for all
		// of them. (Points
		// that failed in the simulation — a deadlock, a failed check —
		// are results.)
		if sum.HostMemory == sum.Failed {
			// (Not the settings: this host's memory, or the bound given.)
			return badInput(fmt.Errorf("%s: every point was refused for host memory (%s): run the study on a host with more memory or with a larger --max-memory (--resume then runs them)", path, sum.FirstFailure))
		}
		return badInput(fmt.Errorf("%s: every point failed (%s): the study's settings — its fixed set, program and machine, or the values it varies — suit none of its points", path, sum.FirstFailure))
	}
	return nil
}

func newSweepPlotCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "plot STUDY.yaml -o DIR",
		Short: "Draw a study's plots again from the results in DIR, running nothing",
		Long: `Draw the plots of STUDY.yaml again (DIR/NAME.png, .svg and .pdf) from the
records in DIR/results.jsonl, running no point and touching no other file:
after editing the study's plots. Unlike --resume it also draws records made
from other inputs (the program or machine file edited since) or by a
davinci-sim that did not stamp its records, as they were recorded, and says
how many; the records must be the study's points (its parameters and
metrics). A last line that a kill or a crash cut off is left out with a
note (sweep --resume drops it and runs its point). Exit code 2 on bad input.`,
		Example:     `  davinci-sim sweep plot studies/long/cluster-weak-scaling.yaml -o docs/studies/cluster-weak-scaling`,
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{outDirHolds: "the study's results and plots"},
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			if out == "" {
				return badInput(errors.New("sweep plot: -o DIR is required"))
			}
			st, err := sweep.ReadStudy(args[0])
			if err != nil {
				return sweepError(err)
			}
			if len(st.Plots) == 0 {
				return badInput(fmt.Errorf("sweep plot: %s has no plot to draw", args[0]))
			}
			drawn, n, stale, err := sweep.Redraw(st, out, stderr)
			if err != nil {
				return sweepError(err)
			}
			plots := fmt.Sprintf("%d of %d plots", drawn, len(st.Plots))
			if len(st.Plots) == 1 {
				plots = fmt.Sprintf("%d of 1 plot", drawn)
			}
			msg := fmt.Sprintf("sweep plot: %s drawn from the %d of the study's %d points that ran and did not fail, in %s", plots, n, len(st.Points), out)
			if stale > 0 {
				msg += fmt.Sprintf(" (%d of them recorded from other inputs, options or metrics, or unstamped: drawn as recorded)", stale)
			}
			fmt.Fprintln(stderr, msg)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "directory of the study's results.jsonl, where the plots go (required)")
	return cmd
}

func newSweepMergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge STUDY.yaml -o DIR SHARD_DIR...",
		Short: "Combine the output directories of sharded sweep runs into one",
		Long: `Combine the results of "sweep --shard" runs (one output directory each) into
DIR: results.jsonl, results.csv and the plots, the same files one unsharded
run writes. Records already in DIR are kept. A last line that a kill or a
crash cut off is left out with a note, its point missing (sweep --resume
in its directory runs it). Exit code 1 when points are still missing (the
files are written anyway), 2 on bad input.`,
		Args:        cobra.MinimumNArgs(2),
		Annotations: map[string]string{outDirHolds: "the study's merged results and plots"},
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			if out == "" {
				return badInput(errors.New("sweep merge: -o DIR is required"))
			}
			st, err := sweep.ReadStudy(args[0])
			if err != nil {
				return sweepError(err)
			}
			sum, err := sweep.Merge(st, out, args[1:], stderr)
			if err != nil {
				return sweepError(err)
			}
			fmt.Fprintf(stderr, "sweep merge: %d of %d points, %d failed; results in %s\n",
				sum.Points-len(sum.Missing), sum.Points, sum.Failed, out)
			if n := len(sum.Missing); n > 0 {
				points, indices := "points", "indices"
				if n == 1 {
					points, indices = "point", "index"
				}
				return failure(fmt.Errorf("sweep merge: %d %s missing (%s %s); rerun their shards with --resume", n, points, indices, indexList(sum.Missing)))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "output directory (required)")
	return cmd
}

// sweepError maps bad input to exit code 2 and anything else to 1.
func sweepError(err error) error {
	if badinput.Is(err) {
		return badInput(err)
	}
	return failure(err)
}

// indexList prints at most ten indices.
func indexList(idx []int) string {
	var parts []string
	for i, v := range idx {
		if i == 10 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprint(v))
	}
	return strings.Join(parts, ", ")
}
