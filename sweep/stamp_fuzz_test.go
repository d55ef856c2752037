package sweep

import (
	"bytes"
	"fmt"
	"math"
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
	f.Add([]byte("base: &b {m: 256, tiling: {bm: 64}}\nrun:\n  <<: *b\n  n: *b\nlist: [&v 1, *v, {*v : 2}]\n"))
	f.Add([]byte("a: &k key\n*k : 1\nb: &s !!str 12\nc: *s\n"))
	f.Add([]byte("key: |\n  text\n  # not a comment\n"))
	f.Add([]byte("{"))
	f.Add([]byte("kind: emulated-gemm\nmachine: a100 # m\nscheme:\n  name: mine\n  pieces: [{format: fp16, rounding: rne}, {format: fp16, scale: 11}]\n" +
		"  groups:\n    - {products: [hh], accumulate: outside}\n    - products: [hl, lh]\n  split: fused\nm: 0x400\nk: 1_024\nn: !!int \"1024\"\n"))
	f.Add([]byte("name: cloudbrain2\nnode: cloudbrain2-node\nnodes: 32\nfabric:\n  port_bandwidth: 12.5GB/s\n  latency_ns: 5e2\n  supernodes: 1\n"))
	f.Add([]byte("a: 1\nA: 2\nb: ~\nc: null\nd: .NaN\ne: -.inf\nf: 0o17\ng: yes\nh: 2001-12-14\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		once := yamlContent(data)
		twice := yamlContent(once)
		if thrice := yamlContent(twice); !bytes.Equal(thrice, twice) {
			t.Fatalf("yamlContent(%q) twice = %q, then %q", data, twice, thrice)
		}
		// It keeps the meaning: the same values decoded (a null key
		// may come back as "", which no program or machine file has).
		if bytes.Count(data, []byte("*")) > 4 {
			return // many aliases: decoding them into values can take long (each doubles at most)
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
// as an empty string), and NaN as "NaN" (a NaN is not equal to itself).
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
	case float64:
		if math.IsNaN(x) {
			return "NaN" // (not equal to itself)
		}
	}
	return v
}
