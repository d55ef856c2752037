package main

import (
	"errors"
	"io"

	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/traces"
)

func runWithView(stdout, stderr io.Writer, file *programs.File, opts programs.Options, f runFlags, rec *traces.Recorder) error {
	return errors.New("todo")
}
