package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// TestRunRefusesUnwritableOutputs: a results file that is a link to a
// device, or an -o directory that takes no files, is bad input refused
// before any point runs (they failed after the points, with exit 1).
func TestRunRefusesUnwritableOutputs(t *testing.T) {
	s, err := ReadStudy("../studies/l1-size.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(out, ResultsJSONL)); err != nil {
		t.Skip(err)
	}
	_, err = Run(s, Options{Out: out, Jobs: 1, Resume: true})
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "a link to /dev/zero, which is not a regular file") {
		t.Errorf("results.jsonl a link to /dev/zero: got %v, want bad input naming the link", err)
	}
	if _, err := os.Stat("/proc/self"); err != nil {
		return
	}
	_, err = Run(s, Options{Out: "/proc/self", Jobs: 1})
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "-o /proc/self: cannot create files in /proc/self") {
		t.Errorf("-o /proc/self: got %v, want bad input", err)
	}
}
