package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/davinci-sim/davinci-sim/outfile"
	"github.com/davinci-sim/davinci-sim/programs"
)

// outputFiles returns the files a sweep writes into dir: the plots'
// (NAME.png, .svg, .pdf), and with results results.jsonl and results.csv
// too.
func (s *Study) outputFiles(dir string, results bool) []string {
	var out []string
	if results {
		out = append(out, filepath.Join(dir, ResultsJSONL), filepath.Join(dir, ResultsCSV))
	}
	for _, pl := range s.Plots {
		for _, ext := range plotFormats {
			out = append(out, filepath.Join(dir, pl.Name+ext))
		}
	}
	return out
}

// plotFormats are the extensions of a plot's files.
var plotFormats = []string{".png", ".svg", ".pdf"}

// checkOutputs refuses (bad input, one line naming the file) to write an
// output into dir — results.jsonl and results.csv with results, and the
// plots — that would replace a file the study reads: the study file, a
// point's program or machine file or any other file its run reads
// (programs.InputFiles), or one of others (a merge's shard results,
// which only its own results.jsonl may replace: a merge into one of the
// shards' directories adds the others' records to it).
// Files are compared as the file system sees them (links, names in
// another case), before anything is written.
//
// It tells how far it is and is stopped by c.ctx (setCheck{}: silent,
// never stopped). Where an output is there to replace (a --resume, a merge, the
// plots drawn again), every point is looked at: ~20 µs each (100000
// points: 2 s of CPU, where each point's program was decoded anew took
// 11–13 s). It therefore says how far it is after probeQuiet, as the
// study's other checks do (c.progress or c.log), and stops at the next
// point on an interrupt (c.ctx): an error wrapping its cause, nothing
// written.
func (s *Study) checkOutputs(c setCheck, dir string, results bool, others ...string) error {
	var outs []string
	for _, o := range s.outputFiles(dir, results) {
		if _, err := os.Lstat(o); err == nil {
			outs = append(outs, o)
		}
	}
	if len(outs) == 0 {
		return nil // (nothing there to replace: no input is)
	}
	// Each input checked once: the points of a study read the same few
	// files.
	checked := map[[2]string]bool{}
	check := func(what, in string) error {
		if checked[[2]string{what, in}] {
			return nil
		}
		checked[[2]string{what, in}] = true
		for _, o := range outs {
			if what == "the results file" && o == filepath.Join(dir, ResultsJSONL) {
				continue // (a merge into a shard's directory adds to its records)
			}
			if replaces(o, in) || (filepath.Base(o) == ResultsJSONL && appendsTo(o, in)) {
				return badInput(fmt.Errorf("-o %s: writing %s there would replace %s %s, which the study reads; give another -o directory (or move the file)", dir, filepath.Base(o), what, in))
			}
		}
		return nil
	}
	if err := check("the study file", s.Path); err != nil {
		return err
	}
	for _, o := range others {
		if err := check("the results file", o); err != nil {
			return err
		}
	}
	// The files a point's run may read (programs.InputPaths), each
	// looked at once: those that are regular files are the ones it reads
	// (InputFiles).
	looked := map[string]bool{}
	base := s.absDir() // (as paths resolves the points' files)
	n := len(s.Points)
	var done atomic.Int64 // points checked
	show := startProbeProgress(c, n, &done, outputsProgress(dir))
	defer show.close()
	for _, p := range s.Points {
		if c.ctx != nil && c.ctx.Err() != nil {
			return fmt.Errorf("sweep: %w, while checking the files each point reads (%d of %d checked): no point ran", context.Cause(c.ctx), done.Load(), n)
		}
		wprog, wmach := s.written(p)
		prog, mach := resolveFile(base, wprog), resolveMachine(base, wmach)
		if err := check("the program file", prog); err != nil {
			return err
		}
		if isMachineFile(mach) {
			if err := check("the machine file", mach); err != nil {
				return err
			}
		}
		if f := s.stamps.program(prog, wprog); f != nil { // (else the point fails to read its program)
			for _, in := range programs.InputPaths(f, s.runOptions(mach, p)) {
				if looked[in.Path] { // (whatever names it: a file refused is refused at its first name)
					continue
				}
				looked[in.Path] = true
				if st, err := os.Stat(in.Path); err != nil || !st.Mode().IsRegular() {
					continue // (no file: no input — nor is a folder or FIFO one, which replaces would not take for replaced anyway)
				}
				if err := check(inputWhat(in), in.Path); err != nil {
					return err
				}
			}
		}
		done.Add(1)
	}
	return nil
}

// outputsProgress words checkOutputs' progress, its outputs in dir.
func outputsProgress(dir string) progressWords {
	return progressWords{
		line: "files each point reads",
		log:  "files each point reads, which no output in -o " + dir + " may replace",
		unit: "points",
	}
}

// inputWhat names an input file of a point's run in a message.
func inputWhat(in programs.InputFile) string {
	if in.What == "the program file" || in.What == "the machine file" {
		return in.What
	}
	return "the file of " + in.What
}

// appendsTo reports whether appending to out (results.jsonl, opened with
// O_APPEND on --resume: through its links, in place) writes into the file
// in.
func appendsTo(out, in string) bool {
	so, err1 := os.Stat(out)
	si, err2 := os.Stat(in)
	return err1 == nil && err2 == nil && os.SameFile(so, si)
}

// replaces reports whether writing the file out (through a temporary
// renamed over where it lands: out, or the file out's links lead to,
// outfile.Target) replaces the contents of the file in.
func replaces(out, in string) bool {
	target, err := outfile.Target(out)
	if err != nil {
		return false // (refused when written)
	}
	so, err1 := os.Stat(target)
	si, err2 := os.Stat(in)
	return err1 == nil && err2 == nil && os.SameFile(so, si)
}
