package sweep

import (
	"encoding/json"
	"strconv"
	"strings"
)

// fewKeys is how many keys of an object dupKey compares one by one before
// it puts them in a map.
const fewKeys = 16

// keyFrame is an object or array dupKey is inside.
type keyFrame struct {
	obj     bool
	fold    bool   // an object decoded into a struct: keys match ignoring case
	seg     string // the value's name in its parent (a key, a list index)
	wantKey bool   // (objects) the next token is a key or the end
	key     string // (objects) the key of the value being read
	n       int    // (arrays) the next element's index
	keys    []string
	set     map[string]bool // keys, once more than fewKeys
}

// dupKey looks in data, one JSON value that encoding/json has read, for an
// object giving a key twice — which encoding/json takes silently, the
// last value winning — and returns the second one's path, dotted as the
// readers of YAML name keys ("metrics.time.seconds"; a list's element by
// its index), and the first one's spelling where it differs. In the
// objects decoded into structs (the record, its "run") keys that
// encoding/json matches to one field, which it does ignoring case
// ("index" and "Index"), are one key. A record file is hand-editable: a
// key given twice is refused, as in a program's YAML, not resolved. Keys
// are read as encoding/json reads strings (escapes are theirs:
// "\u0069ndex" is "index"); data that is not valid JSON ends the scan,
// nothing found. It scans the bytes itself: encoding/json's tokens
// (Decoder.Token) cost ~180 allocations a record, twice the decoding's
// time (BenchmarkRecordKeys).
func dupKey(data []byte) (path, first string, found bool) {
	var stack []keyFrame
	for i := 0; ; {
		i = skipSpace(data, i)
		if i >= len(data) {
			return "", "", false
		}
		c := data[i]
		var top *keyFrame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.obj && top.wantKey {
			switch c {
			case ',':
				i++
				continue
			case '}':
				i++
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return "", "", false
				}
				stack[len(stack)-1].valueDone()
				continue
			case '"':
			default:
				return "", "", false
			}
			key, j, ok := jsonString(data, i)
			if !ok {
				return "", "", false
			}
			if i = skipSpace(data, j); i >= len(data) || data[i] != ':' {
				return "", "", false
			}
			i++
			if prev, dup := top.seen(key); dup {
				segs := make([]string, 0, len(stack))
				for _, f := range stack[1:] {
					segs = append(segs, f.seg)
				}
				if prev == key {
					prev = ""
				}
				return strings.Join(append(segs, key), "."), prev, true
			}
			top.key, top.wantKey = key, false
			continue
		}
		switch c {
		case '{', '[':
			i++
			f := keyFrame{obj: c == '{', wantKey: true}
			switch {
			case top == nil:
				f.fold = true // the record
			case top.obj:
				f.seg = top.key
				f.fold = len(stack) == 1 && strings.EqualFold(top.key, "run")
			default:
				f.seg = strconv.Itoa(top.n) // (its end moves top.n on)
			}
			stack = append(stack, f)
			continue
		case ']':
			i++
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", "", false
			}
			stack[len(stack)-1].valueDone()
			continue
		case ',':
			if top == nil || top.obj {
				return "", "", false
			}
			i++
			continue
		case '"':
			_, j, ok := jsonString(data, i)
			if !ok {
				return "", "", false
			}
			i = j
		case '}':
			return "", "", false // (an object's end where a value was due)
		default:
			// A number, true, false or null: up to the next delimiter.
			for i < len(data) && !strings.ContainsRune(",]} \t\r\n", rune(data[i])) {
				i++
			}
		}
		if top == nil {
			return "", "", false // a scalar, not an object
		}
		top.valueDone()
	}
}

// skipSpace returns the index of the first byte of data at or after i
// that is not JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// jsonString reads the JSON string starting at data[i] (a quote) and
// returns its value as encoding/json gives it and the index after it; ok
// is false where no string ends there. A string of printable ASCII without
// escapes is its bytes; any other (escapes, other bytes: invalid UTF-8
// becomes U+FFFD) is unquoted by encoding/json itself.
func jsonString(data []byte, i int) (s string, next int, ok bool) {
	plain := true
	j := i + 1
	for ; j < len(data); j++ {
		c := data[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			j++
			continue
		}
		if c < 0x20 || c >= 0x80 {
			plain = false
		}
	}
	if j >= len(data) {
		return "", 0, false
	}
	if plain {
		return string(data[i+1 : j]), j + 1, true
	}
	if err := json.Unmarshal(data[i:j+1], &s); err != nil {
		return "", 0, false
	}
	return s, j + 1, true
}

// valueDone moves f past the value it was reading.
func (f *keyFrame) valueDone() {
	if f.obj {
		f.wantKey = true
	} else {
		f.n++
	}
}

// seen records key in f and returns the spelling under which f had it
// already, if it had.
func (f *keyFrame) seen(key string) (string, bool) {
	if f.set != nil && !f.fold {
		if f.set[key] {
			return key, true
		}
		f.set[key] = true
		return "", false
	}
	for _, k := range f.keys {
		if k == key || f.fold && strings.EqualFold(k, key) {
			return k, true
		}
	}
	f.keys = append(f.keys, key)
	if len(f.keys) > fewKeys && !f.fold {
		f.set = make(map[string]bool, 2*len(f.keys))
		for _, k := range f.keys {
			f.set[k] = true
		}
		f.keys = nil
	}
	return "", false
}
