//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// A named pipe given as a program, machine, study, trace or results file
// is refused at once (exit 2, one line): opening one blocks until another
// process opens its other end — it hung forever.
func TestFIFOInputsRefused(t *testing.T) {
	simScreen(t) // (view asks for a terminal before it reads a trace)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no mkfifo:", err)
	}
	study := filepath.Join(dir, "s.yaml")
	prog, err := filepath.Abs(examplePath("hgemm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(study, []byte("program: "+prog+"\nset: {program.numerics: off, program.m: 64, program.k: 64}\nvary: {program.n: [64]}\nmetrics: [time.seconds]\n"), 0o644)
	out := filepath.Join(dir, "o")
	os.Mkdir(out, 0o755)
	if err := syscall.Mkfifo(filepath.Join(out, "results.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", fifo},
		{"run", examplePath("hgemm.yaml"), "-m", fifo},
		{"view", fifo},
		{"sweep", fifo, "-o", filepath.Join(dir, "x")},
		{"sweep", study, "-o", out},
		{"sweep", study, "-o", out, "--resume"},
	} {
		done := make(chan struct{})
		var code int
		var err error
		go func() {
			_, code, err = runCLI(t, args...)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%v: still waiting after 20 s", args)
		}
		if code != 2 || err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("%v: exit %d, %v; want 2 and a named pipe refused", args, code, err)
		}
	}
}

// An anonymous pipe — /dev/stdin, a shell's <(…) — is read as before: a
// writer holds it open.
func TestAnonymousPipeInput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	prog, err := os.ReadFile(examplePath("hgemm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.Write(prog); w.Close() }()
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := os.Stat(path); err != nil {
		t.Skip("no /dev/fd:", err)
	}
	if out, code, err := runCLI(t, "run", path, "-q", "--numerics", "off", "--set", "program.m=64", "--set", "program.n=64", "--set", "program.k=64"); code != 0 {
		t.Errorf("exit %d: %v\n%s", code, err, out)
	}
}

// An anonymous pipe (a shell's <(…)) serves as a machine and an assembly
// file as it does as a program file (named pipes, which wait for a writer, are refused); an
// input array, read twice, is refused saying so (it was "illegal seek").
func TestAnonymousPipeArraysAndAsm(t *testing.T) {
	dir := t.TempDir()
	v := make([]float32, 64*64)
	for i := range v {
		v[i] = float32(i%5) - 2
	}
	if _, err := programs.WriteOutputs(dir, []programs.Output{{Name: "A", F32: v, Shape: []int{64, 64}}}); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(filepath.Join(dir, "A.npy"))
	if err != nil {
		t.Fatal(err)
	}
	pipe := func(data []byte) string {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		go func() { w.Write(data); w.Close() }()
		path := fmt.Sprintf("/dev/fd/%d", r.Fd())
		if _, err := os.Stat(path); err != nil {
			t.Skip("no /dev/fd:", err)
		}
		return path
	}
	p := pipe(a)
	if _, code, err := runCLI(t, "run", examplePath("hgemm.yaml"), "-q", "--numerics", "full", "--set", "program.m=64", "--set", "program.n=64", "--set", "program.k=64",
		"--set", "program.inputs.a="+p, "--set", "program.inputs.b="+filepath.Join(dir, "A.npy")); code != 2 || err == nil ||
		!strings.Contains(err.Error(), p+" is a pipe, not a .npy file: an input array is read twice (its shape is checked first); write it to a file") {
		t.Errorf("array from a pipe: exit %d: %v", code, err)
	}
	// A machine file from a pipe: read once, though a run reads its
	// machine more than once (it is no cluster description: "missing key
	// cores" read from the emptied pipe).
	msrc, err := machines.Source("a100")
	if err != nil {
		t.Fatal(err)
	}
	if out, code, err := runCLI(t, "run", examplePath("a100-hgemm.yaml"), "-q", "--numerics", "off", "--set", "program.m=128", "--set", "program.n=128", "--set", "program.k=128",
		"-m", pipe(msrc)); code != 0 {
		t.Errorf("machine from a pipe: exit %d: %v\n%s", code, err, out)
	}
	prog := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(prog, []byte("kind: asm\nnumerics: off\nfile: "+pipe([]byte("nop\n"))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code, err := runCLI(t, "run", prog, "-q"); code != 0 {
		t.Errorf("assembly from a pipe: exit %d: %v\n%s", code, err, out)
	}
}

// --trace naming a named pipe, directly or through a link, is refused
// before the run (a trace is written to a temporary file and renamed over
// its destination: the pipe, or as root a device such as /dev/full, would
// be replaced by a regular file).
func TestTraceToFifoRefused(t *testing.T) {
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "p.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink("p.json", filepath.Join(tmp, "l.json")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, fifo + ": not a regular file"},
		{filepath.Join(tmp, "l.json"), "a link to " + fifo + ", which is not a regular file"},
	} {
		if err := checkOutputs(runFlags{trace: c.path}, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--trace %s: %v, want %q", c.path, err, c.want)
		}
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe changed: %v", err)
	}
}
