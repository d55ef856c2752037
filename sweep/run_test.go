package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
)

// tinyProgram is a small SGEMM-cube: a point takes milliseconds.
const tinyProgram = `kind: sgemm-cube
machine: ascend-910a
m: 256
k: 256
n: 512
tiling: {bm: 64, bk: 64, bn: 64}
numerics: off
`

// tinyStudy has 12 points; 16 A blocks of bm×64 (nfused) do not fit the
// smaller L1 sizes, so 4 of them fail: bm 128 with 256KiB, bm 512 with
// 256KiB to 1MiB (each value runs at some point: a value refused at every
// point would refuse the study before any ran, checkSet).
const tinyStudy = `program: prog.yaml
vary:
  program.tiling.bm: [64, 128, 512]
  machine.core.buffers.L1: 256KiB..2MiB ×2
metrics: [flops.tflops, buffers.L1.capacity_bytes, program.tiling.bn, hplmxp.n]
set: {program.tiling.nfused: 16}
plot:
  - {x: machine.core.buffers.L1, y: flops.tflops, series: program.tiling.bm, logx: true}
  - {name: cat, x: program.tiling.bm, y: flops.tflops, logy: true}
`

func writeStudy(t testing.TB, study string) *Study {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prog.yaml"), []byte(tinyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStudy(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var outputFiles = []string{ResultsJSONL, ResultsCSV,
	"flops_tflops-vs-machine_core_buffers_L1.png", "flops_tflops-vs-machine_core_buffers_L1.svg", "flops_tflops-vs-machine_core_buffers_L1.pdf",
	"cat.png", "cat.svg", "cat.pdf"}

func sameOutputs(t *testing.T, a, b string) {
	t.Helper()
	for _, f := range outputFiles {
		if !bytes.Equal(readFile(t, filepath.Join(a, f)), readFile(t, filepath.Join(b, f))) {
			t.Errorf("%s differs between %s and %s", f, a, b)
		}
	}
}

func TestRunDeterministicAcrossJobs(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	out1, out3 := t.TempDir(), t.TempDir()
	sum, err := Run(s, Options{Out: out1, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Points != 12 || sum.Ran != 12 || sum.Failed != 4 || len(sum.Missing) != 0 {
		t.Errorf("summary %+v", sum)
	}
	if _, err := Run(s, Options{Out: out3, Jobs: 3}); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, out1, out3)

	recs, err := ReadResults(filepath.Join(out1, ResultsJSONL), s)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.Index != i {
			t.Fatalf("record %d has index %d", i, r.Index)
		}
		switch {
		case i == 4 || i == 8 || i == 9 || i == 10: // (bm 128 with 256KiB, bm 512 with 256KiB..1MiB)
			if r.Status != StatusFailed || !strings.Contains(r.Error, "16 A blocks do not fit L1") || string(r.Metrics["flops.tflops"]) != "null" {
				t.Errorf("point %d (bm %s, L1 %s): %+v", i, r.Params["program.tiling.bm"], r.Params["machine.core.buffers.L1"], r)
			}
		case r.Status != StatusOK || r.Error != "":
			t.Errorf("point %d: %+v", i, r)
		default:
			if string(r.Metrics["program.tiling.bn"]) != "64" {
				t.Errorf("point %d: metric program.tiling.bn = %s, want the program's 64", i, r.Metrics["program.tiling.bn"])
			}
			if string(r.Metrics["hplmxp.n"]) != "null" {
				t.Errorf("point %d: missing metric = %s", i, r.Metrics["hplmxp.n"])
			}
		}
	}
	// The L1 capacity follows the override.
	if got := string(recs[1].Metrics["buffers.L1.capacity_bytes"]); got != "524288" {
		t.Errorf("point 1 L1 capacity %s, want 524288", got)
	}
	csv := string(readFile(t, filepath.Join(out1, ResultsCSV)))
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 13 || lines[0] != "index,program.tiling.bm,machine.core.buffers.L1,machine.core.buffers.L1_bytes,status,flops.tflops,buffers.L1.capacity_bytes,program.tiling.bn,hplmxp.n,error" {
		t.Errorf("csv:\n%s", csv)
	}
	if !strings.HasPrefix(lines[9], "8,512,256KiB,262144,failed,,,,,") {
		t.Errorf("csv failed row: %s", lines[9])
	}
}

