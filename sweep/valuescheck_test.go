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
	"github.com/davinci-sim/davinci-sim/programs"
)

// The check of a study's values before the probes (checkKeys: each value
// alone, a program's plan with it) takes seconds for a vary list of
// 100000 values: after probeQuiet it says how far it is — one line to
// the log (-q, or stderr not a terminal) or a progress line redrawn on a
// terminal, cleared before the probes' —, and says nothing before.
func TestValuesCheckShowsProgress(t *testing.T) {
	was := probeQuiet
	probeQuiet = 0
	t.Cleanup(func() { probeQuiet = was })
	study := "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.tiling.bm: 1024}\nvary: {program.n: 256..51200 +256}\n"
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
		if terminal {
			// Drawn, cleared, then the probes' line.
			if line := bar.String(); !regexp.MustCompile(`^\rsweep: checking the study's values: \d+/201 values, \d+s elapsed[^\r]*(\r[^\r]*)*\r\033\[K\rsweep: checking the set and varied values at the points: `).MatchString(line) {
				t.Errorf("progress line %q: want the values' drawn and cleared, then the probes'", line)
			}
			if log.Len() > 0 {
				t.Errorf("log %q beside the progress line", log.String())
			}
			continue
		}
		lines := strings.SplitAfter(log.String(), "\n")
		if !regexp.MustCompile(`^sweep: checking the study's values, each alone \(its key and type; the program's plan, or the machine, with it: no simulation\): \d+/201 values, \d+s elapsed.*; Ctrl-C stops it\n$`).MatchString(lines[0]) ||
			!strings.HasPrefix(lines[1], "sweep: checking the study's set and varied values at its points") {
			t.Errorf("log %q: want one line saying the values are checked, then the probes'", log.String())
		}
	}

	// Under probeQuiet nothing is said.
	probeQuiet = time.Hour
	var log, bar bytes.Buffer
	if _, err := Run(writeStudy(t, study), Options{Out: filepath.Join(t.TempDir(), "out"), Jobs: 1, Log: &log, Progress: &bar}); err == nil || log.Len() > 0 || bar.Len() > 0 {
		t.Errorf("error %v, log %q, progress %q: want the refusal alone", err, log.String(), bar.String())
	}
}

// An interrupt stops the check of the values at once (the next value):
// the study ends with the interruption, not bad input, nothing written.
func TestValuesCheckInterrupted(t *testing.T) {
	was := probeQuiet
	probeQuiet = 0
	t.Cleanup(func() { probeQuiet = was })
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: 256..1024000 +256}\n")
	stopped := errors.New("stopped by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	out := filepath.Join(t.TempDir(), "out")
	// The log's line (at once: probeQuiet 0) interrupts the study.
	log := writerFunc(func(b []byte) (int, error) { cancel(stopped); return len(b), nil })
	start := time.Now()
	_, err := Run(s, Options{Out: out, Jobs: 1, Context: ctx, Log: log})
	if !errors.Is(err, stopped) || badinput.Is(err) || !regexp.MustCompile(`^sweep: stopped by the test, while checking the study's values \(\d+ of 4000 checked\): no point ran$`).MatchString(err.Error()) {
		t.Errorf("error %v: want the interruption, while checking the values", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v to stop", took)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output directory created")
	}
}

// distinctByType spares checkOneSpelling the decoding of values that
// cannot be one value: plain decimal integers of an integer or size key
// of every program. Values written otherwise, and keys of other types —
// a number, where two such integers may round to one float64 —, are
// decoded and compared, and refused where they are one.
func TestDistinctByType(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.m: [256, 512]}\n")
	p := s.resolve(ParamProgram, s.Program)
	f, err := readProgram(p, s.Program)
	if err != nil {
		t.Fatal(err)
	}
	progs := []string{p}
	files := map[string]*programs.File{p: f}
	for _, c := range []struct {
		key  string
		vals []string
		want bool
	}{
		{"program.m", []string{"16", "32", "0", "-16", "1234567890123"}, true},
		{"PROGRAM.M", []string{"16", "32"}, true},
		{"program.tiling.bm", []string{"64", "128"}, true},
		{"program.inputs.seed", []string{"1", "2"}, true},
		{"program.inputs.low", []string{"1", "2"}, false},           // a number
		{"program.numerics", []string{"1", "2"}, false},             // a string
		{"program.nonesuch", []string{"1", "2"}, false},             // no such key
		{"machine.cores", []string{"1", "2"}, false},                // not the program's
		{"program.m", []string{"16", "016"}, false},                 // a leading zero
		{"program.m", []string{"16", "0x10"}, false},                // another base
		{"program.m", []string{"16", "+16"}, false},                 // a plus
		{"program.m", []string{"0", "-0"}, false},                   // a minus zero
		{"program.m", []string{"16", "16.0"}, false},                // a fraction
		{"program.m", []string{"16", "1.6e1"}, false},               // an exponent
		{"program.m", []string{"16", "16B"}, false},                 // a unit
		{"program.m", []string{"16", "1_6"}, false},                 // an underscore
		{"program.m", []string{"16", ""}, false},                    // empty
		{"program.m", []string{"16", "-"}, false},                   // a minus alone
		{"program.m", []string{"16", " 16"}, false},                 // a space
		{"program.m", []string{"16", "١٦"}, false},                  // other digits
		{"program.m", []string{"16", "99999999999999999999"}, true}, // (fails to decode)
	} {
		if got := distinctByType(c.key, c.vals, progs, files); got != c.want {
			t.Errorf("%s %q: %v, want %v", c.key, c.vals, got, c.want)
		}
	}

	// Two plain integers one float64 apart in none: one value of a
	// number key, refused.
	s = writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.inputs.low: [9007199254740992, 9007199254740993]}\n")
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), `"9007199254740992" and "9007199254740993" are one value of program.inputs.low`) {
		t.Errorf("check: %v, want the two values refused as one", err)
	}
}
