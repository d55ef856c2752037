package machines

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// This file holds the generic configuration machinery shared by machine
// files and program files: reading YAML into viper while remembering how
// the user spelled each key (viper lower-cases them) and on which line,
// applying `--set path=value` overrides typed by the target struct, and a
// strict decode that rejects unknown keys with messages naming file, line
// and key.

// Config is a parsed YAML configuration file: a viper instance holding the
// values plus the user's spelling and line of every key, for messages.
type Config struct {
	// Source names the file in messages (e.g. "ascend-910a.yaml").
	Source string
	v      *viper.Viper
	doc    *yaml.Node         // the top-level mapping, nil for an empty file
	keys   map[string]keyInfo // lower-case dotted path → spelling and line
	// overridden maps lower-case paths set by ApplyOverrides to the
	// override text, so messages about them name the --set, not the file.
	overridden map[string]string
	visits     int  // nodes visited by index and check (alias expansion budget)
	reported   bool // the budget error has been reported
	// hidden are keys (dotted paths, sections with their keys) that the
	// decoded type has but its users never take (a program kind's Omit):
	// messages that list a section's keys leave them out.
	hidden []string
	// sections are the decoded type's fields of type any that take a name
	// or a section of keys (SetSections): lower-case top-level key → the
	// section's type.
	sections map[string]reflect.Type
	// sectionBase is the value of each section an override set, before
	// its keys (the last whole override, else the file's), and
	// sectionKeys the keys set in it, in order: the keys apply to the
	// whole value whichever came first (a study's set gives scheme.split,
	// its vary scheme). sectionValue is the section's value; it replaces
	// the file's when decoded.
	sectionBase map[string]any
	sectionKeys map[string][]sectionKey
	// sectionPresets gives, for a section, the whole value a name stands
	// for (SetSectionPresets): list entries set by --set index into it.
	sectionPresets map[string]func(name string) (map[string]any, bool)
}

// sectionKey is a key of a section set by an override: its lower-case path
// below the section and its value.
type sectionKey struct {
	path []string
	val  any
	by   string // the override, as messages quote it
}

// SetSections names the decoded type's top-level fields of type any that
// take either a name (a value) or a section of keys (emulated-gemm's
// scheme: ootomo, or {name: ootomo, split: fused}): each field's key →
// the section's struct type. Then ApplyOverrides takes a section's keys
// (--set program.scheme.split=fused: a name given in the file becomes
// {name: NAME, split: fused}) and a whole value replaces the file's;
// DecodeStrict checks and decodes a mapping given there as that type —
// the field then holds a value of it — so that its unknown keys, shapes
// and values are refused as the file's other keys are, naming file, line
// and key (or the --set that gave it); a list there is refused; a value
// stays as given (a name, for the caller to check). Call it before
// ApplyOverrides.
func (c *Config) SetSections(sections map[string]reflect.Type) {
	c.sections = map[string]reflect.Type{}
	for k, t := range sections {
		c.sections[strings.ToLower(k)] = t
	}
}

// SetSectionPresets gives, for sections of SetSections (by key), the
// whole value each name stands for (a preset's pieces, groups, …), so that
// an override of one of a list's entries (--set
// program.scheme.pieces[1].scale=10 on scheme: ootomo) has the list to
// index: the name becomes its value, with the entry's key set in it. A
// name the function does not know (false) cannot be indexed into.
func (c *Config) SetSectionPresets(presets map[string]func(name string) (map[string]any, bool)) {
	c.sectionPresets = map[string]func(string) (map[string]any, bool){}
	for k, f := range presets {
		c.sectionPresets[strings.ToLower(k)] = f
	}
}

// Hide leaves the keys at paths (dotted, relative to the decoded type; a
// section hides its keys) out of the key lists unknown-key messages give.
func (c *Config) Hide(paths []string) { c.hidden = paths }

// hiddenAt returns the hidden key path lies at or under ("" if none).
func (c *Config) hiddenAt(path string) string {
	lower := strings.ToLower(path)
	for _, h := range c.hidden {
		if hl := strings.ToLower(h); lower == hl || strings.HasPrefix(lower, hl+".") {
			return h
		}
	}
	return ""
}

// visible returns the names of section parent's keys that are not hidden.
func (c *Config) visible(parent string, names []string) []string {
	if c == nil || len(c.hidden) == 0 {
		return names
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		full := strings.ToLower(join(parent, n))
		if !slices.ContainsFunc(c.hidden, func(h string) bool {
			h = strings.ToLower(h)
			return full == h || strings.HasPrefix(full, h+".")
		}) {
			out = append(out, n)
		}
	}
	return out
}

type keyInfo struct {
	path string // dotted path as written in the file
	line int
}

// maxDepth bounds nesting (and alias chains) in configuration files.
const maxDepth = 64

// maxVisits bounds the nodes visited while walking a file, so aliases that
// expand exponentially (a "billion laughs" document) fail fast.
const maxVisits = 1 << 16

// ParseYAML parses YAML text holding one document (none: an empty root
// node). A second document ("---") is refused rather than silently
// ignored; source names the file in messages.
func ParseYAML(source string, data []byte) (yaml.Node, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return root, fmt.Errorf("%s: %v", source, err)
	}
	if n := largeMapping(&root); n != nil {
		where := "the top level"
		if path := keyPath(&root, n, ""); path != "" {
			where = fmt.Sprintf("key %q", path)
		}
		return root, fmt.Errorf("%s:%d: %s holds %d keys: no section of an input file has more than %d", source, n.Line, where, len(n.Content)/2, MaxMappingKeys)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
		return root, nil
	case err != nil:
		return root, fmt.Errorf("%s: %v", source, err)
	}
	return root, fmt.Errorf("%s:%d: a second YAML document (after ---); a file holds one", source, next.Line)
}

// MaxMappingKeys bounds the keys of one mapping of a YAML file (ParseYAML,
// which every program, machine, node, cluster and study file goes
// through): go-yaml compares each key of a mapping it decodes with
// every other (for repeats), and viper's MergeConfigMap looks each
// top-level key up among those merged before it, one by one — a program of
// 10^4 misspelt keys took 5 s to refuse and 10^5 minutes; 3·10^4 in one
// section 3 s. No section of the files has more than some tens.
const MaxMappingKeys = 1024

