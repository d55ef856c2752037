package programs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
)

// newTestLUCluster builds (does not run) a cluster LU job.
func newTestLUCluster(t *testing.T, yaml string, sets ...string) *luCluster {
	t.Helper()
	f, err := Parse("lu.yaml", ".", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Overrides: mustSets(t, sets...)}
	topo, err := cluster.LoadSystem(ClusterMachine(f, o), o.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	job, err := buildLUCluster(f, topo, o)
	if err != nil {
		t.Fatal(err)
	}
	j := job.(*luCluster)
	for pr := range j.P {
		for pc := range j.Q {
			j.ranks = append(j.ranks, &luRank{id: j.rankOf(pr, pc), pr: pr, pc: pc})
		}
	}
	return j
}

// A kernel key determines the kernel's work exactly: every update, TRSM
// and conversion kernel of every rank and iteration with one key has the
// same work list (so the exact cache may reuse a time), on grids where
// the ranks' shares differ, for both trailing precisions.
func TestLUKernelKeyExact(t *testing.T) {
	for _, c := range []struct{ grid, trailing string }{{"{p: 2, q: 4}", "fp16"}, {"{p: 4, q: 2}", "fp32"}} {
		j := newTestLUCluster(t, luClusterSmall+"numerics: off\ngrid: "+c.grid+"\n", "program.trailing="+c.trailing, "program.n=2048")
		seen := map[luKernelKey]any{}
		check := func(d luKernelDesc, work any, tiles int) {
			t.Helper()
			if w, ok := seen[d.key]; ok && !reflect.DeepEqual(w, work) {
				t.Fatalf("%s: key %+v: two different work lists", c.grid, d.key)
			}
			seen[d.key] = work
			if d.tiles != tiles {
				t.Fatalf("%s: key %+v: %d tiles, the work list has %d", c.grid, d.key, d.tiles, tiles)
			}
		}
		nbk, F := j.pl.nbk, j.pl.F
		for _, r := range j.ranks {
			for i := 0; i < nbk-1; i++ {
				k0 := i / F * F
				for _, z := range []band{{i + 1, i + 2}, {i + 2, min(k0+F, nbk)}, {min(k0+F, nbk), nbk}, {k0 + F, k0 + 2*F}} {
					for _, i0 := range []int{i, k0} {
						g := j.update(r, z, i0, i+1, 1)
						check(j.updateDesc(r, "z", j.pl.main, z, i0, i+1), g, g.tiles())
					}
				}
				left, right := j.trsm(r, i)
				tiles := 0
				var gs []*luGEMM
				for _, g := range []*luGEMM{left, right} {
					if g != nil && len(g.jobs) > 0 {
						gs = append(gs, g)
						tiles += g.tiles()
					}
				}
				check(j.trsmDesc(r, i), gs, tiles)
				if j.pl.tb == 4 {
					cv := j.cvtJobs(r, i)
					check(j.cvtDesc(r, i), cv, len(cv))
				}
			}
		}
		if len(seen) < 100 {
			t.Errorf("%s: only %d distinct keys: the test exercises too little", c.grid, len(seen))
		}
	}
}

// sampledVsFull runs a node both ways and returns the two results'
// totals and the sampled run's interval.
func TestLUClusterSampledNearFull(t *testing.T) {
	if testing.Short() {
		t.Skip("two node runs at n = 16384")
	}
	sets := []string{"program.n=16384", "program.nb=256", "program.n_fused=6", "program.n_fusion=16", "program.trailing=fp16",
		"program.sampling.windows=4"}
	full, err := runLU(t, luClusterSmall+"numerics: off\n", append(sets, "program.fidelity=full")...)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := runLU(t, luClusterSmall+"numerics: off\n", append(sets, "program.fidelity=sampled")...)
	if err != nil {
		t.Fatal(err)
	}
	a, b := full.Report.Time.Seconds, smp.Report.Time.Seconds
	s := smp.Report.Cluster.Sampling
	if s == nil {
		t.Fatal("no sampling section")
	}
	if d := math.Abs(b/a - 1); d > 0.03 {
		t.Errorf("total: full %v s, sampled %v s (%.2f %% apart)", a, b, 100*d)
	}
	if full.Report.Energy == nil || smp.Report.Energy == nil {
		t.Fatal("no energy section")
	}
	if ea, eb := full.Report.Energy.Joules, smp.Report.Energy.Joules; math.Abs(eb/ea-1) > 0.03 {
		t.Errorf("energy: full %v J, sampled %v J", ea, eb)
	}
	if s.WindowsSampled != 4 || s.LaunchesPredicted == 0 || s.KernelSimulations >= s.KernelsLaunched || s.Residuals == 0 {
		t.Errorf("sampling %+v: expected 4 windows sampled, predictions and residuals", *s)
	}
	if s.HalfWidthSeconds <= 0 || s.TotalLowSeconds > b || s.TotalHighSeconds < b {
		t.Errorf("interval [%v, %v] around %v", s.TotalLowSeconds, s.TotalHighSeconds, b)
	}
	if s.KernelsLaunched != s.LaunchesExact+s.LaunchesPredicted {
		t.Errorf("launches %d ≠ exact %d + predicted %d", s.KernelsLaunched, s.LaunchesExact, s.LaunchesPredicted)
	}
}

// Bad sampling input is one line naming the key.
func TestLUClusterSampledBadInput(t *testing.T) {
	for set, want := range map[string]string{
		"program.sampling.windows=-1": `"sampling.windows"`,
		"program.fidelity=sampledd":   `"fidelity"`,
	} {
		_, err := runLU(t, luClusterSmall+"numerics: off\n", set)
		if !badinput.Is(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", set, err)
		}
	}
	_, err := runLU(t, luClusterSmall+"numerics: full\n", "program.fidelity=sampled")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "numerics off") {
		t.Errorf("sampled with full numerics: got %v", err)
	}
}

