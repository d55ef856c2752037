package traces

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"strings"
)

// Reading a JSON trace's events fast. encoding/json took ~60% of reading
// a large trace (a json.Decoder scans each event three times and decodes
// it by reflection into a fresh map of args; ~225 000 events/s). The
// reader now scans the events as the writers write them itself
// (fastEvents) and hands the rest of the file, from the first event that
// is anything else, to the json.Decoder it took the events from, brought
// to the same state: what it returns (timeline, errors) is the same as
// decoding every event.
//
// What fastEvents takes: an object of known keys (each once; ph, name,
// cat, pid, tid, ts, dur, bind_id, flow_in, flow_out, args) and of other
// ASCII keys that fold to none of them, with a scalar value; strings
// without escapes are taken as they are, others as encoding/json reads
// them; pid and tid integers of at most 18 digits, bind_id at most 19;
// args an object of scalars. Each event, with the comma and whitespace
// before it, within fastSpanMax bytes (so that no token or whitespace run
// it takes can be one the guard refuses; the guard follows the bytes it
// did not take when the decoder takes over, see resume).

const (
	fastBufSize = 256 << 10 // the read buffer (below maxTraceToken: see resume)
	fastSpanMax = 64 << 10  // the longest event taken, with what precedes it
)

// What fastScan.parse found.
const (
	fastOK   = iota // an event
	fastEnd         // the array's end
	fastMore        // the bytes end within it
	fastSlow        // something else: for the decoder
)

// jsonIn is the json.Decoder reading a JSON trace, with where its input
// starts in the trace (a decoder that took over from fastEvents reads a
// few made-up bytes first: see resume).
type jsonIn struct {
	dec  *json.Decoder
	off  int64 // the trace offset of the decoder's offset 0
	fast bool  // events scans the events it can itself (fastEvents)
}

// offset returns the decoder's offset in the trace (json.Decoder.InputOffset).
func (in *jsonIn) offset() int64 { return in.off + in.dec.InputOffset() }

// fastScan reads the events of a JSON trace from the guard's reader
// (bypassing its scan: see resume).
type fastScan struct {
	g        *jsonGuard
	buf      []byte // read; buf[pos:] not taken
	pos      int
	base     int64 // the trace offset of buf[0]
	scanFrom int64 // the guard has followed the trace up to here
	rerr     error // the error of the last read, for the decoder
	strs     strCache
}

// fastEvents reads the events of the array whose '[' in.dec has just
// read (obj: the traceEvents of an object) into rd as events does, as far
// as it takes them; then in.dec is a decoder of the rest in the state the
// replaced one would be in: after the array's ']' (done) or before its
// event i. The error is an event's (rd.event).
func (rd *traceReader) fastEvents(in *jsonIn, g *jsonGuard, obj bool) (i int, done bool, err error) {
	start := in.offset()
	rem, _ := io.ReadAll(in.dec.Buffered()) // (read from g, which followed them)
	f := &fastScan{g: g, base: start, scanFrom: start + int64(len(rem))}
	f.buf = make([]byte, len(rem), max(fastBufSize, len(rem)))
	copy(f.buf, rem)
	var ev traceEvent
	for {
		b := f.buf[f.pos:]
		n, st := f.parse(b, i == 0, &ev)
		switch {
		case st == fastOK && n <= fastSpanMax:
			f.pos += n
			if err := rd.event(&ev); err != nil {
				return i, false, fmt.Errorf("trace event %d: %v", i, err)
			}
			i++
			continue
		case st == fastEnd && n <= fastSpanMax:
			f.pos += n
			f.resume(in, obj, i, true)
			return i, true, nil
		case st == fastMore && len(b) < fastSpanMax && f.fill():
			continue
		}
		f.resume(in, obj, i, false)
		return i, false, nil
	}
}

