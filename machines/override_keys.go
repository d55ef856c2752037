package machines

import (
	"fmt"
	"sort"
	"strings"
)

// keysOnce reports a mapping in v (an override's value read as YAML) that
// has a key twice in two spellings: keys are case-insensitive, as in the
// files (Config.index refuses them there), and a value holding both took
// one of the two at random — `--set machine.core.tensor.sustained_clock=
// {fp16: 1GHz, FP16: 1.2GHz}` ran at either clock. at is v's path inside
// the value ("" at its top; "pieces[0]" and so on below).
func keysOnce(v any, at string) error {
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		return mapKeysOnce(keys, func(k string) any { return x[k] }, join)
	case map[any]any:
		var keys []string
		for k := range x {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
		return mapKeysOnce(keys, func(k string) any { return x[k] }, join)
	case []any:
		for i, e := range x {
			if err := keysOnce(e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapKeysOnce is keysOnce on a mapping's string keys (in a fixed order,
// so that the key named is the same every time) and their values.
func mapKeysOnce(keys []string, val func(string) any, join func(string) string) error {
	sort.Strings(keys)
	seen := map[string]string{}
	for _, k := range keys {
		if prev, ok := seen[strings.ToLower(k)]; ok {
			return fmt.Errorf("%q given twice (as %q and %q; keys are case-insensitive)", join(strings.ToLower(k)), prev, k)
		}
		seen[strings.ToLower(k)] = k
	}
	for _, k := range keys {
		if err := keysOnce(val(k), join(k)); err != nil {
			return err
		}
	}
	return nil
}

// CutPrefixFold is strings.CutPrefix with the prefix matched in any case:
// "Machine.core.L1" has the prefix "machine." (paths of --set are
// case-insensitive).
func CutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// Covers reports whether an override of the dotted path set (any case)
// sets the key at path or part of it: the key itself, a section or list
// holding it ("core.tensor" of "core.tensor.shapes.fp16", "pieces" of
// "pieces[0].format"), or a key under it (path a section, one of whose
// keys the override set).
func Covers(set, path string) bool {
	set, path = strings.ToLower(set), strings.ToLower(path)
	return set == path || within(path, set) || within(set, path)
}

// within reports whether the lower-case path is a key of the section or
// an entry of the list at the lower-case path holder.
func within(path, holder string) bool {
	return strings.HasPrefix(path, holder+".") || strings.HasPrefix(path, holder+"[")
}

// OverridesOf returns the overrides among os that set the key at path, as
// --set addresses it ("machine.core.tmem"; any case), or part of it
// (Covers), in the order given: the last one's value stands.
func OverridesOf(os []Override, path string) []Override {
	var out []Override
	for _, o := range os {
		if Covers(o.Path, path) {
			out = append(out, o)
		}
	}
	return out
}
