package machines

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// YAML prints the machine's resolved values as a machine file (units in
// their nicest form, keys in file spelling). Keys set by one of overrides
// (paths "machine.…", any case) carry a trailing "# --set" comment. The
// output loads back to the same machine.
func (m *Machine) YAML(overrides []Override) []byte {
	set := map[string]bool{}
	for _, o := range overrides {
		if p, ok := CutPrefixFold(o.Path, "machine."); ok && p != "" {
			set[strings.ToLower(p)] = true
		}
	}
	var b strings.Builder
	writeYAML(&b, reflect.ValueOf(*m), "", 0, set)
	return []byte(b.String())
}

func writeYAML(b *strings.Builder, v reflect.Value, path string, indent int, set map[string]bool) {
	t := v.Type()
	for i := range t.NumField() {
		key, _ := tagName(t.Field(i))
		if key == "" {
			continue
		}
		fv := v.Field(i)
		for (fv.Kind() == reflect.Interface || fv.Kind() == reflect.Pointer) && !fv.IsNil() {
			fv = fv.Elem() // the kind's core section
		}
		p := join(path, strings.ToLower(key))
		pad := strings.Repeat("  ", indent)
		if emptyOptional(p, fv) {
			continue // an optional section or map the machine does not have (llc, power, host, core.tensor.sustained_clock)
		}
		if fv.Kind() == reflect.Struct {
			fmt.Fprintf(b, "%s%s:\n", pad, key)
			writeYAML(b, fv, p, indent+1, set)
			continue
		}
		if fv.Kind() == reflect.Map {
			writeMap(b, fv, key, p, indent, set)
			continue
		}
		fmt.Fprintf(b, "%s%s: %s", pad, key, YAMLValue(fv))
		if set[p] {
			b.WriteString("  # --set")
		}
		b.WriteString("\n")
	}
}

// emptyOptional reports whether fv, at lower-case dotted path, is an
// optional section or map (optionalKeys) that holds nothing: leaving it out
// reads back the same.
func emptyOptional(path string, fv reflect.Value) bool {
	if !slices.Contains(optionalKeys, path) {
		return false
	}
	switch fv.Kind() {
	case reflect.Map:
		return fv.Len() == 0
	case reflect.Struct:
		if pw, ok := fv.Interface().(Power); ok {
			return !pw.Given()
		}
		return fv.IsZero()
	}
	return false
}

// writeMap writes a map of scalars (e.g. power.path_pj_per_byte) with its
// keys sorted; an empty one as {}.
func writeMap(b *strings.Builder, v reflect.Value, key, path string, indent int, set map[string]bool) {
	pad := strings.Repeat("  ", indent)
	if v.Len() == 0 {
		fmt.Fprintf(b, "%s%s: {}\n", pad, key)
		return
	}
	fmt.Fprintf(b, "%s%s:\n", pad, key)
	keys := v.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		fmt.Fprintf(b, "%s  %s: %s", pad, k.String(), YAMLValue(v.MapIndex(k)))
		if set[join(path, strings.ToLower(k.String()))] {
			b.WriteString("  # --set")
		}
		b.WriteString("\n")
	}
}

var plainString = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]*$`)

// YAMLValue renders one value of a machine or description as YAML: units
// by their String method, numbers exactly, strings by YAMLString.
func YAMLValue(v reflect.Value) string {
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	switch v.Kind() {
	case reflect.String:
		return YAMLString(v.String())
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

// YAMLString writes s as a YAML scalar that reads back as s: plain when it
// is a simple word YAML takes as a string, else double-quoted with YAML's
// escapes for '"', '\' and every rune that is not printable (s is UTF-8:
// the loaders refuse strings that are not): the machine view's and the
// cluster view's strings.
func YAMLString(s string) string {
	if plainString.MatchString(s) {
		switch strings.ToLower(s) {
		case "true", "false", "yes", "no", "on", "off", "null", "y", "n":
		default:
			return s
		}
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == ' ' || (r < unicode.MaxRune && unicode.IsPrint(r) && r != unicode.ReplacementChar):
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
