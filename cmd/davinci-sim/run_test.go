package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/traces"
)

// exampleArgs runs every shipped example small enough for a unit test.
var exampleArgs = map[string][]string{
	"cube-peak.yaml":          nil,
	"gm-bandwidth.yaml":       nil,
	"gm-bandwidth-1core.yaml": nil,
	"l1-l0-bandwidth.yaml":    nil,
	"flag-pingpong.yaml":      nil,
	"sgemm-cube.yaml":         {"--set", "program.m=200", "--set", "program.n=150", "--set", "program.k=300", "--numerics", "full"},
	"hgemm.yaml":              {"--set", "program.m=128", "--set", "program.n=64", "--set", "program.k=96"},
	"sgemm-910b3.yaml":        {"--set", "program.m=96", "--set", "program.n=64", "--set", "program.k=80", "--numerics", "full"},
}

func examplePath(name string) string { return filepath.Join("..", "..", "programs", "examples", name) }

// Two runs of an example give the same report.json apart from the sim
// section's wall-clock fields.
func TestExamplesDeterministic(t *testing.T) {
	for name, extra := range exampleArgs {
		t.Run(name, func(t *testing.T) {
			var reports [2]map[string]any
			for i := range reports {
				args := append([]string{"run", examplePath(name), "--json", "-q"}, extra...)
				out, code, err := runCLI(t, args...)
				if code != 0 {
					t.Fatalf("exit %d: %v\n%s", code, err, out)
				}
				if err := json.Unmarshal([]byte(out), &reports[i]); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				sim := reports[i]["sim"].(map[string]any)
				delete(sim, "wall_seconds")
				delete(sim, "kernel_wall_seconds")
				delete(sim, "events_per_second")
			}
			a, _ := json.Marshal(reports[0])
			b, _ := json.Marshal(reports[1])
			if string(a) != string(b) {
				t.Fatalf("reports differ:\n%s\n%s", a, b)
			}
		})
	}
}

