package sweep

import "testing"

// dupKey names a key given twice by its path (list elements by index,
// nested lists and objects counted right), the first spelling where the
// record's own fields (its top level, its run) match it ignoring case, and
// nothing where only a map's keys differ in case or the JSON is cut off.
func TestDupKeyPaths(t *testing.T) {
	for _, c := range []struct {
		in, path, first string
		found           bool
	}{
		{`{"a":[{"x":1},{"y":[1,2,{"z":1,"z":2}]}]}`, "a.1.y.2.z", "", true},
		{`{"a":[[1],[2],{"k":1,"k":1}]}`, "a.2.k", "", true},
		{`{"Run":{"Inputs":1,"inputs":2}}`, "Run.inputs", "Inputs", true},
		{`{"params":{"A":1,"a":2}}`, "", "", false},
		{`{"index":1,"INDEX":2}`, "INDEX", "index", true},
		{`{"m":{"x":{"run":{"a":1,"A":1}}}}`, "", "", false},
		{`[{"a":1,"a":2}]`, "0.a", "", true},
		{`{"a":1,"b":{"c":1},"a":2}`, "a", "", true},
		{`{"a":1`, "", "", false},
	} {
		p, f, ok := dupKey([]byte(c.in))
		if p != c.path || f != c.first || ok != c.found {
			t.Errorf("%s: %q %q %v, want %q %q %v", c.in, p, f, ok, c.path, c.first, c.found)
		}
	}
}
