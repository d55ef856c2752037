package cube

import (
	"os"
	"testing"
)

// TestFullVectors checks every file set of another vector folder, named by
// CUBE_VECTORS (e.g. new recordings); the shipped ones (../testdata) are
// checked by TestRecordedVectors in the normal run.
func TestFullVectors(t *testing.T) {
	dir := os.Getenv("CUBE_VECTORS")
	if dir == "" {
		t.Skip("set CUBE_VECTORS to a vector folder to check it")
	}
	checkVectorDir(t, dir)
}

func checkVectorDir(t *testing.T, dir string) {
	t.Helper()
	sets, err := FindVectorSets(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) == 0 {
		t.Fatalf("no vector sets in %s", dir)
	}
	for _, s := range sets {
		r := checkSet(t, s)
		t.Logf("%-5s %-5v %-5v checked %5d mismatches %d", s.GPU, s.Input, s.Output, r.Checked, r.Mismatches)
		if r.Mismatches != 0 {
			for _, x := range r.First[:min(3, len(r.First))] {
				t.Errorf("%s %v→%v line %d: got %08x want %08x", s.GPU, s.Input, s.Output, x.Line, x.Got, x.Want)
			}
		}
	}
}
