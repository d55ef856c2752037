package sweep

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// A study recording the host's wall time is warned about: its results
// are not reproducible (a review found sim.wall_seconds accepted
// silently). A study of the simulation's figures gets no warning.
func TestHostTimedMetricWarned(t *testing.T) {
	for _, c := range []struct {
		metrics string
		warned  bool
	}{{"[sim.wall_seconds, flops.tflops]", true}, {"[sim]", true}, {"[sim.events, time.seconds]", false}} {
		s := writeStudy(t, "program: prog.yaml\nvary:\n  program.tiling.bm: [64]\nmetrics: "+c.metrics+"\n")
		var log bytes.Buffer
		if _, err := Run(s, Options{Out: filepath.Join(t.TempDir(), "out"), Jobs: 1, Log: &log}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(log.String(), "holds the host's wall time"); got != c.warned {
			t.Errorf("metrics %s: warned %v, want %v (%q)", c.metrics, got, c.warned, log.String())
		}
	}
}
