package programs

import (
	"os"
	"strings"
	"testing"
)

// A built-in example is found by the path the docs give in any spelling of
// it (./programs/examples/x.yaml from a directory without the file); a
// path naming no file says where the examples are.
func TestSourceExamplePaths(t *testing.T) {
	t.Chdir(t.TempDir())
	want, err := Examples.ReadFile("examples/hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"programs/examples/hgemm.yaml", "./programs/examples/hgemm.yaml", "programs//examples/./hgemm.yaml"} {
		got, err := Source(p)
		if err != nil || string(got) != string(want) {
			t.Errorf("Source(%q): %v", p, err)
		}
	}
	for p, hint := range map[string]string{
		"hgemm.yaml":                "(the built-in example of that name is programs/examples/hgemm.yaml)",
		"programs/examples/no.yaml": "(davinci-sim programs lists the program kinds and their built-in examples)",
	} {
		_, err := Source(p)
		if err == nil || !strings.HasSuffix(err.Error(), hint) || !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
			t.Errorf("Source(%q): %v, want the note %q", p, err, hint)
		}
	}
}
