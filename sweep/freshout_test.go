package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// A study run into a directory holding a file it writes (a plot's name)
// but no results.jsonl is refused before anything is written: the file is
// the user's (it was replaced without a word). An empty results.jsonl is a
// study's output (a shard with no points of its own writes one beside its
// results.csv): its run again is not refused for its files.
func TestFreshOutKeepsOthersFiles(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nvary: {program.tiling.bm: [64]}\nmetrics: [flops.tflops]\nplot: {name: a, x: program.tiling.bm, y: flops.tflops}\n")
	dir := filepath.Dir(s.Path)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	os.WriteFile(filepath.Join(out, "a.png"), []byte("mine"), 0o644)
	if _, err := Run(s, Options{Out: out, Jobs: 1}); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "holds a.png, which the study writes, but no results.jsonl") {
		t.Errorf("a directory holding a.png: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a.png")); string(b) != "mine" {
		t.Errorf("a.png replaced: %q", b)
	}
	// Once the file is gone the study runs, and its own output is then
	// refused without --resume for its results, not its plots.
	os.Remove(filepath.Join(out, "a.png"))
	if _, err := Run(s, Options{Out: out, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(s, Options{Out: out, Jobs: 1}); err == nil || !strings.Contains(err.Error(), "use --resume") {
		t.Errorf("a second run without --resume: %v", err)
	}
	// A shard holding none of the points (1/2 of a one-point study):
	// an empty results.jsonl beside results.csv, run again.
	shard := filepath.Join(dir, "shard")
	for i := range 2 {
		if _, err := Run(s, Options{Out: shard, Jobs: 1, Shard: Shard{I: 1, N: 2}, Resume: i > 0}); err != nil {
			t.Fatalf("shard run %d: %v", i, err)
		}
	}
}

// -o DIR through a symbolic link leading nowhere is refused saying so
// (MkdirAll said "mkdir dl: file exists").
func TestOutDanglingLink(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nvary: {program.tiling.bm: [64]}\nmetrics: [flops.tflops]\n")
	dir := filepath.Dir(s.Path)
	if err := os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "dl")); err != nil {
		t.Skip(err)
	}
	for _, out := range []string{filepath.Join(dir, "dl"), filepath.Join(dir, "dl", "sub")} {
		if _, err := Run(s, Options{Out: out, Jobs: 1}); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "is a symbolic link to "+filepath.Join(dir, "missing")+", which does not exist") {
			t.Errorf("-o %s: %v", out, err)
		}
	}
}
