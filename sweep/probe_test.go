package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// A value of the study's set that the program refuses at every point is
// refused before any point runs, on one line naming the study file, the
// key's line, the key and the constraint — as a machine value no machine
// takes; a set value refused at some points only, or a varied value the
// program refuses, fails its own points and the others run.
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

	// Refused with the base program's n, but not where the point's n
	// makes the tile fit: only that point fails.
	for _, c := range []struct{ name, study string }{
		{"set refused at some points", "set: {program.tiling.bm: 512}\nvary: {program.tiling.bn: [176, 64]}\n"},
		{"varied value refused", "vary: {program.m: [-256, 256]}\n"},
		{"one point's value refused", "points: [{program.m: -256}, {program.m: 256}]\n"},
	} {
		s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\n"+c.study)
		out := t.TempDir()
		sum, err := Run(s, Options{Out: out, Jobs: 1})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		recs, err := ReadResults(filepath.Join(out, ResultsJSONL), s)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Failed != 1 || len(recs) != 2 || recs[0].Status != StatusFailed || recs[1].Status != StatusOK {
			t.Errorf("%s: %d failed, records %+v: want point 0 failed, point 1 run", c.name, sum.Failed, recs)
		}
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
