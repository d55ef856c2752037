package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/programs"
)

// checkOutputsPerPoint is checkOutputs as it was before it looked at each
// file once (programs.InputFiles at each point, through readsOf): the
// reference of TestCheckOutputsAsBefore.
func (s *Study) checkOutputsPerPoint(dir string, results bool, others ...string) error {
	var outs []string
	for _, o := range s.outputFiles(dir, results) {
		if _, err := os.Lstat(o); err == nil {
			outs = append(outs, o)
		}
	}
	if len(outs) == 0 {
		return nil
	}
	checked := map[[2]string]bool{}
	check := func(what, in string) error {
		if checked[[2]string{what, in}] {
			return nil
		}
		checked[[2]string{what, in}] = true
		for _, o := range outs {
			if what == "the results file" && o == filepath.Join(dir, ResultsJSONL) {
				continue
			}
			if replaces(o, in) || (filepath.Base(o) == ResultsJSONL && appendsTo(o, in)) {
				return badInput(fmt.Errorf("-o %s: writing %s there would replace %s %s, which the study reads; give another -o directory (or move the file)", dir, filepath.Base(o), what, in))
			}
		}
		return nil
	}
	if err := check("the study file", s.Path); err != nil {
		return err
	}
	for _, o := range others {
		if err := check("the results file", o); err != nil {
			return err
		}
	}
	for _, p := range s.Points {
		paths := s.paths(p)
		if err := check("the program file", paths.program); err != nil {
			return err
		}
		if isMachineFile(paths.machine) {
			if err := check("the machine file", paths.machine); err != nil {
				return err
			}
		}
		f := s.stamps.program(paths.program, paths.written)
		if f == nil {
			continue
		}
		for _, in := range programs.InputFiles(f, s.runOptions(paths.machine, p)) {
			if err := check(inputWhat(in), in.Path); err != nil {
				return err
			}
		}
	}
	return nil
}