// largeMapping returns the first mapping under n (aliases not followed) of
// more than MaxMappingKeys keys, nil where there is none.
func largeMapping(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.MappingNode && len(n.Content)/2 > MaxMappingKeys {
		return n
	}
	for _, c := range n.Content {
		if m := largeMapping(c); m != nil {
			return m
		}
	}
	return nil
}

// keyPath returns the path of node target under n (keys joined by dots,
// list entries as [i]; "" for n itself or where target is not under n).
func keyPath(n, target *yaml.Node, path string) string {
	for i, c := range n.Content {
		p := path
		switch n.Kind {
		case yaml.MappingNode:
			if i%2 == 0 {
				continue // a key
			}
			p = join(path, n.Content[i-1].Value)
		case yaml.SequenceNode:
			p = fmt.Sprintf("%s[%d]", path, i)
		}
		if c == target {
			return p
		}
		if q := keyPath(c, target, p); q != "" {
			return q
		}
	}
	return ""
}

// ReadYAML parses YAML text into a Config. source names the file in error
// messages. The top level must be a mapping (an empty document is an empty
// mapping); keys must be plain scalars without dots, and no mapping may hold
// two keys that differ only in case (viper could not tell them apart).
func ReadYAML(source string, data []byte) (*Config, error) {
	c := &Config{Source: source, v: viper.New(), keys: map[string]keyInfo{}, overridden: map[string]string{}}
	c.v.SetConfigType("yaml")
	root, err := ParseYAML(source, data)
	if err != nil {
		return nil, err
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return c, nil
	}
	doc := root.Content[0]
	if isNull(doc) {
		return c, nil
	}
	if doc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the top level must be a mapping of keys", source, doc.Line)
	}
	if err := c.load(doc); err != nil {
		return nil, err
	}
	return c, nil
}

// load indexes doc, the file's top-level mapping, and gives its values to
// the viper instance, decoded from the parsed document: the text is
// scanned once (viper's ReadConfig would parse it again).
func (c *Config) load(doc *yaml.Node) error {
	if err := c.index(doc, "", "", 0); err != nil {
		return err
	}
	c.doc = doc
	var values map[string]any
	if err := doc.Decode(&values); err != nil {
		return fmt.Errorf("%s: %v", c.Source, err)
	}
	return c.v.MergeConfigMap(values) // (lower-cases the keys, as ReadConfig does)
}

// Fresh returns the configuration as read from its file, without what
// ApplyOverrides, SetSections, SetSectionPresets and Hide have written
// into c since: for another run with other overrides. It rebuilds from
// the parsed document, not the text (a program is run several times in
// one command: a file of many MiB was parsed once a run).
func (c *Config) Fresh() (*Config, error) {
	f := &Config{Source: c.Source, v: viper.New(), keys: map[string]keyInfo{}, overridden: map[string]string{}}
	f.v.SetConfigType("yaml")
	if c.doc == nil {
		return f, nil
	}
	if err := f.load(c.doc); err != nil {
		return nil, err
	}
	return f, nil
}

