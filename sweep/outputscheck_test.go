package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// checkOutputs checks each input once (the points of a study read the
// same few files), but every one: a program file that only the later
// points read, after many points of another, is still one an output
// would replace.
func TestCheckOutputsEveryInput(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512, 1024], program: [prog.yaml, results.csv]}\n")
	if err := os.WriteFile(filepath.Join(s.Dir, ResultsCSV), []byte(tinyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	err := s.checkOutputs(setCheck{}, s.Dir, true)
	want := "writing results.csv there would replace the program file " + filepath.Join(s.Dir, ResultsCSV) + ", which the study reads"
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
