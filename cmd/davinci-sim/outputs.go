package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

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
	for i, a := range dests {
		for _, b := range dests[i+1:] {
			if landing(a.path) == landing(b.path) {
				return fmt.Errorf("%s and %s: both write %s; give each its own file", a.flag, b.flag, a.path)
			}
		}
		if f.out != "" && landsIn(a.path, f.out) {
			return fmt.Errorf("%s %s: in the -o directory, which holds the run's report.json and arrays only (a later run replaces them); write it elsewhere", a.flag, a.path)
		}
	}
	if f.trace != "" {
		what := fmt.Sprintf("--trace %q", f.trace)
		if st, err := os.Stat(f.trace); err == nil && st.IsDir() {
			return fmt.Errorf("%s: is a directory", what)
		}
		target, err := outfile.Target(f.trace) // (a link is written through)
		if err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
		if err := outfile.CheckDir(filepath.Dir(target), what); err != nil {
			return err
		}
	}
	if f.out != "" {
		return checkOutDir(f.out)
	}
	return nil
}

// landing returns where a file written at path lands: through its links
// (outfile.Target), made absolute, its directory as the file system finds
// it.
func landing(p string) string {
	if t, err := outfile.Target(p); err == nil {
		p = t
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	p = filepath.Clean(p)
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(dir, filepath.Base(p))
	}
	return p
}

// landsIn reports whether a file written at path lands in directory dir
// (the same directory as the file system sees it, or where either is
// missing the same path).
func landsIn(path, dir string) bool {
	d := filepath.Dir(landing(path))
	sa, err1 := os.Stat(d)
	sb, err2 := os.Stat(dir)
	if err1 == nil && err2 == nil {
		return os.SameFile(sa, sb)
	}
	return d == landing(dir)
}

// outDirHolds is the annotation of a command whose -o DIR holds files it
// writes (its value says which): --cpuprofile and --memprofile may not
// name a file there, where the profile, written at the end, would replace
// one of them (a study's results.jsonl, once the sweep had written it) or
// stand among them. run checks its own outputs (checkOutputs).
const outDirHolds = "davinci-sim/out-dir-holds"