// Viper returns the viper instance holding the configuration values
// (overrides applied with ApplyOverrides included).
func (c *Config) Viper() *viper.Viper { return c.v }

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// index records the spelling and line of every key below n.
func (c *Config) index(n *yaml.Node, lower, written string, depth int) error {
	n, err := c.deref(n, depth)
	if err != nil {
		return err
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" && n.Style == 0 {
		if sign, digits, ok := ambiguousOctal(n.Value); ok {
			// YAML 1.1's octal (032 = 26), which go-yaml keeps; --set
			// and study values read the same text as decimal.
			oct, _ := strconv.ParseInt(strings.ReplaceAll(digits, "_", ""), 8, 64)
			return fmt.Errorf("%s:%d: key %q: %s has a leading zero, which YAML reads as octal (%s%d): write %s%s for decimal, or %s0o%s for octal",
				c.Source, n.Line, written, n.Value, sign, oct, sign, digits, sign, digits)
		}
	}
	if n.Kind == yaml.SequenceNode { // list entries (scheme pieces, gm tensors): their keys, too, once each
		for i, e := range n.Content {
			l, w := fmt.Sprintf("%s[%d]", lower, i), fmt.Sprintf("%s[%d]", written, i)
			c.keys[l] = keyInfo{path: w, line: e.Line} // (the entry's line: messages about it)
			if err := c.index(e, l, w, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	seen := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			return fmt.Errorf("%s:%d: keys must be plain names (no complex keys or << merges)", c.Source, k.Line)
		}
		name := k.Value
		w := join(written, name)
		if name == "" || strings.Contains(name, ".") {
			return fmt.Errorf("%s:%d: key %q: keys must be non-empty and must not contain '.'", c.Source, k.Line, w)
		}
		l := join(lower, strings.ToLower(name))
		if prev, ok := seen[strings.ToLower(name)]; ok {
			if prev == name {
				return fmt.Errorf("%s:%d: key %q given twice", c.Source, k.Line, w)
			}
			return fmt.Errorf("%s:%d: key %q given twice (as %q and %q; keys are case-insensitive)", c.Source, k.Line, w, prev, name)
		}
		seen[strings.ToLower(name)] = name
		c.keys[l] = keyInfo{path: w, line: k.Line}
		if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			// (Decoded, a null is the type's zero — not the key's default:
			// "m: ~" read as m = 0, "tolerance:" as 0.)
			given := fmt.Sprintf("%q", val.Value)
			if val.Value == "" {
				given = "nothing after the colon"
			}
			return fmt.Errorf("%s:%d: key %q has no value (%s, YAML's null): give one, or leave the key out for its default", c.Source, k.Line, w, given)
		}
		if err := c.index(val, l, w, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// ambiguousOctal reports whether v is a YAML 1.1 octal integer (digits
// with a leading zero, optionally signed) that reads otherwise as decimal
// (010, not 07 or 00), and returns its sign and digits without the
// leading zeros.
func ambiguousOctal(v string) (sign, digits string, ok bool) {
	body := strings.TrimLeft(v, "+-")
	sign, digits = v[:len(v)-len(body)], strings.TrimLeft(body, "0_")
	ok = len(body) > 1 && body[0] == '0' && strings.Trim(body, "01234567_") == "" && len(strings.ReplaceAll(digits, "_", "")) > 1
	return sign, digits, ok
}

// deref follows YAML aliases and bounds nesting depth.
func (c *Config) deref(n *yaml.Node, depth int) (*yaml.Node, error) {
	if c.visits++; c.visits > maxVisits {
		return nil, fmt.Errorf("%s: the document expands to more than %d nodes (aliases?)", c.Source, maxVisits)
	}
	for i := 0; n.Kind == yaml.AliasNode; i++ {
		if n.Alias == nil || i > maxDepth {
			return nil, fmt.Errorf("%s:%d: bad alias", c.Source, n.Line)
		}
		n = n.Alias
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("%s:%d: nesting deeper than %d levels", c.Source, n.Line, maxDepth)
	}
	return n, nil
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// SetBy returns the overrides that set the dotted path (any case), a
// section holding it ("scheme" for "scheme.pieces[0].format") or keys
// under it — in a section of SetSections, any of its keys (they are
// checked together: kernels termwise refuses a group's accumulate) —, as
// messages quote them ("program.tiling.bm=96"; sorted), or none where the
// file's values stand.
func (c *Config) SetBy(path string) []string {
	lower := strings.ToLower(path)
	if o, ok := c.overridden[lower]; ok {
		return []string{o}
	}
	sec, inSection := c.sectionOf(lower)
	var under []string
	for k, o := range c.overridden {
		if Covers(k, lower) || inSection && strings.HasPrefix(k, sec+".") { // (a section is one value: its keys refused together)
			under = append(under, o)
		}
	}
	slices.Sort(under)
	return under
}

// Line returns the line of the file on which the key at path (dotted,
// any case; list entries as "pieces[1]") is written, or 0 where the file
// does not write it (its value a default, or given by --set alone).
func (c *Config) Line(path string) int {
	return c.keys[strings.ToLower(path)].line
}

// where returns "source:line" for a lower-case dotted path (or its closest
// ancestor present in the file) and the path as the user spelled it.
func (c *Config) where(lower string) (string, string) {
	at, key := c.Source, lower
	parts := strings.Split(lower, ".")
	for i := len(parts); i > 0; i-- {
		if k, ok := c.keys[strings.Join(parts[:i], ".")]; ok {
			at = fmt.Sprintf("%s:%d", c.Source, k.line)
			key = k.path + strings.Join(append([]string{""}, parts[i:]...), ".")
			break
		}
	}
	for i := len(parts); i > 0; i-- { // set by --set, itself or a section or list holding it
		p := strings.Join(parts[:i], ".")
		o, ok := c.overridden[p]
		if !ok && strings.HasSuffix(p, "]") { // an entry of a list: pieces[0] of pieces
			o, ok = c.overridden[p[:strings.LastIndex(p, "[")]]
		}
		if ok {
			at = "--set " + o
			break
		}
	}
	return at, key
}

// Override is one `--set path=value` assignment, e.g. Path
// "machine.core.buffers.L1", Value "512KiB". (Tests convert struct{ Path,
// Value string } values to it: a field added breaks them.)
type Override struct{ Path, Value string }

// String is the override as messages quote it: its path and value each
// clipped to maxValueEcho bytes (Full gives it whole).
func (o Override) String() string { return echoValue(o.Path) + "=" + echoValue(o.Value) }

// echoValue is v as a message quotes it: clipped (clipValue), and in Go's
// double quotes with escapes when it holds a control character — a
// newline in a --set value must not split the message's one line.
func echoValue(v string) string {
	v = clipValue(v)
	if strings.ContainsFunc(v, unicode.IsControl) {
		return strconv.Quote(v)
	}
	return v
}

// Full returns the override as given, "path=value" (report.json records
// it so).
func (o Override) Full() string { return o.Path + "=" + o.Value }

// maxValueEcho bounds how much of a value a message quotes (a hostile
// --set value can be megabytes long).
const maxValueEcho = 80

// clipValue shortens a value quoted in a message to maxValueEcho bytes.
func clipValue(v string) string { return badinput.Clip(v, maxValueEcho) }

// ParseOverride parses "path=value" (the first '=' separates them). The
// path is a dotted key path such as machine.core.buffers.L1; surrounding
// spaces are trimmed.
func ParseOverride(s string) (Override, error) {
	path, value, ok := strings.Cut(s, "=")
	path = strings.TrimSpace(path)
	if !ok {
		return Override{}, fmt.Errorf("--set %q: want path=value, e.g. machine.core.buffers.L1=512KiB", s)
	}
	if path == "" || slices.Contains(strings.Split(path, "."), "") {
		return Override{}, fmt.Errorf("--set %q: bad key path %q", s, path)
	}
	if !utf8.ValidString(s) {
		// (As a YAML file's text must be: a value taken as it is would
		// be written back into views and reports that then do not load.)
		return Override{}, fmt.Errorf("--set %q: not UTF-8 text", s)
	}
	return Override{Path: path, Value: strings.TrimSpace(value)}, nil
}

// ParseOverrides parses every "path=value" string with ParseOverride; a
// later override of a path replaces an earlier one (callers compose
// defaults and changes). The command line's --set flags go through
// ParseSetFlags, which refuses that.
func ParseOverrides(ss []string) ([]Override, error) {
	out := make([]Override, 0, len(ss))
	for _, s := range ss {
		o, err := ParseOverride(s)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// ParseSetFlags parses the command line's --set flags (ParseOverrides),
// refusing a path given twice (case-insensitive, as keys are), as a file
// refuses a key given twice: one of the two values would be dropped
// without a word.
func ParseSetFlags(ss []string) ([]Override, error) {
	out, err := ParseOverrides(ss)
	if err != nil {
		return nil, err
	}
	first := map[string]int{} // lower-case path → the index of the first --set giving it
	for i, o := range out {
		l := strings.ToLower(o.Path)
		if j, ok := first[l]; ok {
			return nil, fmt.Errorf("--set %q: key %q given twice (first as --set %q): give it once", clipValue(ss[i]), clipValue(o.Path), clipValue(ss[j]))
		}
		first[l] = i
	}
	return out, nil
}

// ApplyOverrides applies to c the overrides whose path starts with prefix
// followed by a dot (case-insensitive; e.g. prefix "machine" takes
// machine.core.buffers.L1 and ignores program.tiling.bm). An empty prefix
// takes every override. Each remaining path is resolved against the type of
// target (a struct or pointer to one, using mapstructure tags,
// case-insensitively) and its value is converted by the field's type: unit
// types with units, integers, floats, booleans, strings; slices, maps and
// interface fields take YAML (e.g. "[1, 2]"). Unknown paths and bad values
// are errors naming the override and the key.
func ApplyOverrides(c *Config, target any, prefix string, overrides []Override) error {
	t := reflect.TypeOf(target)
	for _, o := range overrides {
		rest := o.Path
		if prefix != "" {
			p := prefix + "."
			if len(rest) <= len(p) || !strings.EqualFold(rest[:len(p)], p) {
				continue
			}
			rest = rest[len(p):]
		}
		ft, lower, err := resolvePathIn(c, t, rest, o.Path)
		if err != nil {
			if h := c.hiddenAt(rest); h != "" {
				// (A section of the type the file's kind does not take:
				// its keys, valid paths, get the kind's own refusal.)
				err = fmt.Errorf("unknown key %q: programs of this kind have no %s", clipValue(o.Path), h)
			}
			return &UnknownOverrideError{Override: o, Err: err}
		}
		val, err := ConvertValue(ft, o.Value)
		if err != nil {
			// The key as the file names it, as the refusals of a value
			// against the key's constraints do ("--set machine.cores=0:
			// key "cores": must be ≥ 1"): "--set machine.cores=1.5" named
			// machine.cores. (A program's refusals name its key after the
			// file instead — "p.yaml: key "m": … (set with --set
			// program.m=0)" —: there the path stays.)
			key := clipValue(o.Path)
			if !strings.EqualFold(prefix, "program") {
				_, k := c.where(lower)
				key = clipValue(k)
			}
			return fmt.Errorf("--set %s: key %q: %v", o, key, err)
		}
		c.overridden[lower] = o.String()
		if sec, ok := c.sectionOf(lower); ok {
			c.setInSection(sec, lower, val, o.String())
			continue
		}
		c.v.Set(lower, val)
	}
	return nil
}

// sectionOf returns the section (SetSections) the lower-case path lies at
// or in.
func (c *Config) sectionOf(lower string) (string, bool) {
	top, _, _ := strings.Cut(lower, ".")
	_, ok := c.sections[top]
	return top, ok
}

// setInSection records an override of section sec: the section's whole
// value, or one of its keys.
func (c *Config) setInSection(sec, lower string, val any, by string) {
	if c.sectionBase == nil {
		c.sectionBase, c.sectionKeys = map[string]any{}, map[string][]sectionKey{}
	}
	if _, ok := c.sectionBase[sec]; !ok {
		c.sectionBase[sec] = c.v.Get(sec) // the file's
	}
	if lower == sec {
		c.sectionBase[sec] = val
	} else {
		c.sectionKeys[sec] = append(c.sectionKeys[sec], sectionKey{strings.Split(strings.TrimPrefix(lower, sec+"."), "."), val, by})
	}
	if v, err := c.sectionValue(sec); err == nil { // (else refused when decoded: a later whole value may give the list)
		c.v.Set(sec, v)
	}
}

// sectionValue is the value of section sec as its overrides set it: its
// base with its keys set in it, a name there becoming {name: NAME} — or,
// where a key sets an entry of a list (pieces[1].scale), the whole value
// the name stands for (SetSectionPresets; a mapping's name: that value
// with the mapping's keys over it), the entry's key set in a copy.
func (c *Config) sectionValue(sec string) (any, error) {
	v := c.sectionBase[sec]
	keys := c.sectionKeys[sec]
	if len(keys) == 0 {
		return v, nil
	}
	m := map[string]any{}
	switch b := v.(type) {
	case string:
		m["name"] = b
		if expand := c.sectionPresets[sec]; expand != nil && slices.ContainsFunc(keys, sectionKey.indexed) {
			if whole, ok := expand(b); ok {
				m = lowerKeys(whole)
			}
		}
	case map[string]any:
		m = lowerKeys(b)
		// A preset named in a mapping ({name: ootomo, split: fused}) is
		// the preset with the mapping's keys over it: a key setting an
		// entry of a list sets it in the preset's list where the mapping
		// gives none (it said "scheme.pieces has 0 entries").
		if name, ok := m["name"].(string); ok && slices.ContainsFunc(keys, sectionKey.indexed) {
			if expand := c.sectionPresets[sec]; expand != nil {
				if whole, ok := expand(name); ok {
					over := m
					m = lowerKeys(whole)
					maps.Copy(m, over)
				}
			}
		}
	}
	// A key inside a whole entry or list given too (pieces[1]={format:
	// bf16} with pieces[1].scale=5, in either order) is set in it, as a
	// key in a whole section is: the enclosing value first — keys by depth,
	// in their order at one depth (where none holds another).
	keys = slices.Clone(keys)
	slices.SortStableFunc(keys, func(a, b sectionKey) int { return len(a.path) - len(b.path) })
	for _, k := range keys {
		at := m
		for i, p := range k.path[:len(k.path)-1] {
			name, idx, indexed := cutIndex(p)
			if !indexed {
				next, ok := at[p].(map[string]any)
				if !ok {
					next = map[string]any{}
					at[p] = next
				}
				at = next
				continue
			}
			list, _ := at[name].([]any)
			if idx >= len(list) {
				return nil, k.noEntry(sec, i, v, list)
			}
			list = slices.Clone(list) // (the base's lists stay as they are)
			at[name] = list
			entry, ok := list[idx].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("--set %s: key %q: entry %d is not a mapping of keys", k.by, strings.Join(append([]string{sec}, k.path[:i+1]...), "."), idx)
			}
			entry = lowerKeys(entry)
			list[idx] = entry
			at = entry
		}
		last := k.path[len(k.path)-1]
		name, idx, indexed := cutIndex(last)
		if !indexed {
			at[last] = k.val
			continue
		}
		// An entry of a list of values (groups[0].products[1]).
		list, _ := at[name].([]any)
		if idx >= len(list) {
			return nil, k.noEntry(sec, len(k.path)-1, v, list)
		}
		list = slices.Clone(list)
		list[idx] = k.val
		at[name] = list
	}
	return m, nil
}

// noEntry is the refusal of key k of section sec (whose value base was
// given) where its path's segment i indexes past the end of list.
func (k sectionKey) noEntry(sec string, i int, base any, list []any) error {
	name, idx, _ := cutIndex(k.path[i])
	of := strings.Join(append([]string{sec}, k.path[:i]...), ".") + "." + name
	has := fmt.Sprintf("%d entries", len(list))
	if _, isName := base.(string); isName && list == nil {
		has = fmt.Sprintf("none: %s names no value whose lists are known", base)
	}
	return fmt.Errorf("--set %s: key %q: no entry %d to set (%s has %s); give %s whole", k.by, of+fmt.Sprintf("[%d]", idx), idx, of, has, of)
}

// indexed reports whether the key sets an entry of a list.
func (k sectionKey) indexed() bool {
	return slices.ContainsFunc(k.path, func(p string) bool { _, _, ok := cutIndex(p); return ok })
}

// cutIndex splits a path segment "name[i]" (i a decimal index) into name
// and i.
func cutIndex(p string) (name string, i int, ok bool) {
	name, rest, found := strings.Cut(p, "[")
	digits, closed := strings.CutSuffix(rest, "]")
	if !found || !closed || name == "" || digits == "" || len(digits) > 6 || strings.Trim(digits, "0123456789") != "" {
		return p, 0, false
	}
	i, _ = strconv.Atoi(digits)
	return name, i, true
}

// lowerKeys copies a decoded YAML mapping with its keys in lower case
// (keys are case-insensitive: an override's Name is the key name), its
// mappings too.
func lowerKeys(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = lowerKeys(sub)
		}
		out[strings.ToLower(k)] = v
	}
	return out
}

// UnknownOverrideError is ApplyOverrides' error for an override whose path
// addresses no value of the machine (an unknown key, a section): a caller
// that knows other places the key could belong to says so.
type UnknownOverrideError struct {
	Override Override
	Err      error
}

func (e *UnknownOverrideError) Error() string { return fmt.Sprintf("--set %s: %v", e.Override, e.Err) }

// Unwrap returns the underlying error.
func (e *UnknownOverrideError) Unwrap() error { return e.Err }

// ResolvePath finds the field addressed by a dotted path (e.g.
// "core.buffers.L1", any case) in struct type t, following mapstructure
// tags, squashed embedded structs and map keys. It returns the field's type
// and the lower-case path viper uses. The path must end at a value, not a
// section.
func ResolvePath(t reflect.Type, path string) (reflect.Type, string, error) {
	return resolvePathIn(nil, t, path, path)
}

// resolvePathIn is ResolvePath naming the key as display (the full path the
// user typed, prefix included) in messages, which list c's visible keys
// (c may be nil).
func resolvePathIn(c *Config, t reflect.Type, path, display string) (reflect.Type, string, error) {
	parts := strings.Split(path, ".")
	var lower []string
	for i, p := range parts {
		t = deref(t)
		here := strings.Join(parts[:i], ".")
		if st, ok := c.sectionAt(strings.Join(lower, ".")); ok && t.Kind() == reflect.Interface {
			t = st // a name or a section: its keys
		}
		switch t.Kind() {
		case reflect.Struct:
			if name, idx, indexed := cutIndex(p); indexed {
				// An entry of a list: inside a section, whose value
				// ApplyOverrides assembles (sectionValue); viper sets no
				// list entries.
				f, ok := field(t, name)
				if !ok {
					return nil, "", unknownKey(display, here, name, c.visible(here, fieldNames(t)))
				}
				inSection := false
				if c != nil {
					_, inSection = c.sectionOf(strings.Join(lower, "."))
				}
				if d := deref(f); d.Kind() != reflect.Slice {
					return nil, "", fmt.Errorf("key %q: %s is not a list", display, join(here, name))
				} else if len(lower) == 0 || !inSection {
					return nil, "", fmt.Errorf("key %q: an entry of a list: give %s whole (--set with a YAML list)", display, join(here, name))
				} else {
					t = d.Elem()
				}
				lower = append(lower, strings.ToLower(name)+fmt.Sprintf("[%d]", idx))
				continue
			}
			f, ok := field(t, p)
			if name, _, bracket := strings.Cut(p, "["); !ok && bracket {
				if lf, isField := field(t, name); isField && deref(lf).Kind() == reflect.Slice {
					// (pieces[-1], pieces[x], an index past cutIndex's six
					// digits; pieces[1.0], split at its dot: shown whole)
					entry := p
					if !strings.Contains(p, "]") {
						rest := strings.Join(parts[i:], ".")
						if end := strings.Index(rest, "]"); end >= 0 {
							entry = rest[:end+1]
						}
					}
					return nil, "", fmt.Errorf("key %q: %s is not an entry of %s: an index is a whole number from 0 (the first entry) to 999999",
						display, clipValue(entry), join(here, name))
				}
			}
			if !ok {
				return nil, "", unknownKey(display, here, p, c.visible(here, fieldNames(t)))
			}
			t = f
		case reflect.Map:
			if t.Key().Kind() != reflect.String {
				return nil, "", fmt.Errorf("key %q: cannot address entries of %q", display, here)
			}
			t = t.Elem()
		default:
			return nil, "", fmt.Errorf("unknown key %q: %q is a value, it has no keys", display, here)
		}
		lower = append(lower, strings.ToLower(p))
	}
	_, _, entry := cutIndex(parts[len(parts)-1]) // (a list entry is given whole as YAML: {format: bf16})
	if d := deref(t); d.Kind() == reflect.Struct && !isUnitOrText(d) && !entry {
		return nil, "", fmt.Errorf("key %q is a section, set one of its keys: %s", display, strings.Join(fieldNames(d), ", "))
	}
	return t, strings.Join(lower, "."), nil
}

// sectionAt returns the section type at the lower-case path (SetSections;
// c may be nil).
func (c *Config) sectionAt(lower string) (reflect.Type, bool) {
	if c == nil {
		return nil, false
	}
	t, ok := c.sections[lower]
	return t, ok
}

func unknownKey(full, parent, name string, known []string) error {
	return errors.New("unknown key " + (&unknownKeyError{full: full, parent: parent, name: name, known: known}).detail(true))
}

// unknownKeyError is one key of a file that names no field: full is its
// path as written (down to a first leaf), parent the section it sits in,
// name the unknown part, known the keys the section has.
type unknownKeyError struct {
	source             string
	line               int
	full, parent, name string
	known              []string
}

func (e *unknownKeyError) Error() string {
	return fmt.Sprintf("%s:%d: unknown key %s", e.source, e.line, e.detail(true))
}

// detail is the key and why it is unknown, with a "did you mean" hint or,
// when withKnown, the section's keys.
func (e *unknownKeyError) detail(withKnown bool) string {
	where := "the top level"
	if e.parent != "" {
		where = fmt.Sprintf("%q", e.parent)
	}
	msg := fmt.Sprintf("%q: %s has no key %q", clipValue(e.full), clipValue(where), clipValue(e.name))
	if s := badinput.Suggest(e.name, e.known); s != "" {
		return fmt.Sprintf("%s (did you mean %q?)", msg, s)
	}
	if len(e.known) == 0 || !withKnown { // a section the file's kind never takes (Config.Hide)
		return msg
	}
	return fmt.Sprintf("%s (it has: %s)", msg, strings.Join(e.known, ", "))
}

// unknownKeysError is several unknown keys of one file, reported on one
// line: each key with its line and hint, a section's keys listed once.
type unknownKeysError struct {
	source string
	keys   []*unknownKeyError
}

// maxUnknownShown bounds how many unknown keys one message names, and
// maxUnknownMsg its length (a hostile file can have thousands of keys).
const (
	maxUnknownShown = 8
	maxUnknownMsg   = 1500
)

func (e *unknownKeysError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d unknown keys: ", e.source, len(e.keys))
	listed := map[string]bool{} // sections whose keys were listed
	for i, k := range e.keys {
		if i == maxUnknownShown {
			fmt.Fprintf(&b, "; and %d more", len(e.keys)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "line %d: %s", k.line, k.detail(!listed[k.parent]))
		listed[k.parent] = listed[k.parent] || badinput.Suggest(k.name, k.known) == ""
	}
	return badinput.Clip(b.String(), maxUnknownMsg)
}

// joinUnknown replaces the unknown keys among errs, when there are
// several, by one unknownKeysError in the place of the first, so a file
// with many misspelt keys is refused in one line.
func joinUnknown(source string, errs []error) []error {
	var keys []*unknownKeyError
	for _, e := range errs {
		if u, ok := e.(*unknownKeyError); ok {
			keys = append(keys, u)
		}
	}
	if len(keys) < 2 {
		return errs
	}
	out := make([]error, 0, len(errs)-len(keys)+1)
	for _, e := range errs {
		if _, ok := e.(*unknownKeyError); !ok {
			out = append(out, e)
		} else if e == error(keys[0]) {
			out = append(out, &unknownKeysError{source: source, keys: keys})
		}
	}
	return out
}

// unknownKeys counts the unknown keys err reports.
func unknownKeys(err error) int {
	var many *unknownKeysError
	if errors.As(err, &many) {
		return len(many.keys)
	}
	var one *unknownKeyError
	if errors.As(err, &one) {
		return 1
	}
	return 0
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

func isUnitOrText(t reflect.Type) bool {
	return t == sizeType || t == frequencyType || t == bandwidthType ||
		reflect.PointerTo(t).Implements(textUnmarshalerType)
}

// tagName returns the key of a struct field ("" for skipped fields) and
// whether it is squashed into its parent.
func tagName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("mapstructure")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "-" {
		return "", false
	}
	squash := f.Anonymous && deref(f.Type).Kind() == reflect.Struct &&
		slices.Contains(strings.Split(opts, ","), "squash")
	if name == "" {
		name = f.Name
	}
	return name, squash
}

// field finds the field keyed name (any case) in struct type t.
func field(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		key, squash := tagName(f)
		if squash {
			if ft, ok := field(deref(f.Type), name); ok {
				return ft, true
			}
			continue
		}
		if key != "" && strings.EqualFold(key, name) {
			return f.Type, true
		}
	}
	return nil, false
}

// fieldNames lists the keys of struct type t in declaration order.
func fieldNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		key, squash := tagName(f)
		if squash {
			out = append(out, fieldNames(deref(f.Type))...)
		} else if key != "" {
			out = append(out, key)
		}
	}
	return out
}

// ConvertValue converts the text of an override to a value of type t: unit
// types parse their units, numbers and booleans parse strictly, strings are
// taken as they are, TextUnmarshaler types are left to the decode hook, and
// anything else is read as YAML.
func ConvertValue(t reflect.Type, s string) (any, error) {
	t = deref(t)
	switch t {
	case sizeType:
		return ParseSize(s)
	case frequencyType:
		return ParseFrequency(s)
	case bandwidthType:
		return ParseBandwidth(s)
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return s, nil
	}
	switch t.Kind() {
	case reflect.String:
		return s, nil
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("want true or false, got %q", clipValue(s))
		}
		return b, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := parseInteger(s, t.Bits())
		if !ok {
			return nil, fmt.Errorf("want an integer, got %q", clipValue(s))
		}
		return i, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, ok := parseInteger(s, t.Bits())
		if !ok || i < 0 {
			return nil, fmt.Errorf("want a non-negative integer, got %q", clipValue(s))
		}
		return uint64(i), nil
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("want a number, got %q", clipValue(s))
		}
		return f, nil
	}
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("want YAML, got %q: %v", clipValue(s), err)
	}
	if err := keysOnce(v, ""); err != nil {
		return nil, err
	}
	return v, nil
}

