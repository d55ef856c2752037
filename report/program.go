package report

import (
	"encoding/json"
	"fmt"
	"github.com/davinci-sim/davinci-sim/accuracy"
	"reflect"
	"strings"
	"unicode"
)

// Program is the program section of report.json (key "program"): the
// program's kind and its resolved parameters, as each program kind records
// them (numbers, strings, booleans, maps and the parameter structs of
// package programs). MarshalJSON writes every struct under the keys of its
// program-file form — the mapstructure tag, else the json tag, else the
// field name in snake_case — so report.json uses the names a user writes
// in a program file and with --set program.<path> (inputs.offset_exponent,
// tiling.bm), never Go field names (inputs.OffsetExponent, tiling.BM).
type Program map[string]any

// MarshalJSON writes p with its structs as objects keyed by their
// program-file names (see Program).
func (p Program) MarshalJSON() ([]byte, error) {
	if p == nil {
		return []byte("null"), nil
	}
	return json.Marshal(plainValue(reflect.ValueOf(map[string]any(p))))
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// plainValue converts v to maps, slices and scalars, structs keyed by
// fieldKey.
func plainValue(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type().Implements(marshalerType) && v.Kind() != reflect.Map {
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return plainValue(v.Elem())
	case reflect.Struct:
		out := map[string]any{}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			key, ok := fieldKey(f)
			if !ok {
				continue
			}
			out[key] = plainValue(v.Field(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			out[fmt.Sprint(it.Key().Interface())] = plainValue(it.Value())
		}
		return out
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = plainValue(v.Index(i))
		}
		return out
	case reflect.Float32, reflect.Float64:
		return accuracy.JSONFloat(v.Float())
	}
	return v.Interface()
}

// fieldKey returns the report key of a struct field: its mapstructure tag
// (the program-file key), else its json tag, else its name in snake_case;
// false for fields tagged "-".
func fieldKey(f reflect.StructField) (string, bool) {
	for _, tag := range []string{"mapstructure", "json"} {
		name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
		if name == "-" {
			return "", false
		}
		if name != "" {
			return name, true
		}
	}
	return snakeCase(f.Name), true
}

// snakeCase turns a Go field name into a report key: OffsetExponent →
// offset_exponent, BM → bm, NFused → n_fused.
func snakeCase(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
