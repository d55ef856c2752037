package programs

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

const luClusterSmall = "kind: lu-fused\nmachine: cloudbrain2-node\nn: 1024\nnb: 128\nn_fused: 2\nn_fusion: 16\nseed: 1\nrefinement: {method: ir, tolerance: 16}\n"

// On a node of one NPU whose host share and PCIe are the single-NPU
// file's, the cluster run (network transfers, Async host tasks, shared
// engine) gives exactly the single-NPU run's times.
func TestLUClusterOneNPUEqualsSingle(t *testing.T) {
	for _, tr := range []string{"fp32", "fp16"} {
		single, err := runLU(t, "kind: lu-fused\nn: 1024\nnb: 128\nn_fused: 2\nn_fusion: 16\nnumerics: off\n", "program.trailing="+tr)
		if err != nil {
			t.Fatal(err)
		}
		one, err := runLU(t, luClusterSmall+"numerics: off\n", "program.trailing="+tr, "node.npus=1", "node.pcie.generation=4",
			"node.hosts.cores=24", "node.hosts.memory_bandwidth=93.8GB/s")
		if err != nil {
			t.Fatal(err)
		}
		a, b := hpl(t, single), hpl(t, one)
		if a.TotalSeconds != b.TotalSeconds || a.FactorizationSeconds != b.FactorizationSeconds {
			t.Errorf("%s: single NPU %v / %v s, 1-NPU node %v / %v s (factorization / total)", tr, a.FactorizationSeconds, a.TotalSeconds, b.FactorizationSeconds, b.TotalSeconds)
		}
		if one.Report.Cluster == nil || one.Report.Cluster.GridP != 1 || one.Report.Cluster.GridQ != 1 {
			t.Errorf("%s: cluster section %+v", tr, one.Report.Cluster)
		}
	}
}

// Distributed over 2 × 2 (a 4-NPU node: one HCCS mesh) and 2 × 4 (a full
// node: the column groups span the meshes), the factors the simulated NPUs
// compute equal the golden model bit for bit and the HPL-MxP check passes,
// for both trailing precisions.
func TestLUClusterMatchesGolden(t *testing.T) {
	cases := []struct {
		grid, trailing string
		sets           []string
	}{
		{"{p: 2, q: 2}", "fp16", []string{"node.npus=4"}},
		{"{p: 2, q: 4}", "fp16", nil},
		{"{p: 2, q: 4}", "fp32", nil},
		{"{p: 4, q: 2}", "fp32", []string{"program.look_ahead=false"}},
	}
	if testing.Short() {
		cases = cases[:2]
	}
	for _, c := range cases {
		res, err := runLU(t, luClusterSmall+"numerics: full\ncheck: true\ngrid: "+c.grid+"\n", append([]string{"program.trailing=" + c.trailing}, c.sets...)...)
		if err != nil {
			t.Fatal(err)
		}
		sec := hpl(t, res)
		if res.Failure != nil || sec.GoldenMismatches == nil || *sec.GoldenMismatches != 0 || sec.Passed == nil || !*sec.Passed {
			t.Errorf("%s %s: failure %v, mismatches %v, passed %v", c.grid, c.trailing, res.Failure, sec.GoldenMismatches, sec.Passed)
		}
		if !slices.Contains(res.Report.Notes, luFactorsChecked) {
			t.Errorf("%s %s: the summary does not say the check passed: %q", c.grid, c.trailing, res.Report.Notes)
		}
		cl := res.Report.Cluster
		if cl == nil || cl.LinkBytes["pcie"] == 0 || cl.LinkBytes["hccs"] == 0 || cl.Transfers == 0 {
			t.Errorf("%s %s: cluster section %+v", c.grid, c.trailing, cl)
		}
	}
}

