package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// A file named on the command line (--set program.inputs.a=A.npy) is
// relative to the current directory, as --set program.machine is, not to
// the program file's folder.
func TestSetInputsRelativeToCurrentDirectory(t *testing.T) {
	prog, err := filepath.Abs("../../programs/examples/sgemm-cube.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	v := make([]float32, 64*64)
	for i := range v {
		v[i] = float32(i%5) - 2
	}
	if _, err := programs.WriteOutputs(dir, []programs.Output{{Name: "A", F32: v, Shape: []int{64, 64}}, {Name: "B", F32: v, Shape: []int{64, 64}}}); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	args := []string{"run", prog, "-q", "--set", "program.m=64", "--set", "program.n=64", "--set", "program.k=64",
		"--set", "program.tiling.bm=64", "--set", "program.tiling.bn=64", "--set", "program.tiling.bk=64", "--set", "program.numerics=full"}
	out, code, err := runCLI(t, append(args, "--set", "program.inputs.a=A.npy", "--set", "program.inputs.b=B.npy")...)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	_, code, err = runCLI(t, append(args, "--set", "program.inputs.a=gone.npy", "--set", "program.inputs.b=B.npy")...)
	if want := filepath.Join(dir, "gone.npy"); code != 2 || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("exit %d: %v; want exit 2 naming %s", code, err, want)
	}
	// The message quotes the --set as typed (it quoted the absolute path
	// made of it), the file it opened as resolved.
	for _, typed := range []string{"in/gone.npy", "./A.npy/x.npy"} {
		_, code, err = runCLI(t, append(args, "--set", "program.inputs.a="+typed, "--set", "program.inputs.b=B.npy")...)
		msg := fmt.Sprint(err)
		if code != 2 || !strings.Contains(msg, "(set with --set program.inputs.a="+typed+")") || !strings.Contains(msg, filepath.Join(dir, typed)) {
			t.Errorf("--set program.inputs.a=%s: exit %d: %s; want exit 2 quoting the --set as typed and naming %s", typed, code, msg, filepath.Join(dir, typed))
		}
	}
}

// quotedAsTyped quotes each resolved --set as typed, clipped alike (a long
// path), and keeps the error's kind; an error not quoting one is itself.
func TestQuotedAsTyped(t *testing.T) {
	long := strings.Repeat("d/", 60) + "A.npy"
	typed := [][2]machines.Override{
		{{Path: "program.inputs.a", Value: "in/A.npy"}, {Path: "program.inputs.a", Value: "/w/in/A.npy"}},
		{{Path: "program.inputs.b", Value: long}, {Path: "program.inputs.b", Value: "/w/" + long}},
	}
	for _, c := range []struct{ in, want string }{
		{"p.yaml: key \"inputs.a\": open /w/in/A.npy: no such file (set with --set program.inputs.a=/w/in/A.npy)",
			"p.yaml: key \"inputs.a\": open /w/in/A.npy: no such file (set with --set program.inputs.a=in/A.npy)"},
		{"(set with --set " + typed[1][1].String() + ", --set program.inputs.a=/w/in/A.npy)",
			"(set with --set " + typed[1][0].String() + ", --set program.inputs.a=in/A.npy)"},
	} {
		err := quotedAsTyped(badInput(errors.New(c.in)), typed)
		if err.Error() != c.want || exitCode(err) != 2 || !badinput.Is(err) {
			t.Errorf("%q:\ngot  %q (exit %d)\nwant %q", c.in, err, exitCode(err), c.want)
		}
	}
	plain := failure(errors.New("deadlock"))
	if quotedAsTyped(plain, typed) != plain || quotedAsTyped(nil, typed) != nil {
		t.Error("an error quoting no --set was changed")
	}
}
