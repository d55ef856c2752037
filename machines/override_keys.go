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