// fill reads more after the bytes not taken; false when nothing more can
// be read.
func (f *fastScan) fill() bool {
	if f.rerr != nil {
		return false
	}
	if f.g.err != nil { // (the guard's Read would fail)
		f.rerr = f.g.err
		return false
	}
	n := copy(f.buf, f.buf[f.pos:])
	f.base += int64(f.pos)
	f.pos = 0
	if cap(f.buf) > fastBufSize && n <= fastBufSize/2 {
		f.buf = append(make([]byte, 0, fastBufSize), f.buf[:n]...)
	}
	f.buf = f.buf[:n]
	for {
		k, err := f.g.r.Read(f.buf[n:cap(f.buf)])
		f.buf = f.buf[:n+k]
		if err != nil {
			f.rerr = err
		}
		if k > 0 || err != nil {
			return k > 0
		}
	}
}

// resume hands what fastEvents did not take to a new json.Decoder, in.dec,
// brought to the state the replaced one would be in after reading
// i events of the array (end: and its ']'), and makes the guard follow the
// bytes read and not taken, as its Read would have. (The guard did not
// follow the events taken: each is within fastSpanMax bytes, below
// maxTraceToken, and ends with '}'; after it the guard's state is
// guardOutside. The bytes not taken are within fastBufSize, so that the
// guard fails on none of them unless it had before.)
func (f *fastScan) resume(in *jsonIn, obj bool, i int, end bool) {
	g := f.g
	at := f.base + int64(f.pos)
	rem := f.buf[f.pos:]
	if at >= f.scanFrom {
		// (The byte before at is the '}' of an event taken, or the ']'
		// after it, or the array's '[' with nothing read after it.)
		g.state, g.pos = guardOutside, at
	} // else the guard followed the trace up to f.scanFrom = g.pos
	from := int(g.pos - at)
	rerr := f.rerr
	if from < len(rem) {
		if k := g.handOut(rem[from:]); k < len(rem)-from {
			rem, rerr = rem[:from+k], nil // (g.err, which g.Read returns)
		}
	}
	// The replaced decoder read '[' (obj: '{', a key, '['), then i
	// events (one stands for them: {}), then (end) ']'.
	pre := "["
	if obj {
		pre = `{"":[`
	}
	if i > 0 && !end {
		pre += "{}"
	}
	if end {
		pre += "]"
		if !obj {
			pre = "" // (nothing left open)
		}
	}
	dec := json.NewDecoder(&resumeReader{buf: append([]byte(pre), rem...), err: rerr, r: g})
	dec.UseNumber()
	in.dec, in.off = dec, at-int64(len(pre))
	if pre == "" {
		return
	}
	if obj {
		dec.Token() // {
		dec.Token() // ""
	}
	dec.Token() // [
	if end {
		dec.Token() // ]
	} else if i > 0 {
		var v struct{}
		dec.Decode(&v)
	}
}

// resumeReader reads buf, then returns err (unless nil) once, then reads r.
type resumeReader struct {
	buf []byte
	err error
	r   io.Reader
}

// Read implements io.Reader.
func (r *resumeReader) Read(p []byte) (int, error) {
	if len(r.buf) > 0 {
		n := copy(p, r.buf)
		r.buf = r.buf[n:]
		return n, nil
	}
	if err := r.err; err != nil {
		r.err = nil
		return 0, err
	}
	return r.r.Read(p)
}

// The keys of an event parse takes (each once).
const (
	keyPh = 1 << iota
	keyName
	keyCat
	keyPid
	keyTid
	keyTs
	keyDur
	keyBind
	keyIn
	keyOut
	keyArgs
)

// eventKeys are the keys of rawEvent's fields.
var eventKeys = [...]string{"ph", "name", "cat", "pid", "tid", "ts", "dur", "bind_id", "flow_in", "flow_out", "args"}

