package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/outfile"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
)

// Shard selects every N-th point: the points whose index is I modulo N.
// The zero value selects every point.
type Shard struct{ I, N int }

// ParseShard parses "I/N" (0 ≤ I < N), e.g. "3/8"; with Slurm, I is
// $SLURM_ARRAY_TASK_ID of an array --array=0-(N-1).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, badInput(fmt.Errorf("--shard %q: want I/N, e.g. 0/4", s))
	}
	if n < 1 || i < 0 || i >= n {
		return Shard{}, badInput(fmt.Errorf("--shard %q: need 0 ≤ I < N (I counts from 0)", s))
	}
	return Shard{I: i, N: n}, nil
}

// Has reports whether the shard includes point index i.
func (sh Shard) Has(i int) bool { return sh.N <= 1 || i%sh.N == sh.I }

// String returns "I/N" ("all" for the zero value).
func (sh Shard) String() string {
	if sh.N <= 1 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", sh.I, sh.N)
}

// Options control a study run.
type Options struct {
	// Out is the output directory (created if needed).
	Out string
	// Jobs is the number of points simulated at once (0 = every CPU).
	Jobs int
	// Shard restricts the run to a subset of the points.
	Shard Shard
	// Resume continues from Out/results.jsonl, skipping finished points
	// (failed ones included: they are deterministic — but for those a
	// time limit stopped, which run again where PointTimeout is now
	// longer, or none, and those refused for their host memory, which run
	// again where the bound on a point's host memory is now larger: on a
	// host with more memory, or with a larger MemoryBudget). Without
	// Resume an existing non-empty results file is an error.
	Resume bool
	// RerunChanged, with Resume, runs again the points of the shard that
	// were recorded from other inputs or options (a program or machine
	// file edited since; RunStamp), where Resume alone refuses them: their
	// records are dropped from results.jsonl first, so the shard never
	// holds records of two inputs. (Such records of other shards stay,
	// and results.csv and the plots show them until their shards run
	// again: Log is told how many.)
	RerunChanged bool
	// Progress, when non-nil, receives a progress bar with ETA.
	Progress io.Writer
	// Log, when non-nil, receives warnings (e.g. about plots).
	Log io.Writer
	// SkipCheck skips Study.Check (the caller already ran it).
	SkipCheck bool
	// Context, when not nil, interrupts the study: the points in flight
	// stop, are not recorded (a --resume runs them again), and Run returns
	// an error wrapping context.Cause.
	Context context.Context
	// PointTimeout, when > 0, bounds the wall time of each point: a point
	// that runs longer is stopped and recorded as failed, so one point
	// cannot hold up a whole study.
	PointTimeout time.Duration
	// MemoryBudget bounds the host memory, in bytes, that the points
	// running at once may hold together by their estimates (0:
	// programs.DefaultMaxHostBytes, one run's bound): with Jobs > 1 a point starts, in index order,
	// once it fits beside those running; one past the budget runs alone.
	// Each point's own run may take the larger of MemoryBudget and
	// programs.DefaultMaxHostBytes (its programs.Options.MaxHostBytes): a
	// point estimated past that is refused, recorded with
	// Record.HostMemoryBytes.
	MemoryBudget int64
}

// Summary counts what a run or merge did.
type Summary struct {
	// Points is the number of points in the study.
	Points int
	// Selected is the number of points in the shard (Points without one).
	Selected int
	// Ran is the number of points simulated by this invocation.
	Ran int
	// Skipped is the number of selected points already finished (resume).
	Skipped int
	// Rerun is the number of selected points recorded from other inputs
	// or options that this invocation runs again (Options.RerunChanged).
	Rerun int
	// RerunTimedOut is the number of selected points a time limit had
	// stopped that this invocation runs again (its limit longer, or none).
	RerunTimedOut int
	// RerunHostMemory is the number of selected points refused for their
	// host memory that this invocation runs again (the bound on a point's
	// host memory larger now: pointHostBytes).
	RerunHostMemory int
	// Failed is the number of points recorded as failed or check-failed
	// among all recorded points; FirstFailure is the message of the
	// lowest-numbered one ("point N: …").
	Failed       int
	FirstFailure string
	// HostMemory is the number of the failed points that were refused
	// for their host memory (Record.HostMemoryBytes): --resume runs them
	// again under a larger bound.
	HostMemory int
	// BadInput is the number of points this invocation ran that failed
	// as bad input (their program or settings refused).
	BadInput int
	// Missing lists the indices of points with no record (merge, shards).
	Missing []int
	// Wall is the run's wall time.
	Wall time.Duration
}

