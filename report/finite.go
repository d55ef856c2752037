package report

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/davinci-sim/davinci-sim/accuracy"
)

// marshalFinite returns the JSON encoding of v as encoding/json writes it
// (struct fields by their json tags, omitempty and omitzero, maps with
// their keys sorted, types with a MarshalJSON or MarshalText of their own
// written by it), except that every float — a field, a map value, a list
// element, at any depth — goes through accuracy.JSONFloat: ±Inf and NaN,
// which JSON has no numbers for, are written as the strings "+Inf", "-Inf"
// and "NaN" where encoding/json would fail the whole report. Finite floats
// are written exactly as encoding/json writes them (float32 as float32).
func marshalFinite(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeFinite(&buf, reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()

// encodeFinite writes v to buf (marshalFinite).
func encodeFinite(buf *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		buf.WriteString("null")
		return nil
	}
	t := v.Type()
	if ownEncoding(t) || v.CanAddr() && ownEncoding(reflect.PointerTo(t)) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		x := v.Interface()
		if v.CanAddr() && !ownEncoding(t) {
			x = v.Addr().Interface()
		}
		return plainJSON(buf, x)
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			b, err := accuracy.JSONFloat(f).MarshalJSON()
			buf.Write(b)
			return err
		}
		return plainJSON(buf, v.Interface())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return encodeFinite(buf, v.Elem())
	case reflect.Struct:
		buf.WriteByte('{')
		first := true
		if err := encodeFields(buf, v, &first); err != nil {
			return err
		}
		buf.WriteByte('}')
		return nil
	case reflect.Map:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return encodeMap(buf, v)
	case reflect.Slice:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 { // base64, as encoding/json
			return plainJSON(buf, v.Interface())
		}
		fallthrough
	case reflect.Array:
		buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeFinite(buf, v.Index(i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	return plainJSON(buf, v.Interface())
}

// ownEncoding reports whether values of t write themselves (json.Marshaler,
// encoding.TextMarshaler).
func ownEncoding(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType)
}

// plainJSON writes x as encoding/json does.
func plainJSON(buf *bytes.Buffer, x any) error {
	b, err := json.Marshal(x)
	buf.Write(b)
	return err
}

// encodeFields writes the fields of struct v, each after a comma unless
// *first, as encoding/json names and omits them; the fields of an untagged
// embedded struct as v's own.
func encodeFields(buf *bytes.Buffer, v reflect.Value, first *bool) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue
					}
					fv = fv.Elem()
				}
				if err := encodeFields(buf, fv, first); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		o := strings.Split(opts, ",")
		if slices.Contains(o, "omitempty") && emptyValue(fv) || slices.Contains(o, "omitzero") && zeroValue(fv) {
			continue
		}
		if slices.Contains(o, "string") {
			return fmt.Errorf("report: field %s.%s: the json option string is not supported", t.Name(), f.Name)
		}
		if !*first {
			buf.WriteByte(',')
		}
		*first = false
		if err := plainJSON(buf, name); err != nil {
			return err
		}
		buf.WriteByte(':')
		if err := encodeFinite(buf, fv); err != nil {
			return err
		}
	}
	return nil
}

// encodeMap writes map v with its keys sorted, as encoding/json does.
func encodeMap(buf *bytes.Buffer, v reflect.Value) error {
	type entry struct {
		key string
		v   reflect.Value
	}
	var entries []entry
	it := v.MapRange()
	for it.Next() {
		k := it.Key()
		var ks string
		switch {
		case k.Kind() == reflect.String:
			ks = k.String()
		case k.Type().Implements(textMarshalerType):
			b, err := k.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				return err
			}
			ks = string(b)
		case k.CanInt():
			ks = strconv.FormatInt(k.Int(), 10)
		case k.CanUint():
			ks = strconv.FormatUint(k.Uint(), 10)
		default:
			return fmt.Errorf("report: unsupported map key type %v", k.Type())
		}
		entries = append(entries, entry{ks, it.Value()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	buf.WriteByte('{')
	for i, e := range entries {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := plainJSON(buf, e.key); err != nil {
			return err
		}
		buf.WriteByte(':')
		if err := encodeFinite(buf, e.v); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// emptyValue is encoding/json's omitempty test.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// zeroValue is encoding/json's omitzero test: the value's IsZero method
// where it has one, else the zero value of its type.
func zeroValue(v reflect.Value) bool {
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	return v.IsZero()
}
