package programs

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

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

// --set reaches one entry of the scheme's pieces (a study may vary
// program.scheme.pieces[1].scale): on a preset it sets the key in the
// preset's pieces — the same C, bit for bit, as the scheme written out
// with that piece changed, reported as the preset with its pieces changed
// —, whether it comes before or after the preset is named; an entry the
// pieces do not have is refused.
func TestSchemePieceKeySet(t *testing.T) {
	small := []string{"program.m=64", "program.n=48", "program.k=96", "program.numerics=full"}
	run := func(sets ...string) *Result {
		t.Helper()
		res, err := runEmulated(t, "a100", append(append([]string{}, small...), sets...)...)
		if err != nil {
			t.Fatalf("%v: %v", sets, err)
		}
		return res
	}
	want := run("program.scheme={name: ootomo, pieces: [{format: fp16, rounding: rne}, {format: fp16, rounding: rz, scale: 9}]}")
	plain := run("program.scheme=ootomo")
	for _, sets := range [][]string{
		{"program.scheme=ootomo", "program.scheme.pieces[1].scale=9", "program.scheme.pieces[1].rounding=rz"},
		{"program.scheme.pieces[1].rounding=rz", "program.scheme.pieces[1].scale=9", "program.scheme=ootomo"},
		{"program.scheme=ootomo", "program.scheme.pieces[1]={format: fp16, rounding: rz, scale: 9}"},
	} {
		got := run(sets...)
		if !reflect.DeepEqual(got.Outputs, want.Outputs) || reflect.DeepEqual(got.Outputs, plain.Outputs) {
			t.Errorf("%v: C differs from the scheme written out (or equals plain ootomo's)", sets)
		}
		if n := fmt.Sprint(got.Report.Notes); !strings.Contains(n, "scheme ootomo (pieces changed): pieces fp16 rne, fp16 rz ×2^9") {
			t.Errorf("%v: notes %s", sets, n)
		}
	}
	_, err := runEmulated(t, "a100", append(append([]string{}, small...), "program.scheme=ootomo", "program.scheme.pieces[2].scale=1")...)
	wantBadInputLine(t, err, `key "scheme.pieces[2]": no entry 2 to set (scheme.pieces has 2 entries); give scheme.pieces whole`, "a third piece")
	// An entry of a list of values: a group's products.
	mine := "program.scheme={name: mine, pieces: [{format: fp16}, {format: fp16, scale: 11}], groups: [{products: [hh]}, {products: [hl]}, {products: [lh]}]}"
	want = run("program.scheme={name: mine, pieces: [{format: fp16}, {format: fp16, scale: 11}], groups: [{products: [hh]}, {products: [hl]}, {products: [ll]}]}")
	if got := run(mine, "program.scheme.groups[2].products[0]=ll"); !reflect.DeepEqual(got.Outputs, want.Outputs) {
		t.Errorf("groups[2].products[0]=ll: C differs from the scheme written out")
	}
	_, err = runEmulated(t, "a100", append(append([]string{}, small...), mine, "program.scheme.groups[0].products[3]=ll")...)
	wantBadInputLine(t, err, `key "scheme.groups[0].products[3]": no entry 3 to set (scheme.groups[0].products has 1 entries)`, "a fourth product")
}
