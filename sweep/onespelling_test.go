package sweep

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// Two values of a varied parameter that mean one value of its key — a
// frequency as 1GHz and as a plain number of hertz, a bandwidth likewise
// —, which canonicalValue does not tell (it knows units, not the key's
// type), are refused before any point runs, in a list or across explicit
// points; values that differ run.
func TestOneValueTwoSpellingsRefused(t *testing.T) {
	const head = "program: prog.yaml\nmetrics: [time.seconds]\n"
	for _, c := range []struct{ study, want string }{
		{"vary: {machine.core.clock: [1GHz, 1e9]}\n", `study.yaml:3: key "vary.machine.core.clock": "1GHz" and "1e9" are one value of machine.core.clock: write it one way`},
		{"vary: {machine.core.clock: [1GHz, 1.5GHz, 1500000000]}\n", `"1.5GHz" and "1500000000" are one value`},
		{"vary: {program.m: [256], machine.gm.bandwidth: [1.2TB/s, 12e11]}\n", `"1.2TB/s" and "12e11" are one value of machine.gm.bandwidth`},
		{"points:\n  - {machine.core.clock: 1GHz, program.m: 256}\n  - {machine.core.clock: 1e9, program.m: 512}\n", `key "points[].machine.core.clock": "1GHz" and "1e9" are one value`},
	} {
		s := writeStudy(t, head+c.study)
		err := s.Check()
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line of bad input containing %q", c.study, err, c.want)
		}
	}
	lu, err := filepath.Abs("../programs/examples/lu-cluster-small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := writeStudy(t, "program: "+lu+"\nmetrics: [time.seconds]\nvary: {node.hccs.link_bandwidth: [30GB/s, 3e10]}\n")
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), `"30GB/s" and "3e10" are one value of node.hccs.link_bandwidth`) {
		t.Errorf("a node key: %v", err)
	}
	for _, study := range []string{
		"vary: {machine.core.clock: [1GHz, 1.5GHz, 2e9]}\n",
		"points:\n  - {machine.core.clock: 1GHz, program.m: 256}\n  - {machine.core.clock: 1GHz, program.m: 512}\n",
	} {
		if err := writeStudy(t, head+study).Check(); err != nil {
			t.Errorf("%s: %v, want it checked", study, err)
		}
	}
}