// Run runs the study's points (those of opts.Shard not already finished)
// with opts.Jobs workers. Each point's record is appended to
// Out/results.jsonl as soon as it finishes, in one write, so an
// interruption loses only the points in flight. At the end results.jsonl
// is rewritten sorted by index and results.csv and the plots are written;
// the files are identical whatever Jobs is. A point that fails (bad
// combination of parameters, deadlock, failed check) is recorded with
// its status and message and does not stop the study.
func Run(s *Study, opts Options) (*Summary, error) {
	start := time.Now()
	if opts.Out == "" {
		return nil, badInput(errors.New("no output directory (-o DIR)"))
	}
	// (With SkipCheck the caller checked the study: opts.Context
	// interrupts the points' run, not the check of the outputs.)
	c := setCheck{hostBytes: opts.pointHostBytes(), progress: opts.Progress, log: opts.Log, start: start}
	var readBefore *readResumed // (results.jsonl as finished read it)
	if !opts.SkipCheck {
		c.ctx = opts.Context
		if err := s.checkKeys(c); err != nil {
			return nil, err
		}
		var done bool
		if done, readBefore = finished(s, opts); !done { // (a finished study's --resume builds nothing)
			if err := s.checkSet(c); err != nil {
				return nil, err
			}
		}
	}
	if err := s.checkOutputs(c, opts.Out, true); err != nil {
		return nil, err
	}
	if opts.Log != nil {
		for _, m := range s.Metrics {
			if report.HostTimed(m) {
				fmt.Fprintf(opts.Log, "sweep: warning: metric %q holds the host's wall time: results.csv and results.jsonl differ from run to run (and with -j)\n", m)
			}
		}
	}
	if err := checkFreshOut(s, opts.Out); err != nil {
		return nil, err
	}
	if _, err := os.Stat(opts.Out); errors.Is(err, fs.ErrNotExist) {
		if err := outfile.CheckNewDir(opts.Out, "-o "+opts.Out); err != nil {
			return nil, badInput(err)
		}
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, badInput(fmt.Errorf("-o %s: %w", opts.Out, err))
	}
	if err := outfile.CheckDir(opts.Out, "-o "+opts.Out); err != nil {
		return nil, badInput(err) // (before any point runs: a directory that takes no files)
	}
	for _, name := range []string{ResultsJSONL, ResultsCSV} {
		p := filepath.Join(opts.Out, name)
		if err := badinput.NotPipe(p); err != nil {
			return nil, badInput(err)
		}
		if _, err := outfile.Target(p); err != nil {
			return nil, badInput(err) // (a device or directory there: refused when written, after the points)
		}
	}
	release, err := lockOut(opts.Out)
	if err != nil {
		return nil, err
	}
	defer release()
	path := filepath.Join(opts.Out, ResultsJSONL)
	done := map[int]Record{}
	var again reruns
	tail := resultsTail{eol: true} // (how the file ends: repaired before appending)
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		if !opts.Resume {
			return nil, badInput(fmt.Errorf("%s exists: use --resume to continue the study, or another -o directory", path))
		}
		recs, n, t, err := readForResume(path, s, opts, readBefore)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			done[r.Index] = r
		}
		again, tail = n, t
	}
	sum := &Summary{Points: len(s.Points), Rerun: again.changed, RerunTimedOut: again.timedOut, RerunHostMemory: again.hostMemory}
	var todo []Point
	for _, p := range s.Points {
		if !opts.Shard.Has(p.Index) {
			continue
		}
		sum.Selected++
		if _, ok := done[p.Index]; ok {
			sum.Skipped++
			continue
		}
		todo = append(todo, p)
	}

	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	jobs = min(jobs, len(todo))
	if jobs > 1 {
		// The points use the CPUs; one MMAD call splitting its rows among
		// goroutines would only add overhead.
		cube.SetMaxWorkers(1)
		defer cube.SetMaxWorkers(0)
		arch.SetReadAhead(false) // (nor a worker generating streams ahead beside each)
		defer arch.SetReadAhead(true)
		programs.SetRunsAtOnce(1) // (nor scheme auto's timing runs several at once: each holds a chip)
		defer programs.SetRunsAtOnce(0)
	}
	var werr error
	if len(todo) > 0 {
		if err := badinput.NotPipe(path); err != nil {
			return nil, badInput(err)
		}
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		if err := tail.repair(path, fh); err != nil {
			fh.Close()
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		werr = runPoints(s, todo, jobs, opts, func(r Record) error {
			line, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if _, err := fh.Write(append(line, '\n')); err != nil {
				return fmt.Errorf("%s: %v", path, err)
			}
			done[r.Index] = r
			sum.Ran++
			if r.badInput {
				sum.BadInput++
			}
			return nil
		})
		if err := fh.Close(); err != nil && werr == nil {
			werr = err
		}
	}
	if werr != nil {
		return sum, werr
	}
	if err := finish(s, opts.Out, done, sum, opts.Log); err != nil {
		return sum, err
	}
	for _, p := range s.Points {
		if opts.Shard.Has(p.Index) {
			if _, ok := done[p.Index]; !ok {
				sum.Missing = append(sum.Missing, p.Index)
			}
		}
	}
	sum.Wall = time.Since(start)
	return sum, nil
}

