package programs

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// inputFilesFresh is InputFiles decoding f's keys at each call, as it did
// before stringKeys kept its decodes: the reference.
func inputFilesFresh(f *File, opts Options) []InputFile {
	var paths []InputFile
	for _, in := range InputPaths(f, opts) {
		if !strings.HasPrefix(in.What, "key ") {
			paths = append(paths, in)
		}
	}
	if params, err := decodedParams(f, opts); err == nil {
		for _, k := range stringKeysOf(f, params) {
			paths = append(paths, InputFile{What: k.what, Path: k.path})
		}
	}
	var out []InputFile
	for _, in := range paths {
		if st, err := os.Stat(in.Path); err == nil && st.Mode().IsRegular() {
			out = append(out, in)
		}
	}
	return out
}

// memoProgram is a GEMM whose m the file gives as 0, refused unless an
// override replaces it, and whose inputs are files: InputFiles lists them
// only where its keys decode.
const memoProgram = `kind: hgemm
machine: ascend-910a
m: 0
k: 64
n: 64
tiling: {bm: 16, bk: 16, bn: 16}
inputs: {a: a.npy, b: b.npy}
numerics: off
`

// InputFiles decodes a program's keys once per group of calls alike but
// for the values of scalar keys (stringKeys), and gives what a decode at
// each call gives: for every call of a sequence on one parsed file — the
// group's first calls refused (m: 0 of the file, a value that is no
// number), a scalar value refused after the group decoded, string keys
// (the inputs' files) that change the files, a key set twice, a key and a
// key under it, sections, machine.* overrides, keys in another case —,
// in one order and another (another call standing for its group).
func TestInputFilesDecodedOncePerGroup(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.npy", "b.npy", "c.npy"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prog := filepath.Join(dir, "prog.yaml")
	if err := os.WriteFile(prog, []byte(memoProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(dir, "c.npy")
	sets := [][]string{
		{"program.m=0"}, {"program.m=abc"}, {"program.n=32"}, // (m: 0 of the file)
		{"program.m=16"}, {"program.m=32"}, {"program.m=0"}, {"program.m=-16"}, {"program.m=1KiB"}, {"program.m=16.5"}, {"program.m="},
		{"PROGRAM.M=48"}, {"program.M=0"},
		{"program.m=16", "program.n=0"}, {"program.m=16", "program.n=32"}, {"program.m=0", "program.n=32"}, {"program.n=32", "program.m=64"},
		{"program.m=16", "program.inputs.a=" + c}, {"program.m=0", "program.inputs.a=" + c}, {"program.m=32", "program.inputs.a=" + c},
		{"program.m=16", "program.inputs.a=nonesuch.npy"}, {"program.m=16", "program.inputs.b="},
		{"program.m=16", "program.m=0"}, {"program.m=0", "program.m=16"}, {"program.m=16", "program.inputs.a=" + c, "program.m=32"},
		{"program.m=16", "program.tiling.bm=32"}, {"program.m=16", "program.tiling.bm=abc"}, {"program.m=16", "program.tiling.bm=0"},
		{"program.m=16", "program.tiling={bm: 64, bk: 16, bn: 16}", "program.tiling.bm=32"},
		{"program.m=16", "program.tiling.bm=32", "program.tiling={bm: 64, bk: 16, bn: 16}"},
		{"program.m=16", "program.check=true"}, {"program.m=16", "program.check=maybe"}, {"program.m=16", "program.baselines=false"}, {"program.m=16", "program.baselines=2"},
		{"program.m=16", "program.inputs.low=1.5"}, {"program.m=16", "program.inputs.low=x"}, {"program.m=16", "program.inputs.seed=7"},
		{"program.m=16", "machine.cores=2"}, {"machine.cores=abc", "program.m=16"}, {"machine.cores=abc", "program.m=0"},
		{"program.m=16", "program.numerics=bogus"}, {"program.m=16", "program.numerics=off"}, {"program.m=16", "program.nonesuch=1"},
		{"program.m=16", "program.buffering=single"}, {"program.m=16", "program.inputs.distribution=" + c},
		{"program.m=16", "program.machine=" + c}, {"program.m=16", "program.machine=ascend-910b3"},
		{"program"}, {"program.=16"},
	}
	var opts []Options
	for _, set := range sets {
		var o Options
		for _, s := range set {
			path, value, _ := strings.Cut(s, "=")
			o.Overrides = append(o.Overrides, machines.Override{Path: path, Value: value})
		}
		opts = append(opts, o)
	}
	emu, err := filepath.Abs("examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var emuOpts []Options
	for _, set := range [][]string{
		{"program.m=64"}, {"program.m=0"}, {"program.m=128"}, {"program.scheme=ootomo"}, {"program.scheme=ootomo", "program.m=64"},
		{"program.scheme=nonesuch", "program.m=64"}, {"program.m=64", "program.scheme.pieces[1].scale=10"}, {"program.m=64", "program.tiling.bk=48"},
	} {
		var o Options
		for _, s := range set {
			path, value, _ := strings.Cut(s, "=")
			o.Overrides = append(o.Overrides, machines.Override{Path: path, Value: value})
		}
		emuOpts = append(emuOpts, o)
	}

	decodes, refused := 0, 0
	for _, c := range []struct {
		path string
		opts []Options
	}{{prog, opts}, {emu, emuOpts}} {
		for _, reversed := range []bool{false, true} {
			f, err := ReadFile(c.path) // (a file of its own: its memo empty)
			if err != nil {
				t.Fatal(err)
			}
			seq := c.opts
			if reversed {
				seq = nil
				for i := len(c.opts) - 1; i >= 0; i-- {
					seq = append(seq, c.opts[i])
				}
			}
			for round := range 2 { // (the second: every group known)
				for _, o := range seq {
					got, want := InputFiles(f, o), inputFilesFresh(f, o)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s, %v (reversed %v, round %d): %v, want %v", filepath.Base(c.path), o.Overrides, reversed, round, got, want)
					}
					if round == 0 && !reversed && c.path == prog {
						if _, err := decodedParams(f, o); err == nil {
							decodes++
						} else {
							refused++
						}
					}
				}
			}
		}
	}
	// (The sequence has both: a check that cannot fail otherwise.)
	if decodes < 10 || refused < 10 {
		t.Errorf("%d calls decode, %d are refused: want both kinds", decodes, refused)
	}

	// The same from several goroutines at once (a study's points run
	// with -j).
	f, err := ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]string, 4)
	for g := range errs {
		wg.Go(func() {
			for i := range opts {
				o := opts[(i+g*7)%len(opts)]
				if got, want := InputFiles(f, o), inputFilesFresh(f, o); !reflect.DeepEqual(got, want) {
					errs[g] = fmt.Sprintf("%v: %v, want %v", o.Overrides, got, want)
				}
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
}

// A study's calls that differ in a scalar key alone decode once per value
// of it, not once per call: 40 calls over 4 sizes and 10 seeds take 1 +
// 3 + 9 decodes (the group's first call, then each value new to it).
func TestInputFilesDecodesPerValue(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog.yaml")
	if err := os.WriteFile(prog, []byte(strings.Replace(memoProgram, "m: 0", "m: 16", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"16", "32", "48", "64"} {
		for seed := range 10 {
			InputFiles(f, Options{Overrides: []machines.Override{{Path: "program.m", Value: m}, {Path: "program.inputs.seed", Value: fmt.Sprint(seed)}}, Machine: "ascend-910b3"})
		}
	}
	if m := memoFor(f); len(m.groups) != 1 || m.decodes.Load() != 1+3+9 {
		t.Errorf("%d groups, %d decodes; want 1 group, 13 decodes", len(m.groups), m.decodes.Load())
	}
}