// parse reads the next element of an events array from b: the comma
// before it (unless first), whitespace, and an event (into ev) or the
// array's ']'. It returns the bytes it takes.
func (f *fastScan) parse(b []byte, first bool, ev *traceEvent) (int, int) {
	j := skipSpace(b, 0)
	if j == len(b) {
		return 0, fastMore
	}
	c := b[j]
	if c == ']' {
		return j + 1, fastEnd
	}
	if !first {
		if c != ',' {
			return 0, fastSlow
		}
		if j = skipSpace(b, j+1); j == len(b) {
			return 0, fastMore
		}
		c = b[j]
	}
	if c != '{' {
		return 0, fastSlow
	}
	*ev = traceEvent{}
	if j = skipSpace(b, j+1); j == len(b) {
		return 0, fastMore
	}
	if b[j] == '}' {
		return j + 1, fastOK
	}
	var have int
	for {
		key, k, st := plainKey(b, j)
		if st != fastOK {
			return 0, st
		}
		if j, st = colon(b, k); st != fastOK {
			return 0, st
		}
		bit := 0
		switch string(key) {
		case "ph":
			bit = keyPh
			ev.Ph, j, st = f.str(b, j)
		case "name":
			bit = keyName
			ev.Name, j, st = f.str(b, j)
		case "cat":
			bit = keyCat
			ev.Cat, j, st = f.str(b, j)
		case "pid":
			bit = keyPid
			ev.Pid, j, st = intValue(b, j)
		case "tid":
			bit = keyTid
			ev.Tid, j, st = intValue(b, j)
		case "ts":
			bit = keyTs
			ev.Ts, j, st = numValue(b, j)
		case "dur":
			bit = keyDur
			ev.Dur, j, st = numValue(b, j)
		case "bind_id":
			bit = keyBind
			ev.BindID, j, st = uintValue(b, j)
		case "flow_in":
			bit = keyIn
			ev.FlowIn, j, st = boolValue(b, j)
		case "flow_out":
			bit = keyOut
			ev.FlowOut, j, st = boolValue(b, j)
		case "args":
			bit = keyArgs
			j, st = args(b, j, &ev.Args)
		default:
			// (encoding/json matches keys without regard to case.)
			for _, k := range eventKeys {
				if strings.EqualFold(string(key), k) {
					return 0, fastSlow
				}
			}
			j, st = scalar(b, j)
		}
		if st != fastOK {
			return 0, st
		}
		if have&bit != 0 {
			return 0, fastSlow // (the last would win, and args would merge)
		}
		have |= bit
		if j = skipSpace(b, j); j == len(b) {
			return 0, fastMore
		}
		switch b[j] {
		case ',':
			if j = skipSpace(b, j+1); j == len(b) {
				return 0, fastMore
			}
		case '}':
			return j + 1, fastOK
		default:
			return 0, fastSlow
		}
	}
}

// args reads an args object of scalars at b[j] into a.
func args(b []byte, j int, a *eventArgs) (int, int) {
	if b[j] != '{' {
		return 0, fastSlow
	}
	if j = skipSpace(b, j+1); j == len(b) {
		return 0, fastMore
	}
	if b[j] == '}' {
		return j + 1, fastOK
	}
	for {
		// A key is as written (a map's keys are matched exactly); one
		// beyond ASCII names no field.
		if b[j] != '"' {
			return 0, fastSlow
		}
		k := j + 1
		for ; k < len(b) && b[k] != '"'; k++ {
			if c := b[k]; c == '\\' || c < 0x20 {
				return 0, fastSlow
			}
		}
		if k == len(b) {
			return 0, fastMore
		}
		key := b[j+1 : k]
		v, st := colon(b, k+1)
		if st != fastOK {
			return 0, st
		}
		if j, st = scalar(b, v); st != fastOK {
			return 0, st
		}
		if p := argField(a, key); p != nil {
			*p = b[v:j]
		}
		if j = skipSpace(b, j); j == len(b) {
			return 0, fastMore
		}
		switch b[j] {
		case ',':
			if j = skipSpace(b, j+1); j == len(b) {
				return 0, fastMore
			}
		case '}':
			return j + 1, fastOK
		default:
			return 0, fastSlow
		}
	}
}