// runPoints simulates the points with jobs workers and calls record (from
// one goroutine) for each finished point, in completion order. After
// record returns an error it stops dispatching, stops the points in
// flight (their results could not be recorded either: a full disk must
// not wait for a long point to end) and returns that error.
func runPoints(s *Study, todo []Point, jobs int, opts Options, record func(Record) error) error {
	parent := opts.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	type job struct {
		p   Point
		seq int // its turn to start (memGate)
	}
	work := make(chan job, jobs)
	free := make(chan struct{}, jobs) // a token per job not running a point
	for range jobs {
		free <- struct{}{}
	}
	results := make(chan Record)
	bar := newProgress(opts.Progress, len(todo))
	defer bar.close()
	// Points at once hold their memory together (memory.go): admitted
	// within the budget. (One job runs one point at a time.)
	budget := opts.MemoryBudget
	if budget <= 0 {
		budget = defaultHostBytes()
	}
	var gate *memGate
	if jobs > 1 {
		gate = newGate(budget)
	}
	pointBytes := opts.pointHostBytes()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				// The point's memory estimated here (in parallel: it
				// reads and decodes the program), admitted in turn.
				var mem int64
				if gate != nil {
					mem = s.hostBytes(j.p, budget)
					if !gate.acquire(ctx, stop, j.seq, mem) {
						free <- struct{}{}
						continue // interrupted
					}
				}
				r := s.runPoint(ctx, j.p, opts.PointTimeout, pointBytes, bar)
				if gate != nil {
					if mem >= largePoint {
						// Its garbage collected before the next point
						// counts on the memory (the heap would grow to
						// twice a large point before the collector ran).
						debug.FreeOSMemory()
					}
					gate.release(mem)
				}
				free <- struct{}{}
				if ctx.Err() != nil {
					bar.drop(j.p.Index)
					continue // interrupted: not a result
				}
				results <- r
			}
		}()
	}
	go func() {
		defer close(work)
		for i, p := range todo {
			// A job free first, then the memory (in the job): the
			// estimates held are the points' running.
			select {
			case <-free:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
			work <- job{p, i} // (room for it: a job was free)
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	var first error
	for r := range results {
		if first != nil {
			continue
		}
		if err := record(r); err != nil {
			first = err
			close(stop)
			cancel(fmt.Errorf("a point's record could not be written: %w", err))
			bar.drop(r.Index)
			continue
		}
		bar.step(r.Index, r.Status != StatusOK)
	}
	if first == nil && parent.Err() != nil {
		first = fmt.Errorf("sweep: %w; the points finished so far are in %s (continue with --resume -o %s)", context.Cause(ctx), filepath.Join(opts.Out, ResultsJSONL), opts.Out)
	}
	return first
}

// defaultHostBytes is the bound on a run's host memory where none is
// given, this host's (programs.DefaultMaxHostBytes; a variable: tests
// make the host smaller).
var defaultHostBytes = programs.DefaultMaxHostBytes

// pointHostBytes is the bound on each point's own host memory, by its
// program's estimate (programs.Options.MaxHostBytes): the larger of
// MemoryBudget and this host's default bound — the budget shares memory
// among the points at once; a larger one also lets a point take more
// than the default, as run's --max-memory does.
func (o Options) pointHostBytes() int64 { return max(o.MemoryBudget, defaultHostBytes()) }

// pointProgressEvery is how often (in events) a point's run tells the
// progress bar its share done: a few milliseconds of simulation. A
// variable for tests.
var pointProgressEvery uint64 = 1 << 16

// Point statuses in the results.
const (
	// StatusOK: the simulation ran; metrics are recorded.
	StatusOK = "ok"
	// StatusFailed: the point could not run (infeasible parameters) or
	// the simulation failed (deadlock); Error says why, metrics are null.
	StatusFailed = "failed"
	// StatusCheckFailed: the run completed but its correctness check
	// failed; metrics are recorded and Error says what failed.
	StatusCheckFailed = "check-failed"
)

// Output file names in the output directory.
const (
	ResultsJSONL = "results.jsonl"
	ResultsCSV   = "results.csv"
)

// OpUnit is Record.OpUnit of a point whose operations are integer ones.
const OpUnit = "OP"

// Record is one line of results.jsonl: a finished point.
type Record struct {
	// Index is the point's index in the study.
	Index int `json:"index"`
	// Params maps each varied parameter to the point's value, as the
	// study file writes it (a program or machine file relative to the
	// study file's folder, whatever the directory the study ran from).
	Params map[string]string `json:"params"`
	// Run is what besides Params defines the point's run (checked when
	// a study resumes or merges).
	Run RunStamp `json:"run"`
	// Status is StatusOK, StatusFailed or StatusCheckFailed.
	Status string `json:"status"`
	// Error is the failure message (one line), empty when ok.
	Error string `json:"error,omitempty"`
	// TimeLimitSeconds is the wall-time limit (--point-timeout) that
	// stopped the point, where one did (status failed): not a property of
	// the point, so --resume runs it again where the limit is now longer,
	// or none.
	TimeLimitSeconds float64 `json:"time_limit_seconds,omitempty"`
	// HostMemoryBytes is the bound on the point's host memory, in bytes,
	// that refused it, where one did (status failed: its estimate passed
	// this host's default bound, or --max-memory's;
	// badinput.HostMemory): not a property of the point, so --resume runs
	// it again where the bound is now larger — on a host with more memory,
	// or with a larger --max-memory.
	HostMemoryBytes int64 `json:"host_memory_bytes,omitempty"`
	// Metrics maps each metric to its JSON value (null when the report
	// has no such key, or the point failed).
	Metrics map[string]json.RawMessage `json:"metrics"`
	// OpUnit is OpUnit where the point's report counts integer
	// operations (its flops.convention "int8 ops …": flops.tflops is
	// TOP/s, the operational intensities op/byte, as the run's summary
	// says), empty for floating-point ones (and for failed points): the
	// plots' units.
	OpUnit string `json:"op_unit,omitempty"`
	// badInput marks a failure the run refused as bad input (its files'
	// or settings' fault, not the simulation's); not recorded.
	badInput bool
	// stale marks a record read from results.jsonl that the study as it is
	// would not make: from other inputs or options, or with other metrics
	// (checkRecord, with stale records allowed).
	stale bool
}

// Overrides returns the --set overrides of point p: the study's fixed set
// followed by the point's parameters (program and machine excluded).
func (s *Study) Overrides(p Point) []machines.Override {
	ovs := slices.Clone(s.Set)
	for i, q := range s.Params {
		if q != ParamProgram && q != ParamMachine {
			ovs = append(ovs, machines.Override{Path: q, Value: p.Values[i]})
		}
	}
	return ovs
}

// ProgramOf returns the program file and machine ("" = the program's) of
// point p, as a run opens them: files resolved against the study's folder
// (Study.Dir) — but for an example built into the binary that the study
// names where no file of that path is (programs/examples/hgemm.yaml),
// whose name is returned as written.
func (s *Study) ProgramOf(p Point) (program, machine string) {
	program, machine = s.written(p)
	path := resolveFile(s.Dir, program)
	if _, ok := programs.Example(program); ok && !fileThere(path) {
		path = program
	}
	return path, resolveMachine(s.Dir, machine)
}

// written returns the program file and machine of point p as the study
// file writes them.
func (s *Study) written(p Point) (program, machine string) {
	program, machine = s.Program, s.Machine
	if i := slices.Index(s.Params, ParamProgram); i >= 0 {
		program = p.Values[i]
	}
	if i := slices.Index(s.Params, ParamMachine); i >= 0 {
		machine = p.Values[i]
	}
	return program, machine
}

// RunPoint simulates one point and returns its record; failures are
// recorded, never returned (a panic in the simulator is recorded as a
// failure too, so one bad point cannot stop a study). Its host memory is
// bounded as a run's without --max-memory.
func (s *Study) RunPoint(p Point) Record { return s.runPoint(context.Background(), p, 0, 0, nil) }

// runPoint is RunPoint stopped by ctx, and after timeout (> 0) of wall
// time (recorded as a failure), its host memory bounded by hostBytes (0:
// the default; a refusal for it recorded with the bound); it tells bar,
// when drawn, how far its run is.
func (s *Study) runPoint(ctx context.Context, p Point, timeout time.Duration, hostBytes int64, bar *progress) (rec Record) {
	rec = Record{Index: p.Index, Params: s.paramMap(p), Run: s.stamp(p), Status: StatusOK, Metrics: map[string]json.RawMessage{}}
	fail := func(msg string) {
		rec.Status, rec.Error, rec.OpUnit = StatusFailed, msg, ""
		for _, m := range s.Metrics {
			rec.Metrics[m] = json.RawMessage("null")
		}
	}
	defer func() {
		if r := recover(); r != nil {
			fail(fmt.Sprintf("internal error: panic: %v", r))
		}
	}()
	// The messages recorded name the files as the study does (relative to
	// its folder), not as the run opened them.
	paths := s.paths(p)
	f, err := readProgram(paths.program, paths.written)
	if err != nil {
		fail(paths.rewrite(firstLine(err)))
		rec.badInput = true
		return rec
	}
	var limit error // the cause of a stop by the time limit
	if timeout > 0 {
		var cancel context.CancelFunc
		limit = fmt.Errorf("point time limit %v exceeded (--point-timeout)", timeout)
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, limit)
		defer cancel()
	}
	hooks := programs.RunHooks{Context: ctx}
	if bar.enabled() {
		// The point's own run, not the runs its build makes first
		// (scheme auto's: their stage is named).
		m := new(programs.WorkMeter)
		hooks.Meter, hooks.ProgressEvery = m, pointProgressEvery
		hooks.Progress = func(sim.Time, uint64) {
			if f, ok := m.Fraction(); ok && m.Stage() == "" {
				bar.set(p.Index, f)
			}
		}
		bar.set(p.Index, 0)
	}
	o := s.runOptions(paths.machine, p)
	o.MaxHostBytes = hostBytes
	res, err := programs.Execute(f, o, hooks)
	if err != nil {
		fail(paths.rewrite(firstLine(s.namedByStudy(f, err))))
		rec.badInput = badinput.Is(err)
		if limit != nil && context.Cause(ctx) == limit {
			rec.TimeLimitSeconds = timeout.Seconds()
		}
		if b, ok := badinput.HostMemoryBound(err); ok && b > 0 {
			rec.HostMemoryBytes = b
		}
		return rec
	}
	var buf bytes.Buffer
	if err := res.Report.WriteJSON(&buf); err != nil {
		fail("report: " + firstLine(err))
		return rec
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		fail("report: " + firstLine(err))
		return rec
	}
	if res.Report.OpUnit() == OpUnit {
		rec.OpUnit = OpUnit
	}
	for _, m := range s.Metrics {
		v, ok := Lookup(doc, m)
		raw := json.RawMessage("null")
		if ok {
			if b, err := json.Marshal(v); err == nil {
				raw = b
			}
		}
		rec.Metrics[m] = raw
	}
	if res.Failure != nil {
		rec.Status, rec.Error = StatusCheckFailed, paths.rewrite(firstLine(res.Failure))
	}
	return rec
}

func (s *Study) paramMap(p Point) map[string]string {
	m := make(map[string]string, len(s.Params))
	for i, q := range s.Params {
		m[q] = p.Values[i]
	}
	return m
}

// Lookup resolves a dotted path (e.g. "buffers.L1.peak_fraction",
// "cores.0.finish_cycle") in a decoded JSON document: object keys match
// exactly, else case-insensitively; array elements are addressed by index,
// or all at once by "*": the rest of the path is looked up in each element
// and the value is the list of what was found, null where an element lacks
// it ("hplmxp.windows.*.seconds").
func Lookup(doc any, path string) (any, bool) {
	cur := doc
	parts := strings.Split(path, ".")
	for i, part := range parts {
		if c, ok := cur.([]any); ok && part == "*" {
			out := make([]any, 0, len(c))
			rest := strings.Join(parts[i+1:], ".")
			for _, el := range c {
				v, ok := el, true
				if rest != "" {
					v, ok = Lookup(el, rest)
				}
				if !ok {
					v = nil // kept as null: the lists of two paths stay aligned
				}
				out = append(out, v)
			}
			return out, true
		}
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[part]
			if !ok {
				keys := make([]string, 0, len(c))
				for k := range c {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					if strings.EqualFold(k, part) {
						v, ok = c[k], true
						break
					}
				}
			}
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// runOptions are point p's run options on machine mach. A machine file
// given as program.machine resolves against the study's folder, as the
// study's other files do (a --set one resolves against the current
// directory).
func (s *Study) runOptions(mach string, p Point) programs.Options {
	ovs := s.Overrides(p)
	dir := s.absDir()
	for i, o := range ovs {
		ovs[i].Value = resolveParam(dir, o.Path, o.Value)
	}
	o := programs.Options{Machine: mach, Overrides: ovs, KBatch: s.KBatch}
	if s.FastForward {
		ff := arch.DefaultFastForward
		o.FastForward = &ff
	}
	return o
}

// finished reports whether opts resumes the study with every point of its
// shard recorded in Out/results.jsonl and none to run again (rerunWhy):
// nothing to run (the records are checked after, as readForResume checks
// them). It returns what it read where every record was the study's (nil
// where one was not, or the last line is cut off: readForResume's rules
// then), for readForResume to use while the file has not changed since (a
// resume of 100000 recorded points read and checked them twice: 3 of its
// 8 s).
func finished(s *Study, opts Options) (bool, *readResumed) {
	if !opts.Resume {
		return false, nil
	}
	path := filepath.Join(opts.Out, ResultsJSONL)
	before, err := os.Stat(path)
	if err != nil {
		return false, nil
	}
	recs, tail, err := readResultsFile(path, s, nil)
	if err != nil || tail.torn > 0 {
		return false, nil
	}
	read := &readResumed{recs: recs, tail: tail, file: before}
	has := map[int]bool{}
	for _, r := range recs {
		has[r.Index] = rerunWhy(r, opts) == rerunNone
	}
	for _, p := range s.Points {
		if opts.Shard.Has(p.Index) && !has[p.Index] {
			return false, read
		}
	}
	return true, read
}

// readResumed is a results file as finished read it: its records (every
// one the study's, from its inputs), how it ends, and its file's state
// then.
type readResumed struct {
	recs []Record
	tail resultsTail
	file fs.FileInfo
}

// still returns r's records and tail where the file at path is the one r
// read — the same size, modification time and file (os.SameFile) —, else
// false.
func (r *readResumed) still(path string) ([]Record, resultsTail, bool) {
	if r == nil {
		return nil, resultsTail{}, false
	}
	now, err := os.Stat(path)
	if err != nil || now.Size() != r.file.Size() || !now.ModTime().Equal(r.file.ModTime()) || !os.SameFile(now, r.file) {
		return nil, resultsTail{}, false
	}
	return r.recs, r.tail, true
}

// reruns counts the recorded points of a shard that a resume runs again
// (readForResume), by why.
type reruns struct {
	changed    int // recorded from other inputs or options (RerunChanged)
	timedOut   int // stopped by a time limit now longer, or none
	hostMemory int // refused for host memory under a bound now larger
}

// Why a resume runs a recorded point again (rerunWhy).
const (
	rerunNone       = iota // it does not
	rerunTimedOut          // a time limit stopped it, now longer or none
	rerunHostMemory        // a bound on its host memory refused it, now larger
)

// rerunWhy says why a resume with opts runs record r again — a point of
// the shard, recorded from the study as it is now —, or rerunNone: a
// failure that is not a property of the point runs again where what
// caused it has changed — its time limit (Options.PointTimeout) now longer
// or none, its bound on host memory (Options.pointHostBytes) now larger.
func rerunWhy(r Record, opts Options) int {
	switch {
	case r.TimeLimitSeconds > 0 && (opts.PointTimeout <= 0 || opts.PointTimeout.Seconds() > r.TimeLimitSeconds):
		return rerunTimedOut
	case r.HostMemoryBytes > 0 && opts.pointHostBytes() > r.HostMemoryBytes:
		return rerunHostMemory
	}
	return rerunNone
}

// readForResume reads Out/results.jsonl to resume study s (or takes the
// records before read, where the file is still the one they were read
// from: finished): every record
// must be the study's as it is now (ReadResults), or, with
// opts.RerunChanged, the records of the shard's points made from other
// inputs or options are dropped and counted (n.changed). The shard's
// points a time limit stopped run again where the limit is now longer, or
// none (n.timedOut), and those refused for their host memory where the
// bound is now larger (n.hostMemory). Records dropped leave the file too,
// rewritten without them before any point runs again. A last line cut off
// (resultsTail) is dropped with a note on opts.Log: its point is not
// recorded; tail says how the file ends, for Run to cut it back to its
// last record before appending (tail.repair).
func readForResume(path string, s *Study, opts Options, before *readResumed) (recs []Record, n reruns, tail resultsTail, err error) {
	var stale int
	var staleOK *int // (nil: a record from other inputs is an error)
	if opts.RerunChanged {
		staleOK = &stale
	}
	var same bool
	if recs, tail, same = before.still(path); !same { // (records finished read, all the study's: none stale)
		if recs, tail, err = readResultsFile(path, s, staleOK); err != nil {
			return nil, reruns{}, resultsTail{}, err
		}
	}
	if tail.torn > 0 && opts.Log != nil {
		fmt.Fprintf(opts.Log, "sweep: %s\n", tail.note(path, "dropped (the file is cut back to its last whole record); its point runs again"))
	}
	kept := recs[:0:0]
	others := 0 // other shards' records from other inputs
	for _, r := range recs {
		mine := opts.Shard.Has(r.Index)
		switch {
		case r.stale:
			if mine {
				n.changed++
				continue
			}
			others++
		case mine && rerunWhy(r, opts) == rerunTimedOut:
			n.timedOut++
			continue
		case mine && rerunWhy(r, opts) == rerunHostMemory:
			n.hostMemory++
			continue
		}
		kept = append(kept, r)
	}
	if others > 0 && opts.Log != nil {
		fmt.Fprintf(opts.Log, "sweep: %d points of other shards were recorded from other inputs, options or metrics: results.csv and the plots show them as recorded until their shards run with --resume --rerun-changed\n", others)
	}
	if n == (reruns{}) {
		return recs, n, tail, nil
	}
	b, err := encodeRecords(kept)
	if err != nil {
		return nil, reruns{}, resultsTail{}, err
	}
	if err := writeAtomic(path, b); err != nil {
		return nil, reruns{}, resultsTail{}, err
	}
	return kept, n, resultsTail{end: int64(len(b)), eol: true}, nil
}

// checkFreshOut refuses -o DIR holding a file the study writes (results.csv,
// a plot) but no results.jsonl: it is not this study's output, and the
// file — a user's a.png beside their notes — would be replaced without a
// word (run -o refuses a directory that is not a previous run's alike).
func checkFreshOut(s *Study, dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, ResultsJSONL)); err == nil {
		// A study's output, even empty: a shard with no points of its
		// own, a --rerun-changed resume interrupted after it rewrote the
		// file (continued with --resume).
		return nil
	}
	for _, o := range s.outputFiles(dir, true) {
		if filepath.Base(o) == ResultsJSONL {
			continue
		}
		if _, err := os.Lstat(o); err == nil {
			return badInput(fmt.Errorf("-o %s: holds %s, which the study writes, but no %s (not a study's output); give a new or empty directory, or remove the file", dir, filepath.Base(o), ResultsJSONL))
		}
	}
	return nil
}
