// Package sweep runs design-space studies: one study file names a base
// program and machine, fixed overrides, the parameters to vary and the
// report.json metrics to record; every point is an independent simulation
// (programs.Execute), run in parallel.
//
// # Study files
//
//	# studies/l1-size.yaml
//	program: ../programs/examples/sgemm-cube.yaml   # relative to the study file
//	machine: ascend-910a                            # optional: default the program's
//	set: {program.numerics: off}                    # fixed overrides (as --set)
//	points:                                         # optional explicit points …
//	  - {program.tiling.bm: 64, program.tiling.bn: 64}
//	  - {program.tiling.bm: 176, program.tiling.bn: 176}
//	vary:                                           # … crossed with a grid
//	  machine.core.buffers.L1: 256KiB..4MiB ×2      # range: ×F geometric, +D arithmetic
//	  program.split.sb: [0, 6, 12]                  # list
//	  program.inputs.offset_exponent: -20..10 +2
//	metrics: [flops.tflops, buffers.L1.peak_fraction, error.rel_fro]
//	k_batch: 8                                      # optional: run --k-batch 8 (GPU SIMT GEMMs)
//	fast_forward: true                              # optional: run --fast-forward
//	plot:                                           # one mapping or a list
//	  - {x: machine.core.buffers.L1, y: flops.tflops, series: program.tiling.bm,
//	     logx: true, logy: false, where: {program.split.sb: 12}, name: tflops, title: …}
//	  - {x: [lu_gemm.operational_intensity, lu_gemm.operational_intensity_hbm],
//	     y: lu_gemm.tflops, xlabel: …, roof: {peak: 262.1, slopes: {HBM: 1.228}}}
//
// Parameters are --set paths (program.… or machine.…), or "program" and
// "machine" themselves to compare program files or machines. The files a
// study names (program, machine, a program.machine machine file) are
// relative to the study file's folder, unless absolute. Points are
// numbered from 0: explicit points outermost in file order, then the grid
// with its last key varying fastest. Range values print in the unit of the
// range (256KiB, 512KiB, 1MiB, …). Metrics are dotted paths into
// report.json ("pipes.M.busy", "cores.0.finish_cycle"); a metric the
// report lacks is recorded as null; "*" in a path stands for every element
// of a list ("hplmxp.windows.*.measured_over_theoretical": the list, null
// where an element lacks the key). Plot lines are split by the series
// parameters and, where x is a parameter, by any other parameter that
// still varies for one x; where x is a metric no two points are joined
// (a scatter plot): a series is its points' markers, and a point's list
// values ("*") its own line, named by the parameters that tell it from its
// series' other points. A plot's x may list several metrics: each is a line family against the
// same y (a roofline with two operational intensities); list metrics plot
// element by element (one value goes with every element of the other
// axis); roof draws the ceilings y = min(peak, slope·x), labelled, behind
// the data; xlabel replaces the x axis title; ymin and ymax leave out the
// values below or above them (the warning counts them).
//
// Before anything runs, Study.Check validates every path and value type;
// errors name the study file and key and are marked bad input (package badinput) (exit code 2).
// So is a value the program refuses at every point where it appears: the
// set's, or a varied program.* value's (program.scheme: bogus), found by
// building points, each stopped before its simulation, until each value
// has one that would run. Constraint violations of a particular
// combination (a tile that does not fit the smaller of the L1 sizes
// varied) only show when the point runs: the point is recorded with status
// "failed" and the message in the "error" column, and the study goes on.
//
// # Outputs
//
// In the output directory: results.jsonl (one record per point: index,
// params, run, status, error, metrics), appended as each point finishes in a
// single write, so an interrupted study loses only the points in flight;
// at the end it is rewritten sorted by index, and results.csv (index, one
// column per parameter, status, one column per metric, error) and the plots
// (NAME.png, NAME.svg, NAME.pdf) are written. These files do not depend on the number
// of workers, nor on the directory the study is run from: a program or
// machine file is recorded as the study file spells it (relative to the
// study file's folder, or absolute), and a failed point's message names
// the files its run opened likewise (other files relative to the study
// file's folder, or absolute when they share only the root with it).
// Run with Options.Resume skips the points already recorded
// (failed ones included: they fail the same way again — but for two kinds
// of failure that are not the point's own, which run again where their
// cause has changed: a point a wall-time limit stopped
// (time_limit_seconds), where Options.PointTimeout is now longer or none,
// and a point refused because its estimated host memory passed its bound
// (host_memory_bytes, the bound: badinput.HostMemory), where the bound is
// now larger — on a host with more memory, or with a larger
// Options.MemoryBudget, --max-memory), after checking that every record matches the
// study — its parameters, its metrics, and its RunStamp: the run options
// and a digest of the program file, the machine file and the fixed
// overrides, so that a study file or program edited between two runs into
// one directory is refused rather than mixed; a corrupt or foreign
// record, or one giving a key twice, is a bad-input error naming the file
// and line, and the file is left as it is. A last line cut off — no end of
// line, not JSON: what a write stopped by kill -9, a full disk or a crash
// leaves, as records are appended unsynced — is dropped with a note, the
// file cut back to its last whole record before anything is appended, and
// its point runs again. merge checks the shards' records the same way
// (leaving out a last line cut off, with a note: its point is missing),
// and so does Redraw (not drawing it).
//
// # Clusters: shards and merge
//
// A shard I/N (0 ≤ I < N) runs the points whose index is I modulo N. Give
// each shard its own output directory, then merge them; the merged files
// are byte-identical to one unsharded run. With Slurm:
//
//	#!/bin/bash
//	#SBATCH --array=0-15
//	#SBATCH --cpus-per-task=8
//	davinci-sim sweep studies/l1-size.yaml -j "$SLURM_CPUS_PER_TASK" \
//	    --shard "$SLURM_ARRAY_TASK_ID/16" -o "out/shard-$SLURM_ARRAY_TASK_ID" --resume
//
// and, when the array is done (e.g. sbatch --dependency=afterok:JOBID):
//
//	davinci-sim sweep merge studies/l1-size.yaml -o out/l1-size out/shard-*
//
// --resume makes a requeued task continue where it stopped. merge exits
// with code 1 and lists the missing indices if a shard did not finish.
package sweep