// --fidelity sampled on one DaVinci chip runs lu-fused as a node of that
// one NPU with the machine's host and link (equal to a 1-NPU node given
// those by hand), and refuses other kinds and machines with one line.
func TestLUSampledOneChip(t *testing.T) {
	run := func(yaml string, o Options) (*Result, error) {
		t.Helper()
		f, err := Parse("lu.yaml", ".", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		return Execute(f, o, RunHooks{})
	}
	const prog = "kind: lu-fused\nn: 2048\nnb: 128\nn_fused: 2\nn_fusion: 16\nnumerics: off\n"
	one, err := run(prog, Options{Fidelity: "sampled"})
	if err != nil {
		t.Fatal(err)
	}
	byHand, err := run(prog+"machine: cloudbrain2-node\nfidelity: sampled\n", Options{Overrides: mustSets(t, "node.npus=1", "node.pcie.generation=4",
		"node.hosts.cores=24", "node.hosts.memory_bandwidth=93.8GB/s")})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := one.Report.Time.Seconds, byHand.Report.Time.Seconds; a != b {
		t.Errorf("one chip sampled %v s, the 1-NPU node by hand %v s", a, b)
	}
	if cl := one.Report.Cluster; cl == nil || cl.Fidelity != "sampled" || cl.NPUs != 1 || !strings.Contains(cl.Name, "ascend-910a") {
		t.Errorf("cluster section %+v", cl)
	}
	if _, err := run("kind: hgemm\nm: 64\nn: 64\nk: 64\n", Options{Fidelity: "sampled"}); !badinput.Is(err) || !strings.Contains(err.Error(), "lu-fused on NPUs") {
		t.Errorf("hgemm with fidelity sampled: %v", err)
	}
	if _, err := run(prog+"machine: a100\n", Options{Fidelity: "sampled"}); !badinput.Is(err) || !strings.Contains(err.Error(), "lu-fused on NPUs") {
		t.Errorf("a GPU with fidelity sampled: %v", err)
	}
}

// Work outside the event loop stops with the run's context: the matrix's
// generation and the golden model of sampled numerics (DaVinci and GPU
// lu-fused) return the context's cause, not a bad-input error, and do not
// run to their end (a context stopped before the run stops the first, the
// matrix; TestLUGoldenStopsInsideAnIteration the model).
func TestLUGoldenStops(t *testing.T) {
	cause := errors.New("interrupted for the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	for _, prog := range []string{
		"kind: lu-fused\nn: 4096\nnb: 256\nnumerics: sampled\n",
		"kind: lu-fused\nmachine: a100\nn: 4096\nnb: 256\nnumerics: sampled\n",
	} {
		f, err := Parse("lu.yaml", ".", []byte(prog))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Execute(f, Options{}, RunHooks{Context: ctx})
		if !errors.Is(err, cause) || badinput.Is(err) || !strings.Contains(err.Error(), "stopped generating the matrix") {
			t.Errorf("%q: got %v", prog, err)
		}
	}
}

// The GPU lu-fused job's refinement and Finish run luJob's code: the
// context Execute gives must reach luJob's runContext (a second one on the
// GPU job took it instead).
func TestLUGPUContextReachesLUJob(t *testing.T) {
	f, err := Parse("lu.yaml", ".", []byte("kind: lu-fused\nmachine: a100\nn: 1024\nnb: 256\nnumerics: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := MachineFor(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	job, err := f.Kind.BuildFor(f, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	giveContext(job, ctx)
	if got := job.(*luGPUJob).luJob.runCtx(); got != ctx {
		t.Errorf("luJob's context %v, want the run's", got)
	}
}

// The interval's factor is Student's t for 99.7 % with residuals − 1
// degrees of freedom: 19.2 from 3 residuals, 3.76 from 13, 3.0 from very
// many (the normal's 3σ).
func TestSamplingQuantile(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{3, 19.21}, {13, 3.764}, {1 << 20, 3.000}} {
		if got := samplingQuantile(c.n); math.Abs(got-c.want) > 0.01*c.want {
			t.Errorf("%d residuals: %.3f, want %.3f", c.n, got, c.want)
		}
	}
}

// The sampled total's interval is the widest of the ranks' (all of them
// end at the final all-reduce): with every window sampled, rank 0 — whose
// kernels stand for their classes — predicts nothing, and the interval
// took its zero width, 7 µs short of the isolated run's total; now it is
// another rank's and covers it. Without an error estimate (one window)
// the half-width is all of that rank's predicted time. Timed-apart runs
// have no memory section.
func TestLUSampledIntervalWidestRank(t *testing.T) {
	run := func(fidelity string, windows int) *report.Report {
		t.Helper()
		f, err := ReadFile("examples/lu-cluster-small.yaml")
		if err != nil {
			t.Fatal(err)
		}
		sets := []string{"program.n=8192", "program.nb=128", "program.n_fused=4", "program.n_fusion=20", "program.numerics=off", "program.check=false", "program.fidelity=" + fidelity}
		if windows > 0 {
			sets = append(sets, fmt.Sprintf("program.sampling.windows=%d", windows))
		}
		res, err := Execute(f, Options{Overrides: mustSets(t, sets...)}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Report
	}
	iso := run("isolated", 0).Time.Seconds
	all := run("sampled", 1000)
	s := all.Cluster.Sampling
	if s.WindowsSampled != s.Windows || s.LaunchesPredicted == 0 {
		t.Fatalf("windows %d of %d sampled, %d predicted: want every window and some predictions", s.WindowsSampled, s.Windows, s.LaunchesPredicted)
	}
	if s.Rank == 0 || s.HalfWidthSeconds <= 0 || !(s.TotalLowSeconds <= iso && iso <= s.TotalHighSeconds) {
		t.Errorf("rank %d, half-width %.3g s, interval [%.9g, %.9g] s: want another rank's, covering isolated's %.9g s", s.Rank, s.HalfWidthSeconds, s.TotalLowSeconds, s.TotalHighSeconds, iso)
	}
	if all.Memory != nil {
		t.Errorf("memory section %+v in a run timed apart", all.Memory)
	}
	one := run("sampled", 1).Cluster.Sampling
	if one.ResidualSD != nil || one.HalfWidthSeconds != one.PredictedKernelSeconds || one.PredictedKernelSeconds <= 0 {
		t.Errorf("one window: sd %v, half-width %.3g s, predicted %.3g s: want no sd and the predicted time", one.ResidualSD, one.HalfWidthSeconds, one.PredictedKernelSeconds)
	}
}

// Kernels timed apart are simulated on as many chip models at once as the
// run's bound on its host memory holds beside the run's base — at least
// one, however many processors there are — and the report does not depend
// on how many: a bound that holds one gives the report of one that holds
// many. A bound that does not hold one beside the base is refused before
// the run. (One a processor ran, each chip checked alone against the
// bound: GOMAXPROCS=2 took 697 MB with --max-memory 300MiB.)
func TestLUSampledChipsWithinBound(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	build := func(bound int64) (*luCluster, error) {
		t.Helper()
		f, err := Parse("lu.yaml", ".", []byte(luClusterSmall+"numerics: off\nfidelity: sampled\n"))
		if err != nil {
			t.Fatal(err)
		}
		o := Options{MaxHostBytes: bound}
		topo, err := cluster.LoadSystem(ClusterMachine(f, o), o.Overrides)
		if err != nil {
			t.Fatal(err)
		}
		job, err := buildLUCluster(f, topo, o)
		if err != nil {
			return nil, err
		}
		return job.(*luCluster), nil
	}
	run := func(bound int64) (*luCluster, []byte) {
		t.Helper()
		j, err := build(bound)
		if err != nil {
			t.Fatal(err)
		}
		res, err := j.Run(RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report
		rep.Sim.WallSeconds, rep.Sim.EventsPerSecond, rep.Sim.KernelWallSeconds = 0, 0, 0
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		return j, b
	}
	probe, err := build(0)
	if err != nil {
		t.Fatal(err)
	}
	per := probe.chipBytes
	if per <= 0 {
		t.Fatal("no chip model estimate at fidelity sampled")
	}
	one, repOne := run(runHostBytes + int64(1.5*per))
	many, repMany := run(runHostBytes + int64(8*per))
	if got := one.timer.atOnce.most.Load(); got != 1 {
		t.Errorf("a bound holding one chip model beside the base: %d simulated at once", got)
	}
	if got := many.timer.atOnce.most.Load(); got < 2 || got > 4 {
		t.Errorf("a bound holding 8 chip models, 4 processors: %d simulated at once", got)
	}
	if string(repOne) != string(repMany) {
		t.Errorf("the report depends on the chips simulated at once:\none: %s\nmany: %s", repOne, repMany)
	}
	for _, bound := range []int64{runHostBytes + int64(0.9*per), int64(1.5 * per)} {
		_, err := build(bound)
		if _, host := badinput.HostMemoryBound(err); !host || !strings.Contains(err.Error(), "each kernel is simulated alone on a chip model") {
			t.Errorf("bound %d B (a chip model %.0f B, the base %d B): %v", bound, per, runHostBytes, err)
		}
	}
}

// A sampled run's kernels, each simulated alone, stop with the run's
// context while they run, not at their end (one fusion-zone kernel at
// n = 313344 runs for tens of seconds: a SIGINT waited 33 s): the context
// is cancelled as the first fusion-zone kernel's simulation begins, which
// the stop then ends after its first events.
func TestLUSampledKernelsStopInside(t *testing.T) {
	f, err := Parse("lu.yaml", ".", []byte(luClusterSmall+"grid: {p: 2, q: 4}\nnumerics: off\nfidelity: sampled\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // (one kernel at a time: the first is the one stopped)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer func() { luKernelSimulating = nil }()
	luKernelSimulating = func(zone string) {
		if zone == "fusion" { // (a kernel of many more events than the 4096 between checks)
			cancel()
		}
	}
	_, err = Execute(f, Options{Overrides: mustSets(t, "program.n=8192")}, RunHooks{Context: ctx})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "of simulated time") {
		t.Fatalf("got %v, want the kernel's simulation stopped inside", err)
	}
}

// While a sampled run's engine waits for kernels simulated alone (the
// sampled windows' before it starts, a class's first kernels as they
// come), its progress line goes on under the stage "simulating …
// alone", and the meter has its own stage back after.
func TestLUSampledKernelsProgress(t *testing.T) {
	defer func(d time.Duration) { kernelsProgressEvery = d }(kernelsProgressEvery)
	kernelsProgressEvery = time.Millisecond
	f, err := Parse("lu.yaml", ".", []byte(luClusterSmall+"grid: {p: 2, q: 4}\nnumerics: off\nfidelity: sampled\n"))
	if err != nil {
		t.Fatal(err)
	}
	var m WorkMeter
	var stages []string
	hooks := RunHooks{Meter: &m, ProgressEvery: 1 << 20, Progress: func(sim.Time, uint64) {
		if s := m.Stage(); strings.HasPrefix(s, "simulating ") && strings.Contains(s, " alone (") {
			stages = append(stages, s)
		}
	}}
	if _, err := Execute(f, Options{Overrides: mustSets(t, "program.n=4096")}, hooks); err != nil {
		t.Fatal(err)
	}
	if len(stages) == 0 {
		t.Fatal("no progress line while the sampled kernels were simulated")
	}
	if s := m.Stage(); s != "" {
		t.Errorf("the meter's stage after the run: %q, want the run's own (\"\")", s)
	}
}