func TestRunResumeAndShards(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	full := t.TempDir()
	if _, err := Run(s, Options{Out: full, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	// Shards in their own directories, then merge.
	var dirs []string
	for i := range 3 {
		d := t.TempDir()
		sum, err := Run(s, Options{Out: d, Jobs: 2, Shard: Shard{i, 3}})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Selected != 4 || sum.Ran != 4 {
			t.Errorf("shard %d: %+v", i, sum)
		}
		dirs = append(dirs, d)
	}
	merged := t.TempDir()
	sum, err := Merge(s, merged, dirs[:2], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Missing) != 4 || sum.Missing[0] != 2 {
		t.Errorf("merge of 2 of 3 shards: missing %v", sum.Missing)
	}
	if sum, err = Merge(s, merged, dirs[2:], nil); err != nil || len(sum.Missing) != 0 {
		t.Fatalf("merge of the last shard (keeping the first two): %+v %v", sum, err)
	}
	sameOutputs(t, full, merged)

	// Resume a shard's directory to the whole study.
	sum, err = Run(s, Options{Out: dirs[1], Jobs: 2, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped != 4 || sum.Ran != 8 {
		t.Errorf("resume: %+v", sum)
	}
	sameOutputs(t, full, dirs[1])
	// Nothing left: resume rewrites the outputs and runs nothing.
	if sum, err = Run(s, Options{Out: dirs[1], Resume: true}); err != nil || sum.Ran != 0 {
		t.Errorf("second resume: %+v %v", sum, err)
	}
	// Without --resume an existing results file is refused.
	if _, err := Run(s, Options{Out: full}); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("rerun without --resume: %v", err)
	}
	// Conflicting records refuse to merge.
	jl := filepath.Join(dirs[0], ResultsJSONL)
	b := readFile(t, jl)
	b = bytes.Replace(b, []byte(`"status":"ok"`), []byte(`"status":"check-failed","error":"C differs"`), 1)
	if err := os.WriteFile(jl, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(s, t.TempDir(), []string{dirs[0], full}, nil); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("conflicting merge: %v", err)
	}
	// A shard named twice (also as another path to it) is a slip, not a shard.
	if _, err := Merge(s, t.TempDir(), []string{dirs[1], dirs[1] + "/."}, nil); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a shard twice: %v", err)
	}
}

func TestResumeCorrupt(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	good := t.TempDir()
	if _, err := Run(s, Options{Out: good, Jobs: 2, Shard: Shard{0, 4}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(readFile(t, filepath.Join(good, ResultsJSONL))), "\n")
	first := lines[0]
	for _, c := range []struct{ name, text, want string }{
		// A line cut off but for its end of line (no write leaves it:
		// that of a record comes with it), or in the middle of the file.
		{"cut, then an end of line", first + first[:20] + "\n", "results.jsonl:2: corrupt record: unexpected EOF"},
		{"cut, in the middle", first[:20] + "\n" + first, "results.jsonl:1: corrupt record: unexpected EOF"},
		{"cut, before the last", first + first[:20] + first, "results.jsonl:2: corrupt record: "},
		{"garbage", first + "{not json\n", "results.jsonl:2: corrupt record"},
		{"empty line", "\n" + first, "results.jsonl:1: corrupt record: empty line"},
		{"two values", strings.TrimSuffix(first, "\n") + " {}\n", "results.jsonl:1: corrupt record: more than the record's JSON object on the line"},
		{"closing brace after", strings.TrimSuffix(first, "\n") + "}\n", "results.jsonl:1: corrupt record: more than the record's JSON object on the line"},
		{"unknown field", strings.Replace(first, `"index"`, `"extra":1,"index"`, 1), "unknown field"},
		{"duplicate", first + first, "results.jsonl:2: point 0 is recorded twice (also on line 1)"},
		{"index", strings.Replace(first, `"index":0`, `"index":99`, 1), "point 99 is not in the study"},
		{"params", strings.Replace(first, `"256KiB"`, `"300KiB"`, 1), `key "params": point 0 has`},
		{"status", strings.Replace(first, `"ok"`, `"fine"`, 1), `key "status"`},
		{"metrics", strings.Replace(first, `"flops.tflops"`, `"flops.gflops"`, 1), `key "metrics": no "flops.tflops"`},
		{"no stamp", regexp.MustCompile(`"run":\{[^}]*\},`).ReplaceAllString(first, ""), `key "run": missing (recorded by an older davinci-sim)`},
		{"options", strings.Replace(first, `"run":{`, `"run":{"options":"k_batch=8",`, 1), `key "run": point 0 ran with k_batch=8, the study asks for no speed options`},
		{"op unit", strings.Replace(first, `"metrics"`, `"op_unit":"GOP","metrics"`, 1), `key "op_unit": "GOP": only "OP"`},
		{"inputs", regexp.MustCompile(`"inputs":"[0-9a-f]+"`).ReplaceAllString(first, `"inputs":"0123456789abcdef"`), `key "run": point 0 ran from other inputs (inputs 0123456789abcdef, now`},
		// A key given twice, at any level (encoding/json would keep the
		// last value).
		{"metric twice", strings.Replace(first, `"flops.tflops":`, `"flops.tflops":7,"flops.tflops":`, 1), `results.jsonl:1: key "metrics.flops.tflops" given twice`},
		{"status twice", strings.Replace(first, `"status":"ok"`, `"status":"failed","status":"ok"`, 1), `results.jsonl:1: key "status" given twice`},
		{"index in two cases", strings.Replace(first, `"index":0`, `"index":5,"Index":0`, 1), `results.jsonl:1: key "Index" given twice (first as "index")`},
		{"index escaped", strings.Replace(first, `"index":0`, `"index":5,"\u0069ndex":0`, 1), `results.jsonl:1: key "index" given twice`},
		{"run key in two cases", strings.Replace(first, `"run":{`, `"run":{"Inputs":"x",`, 1), `results.jsonl:1: key "run.inputs" given twice (first as "Inputs")`},
		{"param twice", strings.Replace(first, `"params":{`, `"params":{"program.tiling.bm":"128",`, 1), `results.jsonl:1: key "params.program.tiling.bm" given twice`},
		{"twice in a metric's value", strings.Replace(first, `"hplmxp.n":null`, `"hplmxp.n":[1,{"a":{"b":1,"c":[],"b":2}}]`, 1), `results.jsonl:1: key "metrics.hplmxp.n.1.a.b" given twice`},
		{"twice among many", strings.Replace(first, `"metrics":{`, `"metrics":{`+manyKeys(20)+`"m17":1,`, 1), `results.jsonl:1: key "metrics.m17" given twice`},
		{"metrics in two cases", strings.Replace(first, `"metrics":{`, `"metrics":{"FLOPS.tflops":1,`, 1), `results.jsonl:1: key "metrics": 5 metrics recorded, the study has 4`},
		{"twice after an escaped quote", strings.Replace(first, `"status":"ok"`, `"status":"ok","error":"a \"quoted\" word","error":""`, 1), `results.jsonl:1: key "error" given twice`},
		{"twice on the second line", first + strings.Replace(first, `"index":0`, `"index":0,"index":1`, 1), `results.jsonl:2: key "index" given twice`},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, ResultsJSONL)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Run(s, Options{Out: dir, Resume: true, Jobs: 1})
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
		if got := string(readFile(t, path)); got != c.text {
			t.Errorf("%s: the results file was changed", c.name)
		}
		if _, err := os.Stat(filepath.Join(dir, ResultsCSV)); err == nil {
			t.Errorf("%s: results.csv written", c.name)
		}
	}
}

// manyKeys returns n JSON members "m0":0, … "m<n-1>":0, each with a comma after it.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `"m%d":0,`, i)
	}
	return b.String()
}

func TestCheck(t *testing.T) {
	for _, c := range []struct{ vary, want string }{
		{"program.tiling.bmm: [64]", `key "vary.program.tiling.bmm": program.tiling.bmm=64 (program `},
		{"program.tiling.bm: [64, abc]", `want an integer`},
		{"machine.core.buffers.L3: [1MiB]", `unknown key "core.buffers.L3"`},
		{"machine.core.buffers.L1: [1MiB, lots]", `bad size`},
		{"program: [prog.yaml, nope.yaml]", `key "program": program file`},
		{"machine: [ascend-910a, nope]", `key "machine": unknown machine "nope"`},
		{"machine.cores: [0, 32]", `key "vary.machine.cores": machine.cores=0: key "cores": must be ≥ 1 (got 0)`},
	} {
		s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {"+c.vary+"}\n")
		out := filepath.Join(t.TempDir(), "out")
		_, err := Run(s, Options{Out: out})
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.vary, err, c.want)
		} else if !strings.Contains(err.Error(), "study.yaml:3: key ") {
			t.Errorf("%s: error %v, want the line of the key (3)", c.vary, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: output directory created before the check", c.vary)
		}
	}
	// A bad fixed override too.
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.numerix: off}\nvary: {program.m: [256]}\n")
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), `key "set.program.numerix"`) {
		t.Errorf("bad set: %v", err)
	}
	// A fixed machine value no machine takes, and a point's: named by their
	// keys in the study.
	s = writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nset: {machine.cores: 0}\nvary: {program.m: [256]}\n")
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), `key "set.machine.cores": machine.cores=0: key "cores": must be ≥ 1`) {
		t.Errorf("bad set machine value: %v", err)
	}
	// A program file as the study's machine says so (it said "unknown
	// machine kind").
	s = writeStudy(t, "program: prog.yaml\nmachine: prog.yaml\nmetrics: [time.seconds]\nvary: {program.tiling.bm: [64]}\n")
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), `prog.yaml: a program file (kind sgemm-cube), not a machine`) {
		t.Errorf("program file as the machine: %v", err)
	}
	s = writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\npoints: [{program.tiling.bmm: 64}]\n")
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), `key "points[].program.tiling.bmm"`) {
		t.Errorf("bad point key: %v", err)
	}
	// Values infeasible in some combinations are not input errors: they
	// fail at their points (bm 512 with 256KiB: 16 blocks of it take
	// 1MiB). (Values refused at each of their points are:
	// TestVariedRefusedUpFront.)
	s = writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.tiling.nfused: 16}\nvary: {program.tiling.bm: [64, 512], machine.core.buffers.L1: [256KiB, 2MiB]}\n")
	if err := s.Check(); err != nil {
		t.Errorf("infeasible values: %v", err)
	}
}

