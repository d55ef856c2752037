package sweep

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// dupKey looks in data, one JSON value that encoding/json has read (valid:
// anything else ends the scan, found nothing), for an object giving a key
// twice — which encoding/json takes silently, the last value winning — and
// returns the second one's path, dotted as the readers of YAML name keys
// ("metrics.time.seconds"; a list's element by its index), and the first
// one's spelling where it differs. In the objects decoded into structs (the
// record, its "run") keys that encoding/json matches to one field, which
// it does ignoring case ("index" and "Index"), are one key. A record file
// is hand-editable: a key given twice is refused, as in a program's YAML,
// not resolved.
//
// One pass over the bytes, allocating only for a key with escapes and in
// objects of many keys: cheap beside the decoding (BenchmarkReadResults).
func dupKey(data []byte) (path, first string, found bool) {
	k := keyScan{data: data}
	segs, first, found := k.value(true)
	if !found {
		return "", "", false
	}
	return strings.Join(segs, "."), first, true
}

// keyScan walks a JSON value's bytes (dupKey).
type keyScan struct {
	data []byte
	pos  int
	bad  bool // not valid JSON after all: stop, nothing found
}

// fewKeys is how many keys of an object are compared one by one before
// they go into a map.
const fewKeys = 16

// value scans the value at k.pos, an object decoded into a struct where
// structLevel, and returns the path below it of a key given twice.
func (k *keyScan) value(structLevel bool) (segs []string, first string, found bool) {
	k.space()
	if k.pos >= len(k.data) {
		k.bad = true
		return nil, "", false
	}
	switch k.data[k.pos] {
	case '{':
		return k.object(structLevel)
	case '[':
		k.pos++
		for i := 0; ; i++ {
			k.space()
			if k.pos < len(k.data) && k.data[k.pos] == ']' {
				k.pos++
				return nil, "", false
			}
			segs, first, found := k.value(false)
			if found {
				return append([]string{strconv.Itoa(i)}, segs...), first, true
			}
			if k.bad || !k.after(']') {
				return nil, "", false
			}
		}
	case '"':
		k.str()
	default: // a number, true, false or null
	scalar:
		for ; k.pos < len(k.data); k.pos++ {
			switch k.data[k.pos] {
			case ',', ']', '}', ' ', '\t', '\r', '\n':
				break scalar
			}
		}
	}
	return nil, "", false
}

// object scans the object at k.pos (value).
func (k *keyScan) object(structLevel bool) (segs []string, first string, found bool) {
	k.pos++
	var few [fewKeys][]byte
	keys := few[:0]
	var many map[string]bool
	for {
		k.space()
		if k.pos >= len(k.data) {
			k.bad = true
			return nil, "", false
		}
		if k.data[k.pos] == '}' {
			k.pos++
			return nil, "", false
		}
		key, ok := k.str()
		if !ok {
			return nil, "", false
		}
		// The key as encoding/json compares it.
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			if json.Unmarshal(key, &s) != nil {
				k.bad = true
				return nil, "", false
			}
			key = []byte(s)
		} else {
			key = key[1 : len(key)-1]
		}
		if many == nil {
			for _, prev := range keys {
				if bytes.Equal(prev, key) || structLevel && bytes.EqualFold(prev, key) {
					if string(prev) != string(key) {
						first = string(prev)
					}
					return []string{string(key)}, first, true
				}
			}
			keys = append(keys, key)
			if len(keys) == fewKeys && !structLevel {
				many = make(map[string]bool, 2*fewKeys)
				for _, p := range keys {
					many[string(p)] = true
				}
			}
		} else {
			if many[string(key)] {
				return []string{string(key)}, "", true
			}
			many[string(key)] = true
		}
		k.space()
		if k.pos >= len(k.data) || k.data[k.pos] != ':' {
			k.bad = true
			return nil, "", false
		}
		k.pos++
		// The record's "run" is a struct too (RunStamp).
		segs, first, found := k.value(structLevel && bytes.EqualFold(key, []byte("run")))
		if found {
			return append([]string{string(key)}, segs...), first, true
		}
		if k.bad || !k.after('}') {
			return nil, "", false
		}
	}
}

// after steps over the comma after an element, or stops before the
// closing byte; it reports whether the scan goes on.
func (k *keyScan) after(closing byte) bool {
	k.space()
	switch {
	case k.pos < len(k.data) && k.data[k.pos] == ',':
		k.pos++
		return true
	case k.pos < len(k.data) && k.data[k.pos] == closing:
		return true
	}
	k.bad = true
	return false
}

// str steps over the string at k.pos and returns it, quotes included.
func (k *keyScan) str() ([]byte, bool) {
	start := k.pos
	if k.pos >= len(k.data) || k.data[k.pos] != '"' {
		k.bad = true
		return nil, false
	}
	for k.pos++; k.pos < len(k.data); k.pos++ {
		switch k.data[k.pos] {
		case '\\':
			k.pos++
		case '"':
			k.pos++
			return k.data[start:k.pos], true
		}
	}
	k.bad = true
	return nil, false
}

func (k *keyScan) space() {
	for k.pos < len(k.data) {
		switch k.data[k.pos] {
		case ' ', '\t', '\r', '\n':
			k.pos++
		default:
			return
		}
	}
}