// ParseInteger reads s as an integer key takes it from a file's YAML or a
// --set (parseInteger: 0x40, 0o100, 0b…, 1_000, a whole 1e3 or 64.0).
func ParseInteger(s string) (int64, bool) { return parseInteger(strings.TrimSpace(s), 64) }

// parseInteger parses an integer value of a --set as a file's YAML gives
// one to an integer key: decimal (a leading zero stays decimal: 032 is 32,
// where a file refuses it), 0x hexadecimal, 0o octal, 0b binary, digits
// grouped by underscores (1_000), or a number whose value is whole (1e3,
// 64.0), within bits (at most 63: a uint64 key's values above it are no
// machine's).
func parseInteger(s string, bits int) (int64, bool) {
	bits = min(bits, 64)
	if i, err := strconv.ParseInt(s, 10, bits); err == nil {
		return i, true
	}
	digits := strings.TrimLeft(s, "+-")
	prefixed := len(digits) > 2 && digits[0] == '0' && strings.ContainsRune("xXoObB", rune(digits[1]))
	if prefixed || strings.Contains(s, "_") && !strings.HasPrefix(digits, "0") {
		i, err := strconv.ParseInt(s, 0, bits) // (Go's literals: the prefixes, underscores between digits)
		return i, err == nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= math.Ldexp(1, bits-1) || strings.ContainsAny(s, "_xXpP") {
		return 0, false // (NaN and ±Inf fail the comparisons)
	}
	return int64(f), true
}

// DecodeStrict decodes c into out (a pointer to a struct) with the unit
// decode hooks and no weak typing. Every key in the file must name a field
// (any case) and have the right shape (mapping for sections, a value for
// values); violations are reported as "file:line: unknown key "a.b.c": …"
// with the user's spelling, or, for several, as one line "file: N unknown
// keys: line L: "a.b.c": …; …". Value errors name the file, line and key
// too. All problems found are returned, joined. Fields that take a name or
// a section (SetSections) are decoded as such.
func DecodeStrict(c *Config, out any) error {
	t := reflect.TypeOf(out)
	if t == nil || t.Kind() != reflect.Pointer {
		return errors.New("DecodeStrict: out must be a pointer")
	}
	var errs []error
	if c.doc != nil {
		c.check(c.doc, deref(t), "", 0, &errs)
	}
	if len(errs) > 0 {
		return errors.Join(joinUnknown(c.Source, errs)...)
	}
	err := c.v.UnmarshalExact(out, func(dc *mapstructure.DecoderConfig) {
		dc.DecodeHook = DecodeHook()
		dc.WeaklyTypedInput = false
		dc.ErrorUnused = true
	})
	if err != nil {
		return c.explain(err, "", nil)
	}
	return c.decodeSections(reflect.ValueOf(out).Elem())
}

// decodeSections decodes each section-or-name field of the struct v that
// holds a mapping (or a list) into its section's type (SetSections); an
// overridden one takes its override's value.
func (c *Config) decodeSections(v reflect.Value) error {
	if v.Kind() != reflect.Struct {
		return nil
	}
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		name, _ := tagName(sf)
		if name == "" && sf.Anonymous { // squashed
			if err := c.decodeSections(f); err != nil {
				return err
			}
			continue
		}
		st, ok := c.sections[strings.ToLower(name)]
		if !ok || f.Kind() != reflect.Interface {
			continue
		}
		if _, ok := c.sectionBase[strings.ToLower(name)]; ok { // overridden: not the file's merged with it
			set, err := c.sectionValue(strings.ToLower(name))
			if err != nil {
				return err
			}
			f.Set(reflect.ValueOf(&set).Elem())
		}
		if f.IsNil() {
			continue
		}
		switch raw := f.Interface(); raw.(type) {
		case map[string]any:
			sec := reflect.New(st)
			dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: sec.Interface(), ErrorUnused: true, DecodeHook: DecodeHook()})
			if err == nil {
				err = dec.Decode(raw)
			}
			if err != nil {
				return c.explain(err, name, st)
			}
			f.Set(sec.Elem())
		case []any:
			where, key := c.where(strings.ToLower(name))
			return fmt.Errorf("%s: key %q takes a name or a section of keys (%s), not a list", where, key, strings.Join(fieldNames(st), ", "))
		}
	}
	return nil
}