// A study of scheme auto is checked without its candidates' runs (a
// build stopped before them: Kind.CheckFor): a value the program refuses
// is refused as any other, and the values it takes pass.
func TestCheckSchemeAuto(t *testing.T) {
	prog, err := filepath.Abs("../programs/examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := "program: " + prog + "\nmetrics: [time.seconds]\nset: {program.scheme: auto, program.m: 4096, program.n: 4096, program.k: 4096}\n"
	s := writeStudy(t, base+"vary: {program.target_bits: [20, abc]}\n")
	if err := s.Check(); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), `key "vary.program.target_bits": program.target_bits=abc`) {
		t.Errorf("bad target: %v", err)
	}
	s = writeStudy(t, base+"vary: {machine: [a100, mi210], program.target_bits: [12, 20]}\n")
	if err := s.Check(); err != nil {
		t.Errorf("good values: %v", err)
	}
}

// A study may vary a key of one entry of the scheme's pieces; a value
// the key does not take, or an entry the pieces do not have, is refused
// by the check with the study's line.
func TestCheckSchemePieceKey(t *testing.T) {
	prog, err := filepath.Abs("../programs/examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := "program: " + prog + "\nmetrics: [time.seconds]\nset: {program.scheme: ootomo, program.m: 256, program.n: 256, program.k: 256}\n"
	if err := writeStudy(t, base+"vary:\n  program.scheme.pieces[1].scale: [9, 10, 12]\n").Check(); err != nil {
		t.Errorf("good values: %v", err)
	}
	for _, c := range []struct{ vary, want string }{
		{"program.scheme.pieces[1].scale: [9, x]", `study.yaml:5: key "vary.program.scheme.pieces[1].scale": program.scheme.pieces[1].scale=x (program `},
		{"program.scheme.pieces[3].scale: [9]", `no entry 3 to set (scheme.pieces has 2 entries)`},
	} {
		if err := writeStudy(t, base+"vary:\n  "+c.vary+"\n").Check(); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want bad input containing %q", c.vary, err, c.want)
		}
	}
}

func TestRunPointFailures(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.tiling.bm: [100], machine.core.buffers.L1: [1KiB, 1MiB]}\n")
	for _, p := range s.Points {
		r := s.RunPoint(p)
		if r.Status != StatusFailed || r.Error == "" || strings.Contains(r.Error, "\n") || string(r.Metrics["time.seconds"]) != "null" {
			t.Errorf("point %d: %+v", p.Index, r)
		}
	}
}

func TestBarLine(t *testing.T) {
	got := barLine(5, 1, 20, nil, 10*time.Second)
	want := "[=======>                      ] 5/20 points, 1 failed, 10s elapsed, ETA 30s"
	if got != want {
		t.Errorf("barLine = %q, want %q", got, want)
	}
	if got := barLine(20, 0, 20, nil, time.Minute); !strings.HasPrefix(got, "[==============================] 20/20") || strings.Contains(got, "ETA") {
		t.Errorf("barLine done = %q", got)
	}
	// Two long points in flight, none done: their shares are the work
	// done (1 of 10 points' worth in 100 s: 900 s to go).
	got = barLine(0, 0, 10, []float64{0.25, 0.75}, 100*time.Second)
	want = "[===>                          ] 0/10 points (running: 25 %, 75 %), 1m40s elapsed, ETA 15m0s"
	if got != want {
		t.Errorf("barLine = %q, want %q", got, want)
	}
	if got := barLine(0, 0, 64, make([]float64, 32), time.Second); !strings.Contains(got, "(running: 0 %, 0 %, 0 %, 0 %, 28 more), 1s elapsed") || strings.Contains(got, "ETA") {
		t.Errorf("barLine with 32 points running, nothing done = %q: want 4 shares listed, no ETA from nothing", got)
	}
}

// A sweep drawing its bar gives each point's run a work meter and shows
// the points in flight by their shares done.
func TestProgressShowsPointsInFlight(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.m: [256, 512]}\n")
	defer func(e uint64) { pointProgressEvery = e }(pointProgressEvery)
	pointProgressEvery = 64
	var out bytes.Buffer
	bar := newProgress(&out, 2)
	r := s.runPoint(context.Background(), s.Points[1], 0, 0, bar)
	if r.Status != StatusOK {
		t.Fatalf("point 1: %+v", r)
	}
	bar.mu.Lock()
	frac, ok := bar.running[1]
	bar.mu.Unlock()
	bar.step(1, false)
	bar.close()
	if !ok || frac <= 0 || frac > 1 {
		t.Errorf("point 1's share done after its run: %v (recorded: %v)", frac, ok)
	}
}

