package machines

import (
	"reflect"
	"strings"
	"testing"
)

// sectionPiece and sectionParams are a program's parameters with a field
// that takes a name or a section (as emulated-gemm's scheme).
type sectionPiece struct {
	Format string `mapstructure:"format"`
	Scale  int    `mapstructure:"scale"`
}

type sectionScheme struct {
	Name   string         `mapstructure:"name"`
	Pieces []sectionPiece `mapstructure:"pieces"`
}

type sectionParams struct {
	M      int `mapstructure:"m"`
	Scheme any `mapstructure:"scheme"`
}

// A section given where a name or a section goes is checked and decoded as
// the file's other keys: its unknown keys, shapes and values refused with
// file, line and key (or the --set that gave it), a list refused, a name
// left a string.
func TestDecodeStrictSections(t *testing.T) {
	decode := func(src string, sets ...string) (sectionParams, error) {
		t.Helper()
		p, _, err := decodeSections(t, src, nil, sets...)
		return p, err
	}
	p, err := decode("m: 1\nscheme: ootomo\n")
	if err != nil || p.Scheme != "ootomo" {
		t.Fatalf("a name: %#v, %v", p.Scheme, err)
	}
	p, err = decode("m: 1\nscheme:\n  name: x\n  pieces:\n    - {format: fp16}\n    - {format: fp16, scale: 11}\n")
	if want := (sectionScheme{Name: "x", Pieces: []sectionPiece{{Format: "fp16"}, {Format: "fp16", Scale: 11}}}); err != nil || !reflect.DeepEqual(p.Scheme, want) {
		t.Fatalf("a section: %#v, %v; want %#v", p.Scheme, err, want)
	}
	// --set: a section's keys (a name becoming {name: NAME}), a whole
	// value replacing the file's (not merged with it).
	for _, c := range []struct {
		src  string
		sets []string
		want any
	}{
		{"scheme: ootomo\n", []string{"scheme.name=x"}, sectionScheme{Name: "x"}},
		{"scheme: ootomo\n", []string{"scheme.pieces=[{format: bf16}]"}, sectionScheme{Name: "ootomo", Pieces: []sectionPiece{{Format: "bf16"}}}},
		{"scheme: {name: a, pieces: [{format: fp16}]}\n", []string{"scheme.name=b"}, sectionScheme{Name: "b", Pieces: []sectionPiece{{Format: "fp16"}}}},
		{"scheme: {name: a, pieces: [{format: fp16}]}\n", []string{"scheme={name: b}"}, sectionScheme{Name: "b"}},
		{"scheme: {name: a, pieces: [{format: fp16}]}\n", []string{"scheme=c"}, "c"},
		{"scheme: {name: a, pieces: [{format: fp16}]}\n", []string{"scheme=c", "scheme.pieces=[{scale: 2}]"}, sectionScheme{Name: "c", Pieces: []sectionPiece{{Scale: 2}}}},
		{"m: 1\n", []string{"scheme.name=d"}, sectionScheme{Name: "d"}},
		// keys apply to the whole value whichever comes first (a study's
		// set, then its vary), in any case
		{"scheme: ootomo\n", []string{"scheme.pieces=[{format: a}]", "scheme=b"}, sectionScheme{Name: "b", Pieces: []sectionPiece{{Format: "a"}}}},
		{"m: 1\n", []string{"scheme={Name: x, Pieces: [{format: a}]}", "scheme.name=y"}, sectionScheme{Name: "y", Pieces: []sectionPiece{{Format: "a"}}}},
	} {
		p, err := decode(c.src, c.sets...)
		if err != nil || !reflect.DeepEqual(p.Scheme, c.want) {
			t.Errorf("%q %v: %#v, %v; want %#v", c.src, c.sets, p.Scheme, err, c.want)
		}
	}
	for _, c := range []struct {
		src  string
		sets []string
		want string
	}{
		{"scheme: ootomo\n", []string{"scheme.colour=red"}, `--set scheme.colour=red: unknown key "scheme.colour": "scheme" has no key "colour" (it has: name, pieces)`},
		{"scheme:\n  name: x\n", []string{"scheme.pieces=[{format: fp16, scale: 1.5}]"}, `--set scheme.pieces=[{format: fp16, scale: 1.5}]: key "scheme.pieces[0].scale": want an integer, got 1.5`},
		{"m: 1\nscheme:\n  name: x\n  pieces:\n    - {format: fp16}\n    - {format: fp16, scale: 1.5}\n", nil, `prog.yaml:6: key "scheme.pieces[1].scale": want an integer, got 1.5`},
		{"m: 1\nscheme:\n  name: x\n  colour: red\n", nil, `prog.yaml:4: unknown key "scheme.colour": "scheme" has no key "colour" (it has: name, pieces)`},
		{"m: 1\nscheme:\n  pieces: {format: fp16}\n", nil, `prog.yaml:3: key "scheme.pieces" wants a list, not a mapping`},
		{"m: 1\nscheme:\n  pieces: [[fp16]]\n", nil, `prog.yaml:3: key "scheme.pieces[0]" is a section: it wants a mapping of keys (format, scale), not a list`},
		{"m: 1\nscheme: [a, b]\n", nil, `prog.yaml:2: key "scheme" takes a name or a section of keys (name, pieces), not a list`},
		{"m: 1\n", []string{"scheme={pieces: [{format: fp16, scale: x}]}"}, `--set scheme={pieces: [{format: fp16, scale: x}]}: key "scheme.pieces[0].scale": want an integer, got "x"`},
		{"m: 1\n", []string{"scheme={pieces: {format: fp16}}"}, `--set scheme={pieces: {format: fp16}}: key "scheme.pieces" wants a list, not a mapping`},
		{"m: 1\n", []string{"scheme={pieces: [[fp16]]}"}, `key "scheme.pieces[0]" is a section: it wants a mapping of keys (format, scale), not a list`},
		{"m: 1\n", []string{"scheme={name: x, colour: red}"}, `--set scheme={name: x, colour: red}: unknown key "scheme.colour": "scheme" has no key "colour" (it has: name, pieces)`},
		{"m: 1\n", []string{"scheme={pieces: [{format: a, colour: red}]}"}, `unknown key "scheme.pieces[0].colour": "scheme.pieces[0]" has no key "colour" (it has: format, scale)`},
		{"m: 1\n", []string{"scheme={name: 7}"}, `key "scheme.name": want a string, got 7 (YAML reads unquoted digits as a number: quote them`},
	} {
		_, err := decode(c.src, c.sets...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %v: got %v, want %q", c.src, c.sets, err, c.want)
		}
	}
	// The hint on unquoted digits comes once a message, however many
	// values it concerns (a list of 16 unquoted products said it 16 times).
	if _, err := decode("m: 1\nscheme:\n  name: 7\n  pieces:\n    - {format: 16}\n    - {format: 17}\n"); err == nil ||
		strings.Count(err.Error(), "YAML reads unquoted digits") != 1 || !strings.Contains(err.Error(), "got 16") || !strings.Contains(err.Error(), "got 17") {
		t.Errorf("unquoted digits: %v", err)
	}
}

