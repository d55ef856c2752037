package sweep

import (
	"bytes"
	"testing"
)

// yamlContent never panics, and settles: after a pass or two its output is
// its own (a file written as yamlContent writes it digests as itself; a
// first pass may still requote an edge case: "?" gives an empty key
// quoted with single quotes, then with double quotes).
func FuzzYAMLContent(f *testing.F) {
	f.Add([]byte(tinyProgram))
	f.Add([]byte("# c\nm:   256   # rows\ns: \"256\"\nt: '1e3'\ntiling: {bm: 64, x: [1, 2]}\n"))
	f.Add([]byte("a: &x [1, *x]\n---\nb: !!str 3\n"))
	f.Add([]byte("key: |\n  text\n  # not a comment\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		twice := yamlContent(yamlContent(data))
		if thrice := yamlContent(twice); !bytes.Equal(thrice, twice) {
			t.Fatalf("yamlContent(%q) twice = %q, then %q", data, twice, thrice)
		}
	})
}
