package sweep

import (
	"os"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// Two sweeps writing one output directory (a job array's shards given
// the same -o) lost each other's points when each rewrote results.jsonl:
// the second is refused while the first holds the directory, and may go on
// once it is released.
func TestOutputDirectoryLocked(t *testing.T) {
	dir := t.TempDir()
	release, err := lockOut(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockOut(dir)
	want := "-o " + dir + ": in use by another sweep: give each run its own directory"
	if !badinput.Is(err) || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("second lock while held: %v, want bad input naming %q", err, want)
	}
	s := &Study{}
	if _, err := Run(s, Options{Out: dir, SkipCheck: true}); err == nil || !strings.Contains(err.Error(), "in use by another sweep") {
		t.Errorf("Run into a held directory: %v", err)
	}
	if _, err := Merge(s, dir, []string{t.TempDir()}, nil); err == nil || !strings.Contains(err.Error(), "in use by another sweep") {
		t.Errorf("Merge into a held directory: %v", err)
	}
	release()
	again, err := lockOut(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("the directory after the locks: %v %v (a study's outputs are compared as they are)", ents, err)
	}
}
