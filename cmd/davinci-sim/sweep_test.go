package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweepFixture writes a tiny program and a study varying vary; it returns
// the study path. The program fuses 16 A blocks of bm×64 FP16 in L1
// (tiling.nfused, its own value): bm 512 needs 1MiB, more than an L1 of
// 512KiB, bm 256 512KiB — a point that fails as it runs, where the study's
// values run at other points (a value refused at every point is refused
// before any runs).
func sweepFixture(t *testing.T, vary string) string {
	t.Helper()
	dir := t.TempDir()
	prog := "kind: sgemm-cube\nm: 256\nk: 256\nn: 256\ntiling: {bm: 64, bk: 64, bn: 64, nfused: 16}\nnumerics: off\n"
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	study := "program: p.yaml\nmetrics: [flops.tflops]\nvary: {" + vary + "}\nplot: {x: program.tiling.bm, y: flops.tflops}\n"
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSweepCommand(t *testing.T) {
	study := sweepFixture(t, "program.tiling.bm: [64, 128, 512], machine.core.buffers.L1: [512KiB]")
	out := filepath.Join(t.TempDir(), "out")
	msg, code, err := runCLI(t, "sweep", study, "-o", out, "-j", "2")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, msg)
	}
	if !strings.Contains(msg, "3 points: 3 run, 0 already done, 1 failed") || !strings.Contains(msg, "error column") {
		t.Errorf("summary: %q", msg)
	}
	csv, err := os.ReadFile(filepath.Join(out, "results.csv"))
	if err != nil || !strings.Contains(string(csv), "2,512,512KiB,524288,failed,,") {
		t.Errorf("results.csv: %v\n%s", err, csv)
	}
	// Shards and merge give the same CSV.
	var shards []string
	for _, sh := range []string{"0/2", "1/2"} {
		d := filepath.Join(t.TempDir(), "shard")
		if msg, code, err := runCLI(t, "sweep", study, "-o", d, "--shard", sh); code != 0 {
			t.Fatalf("shard %s: exit %d: %v\n%s", sh, code, err, msg)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if msg, code, err := runCLI(t, "sweep", "merge", study, "-o", merged, shards[0]); code != 1 || !strings.Contains(msg+err.Error(), "1 point missing (index 1)") {
		t.Errorf("partial merge: exit %d: %v\n%s", code, err, msg)
	}
	if msg, code, err := runCLI(t, "sweep", "merge", study, "-o", merged, shards[1]); code != 0 {
		t.Fatalf("merge: exit %d: %v\n%s", code, err, msg)
	}
	csv2, _ := os.ReadFile(filepath.Join(merged, "results.csv"))
	if string(csv2) != string(csv) {
		t.Errorf("merged CSV differs:\n%s\nvs\n%s", csv2, csv)
	}
	// Rerunning into a finished directory needs --resume.
	if _, code, err := runCLI(t, "sweep", study, "-o", out); code != 2 || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("rerun: exit %d: %v", code, err)
	}
	if _, code, err := runCLI(t, "sweep", study, "-o", out, "--rerun-changed"); code != 2 || !strings.Contains(err.Error(), "only with --resume") {
		t.Errorf("--rerun-changed alone: exit %d: %v", code, err)
	}
	if msg, code, err := runCLI(t, "sweep", study, "-o", out, "--resume", "--rerun-changed"); code != 0 || !strings.Contains(msg, ": 0 run, 3 already done") {
		t.Errorf("--resume --rerun-changed, nothing changed: exit %d: %v\n%s", code, err, msg)
	}
	if _, code, err := runCLI(t, "sweep", study, "-o", out, "--resume"); code != 0 {
		t.Errorf("resume: exit %d: %v", code, err)
	}
	// sweep plot draws the plots again and says from how many points.
	if msg, code, err := runCLI(t, "sweep", "plot", study, "-o", out); code != 0 || !strings.Contains(msg, "1 of 1 plot drawn from the 2 of the study's 3 points that ran and did not fail") || strings.Contains(msg, "other inputs") {
		t.Errorf("sweep plot: exit %d: %v\n%s", code, err, msg)
	}
	if _, code, err := runCLI(t, "sweep", "plot", study); code != 2 || !strings.Contains(err.Error(), "-o DIR is required") {
		t.Errorf("sweep plot without -o: exit %d: %v", code, err)
	}
}

