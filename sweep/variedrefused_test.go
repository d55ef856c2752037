package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// A varied value that the program refuses at every point where it appears
// — whatever the other parameters there — is refused before any point
// runs, as the set's is: one line naming the study file, the line of the
// key that gives it (a points' entry: its own), the value and the
// program's refusal. (A review found a study of the schemes hgemm,
// markidis and bogus ran all three, point 2 recorded as failed, exit 0,
// where run --set program.scheme=bogus exits 2 at once.)
func TestVariedRefusedUpFront(t *testing.T) {
	emulated, err := filepath.Abs("../programs/examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, study, want string }{
		{"a scheme that is none",
			"program: " + emulated + "\nmachine: a100\nmetrics: [flops.tflops]\nset: {program.numerics: off, program.m: 512, program.n: 512, program.k: 512}\nvary: {program.scheme: [hgemm, markidis, bogus]}\n",
			`study.yaml:5: key "vary.program.scheme": program.scheme=bogus (program ` + emulated + `): key "scheme.name": unknown scheme "bogus" (presets: `},
		{"a size refused with every other value",
			"program: prog.yaml\nmetrics: [time.seconds]\nvary:\n  program.tiling.bn: [64, 128]\n  program.m: [-256, 256]\n",
			`study.yaml:5: key "vary.program.m": program.m=-256 (program prog.yaml): key "m": must be a positive integer (got -256)`},
		{"a tile that fits no L1 of the study",
			"program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.tiling.bm: [64, 1024], machine.core.buffers.L1: 256KiB..2MiB ×2}\n",
			`study.yaml:3: key "vary.program.tiling.bm": program.tiling.bm=1024 (program prog.yaml): key "tiling": bm·bk = 1024·64 fp16, 131072 bytes, exceeds L0A (65536 bytes; SGEMM-cube Eq. 12)`},
		{"a point's value, at its entry's line",
			"program: prog.yaml\nmetrics: [time.seconds]\npoints:\n  - {program.m: 256}\n  - {program.m: -256}\n  - {program.m: 512}\nvary: {program.tiling.bn: [64, 128]}\n",
			`study.yaml:5: key "points[].program.m": program.m=-256 (program prog.yaml): key "m": must be a positive integer (got -256)`},
	} {
		s := writeStudy(t, c.study)
		out := filepath.Join(t.TempDir(), "out")
		_, err := Run(s, Options{Out: out, Jobs: 1})
		if err == nil || !badinput.Is(err) || !strings.HasPrefix(err.Error(), s.Path+":") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v,\nwant one line containing %q", c.name, err, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: output directory created: a point ran", c.name)
		}
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Check: %v", c.name, err)
		}
	}

	// Refused at some of its points only (16 A blocks of bm 512 fit an
	// L1 of 2MiB, not one of 256KiB), or for the host's memory: the
	// study runs, those points fail (TestResumeRerunsHostMemoryRefusals).
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.tiling.nfused: 16}\nvary: {program.tiling.bm: [64, 512], machine.core.buffers.L1: [256KiB, 2MiB]}\n")
	out := t.TempDir()
	sum, err := Run(s, Options{Out: out, Jobs: 1})
	if err != nil || sum.Ran != 4 || sum.Failed != 1 {
		t.Fatalf("a value refused at some points: %+v, %v; want the 4 points run, 1 failed", sum, err)
	}
	recs, err := ReadResults(filepath.Join(out, ResultsJSONL), s)
	if err != nil || len(recs) != 4 || recs[2].Status != StatusFailed || !strings.Contains(recs[2].Error, "16 A blocks do not fit L1 (262144 bytes)") {
		t.Errorf("records %+v, %v; want point 2 (bm 512, 256KiB) failed", recs, err)
	}
}

// The varied values are probed until each has a point that would run, a
// point probed only while one of its values has none yet: a grid of 200
// points whose values all run takes one probe for each of its 100 values
// of program.n and one for the second of program.m — not 200 (a value
// refused at every point is probed at each: TestSetProbesShowProgress).
func TestVariedProbesBounded(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: 256..25600 +256, program.m: [256, 512]}\n")
	var probed []int
	onProbe = func(p Point) { probed = append(probed, p.Index) }
	t.Cleanup(func() { onProbe = nil })
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if len(probed) != 101 || probed[0] != 0 || probed[1] != 1 || probed[2] != 2 || probed[3] != 4 {
		t.Errorf("%d probes (points %v…); want 101: points 0, 1, then the first of each n", len(probed), probed[:min(len(probed), 6)])
	}
}