// A grid that does not match the NPUs, an n the grid cannot share evenly,
// a share that does not fit HBM, a grid on one chip, node keys on one chip
// and a link of zero bandwidth: one bad-input line each.
func TestLUClusterBadInput(t *testing.T) {
	base := luClusterSmall + "numerics: off\n"
	cases := []struct {
		yaml string
		sets []string
		want string
	}{
		{base + "grid: {p: 2, q: 2}\n", nil, `"grid"`},
		{base + "grid: {p: 2, q: 4}\n", []string{"program.n=1280"}, "divide evenly"},
		{base, []string{"program.n=262144", "program.nb=256", "program.numerics=off"}, "bytes of GM"},
		{"kind: lu-fused\nn: 1024\nnb: 128\ngrid: {p: 2, q: 2}\nnumerics: off\n", nil, "cluster or node description"},
		{"kind: lu-fused\nn: 1024\nnb: 128\nnumerics: off\n", []string{"node.npus=4"}, "node.* and cluster.*"},
		{base, []string{"node.pcie.gen3_bandwidth=0GB/s"}, "gen3_bandwidth"},
		{"kind: hgemm\nmachine: cloudbrain2-node\n", nil, "runs on one chip"},
	}
	for _, c := range cases {
		_, err := runLU(t, c.yaml, c.sets...)
		if !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%q %v: got %v, want one bad-input line naming %s", c.yaml, c.sets, err, c.want)
		}
	}
}