func TestSweepBadInput(t *testing.T) {
	good := sweepFixture(t, "program.tiling.bm: [64]")
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", good}, "-o DIR is required"},
		{[]string{"sweep", good, "-o", out, "--shard", "2/2"}, `--shard "2/2": need 0 ≤ I < N`},
		{[]string{"sweep", good, "-o", out, "--shard", "x"}, `want I/N`},
		{[]string{"sweep", good, "-o", out, "-j", "-1"}, "-j -1"},
		{[]string{"sweep", sweepFixture(t, "program.tiling.bm: [64], program.tiling.bq: [64]"), "-o", out}, `key "vary.program.tiling.bq"`},
		{[]string{"sweep", sweepFixture(t, "program.tiling.bm: [64], program.m: []"), "-o", out}, `empty list`},
		{[]string{"sweep", sweepFixture(t, "program.tiling.bm: [64], program.m: 1..x"), "-o", out}, `not two numbers`},
		{[]string{"sweep", filepath.Join(out, "none.yaml"), "-o", out}, "study file"},
		{[]string{"sweep", "merge", good, out}, "-o DIR is required"},
	} {
		_, code, err := runCLI(t, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: exit %d, error %v; want 2 and one line containing %q", c.args, code, err, c.want)
		}
	}
}

// A study whose every point is refused for host memory exits 2 saying so
// — this host's memory or bound, not the study's settings — and how to
// run them (it said the settings suit none of its points).
func TestSweepEveryPointRefusedForHostMemory(t *testing.T) {
	dir := t.TempDir()
	prog := "kind: sgemm-cube\nm: 20000\nk: 20000\nn: 20000\nnumerics: full\n"
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	study := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(study, []byte("program: p.yaml\nmetrics: [flops.tflops]\nvary: {program.m: [20000, 30000]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, code, err := runCLI(t, "sweep", study, "-o", filepath.Join(dir, "out"), "-j", "1", "--max-memory", "1GiB")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "every point was refused for host memory (point 0:") || strings.Contains(err.Error(), "suit none") {
		t.Fatalf("exit %d: %v", code, err)
	}
}

// A study whose every point is refused as bad input (its fixed settings
// suit none: the program's 16 A blocks of bm 256 or 512 fit no L1 of
// 256KiB) exits 2 quoting the first refusal, with its results written;
// one whose points fail in the simulation exits 0.
func TestSweepEveryPointFailed(t *testing.T) {
	study := sweepFixture(t, "program.tiling.bm: [256, 512], machine.core.buffers.L1: [256KiB]")
	out := filepath.Join(t.TempDir(), "out")
	_, code, err := runCLI(t, "sweep", study, "-o", out, "-j", "1")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "every point failed (point 0:") {
		t.Fatalf("exit %d: %v", code, err)
	}
	if _, err := os.Stat(filepath.Join(out, "results.csv")); err != nil {
		t.Errorf("no results.csv: %v", err)
	}
	// Points that fail in the simulation (a deadlock) are results: exit 0.
	prog, err := filepath.Abs(examplePath("deadlock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dl := filepath.Join(t.TempDir(), "dl.yaml")
	if err := os.WriteFile(dl, []byte("program: "+prog+"\nvary: {machine.core.buffers.L1: [256KiB, 512KiB]}\nmetrics: [time.seconds]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code, err := runCLI(t, "sweep", dl, "-o", filepath.Join(t.TempDir(), "o"), "-j", "1"); code != 0 {
		t.Errorf("every point deadlocked: exit %d (%v), want 0", code, err)
	}
}

// The same study run from two working directories (its path given
// relative to each, or absolute) writes byte-identical files: program and
// machine files keep the study's spelling (relative to the study's folder)
// in the parameters, the plot legends and the failed points' messages —
// they were stored relative to the current directory — and one directory
// resumes the other's results. (The metrics are simulated quantities: a
// wall-clock one, sim.wall_seconds, would differ between any two runs.)
func TestSweepFromAnotherDirectory(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "machines", "ascend-910b3.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	// (16 A blocks of bm 512 fit no L1 here: points that fail as they run.)
	prog := "kind: sgemm-cube\nm: 256\nk: 256\nn: 256\ntiling: {bm: 64, bk: 64, bn: 64, nfused: 16}\nnumerics: off\n"
	for name, text := range map[string]string{
		"p/prog.yaml": prog,
		// Inputs beside the program or elsewhere that are not there: the
		// messages name them.
		"p/inputs.yaml":   prog + "inputs: {a: data/a.npy, b: data/b.npy}\n",
		"p/far.yaml":      prog + "inputs: {a: ../d/a.npy, b: ../d/b.npy}\n",
		"m/910b3.yaml":    string(src),
		"s/study.yaml":    "program: ../p/prog.yaml\nmetrics: [flops.tflops, time.cycles]\nvary:\n  program: [../p/prog.yaml, ../p/inputs.yaml, ../p/far.yaml]\n  machine: [ascend-910a, ../m/910b3.yaml]\n  program.tiling.bm: [64, 512]\nplot: {x: program.tiling.bm, y: flops.tflops, series: program, where: {machine: ../m/910b3.yaml}}\n",
		"elsewhere/.keep": "",
	} {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(cwd, study, out string, extra ...string) string {
		t.Helper()
		t.Chdir(cwd)
		args := append([]string{"sweep", study, "-o", out, "-j", "2", "-q"}, extra...)
		msg, code, err := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("from %s: exit %d: %v\n%s", cwd, code, err, msg)
		}
		return msg
	}
	a, b := filepath.Join(root, "out-a"), filepath.Join(root, "out-b")
	run(root, filepath.Join("s", "study.yaml"), a)
	run(filepath.Join(root, "elsewhere"), filepath.Join("..", "s", "study.yaml"), b)
	files := []string{"results.csv", "results.jsonl", "flops_tflops-vs-program_tiling_bm.png", "flops_tflops-vs-program_tiling_bm.svg", "flops_tflops-vs-program_tiling_bm.pdf"}
	for _, f := range files {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil || string(x) != string(y) {
			t.Errorf("%s differs between the two working directories (%v, %v)", f, err1, err2)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(a, "results.csv"))
	for _, want := range []string{
		"\n0,../p/prog.yaml,ascend-910a,64,ok,",
		"\n3,../p/prog.yaml,../m/910b3.yaml,512,failed,,,\"../p/prog.yaml:5: key \"\"tiling.nfused\"\"",
		"open ../p/data/a.npy: no such file",
		"open ../d/a.npy: no such file",
	} {
		if !strings.Contains(string(csv), want) {
			t.Errorf("results.csv lacks %q:\n%s", want, csv)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(a, "flops_tflops-vs-program_tiling_bm.svg"))
	// The legend names the file by its base name (none shared), not
	// by a path from either working directory.
	if !strings.Contains(string(svg), "program=prog<") || strings.Contains(string(svg), root) {
		t.Errorf("the plot's legend does not name the program prog by its base name")
	}
	// A third directory, with the study's absolute path, resumes the
	// results as finished.
	msg := run(filepath.Join(root, "m"), filepath.Join(root, "s", "study.yaml"), a, "--resume")
	if !strings.Contains(msg, "12 points: 0 run, 12 already done") {
		t.Errorf("resume from a third directory: %s", msg)
	}
	if x, _ := os.ReadFile(filepath.Join(a, "results.csv")); string(x) != string(csv) {
		t.Errorf("the resumed results.csv changed")
	}
}

// --max-memory takes a size (the points' memory budget) and refuses
// others on one line, exit 2, before any point runs.
func TestSweepMaxMemory(t *testing.T) {
	study := sweepFixture(t, "program.tiling.bm: [64, 128]")
	for bad, want := range map[string]string{"0": `--max-memory "0": must be a size in 1MiB..1024TiB`, "1KiB": `--max-memory "1KiB": must be a size in 1MiB..1024TiB`,
		"2048TiB": `--max-memory "2048TiB": must be a size in 1MiB..1024TiB`, "lots": `--max-memory: bad size: "lots" is not a number`,
		"-1GiB": `--max-memory: bad size: "-1GiB" is negative`, "8gib": `--max-memory: bad size: "8gib": a lowercase b is a bit`} {
		out := filepath.Join(t.TempDir(), "out")
		msg, code, err := runCLI(t, "sweep", study, "-o", out, "-j", "2", "--max-memory", bad)
		if code != 2 || err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--max-memory %s: exit %d: %v\n%s", bad, code, err, msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--max-memory %s: a point ran", bad)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	if msg, code, err := runCLI(t, "sweep", study, "-o", out, "-j", "2", "--max-memory", "1MiB"); code != 0 || !strings.Contains(msg, "2 points: 2 run") {
		t.Errorf("--max-memory 1MiB (each point alone): exit %d: %v\n%s", code, err, msg)
	}
}

// An output of sweep, sweep merge or sweep plot that would replace a file
// the study reads — the study file named results.csv, a program file
// named so, a plot's NAME.svg — is refused before anything is written
// (exit 2, one line naming the file); the CSV replaced the study.
func TestSweepOutputsNotInputs(t *testing.T) {
	root := t.TempDir()
	prog := "kind: sgemm-cube\nm: 256\nk: 256\nn: 256\ntiling: {bm: 64, bk: 64, bn: 64}\nnumerics: off\n"
	study := "program: p.yaml\nmetrics: [flops.tflops]\nvary: {program.tiling.bm: [64, 128]}\nplot: {name: q, x: program.tiling.bm, y: flops.tflops}\n"
	files := map[string]string{
		"a/p.yaml":      prog,
		"a/results.csv": study, // a study file
		"b/results.csv": prog,  // a program file
		"b/s.yaml":      strings.Replace(study, "program: p.yaml", "program: results.csv", 1),
		"c/p.yaml":      prog,
		"c/q.svg":       study, // a study file named as its plot's file
	}
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range files {
		write(name, text)
	}
	in := func(name string) string { return filepath.Join(root, name) }
	// A run of the study elsewhere: a shard to merge, records to draw.
	o2 := in("o2")
	if msg, code, err := runCLI(t, "sweep", in("c/q.svg"), "-o", o2, "-q"); code != 0 {
		t.Fatalf("sweep into o2: exit %d: %v\n%s", code, err, msg)
	}
	results, err := os.ReadFile(filepath.Join(o2, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	files["c/results.jsonl"] = string(results)
	write("c/results.jsonl", string(results))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", in("a/results.csv"), "-o", in("a")}, "writing results.csv there would replace the study file " + in("a/results.csv")},
		{[]string{"sweep", "merge", in("a/results.csv"), "-o", in("a"), o2}, "writing results.csv there would replace the study file"},
		{[]string{"sweep", in("b/s.yaml"), "-o", in("b")}, "writing results.csv there would replace the program file " + in("b/results.csv")},
		{[]string{"sweep", in("c/q.svg"), "-o", in("c"), "--resume"}, "writing q.svg there would replace the study file " + in("c/q.svg")},
		{[]string{"sweep", "merge", in("c/q.svg"), "-o", in("c"), o2}, "writing q.svg there would replace the study file"},
		{[]string{"sweep", "plot", in("c/q.svg"), "-o", in("c")}, "writing q.svg there would replace the study file"},
	} {
		_, code, err := runCLI(t, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: exit %d: %v; want 2 and one line with %q", c.args, code, err, c.want)
		}
		for name, text := range files {
			if got, err := os.ReadFile(in(name)); err != nil || string(got) != text {
				t.Errorf("%v: %s was replaced (%v)", c.args, name, err)
			}
		}
	}
}

// A sweep's, merge's or plot's --cpuprofile or --memprofile in its -o
// directory is refused before anything runs (a profile named
// DIR/results.jsonl, written at the end, had replaced the results the
// sweep had just written, exit 0); elsewhere it is written.
func TestSweepProfilesOutsideOutDir(t *testing.T) {
	study := sweepFixture(t, "program.tiling.bm: [64, 128]")
	out := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(out, "results.jsonl")
	for _, args := range [][]string{
		{"sweep", study, "-o", out, "-q", "--memprofile", results},
		{"sweep", study, "-o", out + "/", "-q", "--cpuprofile", filepath.Join(out, "..", "out", "cpu.prof")},
		{"sweep", "merge", study, "-o", out, t.TempDir(), "--cpuprofile", filepath.Join(out, "results.csv")},
		{"sweep", "plot", study, "-o", out, "--memprofile", filepath.Join(out, "s.png")},
	} {
		_, code, err := runCLI(t, args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), "in the -o directory, which holds the study's") {
			t.Errorf("%v: exit %d, %v; want 2, in the -o directory", args[1:], code, err)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("the refused commands left %d files in -o", len(entries))
	}
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	if _, code, err := runCLI(t, "sweep", study, "-o", out, "-q", "--cpuprofile", prof); code != 0 {
		t.Fatalf("profile outside -o: exit %d: %v", code, err)
	}
	if !isProfile(prof) {
		t.Errorf("%s is not a profile", prof)
	}
	if _, err := os.Stat(results); err != nil {
		t.Errorf("results.jsonl: %v", err)
	}
}