// A refusal of a section's key names every --set of the section: its keys
// are checked together (one key's value refuses another's).
func TestSetByInSection(t *testing.T) {
	c, err := ReadYAML("prog.yaml", []byte("m: 1\nscheme: ootomo\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.SetSections(map[string]reflect.Type{"scheme": reflect.TypeFor[sectionScheme]()})
	var p sectionParams
	if err := ApplyOverrides(c, &p, "", []Override{{Path: "scheme.name", Value: "x"}, {Path: "m", Value: "2"}}); err != nil {
		t.Fatal(err)
	}
	if got := c.SetBy("scheme.pieces[0].format"); !reflect.DeepEqual(got, []string{"scheme.name=x"}) {
		t.Errorf("SetBy: %v, want [scheme.name=x]", got)
	}
}

// A --set may set a key of one entry of a section's list (scheme.pieces[1].
// scale): in the file's list, in a whole value given by --set whichever
// comes first, or in the list a name stands for (SetSectionPresets) —
// never changing the file's own value; an entry the list does not have,
// a name without a known value, and a list outside a section are refused.
func TestSectionListEntries(t *testing.T) {
	presets := map[string]func(string) (map[string]any, bool){"scheme": func(name string) (map[string]any, bool) {
		if name != "ootomo" {
			return nil, false
		}
		return map[string]any{"name": "ootomo", "pieces": []any{map[string]any{"format": "fp16"}, map[string]any{"Format": "fp16", "scale": 11}}}, true
	}}
	decode := func(src string, sets ...string) (sectionParams, *Config, error) {
		t.Helper()
		return decodeSections(t, src, presets, sets...)
	}
	two := func(s0, s1 int) []sectionPiece {
		return []sectionPiece{{Format: "fp16", Scale: s0}, {Format: "fp16", Scale: s1}}
	}
	file := "m: 1\nscheme:\n  name: x\n  pieces:\n    - {format: fp16}\n    - {Format: fp16, Scale: 11}\n"
	for _, c := range []struct {
		src  string
		sets []string
		want any
	}{
		{file, []string{"scheme.pieces[1].scale=10"}, sectionScheme{Name: "x", Pieces: two(0, 10)}},
		{file, []string{"scheme.pieces[0].scale=3", "scheme.pieces[1].scale=4"}, sectionScheme{Name: "x", Pieces: two(3, 4)}},
		{"m: 1\nscheme: ootomo\n", []string{"scheme.pieces[1].scale=10"}, sectionScheme{Name: "ootomo", Pieces: two(0, 10)}},
		{"m: 1\n", []string{"scheme.pieces[1].scale=10", "scheme=ootomo"}, sectionScheme{Name: "ootomo", Pieces: two(0, 10)}},
		{"m: 1\n", []string{"scheme.pieces[0].scale=2", "scheme={name: y, pieces: [{format: fp16}]}"}, sectionScheme{Name: "y", Pieces: []sectionPiece{{Format: "fp16", Scale: 2}}}},
		// a whole entry, as YAML; then one of its keys
		{file, []string{"scheme.pieces[1]={Format: bf16, scale: 7}"}, sectionScheme{Name: "x", Pieces: []sectionPiece{{Format: "fp16"}, {Format: "bf16", Scale: 7}}}},
		{file, []string{"scheme.pieces[1]={format: bf16}", "scheme.pieces[1].scale=5"}, sectionScheme{Name: "x", Pieces: []sectionPiece{{Format: "fp16"}, {Format: "bf16", Scale: 5}}}},
		// the key first: set in the entry or list given after it too (the
		// entry's value took its place, the key lost: found by a probe)
		{file, []string{"scheme.pieces[1].scale=5", "scheme.pieces[1]={format: bf16}"}, sectionScheme{Name: "x", Pieces: []sectionPiece{{Format: "fp16"}, {Format: "bf16", Scale: 5}}}},
		{file, []string{"scheme.pieces[1].scale=5", "scheme.pieces=[{format: fp16}, {format: fp16, scale: 3}]"}, sectionScheme{Name: "x", Pieces: two(0, 5)}},
		// a preset named in a mapping: its lists (it said "0 entries")
		{"m: 1\nscheme: {name: ootomo}\n", []string{"scheme.pieces[1].scale=10"}, sectionScheme{Name: "ootomo", Pieces: two(0, 10)}},
	} {
		p, cfg, err := decode(c.src, c.sets...)
		if err != nil || !reflect.DeepEqual(p.Scheme, c.want) {
			t.Errorf("%q %v: %#v, %v; want %#v", c.src, c.sets, p.Scheme, err, c.want)
			continue
		}
		if b, ok := cfg.sectionBase["scheme"].(map[string]any); ok && c.src == file {
			if pieces := b["pieces"].([]any); !reflect.DeepEqual(pieces[1], map[string]any{"format": "fp16", "scale": 11}) {
				t.Errorf("%v: the file's value changed: %v", c.sets, pieces)
			}
		}
	}
	for _, c := range []struct {
		src  string
		sets []string
		want string
	}{
		{file, []string{"scheme.pieces[2].scale=1"}, `--set scheme.pieces[2].scale=1: key "scheme.pieces[2]": no entry 2 to set (scheme.pieces has 2 entries); give scheme.pieces whole`},
		{"m: 1\nscheme: other\n", []string{"scheme.pieces[0].scale=1"}, `no entry 0 to set (scheme.pieces has none: other names no value whose lists are known)`},
		{file, []string{"scheme.pieces[0].colour=red"}, `unknown key "scheme.pieces[0].colour": "scheme.pieces[0]" has no key "colour" (it has: format, scale)`},
		{file, []string{"scheme.pieces[0].scale=x"}, `--set scheme.pieces[0].scale=x: key "scheme.pieces[0].scale": want an integer, got "x"`},
		{file, []string{"scheme.name[0]=x"}, `key "scheme.name[0]": scheme.name is not a list`},
		{"m: 1\n", []string{"m[0]=1"}, `key "m[0]": m is not a list`},
		{file, []string{"scheme.pieces[-1].scale=1"}, `key "scheme.pieces[-1].scale": pieces[-1] is not an entry of scheme.pieces: an index is a whole number from 0 (the first entry) to 999999`},
		{file, []string{"scheme.pieces[1000000]={format: fp16}"}, `pieces[1000000] is not an entry of scheme.pieces`},
		{file, []string{"scheme.pieces[x].scale=1"}, `pieces[x] is not an entry of scheme.pieces`},
		{file, []string{"scheme.pieces[1.0].scale=1"}, `pieces[1.0] is not an entry of scheme.pieces`},
		{"m: 1\n", []string{"m[x]=1"}, `"m[x]"`}, // (not a list: an unknown key)
		{file, []string{"scheme.pieces[0]={format: fp16, colour: red}"}, `unknown key "scheme.pieces[0].colour"`},
		{file, []string{"scheme.pieces[0]=fp16"}, `key "scheme.pieces[0]" is a section: it wants a mapping of keys (format, scale), not a value`},
	} {
		_, _, err := decode(c.src, c.sets...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %v: got %v, want %q", c.src, c.sets, err, c.want)
		}
	}
}

// decodeSections reads src as prog.yaml whose key scheme takes a name or a
// section (sectionScheme; presets give a name's lists, nil none), applies
// the --set values sets and decodes it strictly.
func decodeSections(t *testing.T, src string, presets map[string]func(string) (map[string]any, bool), sets ...string) (sectionParams, *Config, error) {
	t.Helper()
	c, err := ReadYAML("prog.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var p sectionParams
	os, err := ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	c.SetSections(map[string]reflect.Type{"scheme": reflect.TypeFor[sectionScheme]()})
	if presets != nil {
		c.SetSectionPresets(presets)
	}
	if err := ApplyOverrides(c, &p, "", os); err != nil {
		return p, c, err
	}
	return p, c, DecodeStrict(c, &p)
}
