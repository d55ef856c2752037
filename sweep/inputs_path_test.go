package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/davinci-sim/davinci-sim/programs"
)

// A study's set and vary name .npy inputs relative to the study's folder,
// as its machine files: the program file, in a folder of its own, would
// resolve them against its own.
func TestStudyInputsRelativeToStudy(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p", "prog.yaml"), []byte("kind: sgemm-cube\nmachine: ascend-910a\nm: 64\nk: 64\nn: 64\ntiling: {bm: 64, bk: 64, bn: 64}\nnumerics: full\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := make([]float32, 64*64)
	for i := range v {
		v[i] = float32(i%7) - 3
	}
	if _, err := programs.WriteOutputs(filepath.Join(dir, "data"), []programs.Output{{Name: "A", F32: v, Shape: []int{64, 64}}, {Name: "B", F32: v, Shape: []int{64, 64}}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "study.yaml")
	study := "program: p/prog.yaml\nmetrics: [time.seconds]\nset: {program.inputs.a: data/A.npy}\nvary: {program.inputs.b: [data/B.npy]}\n"
	if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStudy(path)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sum, err := Run(s, Options{Out: out, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 0 {
		recs, _ := ReadResults(filepath.Join(out, ResultsJSONL), s)
		t.Fatalf("%d failed: %+v", sum.Failed, recs)
	}
}
