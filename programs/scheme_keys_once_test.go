package programs

import (
	"strings"
	"testing"
)

// A whole scheme given by --set with a key in two spellings is refused as
// the file refuses it: beside a --set of another scheme key it ran with
// either value at random (split pass or fused, 6 and 14 runs of 20), and
// alone it was refused as an unknown key "Split" (did you mean "split"?).
func TestSchemeSetKeyTwice(t *testing.T) {
	small := []string{"program.m=64", "program.n=64", "program.k=64", "program.numerics=off"}
	for _, extra := range [][]string{nil, {"program.scheme.epilogue=ordered"}} {
		sets := append(append([]string{}, small...), "program.scheme={name: ootomo, Split: pass, split: fused}")
		_, err := runEmulated(t, "a100", append(sets, extra...)...)
		if err == nil || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), `key "program.scheme": "split" given twice (as "Split" and "split"; keys are case-insensitive)`) {
			t.Errorf("%v: %v", extra, err)
		}
	}
}
