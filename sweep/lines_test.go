package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The top level's keys are case-insensitive: a refusal of a key of SET
// (or of Vary, or of PROGRAM) points at its line as of set's.
func TestCheckLinesTopKeysAnyCase(t *testing.T) {
	for _, c := range []struct{ study, want string }{
		{"PROGRAM: prog.yaml\nMetrics: [time.seconds]\nSET:\n  program.n: 256\n  machine.cores: 0\nvary: {program.m: [256]}\n",
			`study.yaml:5: key "set.machine.cores": machine.cores=0`},
		{"program: prog.yaml\nmetrics: [time.seconds]\nVary:\n  program.m: [256]\n  machine.cores: [0, 1]\n",
			`study.yaml:5: key "vary.machine.cores": machine.cores=0`},
		{"Program: nope.yaml\nmetrics: [time.seconds]\nvary: {program.m: [256]}\n",
			`study.yaml:1: key "program": `},
	} {
		s, err := ParseStudy("study.yaml", t.TempDir(), []byte(c.study))
		if err == nil {
			writeProg(t, s.Dir)
			err = s.Check()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.study, err, c.want)
		}
	}
}

// writeProg writes tinyProgram as dir/prog.yaml.
func writeProg(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "prog.yaml"), []byte(tinyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
}
