package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/davinci-sim/davinci-sim/outfile"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/report"
)

// reportFile is the report -o DIR holds.
const reportFile = "report.json"

// checkOutputs validates -o and --trace before the run starts, so that a
// typo cannot throw away a long run's result: the trace's directory must
// exist and take new files; -o DIR must be creatable, or an existing
// directory holding nothing but a previous run's outputs (checkOutDir).
func checkOutputs(f runFlags, inputs []programs.InputFile) error {
	if err := checkNotInputs(f, inputs); err != nil {
		return err
	}
	// No two outputs at one place: one would silently replace the other
	// (a trace named report.json in the -o directory, a profile and the
	// trace in one file).
	type dest struct{ flag, path string }
	var dests []dest
	if f.trace != "" {
		dests = append(dests, dest{"--trace", f.trace})
	}
	for i, p := range f.profiles {
		if p != "" {
			dests = append(dests, dest{[...]string{"--cpuprofile", "--memprofile"}[i], p})
		}
	}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return filepath.Clean(p)
	}
	for i, a := range dests {
		for _, b := range dests[i+1:] {
			if abs(a.path) == abs(b.path) {
				return fmt.Errorf("%s and %s: both write %s; give each its own file", a.flag, b.flag, a.path)
			}
		}
		if f.out != "" && filepath.Dir(abs(a.path)) == abs(f.out) {
			return fmt.Errorf("%s %s: in the -o directory, which holds the run's report.json and arrays only (a later run replaces them); write it elsewhere", a.flag, a.path)
		}
	}
	if f.trace != "" {
		what := fmt.Sprintf("--trace %q", f.trace)
		if st, err := os.Stat(f.trace); err == nil && st.IsDir() {
			return fmt.Errorf("%s: is a directory", what)
		}
		if err := outfile.CheckDir(filepath.Dir(f.trace), what); err != nil {
			return err
		}
	}
	if f.out != "" {
		return checkOutDir(f.out)
	}
	return nil
}

// checkNotInputs refuses an output that would replace a file the run
// reads (inputs): --trace or a profile written over the program, the
// machine file or an input array, -o DIR where an input lies (the run
// replaces the directory's arrays and removes those it does not write —
// a previous run's A.npy given as this run's inputs.a). Files are compared
// as the file system sees them (links, case-insensitive names).
func checkNotInputs(f runFlags, inputs []programs.InputFile) error {
	same := func(a, b string) bool {
		sa, err1 := os.Stat(a)
		sb, err2 := os.Stat(b)
		return err1 == nil && err2 == nil && os.SameFile(sa, sb)
	}
	dests := map[string]string{"--trace": f.trace, "--cpuprofile": f.profiles[0], "--memprofile": f.profiles[1]}
	for _, flag := range []string{"--trace", "--cpuprofile", "--memprofile"} {
		if p := dests[flag]; p != "" {
			for _, in := range inputs {
				if same(p, in.Path) {
					return fmt.Errorf("%s %s: the run reads that file (%s: %s); write it elsewhere", flag, p, in.What, in.Path)
				}
			}
		}
	}
	if f.out != "" {
		for _, in := range inputs {
			real := in.Path
			if r, err := filepath.EvalSymlinks(in.Path); err == nil {
				real = r // (a link to a previous run's out/A.npy)
			}
			if same(f.out, filepath.Dir(in.Path)) || same(f.out, filepath.Dir(real)) {
				what := in.Path
				if !same(filepath.Dir(in.Path), filepath.Dir(real)) {
					what = fmt.Sprintf("%s (a link to %s)", in.Path, real)
				}
				return fmt.Errorf("-o %s: the run reads %s there (%s), and a run replaces the directory's files; give another directory (or copy the input out of it)", f.out, what, in.What)
			}
		}
	}
	return nil
}

// checkOutDir checks -o DIR: a missing directory must be creatable (its
// nearest existing ancestor a writable directory); an existing one must be
// writable and empty or a previous run's output (report.json and .npy
// arrays only), whose files the new run replaces.
func checkOutDir(dir string) error {
	what := fmt.Sprintf("-o %q", dir)
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		p := filepath.Clean(dir)
		for {
			parent := filepath.Dir(p)
			if parent == p {
				break
			}
			p = parent
			if _, err := os.Lstat(p); err == nil {
				break
			}
		}
		return outfile.CheckDir(p, what)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: exists and is not a directory", what)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	if len(entries) > 0 {
		if !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == reportFile }) {
			return fmt.Errorf("%s: the directory is not empty and holds no %s (not a previous run's output); give a new or empty directory", what, reportFile)
		}
		for _, e := range entries {
			if e.Type()&fs.ModeSymlink != 0 {
				return fmt.Errorf("%s: the directory holds %q, a link, which a run would replace with a file of its own; give a new or empty directory", what, e.Name())
			}
			if !ownedOutput(e) {
				return fmt.Errorf("%s: the directory holds %q, which a run does not write; give a new or empty directory", what, e.Name())
			}
		}
	}
	return outfile.CheckDir(dir, what)
}

// ownedOutput reports whether e is a file a run writes to -o DIR.
func ownedOutput(e fs.DirEntry) bool {
	return e.Type().IsRegular() && (e.Name() == reportFile || strings.HasSuffix(e.Name(), ".npy") && programs.CheckOutputName(strings.TrimSuffix(e.Name(), ".npy")) == nil)
}

// writeOutDir writes the result arrays and report.json to dir, each
// atomically, then removes what a previous run left there that this one
// did not write (checkOutDir made sure everything there is a run's
// output), so the directory never mixes two runs.
func writeOutDir(dir string, rep *report.Report, outs []programs.Output) error {
	var stale []string
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if ownedOutput(e) {
				stale = append(stale, e.Name())
			}
		}
	}
	written, err := programs.WriteOutputs(dir, outs)
	if err != nil {
		return err
	}
	if err := outfile.Write(filepath.Join(dir, reportFile), rep.WriteJSON); err != nil {
		return err
	}
	written = append(written, reportFile)
	for _, name := range stale {
		if !slices.Contains(written, name) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// noteMissingArrays says plainly, when -o wrote no result arrays, why.
func noteMissingArrays(w io.Writer, f runFlags, res *programs.Result) {
	if f.out == "" || len(res.Outputs) > 0 {
		return
	}
	if fl := res.Report.Failure; fl != nil && fl.Kind == report.FailureDeadlock {
		fmt.Fprintf(w, "note: -o %s: only %s written — the run deadlocked: it computed no results\n", f.out, reportFile)
		return
	}
	kind, _ := res.Report.Program["kind"].(string)
	k, known := programs.KindByName(kind)
	switch {
	case known && k.HasKey("outputs[].name"): // asm: the arrays its outputs key lists
		if res.Report.Sim.Mode == "functional" {
			fmt.Fprintf(w, "note: -o %s: only %s written — the program lists no outputs (key outputs)\n", f.out, reportFile)
			return
		}
	case res.Report.Sim.Mode == "functional" || (known && (k.NoArrays || !k.HasKey("numerics"))): // lu-fused, gpu-bench
		fmt.Fprintf(w, "note: -o %s: only %s written — kind %s writes no result arrays\n", f.out, reportFile, kind)
		return
	}
	fmt.Fprintf(w, "note: -o %s: only %s written — the result arrays (.npy) need --numerics full (this run: numerics %s)\n", f.out, reportFile, numericsOf(res))
}

// numericsOf returns the run's numerics setting as reported.
func numericsOf(res *programs.Result) string {
	if n, ok := res.Report.Program["numerics"].(string); ok {
		return n
	}
	return "off"
}