// runLUBench runs an lu-fused program given as YAML (b.N times) and fails
// on an error or a failed check.
func runLUBench(b *testing.B, yaml string) {
	for range b.N {
		f, err := Parse("lu.yaml", ".", []byte(yaml))
		if err != nil {
			b.Fatal(err)
		}
		res, err := Execute(f, Options{}, RunHooks{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Failure != nil {
			b.Fatal(res.Failure)
		}
	}
}

// BenchmarkLUClusterFull4096 is the functional size: n = 4096 on a
// node's 2 × 4 grid, full numerics, checked against the golden model:
// go test ./programs -run XXX -bench LUClusterFull4096 -benchtime 1x
func BenchmarkLUClusterFull4096(b *testing.B) {
	runLUBench(b, "kind: lu-fused\nmachine: cloudbrain2-node\ngrid: {p: 2, q: 4}\nn: 4096\nnb: 256\nn_fused: 6\nn_fusion: 32\ntrailing: fp16\nseed: 1\nnumerics: full\ncheck: true\n")
}

// BenchmarkLUNode65536 is a node at n = 65536, fidelity full, timing only
// (issue 17's ≤ 30 minutes):
// go test ./programs -run XXX -bench LUNode65536 -benchtime 1x
func BenchmarkLUNode65536(b *testing.B) {
	runLUBench(b, "kind: lu-fused\nmachine: cloudbrain2-node\nn: 65536\nnb: 256\nn_fused: 6\nn_fusion: 32\ntrailing: fp16\nnumerics: off\n")
}

// BenchmarkLUNodeSampled65536 is the node at n = 65536 with fidelity
// sampled (compare BenchmarkLUNode65536, its full-fidelity reference):
// go test ./programs -run XXX -bench LUNodeSampled65536 -benchtime 1x
func BenchmarkLUNodeSampled65536(b *testing.B) {
	runLUBench(b, "kind: lu-fused\nmachine: cloudbrain2-node\nn: 65536\nnb: 256\nn_fused: 6\nn_fusion: 32\ntrailing: fp16\nnumerics: off\nfidelity: sampled\n")
}

// BenchmarkLUNodeIsolated32768 is a node at n = 32768 with fidelity
// isolated: 1264 distinct kernels each simulated on a fresh chip (the cost
// of building and dropping chips: their pipe queues and stream buffers
// come from pools; ~2.7 s here):
// go test ./programs -run XXX -bench LUNodeIsolated32768 -benchtime 3x
func BenchmarkLUNodeIsolated32768(b *testing.B) {
	runLUBench(b, "kind: lu-fused\nmachine: cloudbrain2-node\nn: 32768\nnb: 256\nn_fused: 6\nn_fusion: 32\ntrailing: fp16\nnumerics: off\nfidelity: isolated\n")
}

// BenchmarkLUCluster256Sampled is issue 17's weak-scaling point: 32 nodes
// (256 NPUs, 16 × 16), each share ~80 % of HBM, fidelity sampled (target
// ≤ 10 minutes, ≤ 4 GB; about 100 s here):
// go test ./programs -run XXX -bench LUCluster256Sampled -benchtime 1x
func BenchmarkLUCluster256Sampled(b *testing.B) {
	runLUBench(b, "kind: lu-fused\nmachine: cloudbrain2\ngrid: {p: 16, q: 16}\nn: 1777664\nnb: 256\nn_fused: 6\nn_fusion: 32\ntrailing: fp16\nnumerics: off\nfidelity: sampled\n")
}

// The same cluster run twice gives the same times, events and link bytes.
func TestLUClusterDeterministic(t *testing.T) {
	var first *Result
	for range 2 {
		res, err := runLU(t, luClusterSmall+"numerics: off\ngrid: {p: 2, q: 4}\n", "program.trailing=fp16")
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
			continue
		}
		a, b := first.Report, res.Report
		if a.HPLMxP.TotalSeconds != b.HPLMxP.TotalSeconds || a.Sim.Events != b.Sim.Events || a.Cluster.Transfers != b.Cluster.Transfers {
			t.Errorf("runs differ: %v/%v s, %d/%d events, %d/%d transfers", a.HPLMxP.TotalSeconds, b.HPLMxP.TotalSeconds, a.Sim.Events, b.Sim.Events, a.Cluster.Transfers, b.Cluster.Transfers)
		}
		for k, v := range a.Cluster.LinkBytes {
			if b.Cluster.LinkBytes[k] != v {
				t.Errorf("link bytes %s: %v vs %v", k, v, b.Cluster.LinkBytes[k])
			}
		}
	}
}

// Fidelity isolated (each distinct kernel timed alone on a fresh chip, the
// rest of the run unchanged) stays within 1 % of fidelity full on a node
// whose fusion zone runs beside the priority zones, and reuses kernels.
func TestLUClusterIsolatedNearFull(t *testing.T) {
	var fact [2]float64
	for i, f := range []string{"full", "isolated"} {
		res, err := runLU(t, luClusterSmall+"numerics: off\n", "program.fidelity="+f, "program.n=8192", "program.nb=256",
			"program.n_fused=6", "program.n_fusion=16", "program.trailing=fp16")
		if err != nil {
			t.Fatal(err)
		}
		fact[i] = hpl(t, res).FactorizationSeconds
		if cl := res.Report.Cluster; f == "isolated" && (cl.KernelSimulations == 0 || cl.KernelSimulations >= cl.KernelsLaunched) {
			t.Errorf("isolated: %d kernels, %d simulated", cl.KernelsLaunched, cl.KernelSimulations)
		}
	}
	if d := math.Abs(fact[1]/fact[0] - 1); d > 0.01 {
		t.Errorf("factorization: full %v s, isolated %v s (%.2f %% apart)", fact[0], fact[1], 100*d)
	}
	_, err := runLU(t, luClusterSmall+"numerics: full\n", "program.fidelity=isolated")
	if !badinput.Is(err) || !strings.Contains(err.Error(), `"fidelity"`) {
		t.Errorf("isolated with full numerics: got %v", err)
	}
	// On one DaVinci chip with a host the file's fidelity runs it as a
	// node of one NPU (as --fidelity does); a GPU is simulated in full.
	res, err := runLU(t, "kind: lu-fused\nn: 1024\nnb: 128\nnumerics: off\nfidelity: isolated\n")
	if err != nil || res.Report.Cluster == nil || res.Report.Cluster.KernelSimulations == 0 {
		t.Errorf("isolated on one DaVinci chip: %v (want a node of one NPU)", err)
	}
	// --fidelity full wins over the file's: the chip simulated in full.
	f, err := Parse("lu.yaml", ".", []byte("kind: lu-fused\nn: 1024\nnb: 128\nnumerics: off\nfidelity: isolated\n"))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := Execute(f, Options{Fidelity: "full"}, RunHooks{}); err != nil || res.Report.Cluster != nil {
		t.Errorf("--fidelity full over a file's isolated: %v (want the chip in full)", err)
	}
	_, err = runLU(t, "kind: lu-fused\nmachine: a100\nn: 1024\nnb: 128\nnumerics: off\nfidelity: isolated\n")
	if !badinput.Is(err) || !strings.Contains(err.Error(), `"fidelity"`) {
		t.Errorf("isolated on a GPU: got %v", err)
	}
}

// A traced cluster run records every rank's host work, kernels and the
// collectives' messages and the run's end, and times exactly as an
// untraced one.
func TestLUClusterTrace(t *testing.T) {
	f, err := Parse("lu.yaml", ".", []byte(luClusterSmall+"numerics: off\ngrid: {p: 2, q: 4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ct := &traces.ClusterTrace{}
	traced, err := Execute(f, Options{}, RunHooks{ClusterTrace: ct})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := runLU(t, luClusterSmall+"numerics: off\ngrid: {p: 2, q: 4}\n")
	if err != nil {
		t.Fatal(err)
	}
	if traced.Report.HPLMxP.TotalSeconds != plain.Report.HPLMxP.TotalSeconds {
		t.Errorf("tracing changed the time: %v vs %v", traced.Report.HPLMxP.TotalSeconds, plain.Report.HPLMxP.TotalSeconds)
	}
	if end := sim.Time(math.Round(traced.Report.Time.Seconds * 1e12)); ct.End != end {
		t.Errorf("trace's End %v, want the run's end %v (its window is cut to the run)", ct.End, end)
	}
	kinds := map[int]int{}
	for _, s := range ct.Spans {
		if s.To < s.From || s.Rank < 0 || s.Rank >= 8 {
			t.Fatalf("bad span %+v", s)
		}
		kinds[s.Track]++
	}
	if len(ct.Ranks) != 8 || kinds[0] == 0 || kinds[1] == 0 || len(ct.Messages) == 0 {
		t.Errorf("ranks %d, spans per track %v, messages %d", len(ct.Ranks), kinds, len(ct.Messages))
	}
	var buf strings.Builder
	if err := traces.WriteClusterJSON(&buf, ct); err != nil || !strings.Contains(buf.String(), `"ph":"f"`) {
		t.Errorf("JSON: %v", err)
	}
}

// grid and fidelity isolated on a GPU are one bad-input line, not ignored.
func TestLUGPURefusesClusterKeys(t *testing.T) {
	for _, set := range []string{"program.grid.p=2", "program.fidelity=isolated"} {
		_, err := runLU(t, "kind: lu-fused\nmachine: a100\nn: 1024\nnb: 256\nnumerics: off\ngrid: {p: 1, q: 2}\n", set)
		if !badinput.Is(err) || !strings.Contains(err.Error(), "cluster or node description") {
			t.Errorf("%s on a100: got %v", set, err)
		}
	}
}

// A full-fidelity cluster run reports its lanes and buffers over every
// core of every NPU (the cube busy somewhere, L1 used), not empty.
func TestLUClusterLanes(t *testing.T) {
	res, err := runLU(t, luClusterSmall+"numerics: off\n")
	if err != nil {
		t.Fatal(err)
	}
	m, ok := res.Report.Pipes["M"]
	if !ok || m.Busy <= 0 || m.Instrs == 0 {
		t.Errorf("pipe M: %+v (present %v)", m, ok)
	}
	if b := res.Report.Buffers["L1"]; b.PeakBytes == 0 {
		t.Errorf("L1: %+v", b)
	}
}

// A cluster run asked to check (check: true) that computes no values says
// the check was not made, as a run on one chip does (it said nothing): at
// numerics off on a node, and on one chip run as a node of one NPU at
// fidelity sampled.
func TestLUClusterCheckNotMadeNoted(t *testing.T) {
	for _, c := range []struct {
		yaml string
		opts Options
	}{
		{luClusterSmall + "numerics: off\ncheck: true\n", Options{}},
		{"kind: lu-fused\nn: 1024\nnb: 128\nn_fused: 2\nn_fusion: 16\nnumerics: full\ncheck: true\n", Options{Fidelity: "sampled", Numerics: NumericsOff}},
	} {
		f, err := Parse("lu.yaml", ".", []byte(c.yaml))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, c.opts, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(res.Report.Notes, checkNotMade) {
			t.Errorf("%q %+v: no note that the check was not made:\n%s", c.yaml, c.opts, strings.Join(res.Report.Notes, "\n"))
		}
	}
	res, err := runLU(t, luClusterSmall+"numerics: off\n")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(res.Report.Notes, checkNotMade) {
		t.Error("a check noted as not made where none was asked")
	}
}

// A cluster run that deadlocks returns its report up to the deadlock with
// the deadlock, as a one-chip run does (it returned the error alone: no
// report). No input is known to deadlock lu-fused (its collectives and
// kernels are generated to meet), so the test loses one collective: when
// the run is under way, the first pending rendezvous is forgotten, and its
// members (and the ranks that then wait on them) wait forever.
func TestLUClusterDeadlockReport(t *testing.T) {
	f, lose := losingClusterRun(t, "")
	res, err := Execute(f, Options{}, RunHooks{Observer: lose, ObserveRank: 0})
	lost := lose.lost
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("lost %q: got %v, want a deadlock", lost, err)
	}
	if res == nil || res.Report == nil {
		t.Fatalf("deadlock without a report: %v", err)
	}
	rep := res.Report
	fl := rep.Failure
	if res.Failure != err || fl == nil || fl.Kind != report.FailureDeadlock || fl.Message != err.Error() ||
		fl.Seconds != dl.Time.Seconds() || fl.Cycles == 0 || fl.Cycles != rep.Time.Cycles || !slices.Equal(fl.Blocked, dl.Blocked) || len(fl.Blocked) == 0 {
		t.Fatalf("failure %+v (result's %v), want the deadlock %v", fl, res.Failure, err)
	}
	for _, b := range dl.Blocked { // which rank's component
		if !strings.HasPrefix(b, "rank ") {
			t.Errorf("blocked %q names no rank", b)
		}
	}
	if rep.Time.Seconds != dl.Time.Seconds() || dl.Time == 0 {
		t.Errorf("time %v s, want the deadlock's %v", rep.Time.Seconds, dl.Time)
	}
	if rep.HPLMxP != nil || rep.Flops != nil || len(rep.Program) != 1 || rep.Program["kind"] != "lu-fused" {
		t.Errorf("a deadlocked run's report has the solve's results: hplmxp %v, flops %v, program %v", rep.HPLMxP, rep.Flops, rep.Program)
	}
	if rep.Cluster == nil || len(rep.Cluster.Ranks) != 8 || rep.Cluster.Transfers == 0 || rep.Memory.GMReadBytes == 0 || rep.Version == "" {
		t.Fatalf("the run up to the deadlock is not reported: cluster %+v, memory %+v, version %q", rep.Cluster, rep.Memory, rep.Version)
	}
	for i, r := range rep.Cluster.Ranks {
		placeholder := slices.Contains(fl.NotMeaningful, fmt.Sprintf("cluster.ranks.%d.finish_seconds", i))
		if placeholder != (r.FinishSeconds == 0) {
			t.Errorf("rank %d: finish %v s, listed as a placeholder %v", i, r.FinishSeconds, placeholder)
		}
	}
	if len(fl.NotMeaningful) == 0 {
		t.Error("no rank's finish is a placeholder, yet the ranks were blocked")
	}
	// The summary gives no end time for a rank that had not ended.
	var sum strings.Builder
	rep.WriteSummary(&sum)
	if !strings.Contains(sum.String(), "FAILED    deadlock at") || strings.Contains(sum.String(), "between 0 and") {
		t.Errorf("summary:\n%s", sum.String())
	}
}

// losingClusterRun returns the small cluster LU program (2 × 4 ranks,
// numerics off, and extra keys) built so that an rvLoser can reach its job.
func losingClusterRun(t *testing.T, extra string) (*File, *rvLoser) {
	t.Helper()
	f, err := Parse("lu.yaml", ".", []byte(luClusterSmall+"numerics: off\ngrid: {p: 2, q: 4}\n"+extra))
	if err != nil {
		t.Fatal(err)
	}
	kind := *f.Kind
	lose := &rvLoser{job: new(*luCluster)}
	kind.BuildCluster = func(f *File, topo *cluster.Topology, opts Options) (ClusterJob, error) {
		cj, err := buildLUCluster(f, topo, opts)
		*lose.job, _ = cj.(*luCluster)
		return cj, err
	}
	f.Kind = &kind
	return f, lose
}

// rvLoser is an observer of a cluster run's NPU that, at the first core
// interval it sees while a collective's rendezvous is pending, forgets
// that rendezvous (the first by key): a lost collective.
type rvLoser struct {
	job  **luCluster
	lost string // the rendezvous forgotten
}

func (o *rvLoser) Interval(int, int, arch.Cause, sim.Time, sim.Time, *isa.Instr, *arch.Group) {
	if j := *o.job; o.lost == "" && j != nil && len(j.rv) > 0 {
		o.lost = slices.Sorted(maps.Keys(j.rv))[0]
		delete(j.rv, o.lost)
	}
}
func (o *rvLoser) Flag(int, int, int, int, bool, sim.Time) {}
func (o *rvLoser) Occupancy(int, int, int64, sim.Time)     {}
func (o *rvLoser) Bandwidth(sim.Time, float64)             {}

// A cluster run whose kernels are timed apart (fidelity isolated, sampled)
// that deadlocks marks what it cannot give: the energy per flop (the
// ranks' statistics hold no matrix flops), the sampled total's interval;
// its sampling note says it has no total.
func TestLUClusterDeadlockTimedApart(t *testing.T) {
	for _, fid := range []string{"isolated", "sampled"} {
		t.Run(fid, func(t *testing.T) {
			f, lose := losingClusterRun(t, "fidelity: "+fid+"\n")
			// No NPU runs kernels here: lose the rendezvous from the
			// progress hook, once the run is under way.
			n := 0
			hooks := RunHooks{ProgressEvery: 1, Progress: func(sim.Time, uint64) {
				if n++; n > 200 {
					lose.Interval(0, 0, 0, 0, 0, nil, nil)
				}
			}}
			res, err := Execute(f, Options{}, hooks)
			var dl *sim.DeadlockError
			if !errors.As(err, &dl) || res == nil || res.Report.Failure == nil {
				t.Fatalf("lost %q: got %v, want a deadlock with its report", lose.lost, err)
			}
			rep := res.Report
			nm := rep.Failure.NotMeaningful
			for _, b := range dl.Blocked {
				if !strings.HasPrefix(b, "rank ") {
					t.Errorf("blocked %q names no rank", b)
				}
			}
			if rep.Energy == nil || rep.Energy.GFLOPSPerWatt != 0 || !slices.Contains(nm, "energy.gflops_per_watt") {
				t.Errorf("energy %+v, placeholders %v: want gflops_per_watt listed", rep.Energy, nm)
			}
			sampled := fid == "sampled"
			if (rep.Cluster.Sampling != nil) != sampled || slices.Contains(nm, "cluster.sampling.total_low_seconds") != sampled {
				t.Errorf("sampling %+v, placeholders %v", rep.Cluster.Sampling, nm)
			}
			var sum strings.Builder
			rep.WriteSummary(&sum)
			if !strings.Contains(sum.String(), "GFLOP/s per W not known") {
				t.Errorf("summary:\n%s", sum.String())
			}
			for _, note := range rep.Notes {
				if strings.HasPrefix(note, "fidelity sampled:") && (strings.Contains(note, "interval") || !strings.Contains(note, "no total: the run deadlocked")) {
					t.Errorf("note %q", note)
				}
			}
		})
	}
}

// An explicit collectives.intra_server on a grid whose column groups span
// a node's HCCS meshes is honoured, and the report says HCCL would not run
// it (it said nothing: the what-if read as what HCCL does); with auto
// those broadcasts are point-to-point rings and no such note is made.
func TestLUClusterExplicitIntraNoted(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, ""},
		{[]string{"node.collectives.intra_server=mesh"}, "ran as HCCL mesh over 2- or 4-NPU groups per node spanning a 910A node's HCCS meshes, as collectives.intra_server: mesh asks (--set node.collectives.intra_server=mesh); HCCL itself forms no such communicator (CLUSTER-FACTS §1.2, S3)"},
		{[]string{"node.collectives.intra_server=ring"}, "ran as HCCL ring over 2- or 4-NPU groups"},
	} {
		res, err := runLU(t, luClusterSmall+"numerics: off\ngrid: {p: 2, q: 4}\n", c.sets...)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(res.Report.Notes, "\n")
		p2p := res.Report.Cluster.HCCLRingBroadcasts
		switch {
		case c.want == "" && (strings.Contains(notes, "as collectives.intra_server") || p2p == 0):
			t.Errorf("auto: %d point-to-point ring broadcasts (want some), notes:\n%s", p2p, notes)
		case c.want != "" && (!strings.Contains(notes, c.want) || p2p != 0):
			t.Errorf("%v: %d point-to-point ring broadcasts (want 0), notes lack %q:\n%s", c.sets, p2p, c.want, notes)
		}
	}
}

// The report's machine_config gives the bridge between a node's HCCS
// meshes as simulated: the node file leaves it out, so it follows the PCIe
// generation, and an --set of it wins.
func TestLUClusterBridgeInConfig(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, "63GB/s"},
		{[]string{"node.pcie.generation=4"}, "126GB/s"},
		{[]string{"node.pcie.generation=4", "node.inter_group.bandwidth=63GB/s"}, "63GB/s"},
	} {
		res, err := runLU(t, luClusterSmall+"numerics: off\n", append([]string{"program.n=512"}, c.sets...)...)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Report.MachineConfig["inter_group_bandwidth"]; got != c.want {
			t.Errorf("%v: machine_config inter_group_bandwidth %v, want %s", c.sets, got, c.want)
		}
	}
}
