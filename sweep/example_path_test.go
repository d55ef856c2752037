package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

const exampleStudy = "program: %s\nset: {program.m: 64, program.n: 64, program.k: 64, program.numerics: off}\nvary: {program.tiling.bm: [64, 128]}\nmetrics: [time.seconds]\n"

// A study's program is the file of its path from the study file's folder,
// or, where there is none, the example built into the binary that it
// names (programs/examples/NAME.yaml): the same for the check before the
// points and for each point, whatever the current directory — a file of
// the example's path in the current directory included.
func TestStudyProgramExampleWhateverTheDirectory(t *testing.T) {
	root := t.TempDir()
	st := filepath.Join(root, "st")
	if err := os.MkdirAll(filepath.Join(root, "programs", "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(st, 0o755); err != nil {
		t.Fatal(err)
	}
	// A file of the example's path relative to root (not to the study's
	// folder): not the study's program.
	if err := os.WriteFile(filepath.Join(root, "programs", "examples", "hgemm.yaml"), []byte("kind: nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, program string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(st, name), []byte(strings.Replace(exampleStudy, "%s", program, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("emb.yaml", "programs/examples/hgemm.yaml")
	write("emb2.yaml", "examples/hgemm.yaml")
	write("up.yaml", "../../programs/examples/hgemm.yaml") // (no such file from st: root has no parent of that path)

	var first []byte
	for _, c := range []struct{ cwd, study string }{
		{root, "st/emb.yaml"}, {st, "emb.yaml"}, {root, "st/emb2.yaml"}, {st, "emb2.yaml"}, {filepath.Join(root, "programs"), "../st/emb.yaml"},
	} {
		t.Chdir(c.cwd)
		s, err := ReadStudy(c.study)
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		sum, err := Run(s, Options{Out: out, Jobs: 2})
		if err != nil || sum.Failed != 0 || sum.Ran != 2 {
			t.Fatalf("%s from %s: %+v %v", c.study, c.cwd, sum, err)
		}
		got := readFile(t, filepath.Join(out, ResultsJSONL))
		if first == nil {
			first = got
		} else if strings.HasSuffix(c.study, "emb.yaml") && !bytes.Equal(got, first) {
			t.Errorf("%s from %s: results differ:\n%s\n%s", c.study, c.cwd, got, first)
		}
		if prog, _ := s.ProgramOf(s.Points[0]); prog != s.Program {
			t.Errorf("ProgramOf: %q, want the example's name %q", prog, s.Program)
		}
	}

	// A path to no file is refused before any point, from any directory,
	// naming the example meant.
	for _, c := range []struct{ cwd, study string }{{root, "st/up.yaml"}, {st, "up.yaml"}} {
		t.Chdir(c.cwd)
		s, err := ReadStudy(c.study)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		_, err = Run(s, Options{Out: out, Jobs: 2})
		want := c.study + `:1: key "program": ../../programs/examples/hgemm.yaml: no such file from the study file's folder (`
		if err == nil || !badinput.Is(err) || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; the example built into davinci-sim is named programs/examples/hgemm.yaml") {
			t.Errorf("%s from %s: %v, want one line of bad input starting %q", c.study, c.cwd, err, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s from %s: a point ran", c.study, c.cwd)
		}
	}

	// A file of the example's path from the study's folder is the
	// program (as davinci-sim run takes a file before an example).
	if err := os.MkdirAll(filepath.Join(st, "programs", "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st, "programs", "examples", "hgemm.yaml"), []byte("kind: nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	s, err := ReadStudy("st/emb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), `unknown program kind "nope"`) {
		t.Errorf("a file of the example's path: %v, want its refusal", err)
	}
}

// A study's program value that names no file but has an example's file
// name is refused naming the example.
func TestStudyProgramExampleMeant(t *testing.T) {
	dir := t.TempDir()
	for _, prog := range []string{"hgemm.yaml", "examples/x/../../hgemm.yaml", "../programs/examples/hgemm.yaml", "./programs/examples/nope.yaml"} {
		path := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(path, []byte(strings.Replace(exampleStudy, "%s", prog, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadStudy(path)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Check()
		want := `key "program": ` + prog + `: no such file from the study file's folder (` + filepath.Join(dir, prog) + `); the example built into davinci-sim is named programs/examples/hgemm.yaml`
		if strings.Contains(prog, "nope") {
			want = `key "program": program file: open ` + filepath.Join(dir, prog) + `: no such file or directory`
		}
		if err == nil || !badinput.Is(err) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want one ending %q", prog, err, want)
		}
	}
	// ./programs/examples/NAME.yaml is the example's name too.
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(exampleStudy, "%s", "./programs/examples/hgemm.yaml", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStudy(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Errorf("./programs/examples/hgemm.yaml: %v", err)
	}
}
