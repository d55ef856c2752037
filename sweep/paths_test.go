package sweep

import (
	"path/filepath"
	"runtime"
	"testing"
)

// A point's messages name its files as the study does: the program and
// machine files as written, files beside them from their folder as
// written, other files under the study's folder or its ancestors relative
// to the study's folder; a name inside a longer one, or a file sharing
// only the root, is left.
func TestPointPathsRewrite(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	s, err := ParseStudy("/r/s/study.yaml", "/r/s", []byte("program: ../p/./prog.yaml\nvary: {machine: [m.yaml, /abs/m.yaml]}\nmetrics: [time.seconds]\n"))
	if err != nil {
		t.Fatal(err)
	}
	pp := s.paths(s.Points[0])
	if pp.program != "/r/p/prog.yaml" || pp.machine != "/r/s/m.yaml" {
		t.Errorf("the run opens %q and %q", pp.program, pp.machine)
	}
	for _, c := range []struct{ in, want string }{
		{"/r/p/prog.yaml:3: key \"tiling\": too big.", "../p/./prog.yaml:3: key \"tiling\": too big."},
		{"open \"/r/p/prog.yaml\".", "open \"../p/./prog.yaml\"."},
		{"open /r/p/data/a.npy: gone", "open ../p/data/a.npy: gone"},
		{"/r/p/prog.yaml.bak", "../p/prog.yaml.bak"},
		{"/r/s/m.yaml: key x; /r/s/sub/n.yaml", "m.yaml: key x; sub/n.yaml"},
		{"/r/d/a.npy and /r/s/../q", "../d/a.npy and ../q"},
		{"/elsewhere/a.npy", "/elsewhere/a.npy"},
		{"x/r/p/prog.yaml, a/r/s/m.yaml", "x/r/p/prog.yaml, a/r/s/m.yaml"},
		{"no paths: 1·2 flop/byte", "no paths: 1·2 flop/byte"},
	} {
		if got := pp.rewrite(c.in); got != c.want {
			t.Errorf("rewrite(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// An absolute machine stays absolute, and so do the files beside it.
	pp = s.paths(s.Points[1])
	if got, want := pp.rewrite("/abs/m.yaml: bad; /abs/n.yaml"), "/abs/m.yaml: bad; /abs/n.yaml"; got != want {
		t.Errorf("absolute machine: %q, want %q", got, want)
	}
	if got := filepath.Dir(pp.machine); got != "/abs" {
		t.Errorf("machine %q", pp.machine)
	}
}
