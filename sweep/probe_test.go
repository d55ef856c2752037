package sweep

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// A value of the study's set that the program refuses at every point is
// refused before any point runs, on one line naming the study file, the
// key's line, the key and the constraint — as a machine value no machine
// takes; a set value refused at some points only fails those points and
// the others run. (A varied value refused at each of its points is
// refused as the set's: TestVariedRefusedUpFront.)
func TestSetRefusedUpFront(t *testing.T) {
	for _, c := range []struct{ name, set, vary, want string }{
		{"negative m", "set:\n  program.m: -256\n", "vary: {program.tiling.bm: [64, 128]}\n",
			`study.yaml:4: key "set.program.m": program.m=-256 (program prog.yaml): key "m": must be a positive integer (got -256)`},
		{"tile too large for every point", "set:\n  program.numerics: off\n  program.tiling.bm: 1024\n", "vary: {program.n: [256, 512]}\n",
			`study.yaml:5: key "set.program.tiling.bm": program.tiling.bm=1024 (program prog.yaml): key "tiling": `},
		{"explicit points", "set: {program.k: 0}\n", "points: [{program.m: 256}, {program.m: 512}]\n",
			`study.yaml:3: key "set.program.k": program.k=0 (program prog.yaml): key "k": must be a positive integer (got 0)`},
	} {
		s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\n"+c.set+c.vary)
		out := filepath.Join(t.TempDir(), "out")
		_, err := Run(s, Options{Out: out})
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: output directory created: a point ran", c.name)
		}
	}

	// Refused with bn 176 (512·176 fp32, 352 KiB, past an L0C of 256KiB;
	// two of them fit the UB of 1MiB), but not where the point's L0C or
	// bn makes the tile fit: only that point fails.
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.tiling.bm: 512, machine.core.buffers.UB: 1MiB}\nvary: {program.tiling.bn: [176, 64], machine.core.buffers.L0C: [256KiB, 1MiB]}\n")
	out := t.TempDir()
	sum, err := Run(s, Options{Out: out, Jobs: 1})
	if err != nil {
		t.Fatalf("set refused at some points: %v", err)
	}
	recs, err := ReadResults(filepath.Join(out, ResultsJSONL), s)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 1 || len(recs) != 4 || recs[0].Status != StatusFailed || recs[1].Status != StatusOK {
		t.Errorf("set refused at some points: %d failed, records %+v: want point 0 failed, the others run", sum.Failed, recs)
	}
}

// A --resume of a study whose every point is recorded probes nothing (the
// probe builds a point: a study's large .npy inputs took 17.7 s to refuse
// nothing): here a set value refused at every point, recorded as failed
// points, is not refused again.
func TestFinishedResumeProbesNothing(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.m: -256}\nvary: {program.tiling.bm: [64, 128]}\n")
	out := t.TempDir()
	if _, err := Run(s, Options{Out: out, Jobs: 1, SkipCheck: true}); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(s, Options{Out: out, Jobs: 1, Resume: true})
	if err != nil || sum.Skipped != 2 || sum.Ran != 0 {
		t.Errorf("resume: %+v, %v; want both points skipped, no refusal", sum, err)
	}
}

// A set refused at every point of a large study is probed at each of its
// points (no probe stands for another: checkSet), which takes minutes at
// 100000 points: after probeQuiet the probes say how far they are — one
// line to the log (-q, or stderr not a terminal) or a progress line
// redrawn on a terminal, cleared at the end — and the refusal is the one
// a small study gets.
func TestSetProbesShowProgress(t *testing.T) {
	was := probeQuiet
	probeQuiet = 0
	t.Cleanup(func() { probeQuiet = was })
	study := "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.tiling.bm: 1024}\nvary: {program.n: 256..2560 +256, machine.cores: [1, 2]}\n"
	want := `study.yaml:3: key "set.program.tiling.bm": program.tiling.bm=1024 (program prog.yaml): key "tiling": `
	for _, terminal := range []bool{false, true} {
		s := writeStudy(t, study)
		var log, bar bytes.Buffer
		opts := Options{Out: filepath.Join(t.TempDir(), "out"), Jobs: 1, Log: &log}
		if terminal {
			opts.Progress = &bar
		}
		_, err := Run(s, opts)
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("terminal %v: error %v, want one line containing %q", terminal, err, want)
		}
		if _, err := os.Stat(opts.Out); err == nil {
			t.Errorf("terminal %v: output directory created", terminal)
		}
		// (The values' check before says so too, probeQuiet 0: its own
		// test is TestValuesCheckShowsProgress.)
		if terminal {
			if line := withoutValuesCheck(bar.String()); !regexp.MustCompile(`^\rsweep: checking the set and varied values at the points: \d+/20 points, \d+s elapsed`).MatchString(line) || !strings.HasSuffix(line, "\r\033[K") {
				t.Errorf("progress line %q: want it drawn and cleared", line)
			}
			if log.Len() > 0 {
				t.Errorf("log %q beside the progress line", log.String())
			}
			continue
		}
		if line := withoutValuesCheck(log.String()); !regexp.MustCompile(`^sweep: checking the study's set and varied values at its points until each would run at one \(a build each, no simulation\): \d+/20 points, \d+s elapsed`).MatchString(line) ||
			!strings.HasSuffix(line, "; Ctrl-C stops it\n") || strings.Count(line, "\n") != 1 {
			t.Errorf("log %q: want one line saying what is checked", line)
		}
	}

	// Under probeQuiet nothing is said.
	probeQuiet = time.Hour
	var log bytes.Buffer
	if _, err := Run(writeStudy(t, study), Options{Out: filepath.Join(t.TempDir(), "out"), Jobs: 1, Log: &log}); err == nil || log.Len() > 0 {
		t.Errorf("error %v, log %q: want the refusal alone", err, log.String())
	}
}

// An interrupt stops the probes of the set at once (the next point): the
// study ends with the interruption, nothing written — not with the probes
// left and an empty output directory.
func TestSetProbesInterrupted(t *testing.T) {
	was := probeQuiet
	probeQuiet = 0
	t.Cleanup(func() { probeQuiet = was })
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.tiling.bm: 1024}\nvary: {program.n: 256..25600 +256, machine.cores: [1, 2]}\n")
	stopped := errors.New("stopped by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	out := filepath.Join(t.TempDir(), "out")
	// The probes' log line (at once: probeQuiet 0) interrupts the study.
	log := writerFunc(func(b []byte) (int, error) {
		if strings.Contains(string(b), "set and varied values at") {
			cancel(stopped)
		}
		return len(b), nil
	})
	start := time.Now()
	_, err := Run(s, Options{Out: out, Jobs: 1, Context: ctx, Log: log})
	if !errors.Is(err, stopped) || badinput.Is(err) || !strings.Contains(err.Error(), "while checking the study's set and varied values at its points (") || !strings.Contains(err.Error(), " of 200 checked): no point ran") {
		t.Errorf("error %v: want the interruption, while checking the set", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v to stop", took)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output directory created")
	}
}

// withoutValuesCheck returns the output of a study's checks without what
// its values' check (checkKeys) drew or logged before the probes: its
// progress line, drawn and cleared, or its log line.
func withoutValuesCheck(out string) string {
	return regexp.MustCompile(`^((\rsweep: checking the study's values: [^\r]*)+\r\033\[K|sweep: checking the study's values, [^\n]*\n)`).ReplaceAllString(out, "")
}

type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(b []byte) (int, error) { return w(b) }