// The check of the outputs against the files the points read refuses what
// it refused when it listed each point's files (checkOutputsPerPoint),
// and lets through what it let through: an output that is a file a string
// key names at some points only (its value varied, or the points where
// the program's keys decode), a program or machine file, the study, a
// merge's shard, through a link; and none.
func TestCheckOutputsAsBefore(t *testing.T) {
	for _, c := range []struct {
		name, study string
		files       map[string]string // in the study's folder: name → contents, or "->target" for a link
		out         string            // the -o directory, under the study's folder ("": the folder)
		others      []string          // a merge's shards' results, under the folder
		refused     string            // what the refusal names ("": none)
	}{
		{name: "a key's file at every point",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.inputs.a: results.csv}\nvary: {program.n: [256, 512]}\n",
			files: map[string]string{ResultsCSV: "x"}, refused: `the file of key "inputs.a"`},
		{name: "a varied key's file at a later point",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.inputs.a: [a.npy, results.csv], program.n: [256, 512]}\n",
			files: map[string]string{ResultsCSV: "x", "a.npy": "x"}, refused: `the file of key "inputs.a"`},
		{name: "a key's file where the keys decode",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.inputs.a: results.csv}\nvary: {program.m: [x, 256]}\n",
			files: map[string]string{ResultsCSV: "x"}, refused: `the file of key "inputs.a"`},
		{name: "a key's file where no point's keys decode",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.inputs.a: results.csv}\nvary: {program.m: [x, 1.5]}\n",
			files: map[string]string{ResultsCSV: "x"}},
		{name: "a key's file a plot replaces",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512], program.inputs.b: [b.npy, p.svg]}\nplot: [{name: p, x: program.n, y: time.seconds}]\n",
			files: map[string]string{"p.svg": "x", "b.npy": "x"}, refused: `the file of key "inputs.b"`},
		{name: "a key's file, results.jsonl a link to it",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512], program.inputs.a: [a.npy]}\n",
			files: map[string]string{"a.npy": "x", "out/" + ResultsJSONL: "->../a.npy"}, out: "out", refused: `the file of key "inputs.a"`},
		{name: "a key naming a folder",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512], program.inputs.a: [out]}\n",
			files: map[string]string{"out/" + ResultsCSV: "x"}, out: "out"},
		{name: "a key naming a folder an output links to",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512], program.inputs.a: [d]}\n",
			files: map[string]string{"d/x": "x", ResultsCSV: "->d"}},
		{name: "the program file",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512], program: [prog.yaml, results.csv]}\n",
			files: map[string]string{ResultsCSV: tinyProgram}, refused: "the program file"},
		{name: "the machine file",
			study: "program: prog.yaml\nmachine: ./results.csv\nmetrics: [time.seconds]\nvary: {program.n: [256, 512]}\n",
			files: map[string]string{ResultsCSV: "x"}, refused: "the machine file"},
		{name: "the machine file of a program that cannot be read",
			study: "program: nonesuch.yaml\nmachine: ./results.csv\nmetrics: [time.seconds]\nvary: {program.n: [256, 512]}\n",
			files: map[string]string{ResultsCSV: "x"}, refused: "the machine file"},
		{name: "the study file",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512]}\n",
			files: map[string]string{"out/" + ResultsCSV: "->../study.yaml"}, out: "out", refused: "the study file"},
		{name: "a merge's shard",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512]}\n",
			files: map[string]string{"out/" + ResultsCSV: "->../s/" + ResultsJSONL, "s/" + ResultsJSONL: "x"}, out: "out", others: []string{"s/" + ResultsJSONL}, refused: "the results file"},
		{name: "nothing replaced",
			study: "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512], program.inputs.a: [a.npy, b.npy]}\n",
			files: map[string]string{"a.npy": "x", "b.npy": "x", ResultsCSV: "x", ResultsJSONL: "x"}},
	} {
		s := writeStudy(t, c.study)
		for name, body := range c.files {
			path := filepath.Join(s.Dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			var err error
			if target, ok := strings.CutPrefix(body, "->"); ok {
				err = os.Symlink(target, path)
			} else {
				err = os.WriteFile(path, []byte(body), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(s.Dir, c.out)
		var others []string
		for _, o := range c.others {
			others = append(others, filepath.Join(s.Dir, o))
		}
		want := s.checkOutputsPerPoint(out, true, others...)
		got := s.checkOutputs(setCheck{}, out, true, others...)
		if fmt.Sprint(got) != fmt.Sprint(want) || badinput.Is(got) != badinput.Is(want) {
			t.Errorf("%s: %v, want %v", c.name, got, want)
		}
		// (The reference refuses what the case says: a check that can fail.)
		if c.refused == "" && want != nil || c.refused != "" && (want == nil || !strings.Contains(want.Error(), "would replace "+c.refused+" ")) {
			t.Errorf("%s: the reference gives %v, want a refusal naming %q", c.name, want, c.refused)
		}
	}
}

// The check of the outputs against the files each point reads (a
// --resume, a merge, the plots drawn again: every point looked at) says
// how far it is after probeQuiet, as the study's other checks — one line
// to the log, or a line redrawn on a terminal and cleared —, and nothing
// before, nor where no output is there to replace.
func TestOutputsCheckShowsProgress(t *testing.T) {
	was := probeQuiet
	probeQuiet = 0
	t.Cleanup(func() { probeQuiet = was })
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: 256..25600 +256}\n")
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	var log, bar bytes.Buffer
	if err := s.checkOutputs(setCheck{log: &log, progress: &bar}, out, true); err != nil || log.Len()+bar.Len() > 0 {
		t.Errorf("no output there: error %v, log %q, progress %q; want nothing", err, log.String(), bar.String())
	}
	if err := os.WriteFile(filepath.Join(out, ResultsCSV), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	if err := s.checkOutputs(setCheck{log: &log}, out, true); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^sweep: checking the files each point reads, which no output in -o ` + regexp.QuoteMeta(out) + ` may replace: \d+/100 points, \d+s elapsed[^\n]*; Ctrl-C stops it\n$`).MatchString(log.String()) {
		t.Errorf("log %q: want one line saying what is checked", log.String())
	}
	log.Reset()
	if err := s.checkOutputs(setCheck{log: &log, progress: &bar}, out, true); err != nil {
		t.Fatal(err)
	}
	if line := bar.String(); !regexp.MustCompile(`^\rsweep: checking the files each point reads: \d+/100 points, \d+s elapsed[^\r]*(\r[^\r]*)*\r\033\[K$`).MatchString(line) {
		t.Errorf("progress line %q: want it drawn and cleared", line)
	}
	if log.Len() > 0 {
		t.Errorf("log %q beside the progress line", log.String())
	}

	// Under probeQuiet nothing is said.
	probeQuiet = time.Hour
	bar.Reset()
	if err := s.checkOutputs(setCheck{log: &log, progress: &bar}, out, true); err != nil || log.Len()+bar.Len() > 0 {
		t.Errorf("error %v, log %q, progress %q; want nothing", err, log.String(), bar.String())
	}
}

// An interrupt stops the check of the outputs at once (the next point):
// a --resume ends with the interruption, not bad input, no point run and
// nothing written — then resumes as it would have. merge and plot say how
// far their check is on their log.
func TestOutputsCheckInterrupted(t *testing.T) {
	was := probeQuiet
	probeQuiet = 0
	t.Cleanup(func() { probeQuiet = was })
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512, 768]}\n")
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(s, Options{Out: out, Jobs: 1, Shard: Shard{I: 1, N: 3}}); err != nil {
		t.Fatal(err)
	}
	files := func() map[string]string {
		m := map[string]string{}
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			m[e.Name()] = string(readFile(t, filepath.Join(out, e.Name())))
		}
		return m
	}
	before := files()

	stopped := errors.New("stopped by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var said []string
	// The check's log line (at once: probeQuiet 0) interrupts the study.
	log := writerFunc(func(b []byte) (int, error) {
		said = append(said, string(b))
		if strings.Contains(string(b), "files each point reads") {
			cancel(stopped)
		}
		return len(b), nil
	})
	_, err := Run(s, Options{Out: out, Jobs: 1, Resume: true, Context: ctx, Log: log})
	if !errors.Is(err, stopped) || badinput.Is(err) || !regexp.MustCompile(`^sweep: stopped by the test, while checking the files each point reads \(0 of 3 checked\): no point ran$`).MatchString(err.Error()) {
		t.Errorf("error %v: want the interruption, while checking the files each point reads", err)
	}
	if !slices.ContainsFunc(said, func(l string) bool {
		return strings.HasPrefix(l, "sweep: checking the files each point reads, which no output in -o "+out+" may replace: ")
	}) {
		t.Errorf("log %q: want the check's line", said)
	}
	if after := files(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("files in -o after the interruption:\n%v\nwant\n%v", after, before)
	}
	sum, err := Run(s, Options{Out: out, Jobs: 1, Resume: true})
	if err != nil || sum.Ran != 2 || sum.Skipped != 1 {
		t.Fatalf("resumed: %+v, %v; want 2 run, 1 skipped", sum, err)
	}

	// merge and plot, a second time (their outputs there): one line on
	// their log.
	var mlog, plog bytes.Buffer
	merged := filepath.Join(t.TempDir(), "merged")
	s.Plots = []Plot{{Name: "p", X: "program.n", Y: []string{"time.seconds"}}}
	for range 2 {
		mlog.Reset()
		if _, err := Merge(s, merged, []string{out}, &mlog); err != nil {
			t.Fatal(err)
		}
		plog.Reset()
		if _, _, _, err := Redraw(s, out, &plog); err != nil {
			t.Fatal(err)
		}
	}
	for cmd, l := range map[string]string{"merge": mlog.String(), "plot": plog.String()} {
		if !strings.HasPrefix(l, "sweep: checking the files each point reads, which no output in -o ") || !strings.Contains(l, " 3 points") && !strings.Contains(l, "/3 points") {
			t.Errorf("%s: log %q: want the check's line", cmd, l)
		}
	}
}
