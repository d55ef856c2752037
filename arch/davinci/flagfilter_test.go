package davinci_test

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/programs"
)

// flagless is an intervalLog that declares it ignores flag events.
type flagless struct{ intervalLog }

func (*flagless) IgnoresFlags() bool { return true }

// An observer implementing FlagFilter with IgnoresFlags() = true gets no
// Flag calls and every other call as before; a plain observer gets them all.
func TestFlagFilterDropsOnlyFlagCalls(t *testing.T) {
	f, err := programs.ReadFile("../../programs/examples/flag-pingpong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	all := &intervalLog{}
	if _, err := programs.Execute(f, programs.Options{}, programs.RunHooks{Observer: all}); err != nil {
		t.Fatal(err)
	}
	some := &flagless{}
	if _, err := programs.Execute(f, programs.Options{}, programs.RunHooks{Observer: some}); err != nil {
		t.Fatal(err)
	}
	var want []string
	flags := 0
	for _, l := range all.lines {
		if strings.Contains(l, " flag ") {
			flags++
			continue
		}
		want = append(want, l)
	}
	if flags == 0 {
		t.Fatal("the plain observer saw no flag events")
	}
	if strings.Join(some.lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("filtered observer saw %d calls, want the %d non-flag calls of the plain one", len(some.lines), len(want))
	}
}