// plainKey reads an object key at b[j]: a string of ASCII without escapes.
func plainKey(b []byte, j int) ([]byte, int, int) {
	if b[j] != '"' {
		return nil, 0, fastSlow
	}
	k := j + 1
	for ; k < len(b) && b[k] != '"'; k++ {
		if c := b[k]; c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, 0, fastSlow
		}
	}
	if k == len(b) {
		return nil, 0, fastMore
	}
	return b[j+1 : k], k + 1, fastOK
}

// colon reads the colon after a key at b[j] and the whitespace around it.
func colon(b []byte, j int) (int, int) {
	if j = skipSpace(b, j); j == len(b) {
		return 0, fastMore
	}
	if b[j] != ':' {
		return 0, fastSlow
	}
	if j = skipSpace(b, j+1); j == len(b) {
		return 0, fastMore
	}
	return j, fastOK
}

// skipSpace returns the index of the first byte from b[j] on that is not
// JSON whitespace (len(b): none).
func skipSpace(b []byte, j int) int {
	for j < len(b) {
		switch b[j] {
		case ' ', '\n', '\r', '\t':
			j++
		default:
			return j
		}
	}
	return j
}

// stringEnd returns the index after the string at b[j] ('"'), and whether
// it is plain: printable ASCII without escapes.
func stringEnd(b []byte, j int) (int, bool, int) {
	k := j + 1
	for ; k < len(b); k++ {
		c := b[k]
		if c == '"' {
			return k + 1, true, fastOK
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
	}
	for k < len(b) {
		switch c := b[k]; {
		case c == '"':
			return k + 1, false, fastOK
		case c == '\\':
			k += 2
		case c < 0x20:
			return 0, false, fastSlow
		default:
			k++
		}
	}
	return 0, false, fastMore
}

// str reads a string value at b[j].
func (f *fastScan) str(b []byte, j int) (string, int, int) {
	if b[j] != '"' {
		return "", 0, fastSlow
	}
	k, plain, st := stringEnd(b, j)
	if st != fastOK {
		return "", 0, st
	}
	if plain {
		return f.strs.get(b[j+1 : k-1]), k, fastOK
	}
	var s string
	if json.Unmarshal(b[j:k], &s) != nil {
		return "", 0, fastSlow
	}
	return s, k, fastOK
}

// scalar returns the index after the string, number or literal at b[j].
func scalar(b []byte, j int) (int, int) {
	switch c := b[j]; {
	case c == '"':
		k, plain, st := stringEnd(b, j)
		if st == fastOK && !plain && !json.Valid(b[j:k]) {
			return 0, fastSlow
		}
		return k, st
	case c == '-' || c >= '0' && c <= '9':
		k, _, st := numberEnd(b, j)
		return k, st
	case c == 't':
		return literal(b, j, "true")
	case c == 'f':
		return literal(b, j, "false")
	case c == 'n':
		return literal(b, j, "null")
	}
	return 0, fastSlow
}

// literal reads the literal lit at b[j].
func literal(b []byte, j int, lit string) (int, int) {
	n := min(len(b)-j, len(lit))
	if string(b[j:j+n]) != lit[:n] {
		return 0, fastSlow
	}
	if n < len(lit) {
		return 0, fastMore
	}
	return j + n, fastOK
}

// numberEnd returns the index after the JSON number at b[j], and whether
// it is an integer (no fraction or exponent). The number must be followed
// by a byte (it could go on).
func numberEnd(b []byte, j int) (int, bool, int) {
	k := j
	if b[k] == '-' {
		k++
	}
	if k == len(b) {
		return 0, false, fastMore
	}
	switch c := b[k]; {
	case c == '0':
		k++
	case c >= '1' && c <= '9':
		k = digits(b, k+1)
	default:
		return 0, false, fastSlow
	}
	if k == len(b) {
		return 0, false, fastMore
	}
	integer := true
	if b[k] == '.' {
		integer = false
		if k++; k == len(b) {
			return 0, false, fastMore
		}
		if b[k] < '0' || b[k] > '9' {
			return 0, false, fastSlow
		}
		if k = digits(b, k); k == len(b) {
			return 0, false, fastMore
		}
	}
	if b[k] == 'e' || b[k] == 'E' {
		integer = false
		if k++; k == len(b) {
			return 0, false, fastMore
		}
		if b[k] == '+' || b[k] == '-' {
			if k++; k == len(b) {
				return 0, false, fastMore
			}
		}
		if b[k] < '0' || b[k] > '9' {
			return 0, false, fastSlow
		}
		if k = digits(b, k); k == len(b) {
			return 0, false, fastMore
		}
	}
	return k, integer, fastOK
}

// digits returns the index of the first byte from b[k] on that is not a
// digit.
func digits(b []byte, k int) int {
	for k < len(b) && b[k] >= '0' && b[k] <= '9' {
		k++
	}
	return k
}

// numValue reads a number value at b[j] (a json.Number).
func numValue(b []byte, j int) ([]byte, int, int) {
	if c := b[j]; c != '-' && (c < '0' || c > '9') {
		return nil, 0, fastSlow // (a string holding a number is one too)
	}
	k, _, st := numberEnd(b, j)
	if st != fastOK {
		return nil, 0, st
	}
	return b[j:k], k, fastOK
}

// intValue reads an int value at b[j]: an integer of at most 18 digits.
func intValue(b []byte, j int) (int, int, int) {
	if c := b[j]; c != '-' && (c < '0' || c > '9') {
		return 0, 0, fastSlow
	}
	k, integer, st := numberEnd(b, j)
	if st != fastOK {
		return 0, 0, st
	}
	d := b[j:k]
	neg := d[0] == '-'
	if neg {
		d = d[1:]
	}
	if !integer || len(d) > 18 {
		return 0, 0, fastSlow
	}
	v := 0
	for _, c := range d {
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, k, fastOK
}

// uintValue reads a uint64 value at b[j]: an integer of at most 19 digits.
func uintValue(b []byte, j int) (uint64, int, int) {
	if c := b[j]; c < '0' || c > '9' {
		return 0, 0, fastSlow
	}
	k, integer, st := numberEnd(b, j)
	if st != fastOK {
		return 0, 0, st
	}
	if !integer || k-j > 19 {
		return 0, 0, fastSlow
	}
	var v uint64
	for _, c := range b[j:k] {
		v = v*10 + uint64(c-'0')
	}
	return v, k, fastOK
}

// boolValue reads a bool value at b[j].
func boolValue(b []byte, j int) (bool, int, int) {
	switch b[j] {
	case 't':
		k, st := literal(b, j, "true")
		return true, k, st
	case 'f':
		k, st := literal(b, j, "false")
		return false, k, st
	}
	return false, 0, fastSlow
}

// plainString returns the contents of raw when it is a JSON string of
// printable ASCII without escapes (as encoding/json reads it).
func plainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, false
		}
	}
	return s, true
}

// plainInt returns the value of raw when it is a JSON integer ≥ 0 of at
// most 15 digits (exact as a float64, as encoding/json reads it).
func plainInt(raw []byte) (float64, bool) {
	if len(raw) == 0 || len(raw) > 15 || raw[0] == '0' && len(raw) > 1 {
		return 0, false
	}
	var v int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return float64(v), true
}

// strCache holds the strings of recent event names and categories, so that
// each is allocated once (direct-mapped).
type strCache struct {
	seed  maphash.Seed
	slots *[1024]string
}

// get returns string(b).
func (c *strCache) get(b []byte) string {
	if c.slots == nil {
		c.seed, c.slots = maphash.MakeSeed(), new([1024]string)
	}
	h := maphash.Bytes(c.seed, b) & 1023
	if s := c.slots[h]; s == string(b) {
		return s
	}
	s := string(b)
	c.slots[h] = s
	return s
}