func TestMicrobenchmarkAcceptance(t *testing.T) {
	get := func(name string) map[string]any {
		out, code, err := runCLI(t, "run", examplePath(name), "--json", "-q")
		if code != 0 {
			t.Fatalf("%s: exit %d: %v", name, code, err)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	num := func(r map[string]any, path string) float64 {
		var v any = r
		for _, k := range strings.Split(path, ".") {
			v = v.(map[string]any)[k]
		}
		return v.(float64)
	}
	if f := num(get("cube-peak.yaml"), "flops.peak_fraction"); f < 0.97 {
		t.Errorf("cube-peak reaches %.3f of the FP16 peak, want ≥ 0.97", f)
	}
	all := get("gm-bandwidth.yaml")
	bw := num(all, "memory.gm_read_bytes") / num(all, "time.seconds")
	if bw < 0.95*1228e9 || bw > 1228e9*1.0001 {
		t.Errorf("gm-bandwidth: %.1f GB/s, want 1228 GB/s within 5 %%", bw/1e9)
	}
	one := get("gm-bandwidth-1core.yaml")
	bw1 := num(one, "memory.gm_read_bytes") / num(one, "time.seconds")
	if bw1 < 0.95*73e9 || bw1 > 73e9*1.0001 {
		t.Errorf("gm-bandwidth-1core: %.1f GB/s, want the path's 73 GB/s", bw1/1e9)
	}
}

func TestDeadlockExitsQuickly(t *testing.T) {
	start := time.Now()
	out, code, err := runCLI(t, "run", examplePath("deadlock.yaml"), "-q")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %v\n%s", code, err, out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("deadlock took %v to report", d)
	}
	for _, want := range []string{"core 0", "pipe M", "wait_flag MTE1->M id 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	hugeNPY, cutNPY := filepath.Join(dir, "huge.npy"), filepath.Join(dir, "cut.npy")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.tiling.bm=100"}, `"tiling.bm"`},
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.tiling.bm=512", "--set", "program.tiling.bk=256"}, "L0A"},
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.tiling.nfused=500"}, "nfused"},
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.bogus=1"}, `"program.bogus"`},
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--set", "machine.core.buffers.L1=100"}, "multiple of 32"},
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--set", "tiling.bm=96"}, "program."},
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--numerics", "maybe"}, "full, sampled or off"},
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.m=1000000", "--set", "program.k=1000000", "--numerics", "full"}, "host memory"},
		{[]string{"run", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"run", examplePath("lu-cluster-small.yaml"), "--fidelity", "rough"}, "full, isolated or sampled"},
		{[]string{"run", examplePath("hgemm.yaml"), "--fidelity", "sampled"}, "applies to lu-fused on NPUs"},
		{[]string{"run", examplePath("lu-fused-small.yaml"), "--fidelity", "sampled", "--trace", filepath.Join(dir, "t.json")}, "not with fidelity sampled on one chip"},
		{[]string{"run", examplePath("lu-cluster-small.yaml"), "--fidelity", "sampled", "--numerics", "full"}, "numerics off"},
		{[]string{"run", bad}, "kind"},
		// .npy inputs: a header whose shape the data cannot hold, and a
		// header cut short (npyio itself panics on it).
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.inputs.a=" + hugeNPY, "--set", "program.inputs.b=" + hugeNPY}, "needs 40000000000000000 data bytes"},
		{[]string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.inputs.a=" + cutNPY, "--set", "program.inputs.b=" + cutNPY}, "malformed .npy"},
	}
	if err := os.WriteFile(bad, []byte("m: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000, 100000000), }"
	hdr += strings.Repeat(" ", 63-(10+len(hdr))%64) + "\n"
	huge := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	huge = append(append(huge, hdr...), make([]byte, 16)...)
	for f, data := range map[string][]byte{hugeNPY: huge, cutNPY: []byte("\x93NUMPY\x01\x00\x76\x00{")} {
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		out, code, err := runCLI(t, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%v)\n%s", c.args, code, err, out)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Count(msg, "\n") > 0 {
			t.Errorf("%v: error %q should be one line containing %q", c.args, msg, c.want)
		}
	}
}

// --fidelity sampled runs a cluster example (numerics off implied) and
// the report says how it was sampled.
func TestRunFidelityFlag(t *testing.T) {
	out, code, err := runCLI(t, "run", examplePath("lu-cluster-small.yaml"), "-q", "--fidelity", "sampled", "--set", "program.n=4096", "--set", "program.nb=256", "--set", "program.n_fused=2")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	for _, want := range []string{"fidelity sampled", "99.7 % interval"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// --fidelity isolated or sampled implies numerics off: what it turns off
// of the program's own settings (the example's numerics: full and check:
// true) is said in the report's notes (on stderr too with --json) — it was silent. With
// --numerics off given, nothing is implied and nothing is said.
func TestRunFidelityNotesImpliedNumerics(t *testing.T) {
	const want = "--fidelity sampled runs with numerics off (kernels timed apart compute no values): the program's numerics: full and check: true are not used"
	run := func(extra ...string) (stdout, stderr string) {
		root := newRootCmd()
		var o, e bytes.Buffer
		root.SetOut(&o)
		root.SetErr(&e)
		root.SetArgs(append([]string{"run", examplePath("lu-cluster-small.yaml"), "-q", "--json", "--fidelity", "sampled"}, extra...))
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		return o.String(), e.String()
	}
	stdout, stderr := run()
	var rep struct{ Notes []string }
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Notes, want) {
		t.Errorf("report notes lack %q:\n%s", want, strings.Join(rep.Notes, "\n"))
	}
	if stderr != "davinci-sim: note: "+want+"\n" {
		t.Errorf("stderr %q, want the note", stderr)
	}
	if stdout, stderr := run("--numerics", "off"); strings.Contains(stdout+stderr, "--fidelity sampled runs") {
		t.Errorf("--numerics off given: noted anyway:\n%s%s", stderr, stdout)
	}
}

// -o DIR writes report.json and the result arrays.
func TestRunOutDir(t *testing.T) {
	dir := t.TempDir()
	_, code, err := runCLI(t, "run", examplePath("hgemm.yaml"), "-q", "--set", "program.m=64", "--set", "program.n=32", "--set", "program.k=48", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, f := range []string{"report.json", "C.npy", "A.npy", "B.npy"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("-o did not write %s: %v", f, err)
		}
	}
}

// --cpuprofile writes a CPU profile (gzip-compressed protocol buffer, as
// pprof reads it); an unwritable path is bad input.
func TestCPUProfileFlag(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	if _, code, err := runCLI(t, "run", examplePath("hgemm.yaml"), "--numerics", "off", "-q", "--cpuprofile", prof); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	f, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not gzip data: %v", err)
	}
	if data, err := io.ReadAll(zr); err != nil || len(data) == 0 {
		t.Errorf("the profile holds %d bytes (%v)", len(data), err)
	}
	if _, code, _ := runCLI(t, "run", examplePath("hgemm.yaml"), "--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.prof")); code != 2 {
		t.Errorf("unwritable --cpuprofile: exit %d, want 2", code)
	}
}