// check walks node n against type t, reporting unknown keys and shape
// mismatches.
func (c *Config) check(n *yaml.Node, t reflect.Type, written string, depth int, errs *[]error) {
	n, err := c.deref(n, depth)
	if err != nil {
		if !c.reported {
			*errs = append(*errs, err)
		}
		c.reported = c.reported || c.visits > maxVisits
		return
	}
	t = deref(t)
	if st, ok := c.sections[strings.ToLower(written)]; ok && t.Kind() == reflect.Interface && n.Kind == yaml.MappingNode {
		t = st // a section given where a name or a section goes
	}
	if isNull(n) || t.Kind() == reflect.Interface {
		return
	}
	if isUnitOrText(t) {
		if n.Kind != yaml.ScalarNode {
			*errs = append(*errs, fmt.Errorf("%s:%d: key %q wants a value, not a %s", c.Source, n.Line, written, kindName(n)))
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			*errs = append(*errs, fmt.Errorf("%s:%d: key %q is a section: it wants a mapping of keys (%s), not a %s",
				c.Source, n.Line, written, strings.Join(fieldNames(t), ", "), kindName(n)))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			w := join(written, k.Value)
			ft, ok := field(t, k.Value)
			if !ok {
				full := c.firstLeaf(v, w, depth+1)
				*errs = append(*errs, &unknownKeyError{source: c.Source, line: k.Line,
					full: full, parent: written, name: k.Value, known: c.visible(written, fieldNames(t))})
				continue
			}
			c.check(v, ft, w, depth+1, errs)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			*errs = append(*errs, fmt.Errorf("%s:%d: key %q wants a mapping, not a %s", c.Source, n.Line, written, kindName(n)))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			c.check(n.Content[i+1], t.Elem(), join(written, n.Content[i].Value), depth+1, errs)
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			*errs = append(*errs, fmt.Errorf("%s:%d: key %q wants a list, not a %s", c.Source, n.Line, written, kindName(n)))
			return
		}
		for i, e := range n.Content {
			c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", written, i), depth+1, errs)
		}
	default:
		if n.Kind != yaml.ScalarNode {
			*errs = append(*errs, fmt.Errorf("%s:%d: key %q wants a value, not a %s", c.Source, n.Line, written, kindName(n)))
			return
		}
		var f float64 // .nan, .inf, 1e999: no key takes one (--set refuses them too)
		if (t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64) && n.Decode(&f) == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			*errs = append(*errs, fmt.Errorf("%s:%d: key %q: want a finite number, got %s", c.Source, n.Line, written, n.Value))
		}
	}
}

