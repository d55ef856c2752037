package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// fill sets every exported field of the value v points to, at any depth,
// to a distinct non-zero value (floats not whole numbers, float32 among
// them; one entry per map, two per list, a float behind each interface).
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString(fmt.Sprintf("k%d_%d", *n, i))
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), n)
		}
		v.Set(s)
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"x": float64(*n) / 3, "s": "<&>", "l": []any{1.5e300, int64(*n)}}))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) / 7)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d <&>", *n))
	case reflect.Bool:
		v.SetBool(true)
	}
}

// With every value finite, marshalFinite writes a report byte for byte as
// encoding/json does: every key and section filled (no float is written in
// another form, no field another way), and the empty report (omitempty).
func TestMarshalFiniteAsEncodingJSON(t *testing.T) {
	var full Report
	n := 0
	fill(reflect.ValueOf(&full), &n)
	full.Failure.Kind = FailureCheck
	var lp float32 = 0.1 // float32 written as float32 (0.1, not 0.10000000149011612)
	full.HPLMxP.LPanelScale = &lp
	for name, r := range map[string]*Report{"filled": &full, "empty": {}} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalFinite(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s report: marshalFinite differs from encoding/json:\n got %s\nwant %s", name, got, want)
		}
	}
}