// A profile is created only once the run's outputs are checked, and kept
// only when the run was not refused: a profile named where the checks
// refuse it (the -o directory's report.json) replaced that file before
// they refused it; a run refused as bad input after the checks left its
// profiles behind. The directory holds no temporary file afterwards.
func TestProfilesOnlyForAcceptedRuns(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	small := []string{"run", examplePath("hgemm.yaml"), "-q", "--numerics", "off", "--set", "program.m=64", "--set", "program.n=32", "--set", "program.k=48"}
	if _, code, err := runCLI(t, append(small, "-o", out)...); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	report := filepath.Join(out, "report.json")
	before, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if _, code, _ := runCLI(t, append(small, "-o", out, "--cpuprofile", report)...); code != 2 {
		t.Fatalf("--cpuprofile in the -o directory: exit %d, want 2", code)
	}
	if after, err := os.ReadFile(report); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the refused --cpuprofile replaced the previous run's report.json (%d bytes, was %d; %v)", len(after), len(before), err)
	}
	// Refused after the output checks (a --set value the program's decoder
	// refuses): no profile, and one already there is left as it was.
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	var earlier bytes.Buffer // (a profile's start: gzip, then period_type's tag)
	zw := gzip.NewWriter(&earlier)
	zw.Write([]byte("Z\x00"))
	zw.Close()
	if err := os.WriteFile(mem, earlier.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []string{"run", examplePath("hgemm.yaml"), "-q", "--set", "program.m=abc", "--cpuprofile", cpu, "--memprofile", mem}
	if _, code, _ := runCLI(t, bad...); code != 2 {
		t.Fatalf("bad --set: exit %d, want 2", code)
	}
	if _, err := os.Stat(cpu); err == nil {
		t.Error("a refused run left a CPU profile")
	}
	if got, _ := os.ReadFile(mem); !bytes.Equal(got, earlier.Bytes()) {
		t.Errorf("a refused run replaced the earlier heap profile with %d bytes", len(got))
	}
	// An accepted run writes both.
	if _, code, err := runCLI(t, append(small, "--cpuprofile", cpu, "--memprofile", mem)...); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, p := range []string{cpu, mem} {
		if got, err := os.ReadFile(p); err != nil || len(got) == 0 || bytes.Equal(got, earlier.Bytes()) {
			t.Errorf("%s: not written (%v)", p, err)
		}
	}
	// A file that is not a profile is not replaced by one, in any command:
	// a study (sweep --cpuprofile STUDY.yaml replaced it), a trace.
	study := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(study, []byte("program: p.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"sweep", study, "-o", filepath.Join(dir, "sw"), "--cpuprofile", study},
		{"sweep", study, "-o", filepath.Join(dir, "sw"), "--memprofile", study}, append(slices.Clone(small), "--cpuprofile", study)} {
		_, code, err := runCLI(t, args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), study+": the file exists and is not a profile") {
			t.Errorf("%v: exit %d: %v", args, code, err)
		}
		if got, _ := os.ReadFile(study); string(got) != "program: p.yaml\n" {
			t.Errorf("%v replaced the study", args)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// A cluster trace narrowed to a node's first ranks and a time window, with
// one NPU drilled into core by core: only those ranks, only that window,
// the NPU's pipes as extra threads of its rank; the drill-down needs
// fidelity full and a rank that exists.
func TestRunClusterTraceFilters(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.json")
	args := []string{"run", examplePath("lu-cluster-small.yaml"), "-q", "--numerics", "off", "--trace", tr,
		"--trace-ranks", "0-3", "--trace-window", "0us..200us", "--trace-npu", "2", "--trace-cores", "0"}
	if out, code, err := runCLI(t, args...); code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	data, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string          `json:"ph"`
			Pid  int             `json:"pid"`
			Tid  int             `json:"tid"`
			Ts   json.Number     `json:"ts"`
			Args json.RawMessage `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	coreSpans := 0
	for _, e := range doc.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		if e.Pid > 3 {
			t.Fatalf("span of rank %d outside --trace-ranks 0-3", e.Pid)
		}
		if ts, _ := e.Ts.Float64(); ts > 200 {
			t.Fatalf("span at %v µs after the window's end", ts)
		}
		if e.Tid > 4 { // tids 1-4: host, main, fusion, HCCL
			if e.Pid != 2 {
				t.Fatalf("a core thread on rank %d, not the drilled NPU 2", e.Pid)
			}
			coreSpans++
		}
	}
	if coreSpans == 0 {
		t.Error("no spans of NPU 2's core 0")
	}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--trace-npu", "8"}, "ranks are 0..7"},
		{[]string{"--trace-npu", "1", "--fidelity", "sampled"}, "fidelity full"},
		{[]string{"--trace-ranks", "9"}, "rank 9 does not exist"},
		{[]string{"--trace-npu", "-3"}, "a rank"},
	} {
		a := append([]string{"run", examplePath("lu-cluster-small.yaml"), "-q", "--numerics", "off", "--trace", tr}, c.extra...)
		if _, code, err := runCLI(t, a...); code != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", c.extra, code, err, c.want)
		}
	}
	if _, code, err := runCLI(t, "run", examplePath("lu-cluster-small.yaml"), "--trace-ranks", "0-3"); code != 2 || !strings.Contains(err.Error(), "need --trace") {
		t.Errorf("--trace-ranks without --trace: exit %d, %v", code, err)
	}
}

// runSplit runs the CLI with stdout and stderr apart.
func runSplit(t *testing.T, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	root := newRootCmd()
	var o, e bytes.Buffer
	root.SetOut(&o)
	root.SetErr(&e)
	root.SetArgs(args)
	err = root.Execute()
	return o.String(), e.String(), exitCode(err), err
}

// withoutWall drops a report's host-dependent keys (sim's wall-clock
// figures) and returns it as canonical JSON.
func withoutWall(t *testing.T, data []byte) (string, map[string]any) {
	t.Helper()
	var rep map[string]any
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	sim, _ := rep["sim"].(map[string]any)
	for _, k := range []string{"wall_seconds", "kernel_wall_seconds", "events_per_second"} {
		delete(sim, k)
	}
	b, _ := json.Marshal(rep)
	return string(b), rep
}

// A deadlocked run writes its report as a failed check's run does — -o
// DIR's report.json, --json on stdout, the summary — covering the run up
// to the deadlock, with the deadlock in key failure (when, what was
// blocked, which values are placeholders), and still exits 1 with the
// deadlock's message. It wrote no report at all: nothing in -o DIR, nothing
// on stdout.
func TestDeadlockWritesReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code, err := runSplit(t, "run", examplePath("deadlock.yaml"), "-q", "-o", dir)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "wait_flag MTE1->M id 3") {
		t.Fatalf("exit %d, %v; want 1 and the deadlock", code, err)
	}
	for _, want := range []string{"machine ascend-910a, program asm", "time      637 cycles", "M        0.0%       99.7%", "FAILED    deadlock at 636.877ns: 1 blocked",
		"flop/byte not known", "not meaningful (placeholders): cores.0.finish_cycle"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "0.0 flop/byte") {
		t.Errorf("summary prints an operational intensity the run never had:\n%s", stdout)
	}
	if !strings.Contains(stderr, "only report.json written — the run deadlocked") {
		t.Errorf("stderr %q lacks the -o note", stderr)
	}
	data, rerr := os.ReadFile(filepath.Join(dir, "report.json"))
	if rerr != nil {
		t.Fatalf("-o wrote no report: %v", rerr)
	}
	fromDir, rep := withoutWall(t, data)
	var fl struct {
		Kind          string
		Message       string
		Seconds       float64
		Cycles        int64
		Blocked       []string
		NotMeaningful []string `json:"not_meaningful"`
	}
	b, _ := json.Marshal(rep["failure"])
	if err := json.Unmarshal(b, &fl); err != nil {
		t.Fatal(err)
	}
	if fl.Kind != "deadlock" || fl.Message != err.Error() || fl.Seconds != 636.877e-9 || fl.Cycles != 637 ||
		!slices.Equal(fl.Blocked, []string{"core 0: pipe M: wait_flag MTE1->M id 3 (line 4)"}) {
		t.Errorf("failure %+v, want the deadlock at 636.877 ns with its blocked pipe and the message %q", fl, err)
	}
	if want := []string{"cores.0.finish_cycle", "memory.operational_intensity", "memory.operational_intensity_hbm", "energy.gflops_per_watt"}; !slices.Equal(fl.NotMeaningful, want) {
		t.Errorf("not_meaningful %q, want %q", fl.NotMeaningful, want)
	}
	if tm := rep["time"].(map[string]any); tm["seconds"] != fl.Seconds {
		t.Errorf("time %v, want the deadlock's %v", tm, fl.Seconds)
	}
	m := rep["pipes"].(map[string]any)["M"].(map[string]any)
	if w := m["stall"].(map[string]any)["wait_flag"].(float64); w < 0.99 {
		t.Errorf("pipe M waited on its flag %.3f of the run, want nearly all of it", w)
	}
	if mem := rep["memory"].(map[string]any); mem["gm_read_bytes"] != 32768.0 {
		t.Errorf("memory %v: want the 32 KiB MTE2 copied before the deadlock", mem)
	}
	for _, k := range []string{"flops", "error"} {
		if _, ok := rep[k]; ok {
			t.Errorf("report has %s, which a deadlocked run never computed", k)
		}
	}
	// --json prints the same report on stdout.
	stdout, _, code, err = runSplit(t, "run", examplePath("deadlock.yaml"), "-q", "--json")
	if code != 1 || err == nil {
		t.Fatalf("--json: exit %d, %v; want 1", code, err)
	}
	if fromStdout, _ := withoutWall(t, []byte(stdout)); fromStdout != fromDir {
		t.Errorf("--json report differs from -o's:\n%s\n%s", fromStdout, fromDir)
	}
}

// A run whose check fails writes its complete report with key failure
// saying so (kind check, the message); the same run passing its check has
// no failure key.
func TestCheckFailureInReport(t *testing.T) {
	args := []string{"run", examplePath("lu-fused-small.yaml"), "-q", "--json", "--set", "program.n=256", "--set", "program.n_fusion=4"}
	stdout, _, code, err := runSplit(t, append(args, "--set", "program.refinement.tolerance=1e-30", "--set", "program.refinement.max_iterations=1")...)
	if code != 1 || err == nil {
		t.Fatalf("exit %d, %v; want 1 (refinement not converged)", code, err)
	}
	_, rep := withoutWall(t, []byte(stdout))
	fl, _ := rep["failure"].(map[string]any)
	if fl["kind"] != "check" || fl["message"] != err.Error() || !strings.Contains(err.Error(), "did not converge") {
		t.Errorf("failure %v, want kind check and the message %q", fl, err)
	}
	if fl["seconds"] != rep["time"].(map[string]any)["seconds"] || rep["hplmxp"] == nil {
		t.Errorf("a failed check's report should be complete, failing at the run's end: failure %v, time %v", fl, rep["time"])
	}
	stdout, _, code, err = runSplit(t, args...)
	if code != 0 {
		t.Fatalf("passing run: exit %d, %v", code, err)
	}
	if _, rep := withoutWall(t, []byte(stdout)); rep["failure"] != nil {
		t.Errorf("a passing run's report has failure %v", rep["failure"])
	}
}

// A deadlocked run's trace ends at the deadlock, as a completed run's
// ends at its end: here core 1, the only one traced, finishes its one copy
// long before core 0, after its eight, blocks on a flag nobody sets. The
// trace was closed at time 0, so it ended with core 1's last event (0.45
// µs of 3.78).
func TestDeadlockTraceEndsAtDeadlock(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "dl2.yaml")
	src := "kind: asm\ncores: 2\nasm: |\n  alloc L1 off=0 size=32768 name=a\n  repeat 1+(1-core)*7 {\n    mte2.copy gm=0 l1=0 bytes=32768\n  }\n  repeat 1-core {\n    wait_flag MTE1 M 3\n  }\n"
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t.json", "t.pftrace"} {
		trace := filepath.Join(dir, name)
		stdout, _, code, err := runSplit(t, "run", prog, "-q", "--json", "--trace", trace, "--trace-cores", "1")
		if code != 1 || err == nil || !strings.Contains(err.Error(), "deadlock at") {
			t.Fatalf("%s: exit %d, %v; want 1 and the deadlock", name, code, err)
		}
		_, rep := withoutWall(t, []byte(stdout))
		secs, _ := rep["failure"].(map[string]any)["seconds"].(float64)
		tl, rerr := traces.ReadTraceFile(trace)
		if rerr != nil {
			t.Fatalf("%s: %v", name, rerr)
		}
		if got := tl.To.Seconds(); secs < 3e-6 || math.Abs(got-secs) > 1e-15 {
			t.Errorf("%s: the trace ends at %v s, want the deadlock's %v s", name, got, secs)
		}
	}
}
