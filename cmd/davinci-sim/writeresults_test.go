package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/report"
)

// stdoutGone is a standard output whose reader has gone: a write kills
// the process (SIGPIPE on a pipe into head), stood for here by a panic.
type stdoutGone struct{}

func (stdoutGone) Write([]byte) (int, error) { panic("stdout closed") }

// -o DIR is written before the report is printed: a run piped into head
// (stdout closed after a line) lost its -o directory to SIGPIPE.
func TestOutDirBeforeStdout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	res := &programs.Result{Report: &report.Report{Machine: "m", Program: report.Program{"kind": "asm"}, Overrides: []string{}}}
	func() {
		defer func() { _ = recover() }()
		_ = writeResults(stdoutGone{}, io.Discard, res, runFlags{out: dir}, nil)
	}()
	if _, err := os.Stat(filepath.Join(dir, "report.json")); err != nil {
		t.Errorf("-o not written before the printed report: %v", err)
	}
}