// checkProfilesOutside refuses a profile of cmd (annotated outDirHolds)
// in its -o directory.
func checkProfilesOutside(cmd *cobra.Command, p *profiles) error {
	holds, ok := cmd.Annotations[outDirHolds]
	if !ok {
		return nil
	}
	out, err := cmd.Flags().GetString("out")
	if err != nil || out == "" {
		return nil
	}
	for _, f := range []struct{ flag, path string }{{"--cpuprofile", p.cpu}, {"--memprofile", p.mem}} {
		if f.path != "" && landsIn(f.path, out) {
			return fmt.Errorf("%s %s: in the -o directory, which holds %s; write it elsewhere", f.flag, f.path, holds)
		}
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
		return outfile.CheckNewDir(dir, what)
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
	// A staging directory a killed run left (writeOutDir) is removed by
	// the next run's write.
	entries = slices.DeleteFunc(entries, leftoverStaging)
	if len(entries) > 0 {
		if !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == reportFile }) {
			return fmt.Errorf("%s: the directory is not empty and holds no %s (not a previous run's output); give a new or empty directory", what, reportFile)
		}
		if !isRunReport(filepath.Join(dir, reportFile)) {
			return fmt.Errorf("%s: the directory's %s is not a davinci-sim report (not a previous run's output, whose files a run replaces); give a new or empty directory", what, reportFile)
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

// maxReportBytes bounds the report.json isRunReport reads (a cluster
// run's report is a few MB; anything this large is not one).
const maxReportBytes = 1 << 30

// isRunReport reports whether the file at path is a report a run wrote to
// -o DIR: a regular file holding one JSON object with the report's
// version and machine (strings) and sim (an object). A directory that happens
// to hold another program's report.json is not a previous run's output,
// and a run must not remove the arrays beside it.
func isRunReport(path string) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxReportBytes {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var rep struct {
		Version *string                    `json:"version"`
		Machine *string                    `json:"machine"`
		Sim     map[string]json.RawMessage `json:"sim"`
	}
	dec := json.NewDecoder(f)
	if dec.Decode(&rep) != nil {
		return false
	}
	// Nothing but space after the object (Decoder.More says no more
	// where a '}' follows).
	if _, err := dec.Token(); err != io.EOF {
		return false
	}
	return rep.Version != nil && rep.Machine != nil && rep.Sim != nil
}

// leftoverStaging reports whether e is a staging directory of writeOutDir
// (one a run killed while writing left behind).
func leftoverStaging(e fs.DirEntry) bool {
	return e.IsDir() && strings.HasPrefix(e.Name(), stagingPrefix)
}

// ownedOutput reports whether e is a file a run writes to -o DIR.
func ownedOutput(e fs.DirEntry) bool {
	return e.Type().IsRegular() && (e.Name() == reportFile || strings.HasSuffix(e.Name(), ".npy") && programs.CheckOutputName(strings.TrimSuffix(e.Name(), ".npy")) == nil)
}

// stagingPrefix names the directory inside -o DIR where a run writes its
// files before it puts them in place (writeOutDir).
const stagingPrefix = ".davinci-sim-staging-"

// writeOutputs writes the result arrays (a variable for tests that make a
// write fail partway).
var writeOutputs = programs.WriteOutputs

// writeOutDir writes the result arrays and report.json to dir so that the
// directory never mixes two runs. Everything is first written into a
// staging directory inside dir (on dir's file system, which may be a mount
// point: the rename of dir itself is never needed), where running out of
// space or any other failure leaves the previous run's files as they were
// and the staging directory is removed. Only when every file is written
// are they moved in: the previous report.json is removed first, then the
// arrays renamed over the old ones, the previous run's arrays this run did
// not write removed (checkOutDir made sure everything there is a run's
// output), and report.json renamed in last — a report.json present always
// describes the arrays beside it. Should a rename fail in that step, the
// run's outputs there are removed rather than left mixed. The cost: the
// new files take their space beside the old ones until they are moved in.
// A staging directory left by a run killed while writing (leftoverStaging)
// is removed after a successful write.
func writeOutDir(dir string, rep *report.Report, outs []programs.Output) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(dir, stagingPrefix+"*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	written, err := writeOutputs(stage, outs)
	if err != nil {
		return unstaged(err, stage, dir)
	}
	if err := outfile.Write(filepath.Join(stage, reportFile), rep.WriteJSON); err != nil {
		return unstaged(err, stage, dir)
	}
	var stale, leftovers []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch {
		case leftoverStaging(e) && e.Name() != filepath.Base(stage):
			leftovers = append(leftovers, e.Name())
		case ownedOutput(e) && e.Name() != reportFile && !slices.Contains(written, e.Name()):
			stale = append(stale, e.Name())
		}
	}
	// Nothing in dir has changed yet. From here on a failure empties it of
	// run outputs (clearOutDir).
	if err := os.Remove(filepath.Join(dir, reportFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	move := func(name string) error { return outfile.MoveIn(filepath.Join(stage, name), filepath.Join(dir, name)) }
	for _, name := range written {
		if err := move(name); err != nil {
			return clearOutDir(err, dir)
		}
	}
	for _, name := range stale {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return clearOutDir(err, dir)
		}
	}
	if err := move(reportFile); err != nil {
		return clearOutDir(err, dir)
	}
	for _, name := range leftovers {
		os.RemoveAll(filepath.Join(dir, name))
	}
	return nil
}

// unstaged is the error of a run whose files could not all be written to
// the staging directory: the paths name dir, where the file was meant to
// go, and the message says the previous outputs are untouched.
func unstaged(err error, stage, dir string) error {
	return &renamedError{fmt.Sprintf("%s (%s left as it was)", strings.ReplaceAll(err.Error(), stage, dir), dir), err}
}

// renamedError is an error told in other words (errors.Is and the exit
// code see the original).
type renamedError struct {
	msg string
	err error
}

// Error returns the error in its other words.
func (e *renamedError) Error() string { return e.msg }

// Unwrap returns the original error.
func (e *renamedError) Unwrap() error { return e.err }

// clearOutDir removes the run outputs in dir after a failure while moving
// the staged files in, so no report.json is left describing arrays of
// another run.
func clearOutDir(err error, dir string) error {
	if entries, rerr := os.ReadDir(dir); rerr == nil {
		for _, e := range entries {
			if ownedOutput(e) {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	return fmt.Errorf("%w (the outputs in %s removed: they would have mixed two runs)", err, dir)
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
