package sweep

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
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
		once := yamlContent(data)
		twice := yamlContent(once)
		if thrice := yamlContent(twice); !bytes.Equal(thrice, twice) {
			t.Fatalf("yamlContent(%q) twice = %q, then %q", data, twice, thrice)
		}
		// It keeps the meaning: the same values decoded (a null key
		// may come back as "", which no program or machine file has).
		if bytes.ContainsRune(data, '*') {
			return // aliases: decoding them into values can take long
		}
		var before, after any
		if yaml.Unmarshal(data, &before) != nil || yaml.Unmarshal(once, &after) != nil {
			return
		}
		if !reflect.DeepEqual(nullKeys(before), nullKeys(after)) {
			t.Fatalf("yamlContent(%q) = %q: %#v became %#v", data, once, before, after)
		}
	})
}

// nullKeys returns v with its maps keyed by their keys' types and values,
// a null key as "" (yamlContent may write a null key so that it reads back
// as an empty string).
func nullKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out["string:"+k] = nullKeys(e)
		}
		return out
	case map[any]any:
		out := map[string]any{}
		for k, e := range x {
			key := "string:" // a null key as ""
			if k != nil {
				key = fmt.Sprintf("%T:%v", k, k)
			}
			out[key] = nullKeys(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = nullKeys(e)
		}
		return out
	}
	return v
}
