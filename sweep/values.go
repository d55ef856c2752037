package sweep

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/report"
)

// A record's values are checked for what a sweep writes (checkValues), so
// that --resume, merge and sweep plot refuse a hand-edited or corrupt
// results.jsonl rather than carry its values into results.csv and the
// plots: a metric is what runPoint looks up in the point's report.json —
// whose numbers are finite, a float that is not being written as the
// string "+Inf", "-Inf" or "NaN" (docs/report.md) — re-encoded as JSON.

// nonFinite are the strings report.json writes for a float that is not
// finite (accuracy.JSONFloat).
var nonFinite = []string{"+Inf", "-Inf", "NaN"}

// checkValues checks that rec's status, error and metric values are ones
// runPoint writes: a failed point's metrics null and its error given, an
// ok point's error empty; numbers finite; in the place of a report float a
// number or one of nonFinite, of an integer an integer; null anywhere.
// The error names the key.
func checkValues(rec *Record) error {
	switch {
	case rec.Status == StatusOK && rec.Error != "":
		return fmt.Errorf("key \"error\": a point with status %s has none (%q)", StatusOK, clip(rec.Error))
	case rec.Status != StatusOK && strings.TrimSpace(rec.Error) == "":
		return fmt.Errorf("key \"error\": missing: a point with status %s records why", rec.Status)
	case strings.ContainsAny(rec.Error, "\r\n"):
		return fmt.Errorf("key \"error\": more than one line: a point's error is one line")
	}
	for _, m := range slices.Sorted(maps.Keys(rec.Metrics)) { // (one message whatever the map's order)
		if err := checkMetricValue(rec, m, rec.Metrics[m]); err != nil {
			return err
		}
	}
	return nil
}

// checkMetricValue checks the value raw of rec's metric m (checkValues).
func checkMetricValue(rec *Record, m string, raw json.RawMessage) error {
	key := func() string { return fmt.Sprintf("key %q", "metrics."+m) }
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	if rec.Status == StatusFailed {
		return fmt.Errorf("%s: %s: a failed point records null (it has no report)", key(), clip(string(t)))
	}
	var v any
	if c := t[0]; (c == '-' || '0' <= c && c <= '9') && json.Valid(t) {
		// A number, as most metrics are: what the decoding below gives
		// it, without a decoder (a third of a large study's reading).
		v = json.Number(t)
	} else {
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: %v", key(), err)
		}
	}
	var msg string
	if strings.Contains(m, "*") {
		msg = checkAt(v, reportType(), strings.Split(m, "."))
	} else {
		msg = checkKind(v, metricType(m))
	}
	if msg != "" {
		return fmt.Errorf("%s: %s", key(), msg)
	}
	return nil
}

// reportType is the type report.json is written from.
func reportType() reflect.Type { return reflect.TypeFor[report.Report]() }

// checkAt checks v, the value that Lookup finds at path parts below a
// value of Go type t (nil: not known — the program section's free keys, a
// type that writes itself), and returns what is wrong with it ("" if
// nothing). A part "*" stands for a list's elements: v holds a list of
// what each element gave (null where it had none).
func checkAt(v any, t reflect.Type, parts []string) string {
	for i, part := range parts {
		if part == "*" {
			if v == nil {
				return ""
			}
			list, ok := v.([]any)
			if !ok {
				return fmt.Sprintf("%s: a path with * records a list", clip(compact(v)))
			}
			var elem reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				elem = t.Elem()
			}
			for _, el := range list {
				if msg := checkAt(el, elem, parts[i+1:]); msg != "" {
					return msg
				}
			}
			return ""
		}
		t = childType(t, part)
	}
	return checkLeaf(v, t)
}

// childType returns the type of key part of a value of type t (nil where
// not known).
func childType(t reflect.Type, part string) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || writesItself(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		return t.Elem()
	case reflect.Struct:
		return report.KeyType(t, part)
	}
	return nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// writesItself reports whether values of t are written by a method of
// their own, in a form their type does not tell (floats excepted: a
// float's own writer, accuracy.JSONFloat, writes nonFinite as the rest of
// the report).
func writesItself(t reflect.Type) bool {
	if k := t.Kind(); k == reflect.Float32 || k == reflect.Float64 {
		return false
	}
	p := reflect.PointerTo(t)
	return t.Implements(jsonMarshaler) || p.Implements(jsonMarshaler) || t.Implements(textMarshaler) || p.Implements(textMarshaler)
}

// metricTypes caches metricType's answers (a study's metrics, checked in
// every record: the reflection of checkAt's walk was a tenth of a large
// study's reading).
var metricTypes sync.Map // metric path → reflect.Type (nil: not known)

// metricType returns the type checkKind checks a value of metric m (a
// path without "*") against: the report type's at m (checkAt's walk and
// leafType), cached.
func metricType(m string) reflect.Type {
	if v, ok := metricTypes.Load(m); ok {
		t, _ := v.(reflect.Type) // (nil stored as nil)
		return t
	}
	t := reportType()
	for part := range strings.SplitSeq(m, ".") {
		t = childType(t, part)
	}
	t = leafType(t)
	metricTypes.Store(m, t)
	return t
}

// checkLeaf checks a metric's value v against its type t (checkAt).
func checkLeaf(v any, t reflect.Type) string {
	if v == nil {
		return ""
	}
	return checkKind(v, leafType(t))
}

// leafType returns the type a value of type t is checked as: t without its
// pointers, nil (not known) where it writes itself.
func leafType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && writesItself(t) {
		return nil
	}
	return t
}

// checkKind checks v against t, a type leafType gave (checkLeaf).
func checkKind(v any, t reflect.Type) string {
	if v == nil {
		return ""
	}
	kind := reflect.Invalid
	if t != nil {
		kind = t.Kind()
	}
	switch kind {
	case reflect.Float32, reflect.Float64:
		switch x := v.(type) {
		case json.Number:
			return finite(x)
		case string:
			for _, s := range nonFinite {
				if x == s {
					return ""
				}
			}
			return fmt.Sprintf("%q: a number, or \"+Inf\", \"-Inf\" or \"NaN\" (as report.json writes a value that is not finite)", clip(x))
		}
		return fmt.Sprintf("%s: a number, or \"+Inf\", \"-Inf\" or \"NaN\"", clip(compact(v)))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if x, ok := v.(json.Number); ok {
			if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return ""
			}
		}
		return fmt.Sprintf("%s: an integer", clip(compact(v)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if x, ok := v.(json.Number); ok {
			if _, err := strconv.ParseUint(string(x), 10, 64); err == nil {
				return ""
			}
		}
		return fmt.Sprintf("%s: an integer ≥ 0", clip(compact(v)))
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("%s: true or false", clip(compact(v)))
		}
		return ""
	case reflect.String:
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("%s: a string", clip(compact(v)))
		}
		return ""
	}
	return anyFinite(v)
}

// anyFinite checks a value of a type not known: its numbers, at any depth,
// finite.
func anyFinite(v any) string {
	switch x := v.(type) {
	case json.Number:
		return finite(x)
	case []any:
		for _, el := range x {
			if msg := anyFinite(el); msg != "" {
				return msg
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if msg := anyFinite(x[k]); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// finite checks that n is a finite number (report.json writes no other).
func finite(n json.Number) string {
	if f, err := strconv.ParseFloat(string(n), 64); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Sprintf("%s: not a finite number (report.json writes a value that is not finite as \"+Inf\", \"-Inf\" or \"NaN\")", clip(string(n)))
	}
	return ""
}

// compact returns v as JSON.
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// clip shortens s for a message.
func clip(s string) string { return badinput.Clip(s, 60) }
