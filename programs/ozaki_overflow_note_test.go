package programs

import (
	"slices"
	"strings"
	"testing"
)

// Where references are ±Inf (α = β = 1e308: sums past fp64), the normwise
// error's +Inf and 0 bits are explained by a note that gives it over the
// finite references and counts where C itself overflowed (a probe read
// "bits 0.0" beside "of them differing from it: 0" as no accuracy at all).
func TestOzakiNonFiniteReferenceNoted(t *testing.T) {
	f, err := ReadFile("examples/b200-ozaki.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Numerics: NumericsFull, Overrides: mustSets(t, "program.m=64", "program.n=64", "program.k=64", "program.alpha=1e308", "program.beta=1e308")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	want := "normwise error: its rel_fro and bits count the "
	if !slices.ContainsFunc(res.Report.Notes, func(s string) bool {
		return strings.HasPrefix(s, want) && strings.Contains(s, "whose reference is finite")
	}) {
		t.Errorf("notes %q: want one starting %q", res.Report.Notes, want)
	}
	// A run without them has no such note.
	if f, err = ReadFile("examples/b200-ozaki.yaml"); err != nil {
		t.Fatal(err)
	}
	res, err = Execute(f, Options{Numerics: NumericsFull, Overrides: mustSets(t, "program.m=64", "program.n=64", "program.k=64")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(res.Report.Notes, func(s string) bool { return strings.HasPrefix(s, want) }) {
		t.Errorf("a run of finite references notes %q", want)
	}
}
