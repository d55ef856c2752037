package sweep

import (
	"bytes"
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
// key given twice is refused, as in a program's YAML, not resolved. It
// reads encoding/json's tokens (escapes are theirs: "\u0069ndex" is
// "index"); data that is not valid JSON ends the scan, nothing found.
func dupKey(data []byte) (path, first string, found bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*keyFrame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", false
		}
		var top *keyFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.wantKey {
			key, ok := tok.(string)
			if !ok { // '}'
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return "", "", false
				}
				stack[len(stack)-1].valueDone()
				continue
			}
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
		switch tok {
		case json.Delim('{'), json.Delim('['):
			f := &keyFrame{obj: tok == json.Delim('{'), wantKey: true}
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
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", "", false
			}
			stack[len(stack)-1].valueDone()
			continue
		}
		if top == nil {
			return "", "", false // a scalar, not an object
		}
		top.valueDone()
	}
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