func TestPlotDegenerate(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [a, b]\nvary: {program.buffering: [single, double]}\nplot: {x: program.buffering, y: [a, b], logx: true, logy: true}\n")
	recs := []Record{
		{Index: 0, Params: map[string]string{"program.buffering": "single"}, Status: StatusOK, Metrics: map[string]json.RawMessage{"a": json.RawMessage("0"), "b": json.RawMessage("2")}},
		{Index: 1, Params: map[string]string{"program.buffering": "double"}, Status: StatusOK, Metrics: map[string]json.RawMessage{"a": json.RawMessage("null"), "b": json.RawMessage("3")}},
	}
	var log bytes.Buffer
	dir := t.TempDir()
	if err := DrawPlot(s, s.Plots[0], recs, dir, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "2 values left out") || !strings.Contains(log.String(), "linear axis") {
		t.Errorf("warnings: %q", log.String())
	}
	if _, err := os.Stat(filepath.Join(dir, s.Plots[0].Name+".svg")); err != nil {
		t.Error(err)
	}
	// Nothing drawable: no files, a warning.
	log.Reset()
	dir = t.TempDir()
	if err := DrawPlot(s, s.Plots[0], nil, dir, &log); err != nil || !strings.Contains(log.String(), "nothing to draw; skipped\n") {
		t.Errorf("empty plot: %v %q", err, log.String())
	}
	// Nothing drawable where an earlier run drew it: its files, which no
	// longer show these results, are removed, and the warning says so.
	log.Reset()
	name := s.Plots[0].Name
	for _, ext := range plotFormats {
		if err := os.WriteFile(filepath.Join(dir, name+ext), []byte("earlier"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := DrawPlot(s, s.Plots[0], nil, dir, &log); err != nil || !strings.Contains(log.String(), "nothing to draw; skipped, and its earlier "+name+".png, "+name+".svg, "+name+".pdf removed") {
		t.Errorf("empty plot over an earlier one: %v %q", err, log.String())
	}
	for _, ext := range plotFormats {
		if _, err := os.Lstat(filepath.Join(dir, name+ext)); err == nil {
			t.Errorf("the earlier %s%s stays", name, ext)
		}
	}
}

// A log x axis over a numeric parameter with a value ≤ 0: the value is
// left out (with its tick: the plot failed, exit 1). (A study file saying
// so is refused since; the drawing stays safe for such records.)
func TestPlotLogXNonPositiveParam(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [a]\nvary: {program.inputs.offset_exponent: [-2, 0, 2]}\nplot: {x: program.inputs.offset_exponent, y: a}\n")
	s.Plots[0].LogX = true
	var recs []Record
	for i, v := range []string{"-2", "0", "2"} {
		recs = append(recs, Record{Index: i, Params: map[string]string{"program.inputs.offset_exponent": v}, Status: StatusOK, Metrics: map[string]json.RawMessage{"a": json.RawMessage("1")}})
	}
	var log bytes.Buffer
	dir := t.TempDir()
	if err := DrawPlot(s, s.Plots[0], recs, dir, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "2 values left out") {
		t.Errorf("warnings: %q", log.String())
	}
	if _, err := os.Stat(filepath.Join(dir, s.Plots[0].Name+".png")); err != nil {
		t.Error(err)
	}
}

func TestPlotSeriesOnlyWhereNeeded(t *testing.T) {
	s := writeStudy(t, `program: prog.yaml
metrics: [a]
points: [{program.tiling.bm: 64, program.tiling.bn: 64}, {program.tiling.bm: 128, program.tiling.bn: 128}]
vary: {program.tiling.bk: [64, 128]}
plot: {x: program.tiling.bm, y: a}
`)
	var recs []Record
	for _, p := range s.Points {
		recs = append(recs, Record{Index: p.Index, Params: s.paramMap(p), Status: StatusOK,
			Metrics: map[string]json.RawMessage{"a": json.RawMessage(p.Values[2])}})
	}
	dir := t.TempDir()
	if err := DrawPlot(s, s.Plots[0], recs, dir, nil); err != nil {
		t.Fatal(err)
	}
	svg := string(readFile(t, filepath.Join(dir, s.Plots[0].Name+".svg")))
	if !strings.Contains(svg, "bk=128") || strings.Contains(svg, "bn=") {
		t.Errorf("legend: want bk lines only (bn follows bm)")
	}
}

func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(3e-7, 0.05) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "1e-07 1e-06 1e-05 1e-04 1e-03 1e-02 1e-01" { // (one style; the axis grows to the decades)
		t.Errorf("labels %v", labels)
	}
	if len((logTicks{}).Ticks(0, 1)) != 0 {
		t.Errorf("ticks for a non-positive range")
	}
}

// A point that outlives --point-timeout is stopped and recorded as failed;
// an interrupted study records none of the points in flight and says how to
// continue.
func TestPointTimeoutAndInterrupt(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.m: [4096]}\n")
	r := s.runPoint(context.Background(), s.Points[0], time.Nanosecond, 0, nil)
	if r.Status != StatusFailed || !strings.Contains(r.Error, "point time limit 1ns exceeded (--point-timeout)") {
		t.Errorf("timed-out point: %+v", r)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted by SIGINT"))
	out := t.TempDir()
	// (SkipCheck: the points' run interrupted, not the probes of the set
	// before it, TestSetProbesInterrupted.)
	_, err := Run(s, Options{Out: out, Jobs: 1, Context: ctx, SkipCheck: true})
	if want := "sweep: interrupted by SIGINT; the points finished so far are in " + filepath.Join(out, ResultsJSONL) + " (continue with --resume -o " + out + ")"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("interrupted Run: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, ResultsJSONL)); len(b) != 0 {
		t.Errorf("an interrupted point was recorded: %s", b)
	}
}

// Axis titles carry units, every plot has a title.
func TestAxisTitles(t *testing.T) {
	for key, want := range map[string]string{
		"flops.tflops": "Throughput (TFLOP/s)", "pipes.M.busy": "M: Busy fraction",
		"buffers.L1.peak_fraction": "L1: Peak occupancy (fraction of capacity)", "hplmxp.peak_fraction": "Fraction of peak", "error.rel_fro": "Relative error (Frobenius norm)",
		"machine.core.buffers.L1": "L1 size", "program.tiling.bm": "program.tiling.bm",
	} {
		if got := axisTitle(key); got != want {
			t.Errorf("axisTitle(%q) = %q, want %q", key, got, want)
		}
	}
	if got := plotTitle(Plot{X: "machine.core.buffers.L1", Y: []string{"flops.tflops"}}); got != "Throughput (TFLOP/s) against L1 size" {
		t.Errorf("plotTitle = %q", got)
	}
	if got := plotTitle(Plot{X: "program.m", Y: []string{"time.seconds"}, Where: map[string]string{"machine": "a100", "program.scheme": "ootomo"}}); got != "Simulated time (s) against program.m (machine=a100, program.scheme=ootomo)" {
		t.Errorf("plotTitle with where = %q", got)
	}
}

// k_batch and fast_forward are every point's run options: a SIMT SGEMM
// study records the batch in each report (here compared with the same
// study without them: fewer events, the same GM reads).
func TestRunSpeedModes(t *testing.T) {
	dir := t.TempDir()
	prog := "kind: sgemm\nmachine: a100\nm: 512\nn: 512\nk: 2048\nnumerics: off\n"
	if err := os.WriteFile(filepath.Join(dir, "prog.yaml"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(modes string) []Record {
		path := filepath.Join(dir, "study.yaml")
		study := "program: prog.yaml\nvary: {machine: [a100, t4]}\nmetrics: [sim.events, sim.k_batch, program.tiling.k_batch, memory.gm_read_bytes]\n" + modes
		if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadStudy(path)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		if _, err := Run(s, Options{Out: out, Jobs: 2}); err != nil {
			t.Fatal(err)
		}
		var recs []Record
		for _, line := range bytes.Split(bytes.TrimSpace(readFile(t, filepath.Join(out, ResultsJSONL))), []byte("\n")) {
			var r Record
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, r)
		}
		return recs
	}
	full, fast := run(""), run("k_batch: 8\nfast_forward: true\n")
	if len(full) != 2 || len(fast) != 2 {
		t.Fatalf("%d and %d records", len(full), len(fast))
	}
	for i := range full {
		f, b := full[i].Metrics, fast[i].Metrics
		if string(b["sim.k_batch"]) != "8" || string(f["sim.k_batch"]) != "null" || string(b["program.tiling.k_batch"]) == "null" {
			t.Errorf("point %d: k_batch %s / %s batched, %s in full", i, b["sim.k_batch"], b["program.tiling.k_batch"], f["sim.k_batch"])
		}
		var fe, be int64
		if json.Unmarshal(f["sim.events"], &fe) != nil || json.Unmarshal(b["sim.events"], &be) != nil || 2*be > fe ||
			string(f["memory.gm_read_bytes"]) != string(b["memory.gm_read_bytes"]) {
			t.Errorf("point %d: %d events batched, %d in full; GM reads %s, %s", i, be, fe, b["memory.gm_read_bytes"], f["memory.gm_read_bytes"])
		}
	}
}

// A study resumed after its run options, its program file's text or its
// fixed overrides changed is refused (one line, bad input, the results
// file untouched), not mixed: the records carry a RunStamp.
func TestResumeChangedStudy(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	out := t.TempDir()
	if _, err := Run(s, Options{Out: out, Jobs: 2, Shard: Shard{0, 2}}); err != nil {
		t.Fatal(err)
	}
	jl := filepath.Join(out, ResultsJSONL)
	before := readFile(t, jl)
	progPath := filepath.Join(s.Dir, "prog.yaml")
	for _, c := range []struct {
		name   string
		change func(*Study)
		want   string
	}{
		{"k_batch", func(s *Study) { s.KBatch = 8 }, "ran with no speed options, the study asks for k_batch=8"},
		{"fast_forward", func(s *Study) { s.FastForward = true }, "the study asks for fast_forward"},
		{"set", func(s *Study) {
			s.Set = append(s.Set, machines.Override{Path: "machine.gm.bandwidth", Value: "1TB/s"})
		}, "ran from other inputs"},
		{"program text", func(*Study) {
			if err := os.WriteFile(progPath, []byte(strings.Replace(tinyProgram, "m: 256", "m: 512", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "ran from other inputs"},
		{"machine", func(s *Study) { s.Machine = "ascend-910b3" }, "ran from other inputs"},
	} {
		changed := writeStudy(t, tinyStudy)
		changed.Dir, changed.Program = s.Dir, s.Program
		if err := os.WriteFile(progPath, []byte(tinyProgram), 0o644); err != nil {
			t.Fatal(err)
		}
		c.change(changed)
		_, err := Run(changed, Options{Out: out, Jobs: 1, Resume: true})
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
		if !bytes.Equal(readFile(t, jl), before) {
			t.Fatalf("%s: the results file was changed", c.name)
		}
	}
	// Its comments and layout changed (not its content), it resumes.
	edited := "# a comment\n" + strings.Replace(strings.Replace(tinyProgram, "m: 256", "m:   256   # rows", 1),
		"tiling: {bm: 64, bk: 64, bn: 64}", "tiling:\n  bm: 64\n  bk: 64 # depth\n  bn: 64", 1)
	if err := os.WriteFile(progPath, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := writeStudy(t, tinyStudy) // (a study digests each file once)
	fresh.Dir, fresh.Program = s.Dir, s.Program
	if sum, err := Run(fresh, Options{Out: out, Jobs: 2, Resume: true}); err != nil || sum.Skipped != 6 || sum.Ran != 6 {
		t.Errorf("resume of the study with its program's comments and layout changed: %+v %v", sum, err)
	}
}

// --rerun-changed runs again, shard by shard, the points recorded from
// inputs edited since (and only those), dropping their records first, so
// the results file never holds a point twice and ends as a fresh run's.
func TestResumeRerunChanged(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	out := t.TempDir()
	if _, err := Run(s, Options{Out: out, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	progPath := filepath.Join(s.Dir, "prog.yaml")
	if err := os.WriteFile(progPath, []byte(strings.Replace(tinyProgram, "m: 256", "m: 512", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	study := func() *Study { // (a study digests each file once)
		c := writeStudy(t, tinyStudy)
		c.Dir, c.Program = s.Dir, s.Program
		return c
	}
	jl := filepath.Join(out, ResultsJSONL)
	if _, err := Run(study(), Options{Out: out, Jobs: 1, Resume: true}); err == nil || !strings.Contains(err.Error(), "--rerun-changed") {
		t.Fatalf("resume without --rerun-changed: %v", err)
	}
	for i, shard := range []Shard{{1, 2}, {0, 2}} {
		var log bytes.Buffer
		sum, err := Run(study(), Options{Out: out, Jobs: 2, Shard: shard, Resume: true, RerunChanged: true, Log: &log})
		if err != nil || sum.Rerun != 6 || sum.Ran != 6 || sum.Skipped != 0 {
			t.Fatalf("shard %v: %+v %v", shard, sum, err)
		}
		// The first shard is told of the other's records left from the
		// old inputs (in results.csv and the plots until it runs).
		if warned := strings.Contains(log.String(), "6 points of other shards were recorded from other inputs"); warned != (i == 0) {
			t.Errorf("shard %v: warned %v: %q", shard, warned, log.String())
		}
		if i == 0 {
			// The other shard's records, still from the old inputs, are
			// refused by a plain resume; none is recorded twice.
			if _, err := ReadResults(jl, study()); err == nil || !strings.Contains(err.Error(), "ran from other inputs") {
				t.Errorf("after one shard: %v", err)
			}
		}
	}
	sum, err := Run(study(), Options{Out: out, Jobs: 1, Resume: true, RerunChanged: true})
	if err != nil || sum.Rerun != 0 || sum.Ran != 0 || sum.Skipped != 12 {
		t.Fatalf("all done: %+v %v", sum, err)
	}
	sameAsFresh(t, study(), out)
}

// Records of an earlier davinci-sim, whose inputs digest the files' text,
// resume as long as that text is the same; the records it writes digest
// their YAML content.
func TestResumeTextDigest(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	out := t.TempDir()
	if _, err := Run(s, Options{Out: out, Jobs: 2, Shard: Shard{0, 2}}); err != nil {
		t.Fatal(err)
	}
	jl := filepath.Join(out, ResultsJSONL)
	old := readFile(t, jl)
	// The same records, stamped as before 2026-11-30.
	for i, p := range s.Points {
		now, before := s.inputs(p, stampNow), s.inputs(p, stampByText)
		if now == before {
			t.Fatalf("point %d: the text digest is the content digest", i)
		}
		old = bytes.ReplaceAll(old, []byte(`"inputs":"`+now+`"`), []byte(`"inputs":"`+before+`"`))
	}
	if err := os.WriteFile(jl, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if sum, err := Run(s, Options{Out: out, Jobs: 2, Resume: true}); err != nil || sum.Skipped != 6 || sum.Ran != 6 {
		t.Fatalf("resume of text-stamped records: %+v %v", sum, err)
	}
	if got := readFile(t, jl); !bytes.Contains(got, []byte(`"inputs":"`+s.inputs(s.Points[1], stampNow)+`"`)) {
		t.Errorf("the new records are not stamped with the content digest:\n%s", got)
	}
}

// A machine file named by the program's own machine: key resolves against
// the program's folder, in the check as in the run (the check looked for
// it in the current directory and refused the study).
func TestCheckProgramMachineFile(t *testing.T) {
	src, err := machines.Source("ascend-910a")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"p/m/mine.yaml": strings.Replace(string(src), "name: ascend-910a", "name: check-rel", 1),
		"p/prog.yaml":   strings.Replace(tinyProgram, "machine: ascend-910a", "machine: m/mine.yaml", 1),
		"s/study.yaml":  "program: ../p/prog.yaml\nmetrics: [time.seconds]\nvary: {program.tiling.bm: [64]}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadStudy(filepath.Join(dir, "s", "study.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("check: %v", err)
	}
	if r := s.RunPoint(s.Points[0]); r.Status != StatusOK {
		t.Errorf("point 0: %+v", r)
	}
}

// A machine file given as program.machine, fixed or varied, resolves
// against the study's folder like the study's other files (it resolved
// against the current directory: the study ran only from its folder).
func TestProgramMachineOverrideFile(t *testing.T) {
	src, err := machines.Source("ascend-910b3")
	if err != nil {
		t.Fatal(err)
	}
	for _, study := range []string{
		"program: prog.yaml\nset: {program.machine: mm/b3.yaml}\nvary: {program.tiling.bm: [64]}\nmetrics: [machine]\n",
		"program: prog.yaml\nvary: {program.machine: [mm/b3.yaml]}\nmetrics: [machine]\n",
	} {
		s := writeStudy(t, study)
		if err := os.MkdirAll(filepath.Join(s.Dir, "mm"), 0o755); err != nil {
			t.Fatal(err)
		}
		mach := strings.Replace(string(src), "name: ascend-910b3", "name: override-rel", 1)
		if err := os.WriteFile(filepath.Join(s.Dir, "mm", "b3.yaml"), []byte(mach), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Run(s, Options{Out: t.TempDir(), Jobs: 1}); err != nil {
			t.Fatalf("%q: %v", study, err)
		}
		if r := s.RunPoint(s.Points[0]); r.Status != StatusOK || string(r.Metrics["machine"]) != `"override-rel"` {
			t.Errorf("%q: point 0: %+v", study, r)
		}
	}
}

// The legend goes in the corner of the data area that covers no point; where
// every corner has points it is drawn beside the chart, the image that much
// wider (the chart keeps its size), rather than over the data.
func TestPlotLegendBeside(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [a]\nvary: {program.m: [1, 2, 3], program.n: [1, 2]}\nplot: {x: program.m, y: a, series: [program.n]}\n")
	width := func(ys map[string][3]string) int {
		t.Helper()
		var recs []Record
		for n, y := range ys {
			for i, m := range []string{"1", "2", "3"} {
				recs = append(recs, Record{Index: len(recs), Params: map[string]string{"program.m": m, "program.n": n}, Status: StatusOK,
					Metrics: map[string]json.RawMessage{"a": json.RawMessage(y[i])}})
			}
		}
		return drawnSize(t, s, recs).Width
	}
	// Rising lines leave the top-left corner free: the legend inside.
	free := width(map[string][3]string{"1": {"1", "2", "3"}, "2": {"1.1", "2.1", "3.1"}})
	// Lines at the top and the bottom from end to end: no corner free.
	full := width(map[string][3]string{"1": {"1", "1", "1"}, "2": {"3", "3", "3"}})
	if want := int(plotWidth.Dots(96) + 0.5); free < want-1 || free > want+1 {
		t.Errorf("legend in a free corner: image %d px wide, want the chart's %d", free, want)
	}
	if full <= free+10 {
		t.Errorf("no free corner: image %d px wide, want wider than %d (the legend beside the chart)", full, free)
	}
}

// A series over program or machine files is labelled by the files' base
// names — unless two would read the same, or a value is not a file.
func TestFileLabels(t *testing.T) {
	recs := func(q string, vs ...string) []Record {
		var out []Record
		for _, v := range vs {
			out = append(out, Record{Params: map[string]string{q: v}})
		}
		return out
	}
	got := fileLabels(recs("program", "../../programs/examples/b200-ozaki.yaml", "../../programs/examples/a100-dgemm.yaml", "../../programs/examples/b200-ozaki.yaml"), "program")
	want := map[string]string{"../../programs/examples/b200-ozaki.yaml": "b200-ozaki", "../../programs/examples/a100-dgemm.yaml": "a100-dgemm"}
	if !maps.Equal(got, want) {
		t.Errorf("fileLabels = %v, want %v", got, want)
	}
	// Machines: files by base name, embedded names as they are.
	got = fileLabels(recs("machine", "ascend-910a", "../m/910b3.yaml"), "machine")
	if want := map[string]string{"ascend-910a": "ascend-910a", "../m/910b3.yaml": "910b3"}; !maps.Equal(got, want) {
		t.Errorf("fileLabels(machines) = %v, want %v", got, want)
	}
	for _, c := range []struct {
		q  string
		vs []string
	}{
		{"program", []string{"a/gemm.yaml", "b/gemm.yaml"}},      // the same base name
		{"machine", []string{"a100", "m/a100.yaml"}},             // a file named like an embedded machine
		{"machine.gm.bandwidth", []string{"1.6TB/s", "2TB/s"}},   // not a file parameter
		{"program.tiling.staging", []string{"x.yaml", "y.yaml"}}, // nor this one, whatever its values
	} {
		if got := fileLabels(recs(c.q, c.vs...), c.q); got != nil {
			t.Errorf("fileLabels(%s %q) = %v, want none", c.q, c.vs, got)
		}
	}
}

// An empty series value (the program's own, in a study's explicit points)
// reads "" in the legend, not as a key with nothing after it.
func TestPlotEmptySeriesValue(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [a]\npoints: [{program.m: 1, program.tiling.staging: \"\"}, {program.m: 2, program.tiling.staging: \"\"}, {program.m: 1, program.tiling.staging: none}, {program.m: 2, program.tiling.staging: none}]\nplot: {x: program.m, y: a, series: [program.tiling.staging]}\n")
	var recs []Record
	for i, p := range s.Points {
		recs = append(recs, Record{Index: i, Params: s.paramMap(p), Status: StatusOK, Metrics: map[string]json.RawMessage{"a": json.RawMessage("1")}})
	}
	dir := t.TempDir()
	if err := DrawPlot(s, s.Plots[0], recs, dir, nil); err != nil {
		t.Fatal(err)
	}
	svg := readFile(t, filepath.Join(dir, s.Plots[0].Name+".svg"))
	if !bytes.Contains(svg, []byte("staging=&#34;&#34;<")) || !bytes.Contains(svg, []byte("staging=none<")) {
		t.Errorf("legend lacks staging=\"\" and staging=none:\n%s", svg)
	}
}

// The legend goes in a corner no drawn line crosses — the data's or a
// ceiling's —, and beside the chart where there is none.
func TestPlaceLegend(t *testing.T) {
	xy := func(pts ...float64) *line {
		l := &line{}
		for i := 0; i < len(pts); i += 2 {
			l.xys = append(l.xys, plotter.XY{X: pts[i], Y: pts[i+1]})
		}
		return l
	}
	for _, c := range []struct {
		name            string
		lines           []*line
		free, top, left bool
	}{
		// A flat line at the bottom, a ceiling flat at the top right:
		// the top left is free.
		{"ceiling", []*line{{label: "a", xys: xy(0, 0, 10, 0).xys}, xy(0, 0, 5, 10, 10, 10)}, true, true, true},
		// Lines along the top and the bottom: no corner free.
		{"full", []*line{{label: "a", xys: xy(0, 0, 10, 0).xys}, {label: "b", xys: xy(0, 10, 10, 10).xys}}, false, false, false},
		// A falling line: the top right is free.
		{"falling", []*line{{label: "a", xys: xy(0, 10, 10, 0).xys}}, true, true, false},
	} {
		p := plot.New()
		free := placeLegend(p, c.lines, false, false)
		if free != c.free || free && (p.Legend.Top != c.top || p.Legend.Left != c.left) {
			t.Errorf("%s: free %v, top %v, left %v; want %v, %v, %v", c.name, free, p.Legend.Top, p.Legend.Left, c.free, c.top, c.left)
		}
	}
}

// Redraw draws a study's plots again from its results, running nothing and
// writing nothing else — also records made from other inputs, which
// --resume refuses, counted as such; records of another study it refuses.
func TestRedraw(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	out := t.TempDir()
	if _, err := Run(s, Options{Out: out, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	plotFile := filepath.Join(out, s.Plots[0].Name+".png")
	if err := os.Remove(plotFile); err != nil {
		t.Fatal(err)
	}
	// Every file but the plots, to check they are left alone.
	snapshot := func() map[string]string {
		files := map[string]string{}
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); ext != ".png" && ext != ".svg" && ext != ".pdf" {
				files[e.Name()] = string(readFile(t, filepath.Join(out, e.Name())))
			}
		}
		return files
	}
	before := snapshot()
	// The program edited since: --resume refuses, Redraw draws.
	if err := os.WriteFile(filepath.Join(s.Dir, "prog.yaml"), []byte(strings.Replace(tinyProgram, "m: 256", "m: 512", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := writeStudy(t, tinyStudy)
	edited.Dir, edited.Program = s.Dir, s.Program
	if _, err := Run(edited, Options{Out: out, Jobs: 1, Resume: true}); err == nil || !strings.Contains(err.Error(), "other inputs") {
		t.Fatalf("resume after the program's edit: %v", err)
	}
	plots, n, stale, err := Redraw(edited, out, nil)
	if err != nil || plots != len(s.Plots) || n != 8 || stale != 12 { // (4 of the 12 points failed)
		t.Fatalf("Redraw = %d plots, %d records that ran, %d stale, %v; want %d, 8, 12, nil", plots, n, stale, err, len(s.Plots))
	}
	if _, err := os.Stat(plotFile); err != nil {
		t.Errorf("the plot was not drawn: %v", err)
	}
	if after := snapshot(); !maps.Equal(after, before) {
		t.Errorf("Redraw changed files other than the plots")
	}
	// Another study's records (other parameters): refused, one line.
	other := writeStudy(t, strings.Replace(tinyStudy, "[64, 128, 512]", "[32, 128, 512]", 1))
	other.Dir, other.Program = s.Dir, s.Program
	if _, _, _, err := Redraw(other, out, nil); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), `key "params"`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Redraw of another study's records: %v", err)
	}
	// No results: refused.
	if _, _, _, err := Redraw(s, t.TempDir(), nil); err == nil || !badinput.Is(err) {
		t.Errorf("Redraw without results: %v", err)
	}
}

// A legend beside the chart that is taller than the chart makes the image
// taller, so that its last entries are not cut off.
func TestPlotTallLegendBeside(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [a]\nvary: {program.m: [1, 2], program.n: [1]}\nplot: {x: program.m, y: a, series: [program.n]}\n")
	var recs []Record
	for n := range 40 { // 40 flat lines from bottom to top: no corner free
		for _, m := range []string{"1", "2"} {
			recs = append(recs, Record{Index: len(recs), Params: map[string]string{"program.m": m, "program.n": strconv.Itoa(n)}, Status: StatusOK,
				Metrics: map[string]json.RawMessage{"a": json.RawMessage(strconv.Itoa(n))}})
		}
	}
	if h, got := int(plotHeight.Dots(96)+0.5), drawnSize(t, s, recs).Height; got <= h+10 {
		t.Errorf("image %d px high with a 40-entry legend beside it, want taller than the chart's %d", got, h)
	}
}

// drawnSize draws study s's first plot from recs and returns its PNG's size.
func drawnSize(t *testing.T, s *Study, recs []Record) image.Config {
	t.Helper()
	dir := t.TempDir()
	if err := DrawPlot(s, s.Plots[0], recs, dir, nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, s.Plots[0].Name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Values at float64's ends draw, or are left out with a warning, in
// bounded time: y spanning ±1e308 (an infinite axis range: the plotting
// library's ticks had never ended), all 1e300 (its ±1 no range), all
// 1e-300 on a log axis (its −1 below 0).
func TestPlotExtremeValues(t *testing.T) {
	for _, c := range []struct {
		ys    [2]string
		logy  string
		drawn bool
		warn  string
	}{
		{[2]string{"-1e308", "1e308"}, "false", false, "2 values left out"},
		{[2]string{"-1e308", "3"}, "false", true, "1 values left out"},
		{[2]string{"1e300", "1e300"}, "false", true, ""},
		{[2]string{"1e-300", "1e-300"}, "true", true, ""},
		{[2]string{"1e16", "1e16"}, "true", true, ""},
		{[2]string{"5", "5"}, "true", true, ""},
	} {
		s := writeStudy(t, "program: prog.yaml\nmetrics: [a]\nvary: {program.m: [1, 2]}\nplot: {x: program.m, y: a, logy: "+c.logy+"}\n")
		var recs []Record
		for i, p := range s.Points {
			recs = append(recs, Record{Index: i, Params: s.paramMap(p), Status: StatusOK, Metrics: map[string]json.RawMessage{"a": json.RawMessage(c.ys[i])}})
		}
		var log bytes.Buffer
		drawn, err := drawPlot(s, s.Plots[0], recs, t.TempDir(), &log)
		if err != nil || drawn != c.drawn || !strings.Contains(log.String(), c.warn) || c.warn == "" && log.Len() > 0 {
			t.Errorf("%v logy %s: drawn %v, %v; log %q", c.ys, c.logy, drawn, err, log.String())
		}
	}
}

// A record that cannot be written stops the points in flight (their
// records could not be written either), and their shares leave the line:
// a long point does not keep the sweep from reporting the error.
func TestRecordFailureStopsPointsInFlight(t *testing.T) {
	dir := t.TempDir()
	// Point 0 runs in a second or two; point 1, on the other job, for
	// half a minute and more.
	prog := strings.Replace(tinyProgram, "k: 256", "k: 32768", 1)
	if err := os.WriteFile(filepath.Join(dir, "prog.yaml"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(path, []byte("program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.m: [64, 32768]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStudy(path)
	if err != nil {
		t.Fatal(err)
	}
	bar := new(lockedBuffer)
	var failed time.Time
	err = runPoints(s, s.Points, 2, Options{Progress: bar}, func(Record) error {
		// Fail once the line shows both points in flight (point 0 done,
		// not yet recorded; point 1 running).
		for !strings.Contains(bar.String(), " %, ") {
			time.Sleep(10 * time.Millisecond)
		}
		failed = time.Now()
		return errors.New("disk full")
	})
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("runPoints = %v, want the record's error", err)
	}
	// Stopped, point 1 ends within its next CancelEvery events (a
	// millisecond or so); run out, ~35 s here.
	if waited := time.Since(failed); waited > 10*time.Second {
		t.Fatalf("runPoints returned %v after the record failed: the point in flight ran on", waited)
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A point its time limit stopped is recorded so (time_limit_seconds), and
// --resume runs it again where the limit is now longer, or none — not
// where it is the same (a failure from the point's own inputs is kept:
// they are deterministic; a wall-time limit is not).
func TestResumeRerunsTimedOutPoints(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.m: [256, 4096]}\n")
	out := t.TempDir()
	sum, err := Run(s, Options{Out: out, Jobs: 1, PointTimeout: time.Nanosecond})
	if err != nil || sum.Failed != 2 {
		t.Fatalf("first run: %+v, %v", sum, err)
	}
	recs, err := ReadResults(filepath.Join(out, ResultsJSONL), s)
	if err != nil || len(recs) != 2 || recs[0].TimeLimitSeconds != 1e-9 {
		t.Fatalf("records %+v, %v: want both stopped at their 1 ns limit", recs, err)
	}
	sum, err = Run(s, Options{Out: out, Jobs: 1, Resume: true, PointTimeout: time.Nanosecond})
	if err != nil || sum.Ran != 0 || sum.Skipped != 2 {
		t.Fatalf("resumed with the same limit: %+v, %v; want nothing run again", sum, err)
	}
	sum, err = Run(s, Options{Out: out, Jobs: 1, Resume: true})
	if err != nil || sum.Ran != 2 || sum.RerunTimedOut != 2 || sum.Failed != 0 {
		t.Fatalf("resumed without a limit: %+v, %v; want both run again, and finished", sum, err)
	}
	recs, err = ReadResults(filepath.Join(out, ResultsJSONL), s)
	if err != nil || len(recs) != 2 || recs[1].Status != StatusOK || recs[1].TimeLimitSeconds != 0 {
		t.Fatalf("records after: %+v, %v", recs, err)
	}
}

// A point's refusal names the key of the study that gave the value, not
// the program file alone (whose value the study replaced) nor a --set the
// user never typed.
func TestRunPointNamesTheStudyKey(t *testing.T) {
	for _, c := range []struct{ study, want string }{
		{"set: {program.numerics: offf}\nvary: {program.m: [256]}\n", `(got "offf") (set by the study's set.program.numerics=offf)`},
		{"vary: {program.m: [-256]}\n", `(set by the study's vary.program.m=-256)`},
		{"points: [{program.m: -256}]\n", `(set by the study's points[].program.m=-256)`},
		{"vary: {machine.cores: [0]}\n", `vary.machine.cores=0: `},
		// (A limit the study lowered: the tile the file gives is refused.)
		{"vary: {machine.core.buffers.L0A: [4KiB]}\n", `exceeds L0A (4096 bytes; SGEMM-cube Eq. 12) (the constraint set by the study's vary.machine.core.buffers.L0A=4KiB)`},
	} {
		s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\n"+c.study)
		r := s.RunPoint(s.Points[0])
		if r.Status != StatusFailed || !strings.Contains(r.Error, c.want) || strings.Contains(r.Error, "--set") {
			t.Errorf("%q: %s %q, want failed naming %q", c.study, r.Status, r.Error, c.want)
		}
	}
}

// A metric added to a finished study: a plain resume says how to go on;
// --rerun-changed runs its points again (their reports are not kept), and
// the results are a fresh run's.
func TestResumeMetricAdded(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	out := t.TempDir()
	if _, err := Run(s, Options{Out: out, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	more := strings.Replace(tinyStudy, "hplmxp.n]", "hplmxp.n, time.seconds]", 1)
	study := func() *Study {
		c := writeStudy(t, more)
		c.Dir, c.Program = s.Dir, s.Program
		return c
	}
	if _, err := Run(study(), Options{Out: out, Jobs: 1, Resume: true}); err == nil || !strings.Contains(err.Error(), "--resume --rerun-changed runs its points again") {
		t.Fatalf("resume without --rerun-changed: %v", err)
	}
	sum, err := Run(study(), Options{Out: out, Jobs: 2, Resume: true, RerunChanged: true})
	if err != nil || sum.Rerun != 12 || sum.Ran != 12 {
		t.Fatalf("resume --rerun-changed: %+v %v", sum, err)
	}
	sameAsFresh(t, study(), out)
}

// sameAsFresh fails the test unless out's results are those of a fresh run
// of s.
func sameAsFresh(t *testing.T, s *Study, out string) {
	t.Helper()
	fresh := t.TempDir()
	if _, err := Run(s, Options{Out: fresh, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ResultsJSONL, ResultsCSV} {
		if !bytes.Equal(readFile(t, filepath.Join(out, name)), readFile(t, filepath.Join(fresh, name))) {
			t.Errorf("%s differs from a fresh run's", name)
		}
	}
}

// A point's stamp covers every file its run reads, not the program and
// machine files alone: after an asm program's source changes, --resume
// refuses the records (it kept the old cycles, "already done"), and
// --rerun-changed runs them again. Records of a davinci-sim whose stamp
// left such files out are refused as such; those of points that read no
// other file keep their stamp.
func TestStampCoversFilesTheProgramNames(t *testing.T) {
	dir := t.TempDir()
	kernel := "alloc L0A off=0 size=64KiB name=a\nalloc L0B off=0 size=64KiB name=b\nalloc L0C off=0 size=256KiB name=c\nm.mmad c=0 a=0 b=0 m=256 k=128 n=256 in=fp16 out=fp32 init\n"
	for name, text := range map[string]string{
		"k.s":        kernel,
		"p.yaml":     "kind: asm\nmachine: ascend-910a\nnumerics: off\nfile: k.s\n",
		"study.yaml": "program: p.yaml\nvary: {program.cores: [1, 2]}\nmetrics: [time.cycles]\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	study := func() *Study {
		s, err := ReadStudy(filepath.Join(dir, "study.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	out := t.TempDir()
	if _, err := Run(study(), Options{Out: out, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	jl := filepath.Join(out, ResultsJSONL)
	before := readFile(t, jl)
	// The same records, stamped as before the other files were in it.
	s := study()
	legacy := before
	for _, p := range s.Points {
		now, old := s.inputs(p, stampNow), s.inputs(p, stampNoFile)
		if now == old {
			t.Fatalf("point %d: the stamp does not cover the asm source", p.Index)
		}
		legacy = bytes.ReplaceAll(legacy, []byte(`"inputs":"`+now+`"`), []byte(`"inputs":"`+old+`"`))
	}
	if _, _, err := readResults(jl, bytes.NewReader(legacy), s, nil); err == nil || !strings.Contains(err.Error(), "recorded by an older davinci-sim, whose stamp left out the files its program names") {
		t.Errorf("records stamped without the asm source: %v", err)
	}

	// The source edited: one more mmad.
	if err := os.WriteFile(filepath.Join(dir, "k.s"), []byte(kernel+"m.mmad c=0 a=0 b=0 m=256 k=128 n=256 in=fp16 out=fp32 acc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(study(), Options{Out: out, Jobs: 1, Resume: true}); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "ran from other inputs") {
		t.Fatalf("resume after the asm source changed: %v", err)
	}
	sum, err := Run(study(), Options{Out: out, Jobs: 1, Resume: true, RerunChanged: true})
	if err != nil || sum.Rerun != 2 || sum.Ran != 2 {
		t.Fatalf("--rerun-changed after the asm source changed: %+v %v", sum, err)
	}
	cycles := func(b []byte) string {
		recs, _, err := readResults(jl, bytes.NewReader(b), study(), new(int))
		if err != nil || len(recs) == 0 {
			t.Fatalf("records: %v", err)
		}
		return string(recs[0].Metrics["time.cycles"])
	}
	if a, b := cycles(before), cycles(readFile(t, jl)); a == b {
		t.Errorf("time.cycles %s before and after the asm source changed", a)
	}

	// A program that reads no other file: the stamp davinci-sim wrote before.
	ts := writeStudy(t, tinyStudy)
	if p := ts.Points[0]; ts.inputs(p, stampNow) != ts.inputs(p, stampNoFile) {
		t.Errorf("a program reading no other file changed its stamp")
	}
}

// An input reached through a link is the output it links to (refused);
// an output that is a link to an input is not (the write replaces the
// link, not the file).
func TestOutputsNotInputsThroughLinks(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, ResultsCSV), []byte(tinyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, ResultsCSV), filepath.Join(dir, "prog.yaml")); err != nil {
		t.Skip(err)
	}
	study := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(study, []byte("program: prog.yaml\nvary: {program.tiling.bm: [64]}\nmetrics: [flops.tflops]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStudy(study)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(s, Options{Out: out, Jobs: 1}); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "writing results.csv there would replace the program file "+filepath.Join(dir, "prog.yaml")) {
		t.Errorf("a program linked to the output: %v", err)
	}
	if got := readFile(t, filepath.Join(out, ResultsCSV)); string(got) != tinyProgram {
		t.Errorf("the program was replaced:\n%s", got)
	}
	// The other way: results.csv a link to the program — outputs are
	// written through their links (outfile.Target), so it is refused too.
	out2 := filepath.Join(dir, "out2")
	if err := os.Mkdir(out2, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, ResultsCSV), filepath.Join(out2, ResultsCSV)); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(s, Options{Out: out2, Jobs: 1}); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "writing results.csv there would replace the program file") {
		t.Errorf("results.csv a link to the program: %v", err)
	}
	if got := readFile(t, filepath.Join(out, ResultsCSV)); string(got) != tinyProgram {
		t.Errorf("the program was replaced through the output's link:\n%s", got)
	}
}

// results.jsonl is appended to in place (--resume): a results.jsonl that is
// a link to an input would write into it, and is refused (the renamed
// outputs replace only the link; a review found the append slip past).
func TestResultsLinkToInputRefused(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nvary: {program.tiling.bm: [64]}\nmetrics: [flops.tflops]\n")
	out := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(s.Dir, "prog.yaml")
	if err := os.Symlink(prog, filepath.Join(out, ResultsJSONL)); err != nil {
		t.Skip(err)
	}
	_, err := Run(s, Options{Out: out, Jobs: 1, Resume: true})
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "writing results.jsonl there would replace the program file") {
		t.Errorf("results.jsonl a link to the program: %v", err)
	}
	if got := readFile(t, prog); string(got) != tinyProgram {
		t.Errorf("the program was written into:\n%s", got)
	}
}
