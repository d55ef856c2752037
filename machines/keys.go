package machines

import (
	"fmt"
	"reflect"
)

// Key is one value key of a file format: its dotted path and the kind of
// value it takes.
type Key struct {
	Path string
	Type string // integer, number, string, boolean, size, frequency, bandwidth, list of …, map
}

// Keys lists the value keys of t, a struct decoded by the strict loader
// (mapstructure tags), in declaration order, sections flattened into
// dotted paths.
func Keys(t reflect.Type) []Key {
	var out []Key
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for _, name := range fieldNames(t) {
			ft, _ := field(t, name)
			p := join(prefix, name)
			d := deref(ft)
			if d.Kind() == reflect.Struct && !isUnitOrText(d) {
				walk(d, p)
				continue
			}
			if d.Kind() == reflect.Slice {
				if e := deref(d.Elem()); e.Kind() == reflect.Struct && !isUnitOrText(e) {
					walk(e, p+"[]") // a list of sections: the keys of each entry
					continue
				}
			}
			out = append(out, Key{Path: p, Type: typeName(ft)})
		}
	}
	walk(deref(t), "")
	return out
}

// KindKeys lists the keys of a machine file of kind kind.
func KindKeys(kind string) ([]Key, error) {
	k, ok := kinds[kind]
	if !ok {
		return nil, fmt.Errorf("unknown machine kind %+q", clipValue(kind))
	}
	return Keys(k.file), nil
}

// typeName is the kind of value type t takes in a file.
func typeName(t reflect.Type) string {
	t = deref(t)
	switch t {
	case sizeType:
		return "size"
	case frequencyType:
		return "frequency"
	case bandwidthType:
		return "bandwidth"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "map of " + typeName(t.Elem())
	case reflect.Struct:
		return "section"
	case reflect.Interface:
		return "name or section"
	}
	return t.Kind().String()
}
