package programs

import "testing"

// --set takes a key of the scheme (the example's preset name becoming the
// preset with that key changed), and a whole scheme replaces the file's.
func TestSchemeKeySet(t *testing.T) {
	small := []string{"program.m=128", "program.n=128", "program.k=128", "program.numerics=off"}
	for _, c := range []struct {
		sets          []string
		scheme, split string
	}{
		{[]string{"program.scheme.split=fused"}, "ape-fp32f", "fused"},
		{[]string{"program.scheme={name: le-gemm, split: fused}"}, "le-gemm", "fused"},
		{[]string{"program.scheme={name: le-gemm, split: fused}", "program.scheme.split=pass"}, "le-gemm", "pass"},
		{[]string{"program.scheme.split=fused", "program.scheme=markidis"}, "markidis", "fused"}, // (a study's set, then its vary)
	} {
		res, err := runEmulated(t, "a100", append(append([]string{}, small...), c.sets...)...)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		if p := res.Report.Program; p["scheme"] != c.scheme || p["split"] != c.split {
			t.Errorf("%v: scheme %v split %v, want %s %s", c.sets, p["scheme"], p["split"], c.scheme, c.split)
		}
	}
}

// scheme auto takes no other scheme keys: it picks the split too.
func TestSchemeAutoAlone(t *testing.T) {
	_, err := runEmulated(t, "a100", "program.m=128", "program.n=128", "program.k=128", "program.numerics=off", "program.scheme=auto", "program.scheme.split=fused")
	wantBadInputLine(t, err, `key "scheme": auto picks a preset and its split itself`, "auto with split")
}