// firstLeaf extends path w down the first keys of mapping n, so an unknown
// section is named by a full key path (core.bufers.L1).
func (c *Config) firstLeaf(n *yaml.Node, w string, depth int) string {
	for ; depth < maxDepth; depth++ {
		m, err := c.deref(n, depth)
		if err != nil || m.Kind != yaml.MappingNode || len(m.Content) < 2 {
			return w
		}
		w, n = join(w, m.Content[0].Value), m.Content[1]
	}
	return w
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	default:
		return "value"
	}
}

// explain rewrites mapstructure errors with file, line and the user's key
// spelling; prefix is the key of the section decoded and root its type
// ("" and nil for the file, whose unknown keys check reports).
func (c *Config) explain(err error, prefix string, root reflect.Type) error {
	var leaves []error
	var walk func(error)
	walk = func(e error) {
		if de, ok := e.(*mapstructure.DecodeError); ok {
			if _, ok := de.Unwrap().(interface{ Unwrap() []error }); ok {
				walk(de.Unwrap())
				return
			}
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var de *mapstructure.DecodeError
		if _, isDE := e.(*mapstructure.DecodeError); !isDE {
			if u := errors.Unwrap(e); u != nil && errors.As(u, &de) {
				walk(u) // mapstructure wraps its joined errors in a summary
				return
			}
		}
		leaves = append(leaves, e)
	}
	walk(err)
	out := make([]error, 0, len(leaves))
	digitsHinted := false
	for _, e := range leaves {
		var de *mapstructure.DecodeError
		if errors.As(e, &de) {
			name := de.Name()
			if name == "" { // the section itself
				name, prefix = prefix, ""
			}
			where, key := c.where(c.keyPath(join(prefix, name)))
			msg := de.Unwrap().Error()
			var ue *mapstructure.UnconvertibleTypeError
			if errors.As(de, &ue) {
				got := fmt.Sprint(ue.Value)
				if s, ok := ue.Value.(string); ok {
					got = strconv.Quote(s)
				}
				msg = fmt.Sprintf("want %s, got %s", typeWord(ue.Expected.Type()), got)
				if k := reflect.TypeOf(ue.Value); k != nil && ue.Expected.Type().Kind() == reflect.String && k.Kind() >= reflect.Int && k.Kind() <= reflect.Float64 && !digitsHinted {
					msg += ` (YAML reads unquoted digits as a number: quote them, e.g. "01")`
					digitsHinted = true // (once a message: a list of 16 unquoted products said it 16 times)
				}
			}
			// The shape refusals of values the strict walk did not see
			// (a section given by --set), in the walk's words (check).
			got := "value"
			switch _, t, _ := strings.Cut(msg, ", got "); {
			case strings.HasPrefix(t, "map"):
				got = "mapping"
			case strings.Contains(t, "slice"):
				got = "list"
			}
			var keys []string // the section's at this key (a section given by --set)
			if root != nil {
				if t, ok := typeAt(root, de.Name()); ok {
					keys = c.visible(key, fieldNames(t))
				}
			}
			section := ""
			if len(keys) > 0 {
				section = " (" + strings.Join(keys, ", ") + ")"
			}
			switch {
			case strings.HasPrefix(msg, "source data must be an array or slice"):
				out = append(out, fmt.Errorf("%s: key %q wants a list, not a %s", where, key, got))
			case strings.HasPrefix(msg, "expected a map or struct"):
				out = append(out, fmt.Errorf("%s: key %q is a section: it wants a mapping of keys%s, not a %s", where, key, section, got))
			case strings.HasPrefix(msg, "has invalid keys: ") && root != nil:
				var errs []string
				for u := range strings.SplitSeq(strings.TrimPrefix(msg, "has invalid keys: "), ", ") {
					errs = append(errs, unknownKey(join(key, u), key, u, keys).Error())
				}
				out = append(out, fmt.Errorf("%s: %s", where, strings.Join(errs, "; ")))
			default:
				out = append(out, fmt.Errorf("%s: key %q: %s", where, key, msg))
			}
			continue
		}
		out = append(out, fmt.Errorf("%s: %v", c.Source, e))
	}
	return errors.Join(out...)
}

// typeAt returns the struct type at a mapstructure field name (pieces[0])
// below the struct type t.
func typeAt(t reflect.Type, name string) (reflect.Type, bool) {
	t = deref(t)
	if name == "" {
		return t, t.Kind() == reflect.Struct
	}
	for p := range strings.SplitSeq(name, ".") {
		base, _, indexed := strings.Cut(p, "[")
		f, ok := field(t, base)
		if !ok {
			return nil, false
		}
		if t = deref(f); indexed && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			t = deref(t.Elem())
		}
	}
	return t, t.Kind() == reflect.Struct
}

// keyPath is the lower-case dotted path of a mapstructure field name:
// entries of maps, which it names a[b], become a.b when the file has that
// key (list elements, not indexed, keep their name).
func (c *Config) keyPath(name string) string {
	lower := strings.ToLower(name)
	dotted := strings.NewReplacer("[", ".", "]", "").Replace(lower)
	if _, ok := c.keys[dotted]; ok {
		return dotted
	}
	return lower
}

// typeWord names a type for users.
func typeWord(t reflect.Type) string {
	switch {
	case t == sizeType:
		return "a size (e.g. 512KiB)"
	case t == frequencyType:
		return "a frequency (e.g. 1GHz)"
	case t == bandwidthType:
		return "a bandwidth (e.g. 1.2TB/s)"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return t.String()
}

// Lines returns the line of every key the file writes, by its lower-case
// dotted path (list entries as "pieces[1]"): Line for each, the file's
// key positions without parsing its text again.
func (c *Config) Lines() map[string]int {
	lines := make(map[string]int, len(c.keys))
	for k, info := range c.keys {
		lines[k] = info.line
	}
	return lines
}
