package sweep

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

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

// dupKey's scanner finds what encoding/json's tokens find (dupKeyTokens,
// the way it was first written) on the cases above, escaped and non-ASCII
// keys, white space and records cut short at every byte; FuzzDupKey goes
// on from them.
func TestDupKeyLikeTokens(t *testing.T) {
	for _, in := range dupKeyCases() {
		checkDupKeyLikeTokens(t, []byte(in))
		for n := range len(in) {
			checkDupKeyLikeTokens(t, []byte(in[:n]))
		}
	}
}

// FuzzDupKey holds dupKey to dupKeyTokens on any bytes.
//
//	go test ./sweep -run XXX -fuzz ^FuzzDupKey$ -fuzztime 60s
func FuzzDupKey(f *testing.F) {
	for _, in := range dupKeyCases() {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDupKeyLikeTokens(t, data)
	})
}

// dupKeyCases are records for the comparisons with dupKeyTokens.
func dupKeyCases() []string {
	return []string{
		`{"a":[{"x":1},{"y":[1,2,{"z":1,"z":2}]}]}`,
		`{"Run":{"Inputs":1,"inputs":2}}`,
		`{"index":1,"INDEX":2}`,
		`{"index":1,"\u0069ndex":2}`,
		`{"a\"b":1,"a\u0022b":2}`,
		"{\"m\":{\"a\xff\":1,\"a\xfe\":2}}",
		`{"métrique":1,"MÉTRIQUE":2,"métrique":3}`,
		` { "a" : [ 1 , -2.5e3 , true , null , "s" , { } , [ ] ] , "b" : { "a" : 1 } , "a" : 0 } `,
		"{\n\t\"a\":\r\n1}",
		`{"params":{"A":1,"a":2},"run":{"x":1,"X":1}}`,
		`{"a":1}{"a":2}`,
		`[1,{"a":1,"a":2}]`,
		`"just a string"`,
		`{"a":}`, `{,"a":1}`, `{"a" 1}`, `{"a":1,}`, `[1,,2]`, `{"a":[1}`,
		`{"index":3,"params":{"program.m":64},"run":{"inputs":"x","program":"y"},"status":"ok","metrics":{"time.seconds":1.5e-3,"time.seconds":2}}`,
	}
}

// checkDupKeyLikeTokens fails t where dupKey and dupKeyTokens differ on
// data (valid JSON as encoding/json reads it: on other data dupKey's
// answer is not used).
func checkDupKeyLikeTokens(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) {
		return
	}
	p, f, ok := dupKey(data)
	wp, wf, wok := dupKeyTokens(data)
	if p != wp || f != wf || ok != wok {
		t.Fatalf("%q: %q %q %v, encoding/json's tokens %q %q %v", data, p, f, ok, wp, wf, wok)
	}
}

// dupKeyTokens is dupKey as it was written first, on encoding/json's
// tokens (Decoder.Token): the reference TestDupKeyLikeTokens holds the
// scanner to.
func dupKeyTokens(data []byte) (path, first string, found bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*keyFrame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", false
		}
		var top *keyFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.wantKey {
			key, ok := tok.(string)
			if !ok { // '}'
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return "", "", false
				}
				stack[len(stack)-1].valueDone()
				continue
			}
			if prev, dup := top.seen(key); dup {
				segs := make([]string, 0, len(stack))
				for _, f := range stack[1:] {
					segs = append(segs, f.seg)
				}
				if prev == key {
					prev = ""
				}
				return strings.Join(append(segs, key), "."), prev, true
			}
			top.key, top.wantKey = key, false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			f := &keyFrame{obj: tok == json.Delim('{'), wantKey: true}
			switch {
			case top == nil:
				f.fold = true // the record
			case top.obj:
				f.seg = top.key
				f.fold = len(stack) == 1 && strings.EqualFold(top.key, "run")
			default:
				f.seg = strconv.Itoa(top.n) // (its end moves top.n on)
			}
			stack = append(stack, f)
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", "", false
			}
			stack[len(stack)-1].valueDone()
			continue
		}
		if top == nil {
			return "", "", false // a scalar, not an object
		}
		top.valueDone()
	}
}
