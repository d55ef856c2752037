package programs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/outfile"
	"github.com/davinci-sim/davinci-sim/stopwork"
	"github.com/sbinet/npyio"
)

// Distribution names for generated inputs.
const (
	DistUniform        = "uniform"        // symmetric: U[−2^e, 2^e]
	DistUniformNonneg  = "uniform-nonneg" // U[0, 2^e]
	DistZero           = "zero"
	DistUniformBetween = "between" // U[low, high]
)

// NewRand returns the deterministic generator used for all program inputs:
// PCG seeded from (seed, stream), so that A and B of one seed differ.
func NewRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// UniformFP32 returns n FP32 values from U[lo, hi] (rounded to FP32 RNE).
func UniformFP32(r *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	uniformFP32Into(r, out, lo, hi)
	return out
}

// uniformFP32Into fills out with UniformFP32's values (the next len(out)
// of r's stream).
func uniformFP32Into(r *rand.Rand, out []float32, lo, hi float64) {
	for i := range out {
		out[i] = float32(lo + float64((hi-lo)*r.Float64()))
	}
}

// genFloat64Until is genFloat64 (gpu_gemm.go; row r from its own stream)
// asking stop (nil: never) every stopwork.Every values: nil once it says
// true. Ozaki's 4096² inputs took 1.2 s (several under load) deaf to an
// interrupt; at the ~35 ns a value that first touching fresh memory costs
// here (the pages' faults, not the generator, are most of it) a question
// comes every ~2 ms.
func genFloat64Until(in Inputs, which uint64, rows, cols int, stop func() bool) []float64 {
	lo, hi := in.interval()
	out := make([]float64, rows*cols)
	st := stopwork.New(stop)
	for r := 0; r < rows; r++ {
		rng := NewRand(in.Seed, which<<32|uint64(r))
		row := out[r*cols : r*cols+cols]
		for len(row) > 0 {
			part := row[:min(len(row), stopwork.Every)]
			if st.StopBefore(len(part)) {
				return nil
			}
			for c := range part {
				part[c] = lo + float64((hi-lo)*rng.Float64())
			}
			row = row[len(part):]
		}
	}
	return out
}

// ReadNPYFloat32 reads a 2-D .npy file as float32 (float64 files are
// rounded to FP32 RNE) and returns its rows and
// columns.
func ReadNPYFloat32(path string) (_ []float32, _, _ int, err error) {
	v, rows, cols, _, err := readNPYAsFloat32(path)
	return v, rows, cols, err
}

// readNPYAsFloat32 is ReadNPYFloat32, also saying whether the file held
// float64 values (rounded).
func readNPYAsFloat32(path string) (_ []float32, _, _ int, rounded bool, err error) {
	v32, v64, rows, cols, err := readNPY(path, true, false, nil)
	return narrowed(v32, v64), rows, cols, v64 != nil, err
}

// narrowed returns an array read as float32 (v32) or float64 (v64,
// rounded to float32).
func narrowed(v32 []float32, v64 []float64) []float32 {
	if v64 == nil {
		return v32
	}
	v32 = make([]float32, len(v64))
	for i, x := range v64 {
		v32[i] = float32(x)
	}
	return v32
}

// ReadNPYFloat64 reads a 2-D float64 (or float32, widened exactly) .npy
// file and returns the data (row-major) and its shape.
func ReadNPYFloat64(path string) (_ []float64, _, _ int, err error) {
	return readNPYFloat64Until(path, nil)
}

// errReadStopped is the error of a read of a .npy file whose stop said
// true (readNPY).
var errReadStopped = errors.New("reading stopped")

// readNPYFloat64Until is ReadNPYFloat64 asking stop (nil: never) as it
// reads and widens: errReadStopped once it says true (a 4096² float64
// file took 0.3 s, 1.8 s under load, deaf to an interrupt).
func readNPYFloat64Until(path string, stop func() bool) (_ []float64, _, _ int, err error) {
	v32, v64, rows, cols, err := readNPY(path, true, false, stop)
	if v32 != nil {
		v64 = make([]float64, len(v32))
		st := stopwork.New(stop)
		for i0 := 0; i0 < len(v32); i0 += stopwork.Every {
			part := v32[i0:min(i0+stopwork.Every, len(v32))]
			if st.StopBefore(len(part)) {
				return nil, 0, 0, errReadStopped
			}
			for i, x := range part {
				v64[i0+i] = float64(x)
			}
		}
	}
	return v64, rows, cols, err
}

// stopReader reads r, asking stop before each read: errReadStopped once
// it says true. Below readNPY's bufio.Reader, a read is a buffer's worth
// (up to 1 MiB).
type stopReader struct {
	r    io.Reader
	stop func() bool
}

func (s stopReader) Read(p []byte) (int, error) {
	if s.stop() {
		return 0, errReadStopped
	}
	return s.r.Read(p)
}

// CheckNPYFloat32 checks what ReadNPYFloat32 checks (a readable 2-D
// float32 or float64 array whose shape matches its size) without reading
// the data, and returns the shape.
func CheckNPYFloat32(path string) (rows, cols int, err error) {
	_, _, rows, cols, err = readNPY(path, false, false, nil)
	return rows, cols, err
}

// ReadNPYArray reads a float32 or float64 .npy array of any shape (an asm
// tensor's contents: its elements in C order), float64 rounded to float32.
func ReadNPYArray(path string) ([]float32, error) {
	v32, v64, _, _, err := readNPY(path, true, true, nil)
	return narrowed(v32, v64), err
}

// CheckNPYArray checks what ReadNPYArray checks without reading the data,
// and returns the array's elements.
func CheckNPYArray(path string) (elems int64, err error) {
	_, _, rows, cols, err := readNPY(path, false, true, nil)
	return int64(rows) * int64(cols), err
}

// readNPY reads a 2-D float32 or float64 .npy file — its data (in the
// slice of its type) only when withData is set — and its shape; with
// anyShape an array of any shape of at least one dimension, as rows of
// its last dimension (rows × cols: its leading dimensions' product, the
// last one). stop (nil: never) is asked as the data are read:
// errReadStopped once it says true.
func readNPY(path string, withData, anyShape bool, stop func() bool) (_ []float32, _ []float64, _, _ int, err error) {
	if err := notRegular(path, "a .npy file"); err != nil {
		return nil, nil, 0, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	defer f.Close()
	header, off, err := checkNPYPreamble(f)
	var want []int
	if err == nil {
		want, err = checkNPYHeader(header)
	}
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("%s: %v", path, err)
	}
	// npyio panics on some malformed headers the preamble check lets
	// through: that is bad input, not a crash.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: malformed .npy header (read as numpy.save writes it: a dictionary of descr, fortran_order and shape, in that order)", path)
		}
	}()
	// Buffered: npyio reads the data a value at a time (3 MB/s from the
	// file itself; 64 MB took 15–22 s, 0.6 s buffered).
	size := int64(1 << 20)
	if st, err := f.Stat(); err == nil {
		size = min(size, max(st.Size(), 64)) // (a small file, a small buffer)
	}
	var data io.Reader = f
	if stop != nil {
		data = stopReader{f, stop}
	}
	r, err := npyio.NewReader(bufio.NewReaderSize(data, int(size)))
	if err != nil && stop != nil && stop() {
		return nil, nil, 0, 0, errReadStopped
	}
	if err != nil {
		// The header is a dictionary numpy reads (checkNPYHeader) but
		// not in the one layout the reader takes (npyio's own message
		// says nothing a user can act on: "invalid dictionary format",
		// strconv.Atoi of "4L").
		return nil, nil, 0, 0, fmt.Errorf("%s: the header %s is not laid out as numpy.save writes it ({'descr': …, 'fortran_order': …, 'shape': (…), }), the only layout read here: save the array again with numpy.save",
			path, showNPY(strings.TrimRight(header, " \n"), 120))
	}
	shape := r.Header.Descr.Shape
	if !slices.Equal(want, shape) {
		// A header numpy would read that the reader misreads (no
		// trailing comma after the shape: (4, 8) read as [4]).
		return nil, nil, 0, 0, fmt.Errorf("%s: the header's shape %v is misread here as %v (its layout is not numpy.save's): save the array again with numpy.save", path, want, shape)
	}
	if anyShape && len(shape) >= 1 {
		rows := 1
		for _, d := range shape[:len(shape)-1] {
			if d < 0 || d > 1<<40 || rows > (1<<40)/max(d, 1) {
				return nil, nil, 0, 0, fmt.Errorf("%s: shape %v: more elements than any tensor holds", path, shape)
			}
			rows *= d
		}
		shape = []int{rows, shape[len(shape)-1]}
	}
	if anyShape && len(shape) == 0 {
		return nil, nil, 0, 0, fmt.Errorf("%s: expected an array of at least one dimension, got a scalar (shape ())", path)
	}
	if len(shape) != 2 {
		return nil, nil, 0, 0, fmt.Errorf("%s: expected a 2-D array, got shape %v", path, shape)
	}
	if r.Header.Descr.Fortran {
		return nil, nil, 0, 0, fmt.Errorf("%s: Fortran-ordered arrays are not supported; save with np.ascontiguousarray", path)
	}
	rows, cols := shape[0], shape[1]
	item := int64(0)
	switch r.Header.Descr.Type {
	case "<f4", "f4", "float32":
		item = 4
	case "<f8", "f8", "float64":
		item = 8
	}
	// The shape must describe exactly the bytes the file holds (a corrupt
	// header must not make the reader allocate for data that is not there).
	if item > 0 {
		st, err := f.Stat()
		if err != nil {
			return nil, nil, 0, 0, fmt.Errorf("%s: %v", path, err)
		}
		data := st.Size() - off
		if rows < 0 || cols < 0 {
			return nil, nil, 0, 0, fmt.Errorf("%s: shape (%d, %d): dimensions must be ≥ 0", path, rows, cols)
		}
		hi, need := bits.Mul64(uint64(rows), uint64(cols))
		hi2, need2 := bits.Mul64(need, uint64(item))
		if hi != 0 || hi2 != 0 || need2 > math.MaxInt64 {
			return nil, nil, 0, 0, fmt.Errorf("%s: shape (%d, %d) of %s needs more than 2^63 data bytes, the file has %d",
				path, rows, cols, r.Header.Descr.Type, data)
		}
		if int64(need2) != data {
			return nil, nil, 0, 0, fmt.Errorf("%s: shape (%d, %d) of %s needs %d data bytes, the file has %d",
				path, rows, cols, r.Header.Descr.Type, need2, data)
		}
		if !withData {
			return nil, nil, rows, cols, nil
		}
	}
	switch r.Header.Descr.Type {
	case "<f4", "f4", "float32":
		var v []float32
		if err := r.Read(&v); err != nil {
			if stop != nil && stop() {
				return nil, nil, 0, 0, errReadStopped // (npyio's error need not wrap it)
			}
			return nil, nil, 0, 0, fmt.Errorf("%s: %v", path, err)
		}
		return v, nil, rows, cols, nil
	case "<f8", "f8", "float64":
		var v []float64
		if err := r.Read(&v); err != nil {
			if stop != nil && stop() {
				return nil, nil, 0, 0, errReadStopped // (npyio's error need not wrap it)
			}
			return nil, nil, 0, 0, fmt.Errorf("%s: %v", path, err)
		}
		return nil, v, rows, cols, nil
	}
	return nil, nil, 0, 0, fmt.Errorf("%s: dtype %s not supported (float32, float64)", path, r.Header.Descr.Type)
}

// maxNPYHeader bounds the header of a .npy file (numpy itself refuses
// headers above 10 000 bytes unless told otherwise).
const maxNPYHeader = 1 << 20

// notRegular returns an error for a path that names something other
// than a regular file given as a file of kind what ("a .npy file":
// badinput.NotFile), or, for a .npy file, an anonymous pipe (its header
// is checked before its data is read: it is opened twice); nil for a
// regular file or a path that cannot be looked at (opening it reports
// why).
func notRegular(path, what string) error {
	if err := badinput.NotFile(path, what); err != nil {
		return err
	}
	if what == "a .npy file" && badinput.AnonymousPipe(path) {
		return fmt.Errorf("%s is a pipe, not a .npy file: an input array is read twice (its shape is checked first); write it to a file", path)
	}
	return nil
}

// npyLit is a Python literal of a .npy header's dictionary.
type npyLit struct {
	kind  byte   // 's' string, 'i' integer, 'n' other number, 'b' True or False, '0' None, 't' tuple, 'l' list
	text  string // its text in the header
	str   string // a string's text between its quotes
	big   bool   // an integer beyond int64
	v     int64  // an integer's value
	items []npyLit
}

// npyHeaderParser reads the dictionary of a .npy header.
type npyHeaderParser struct {
	h   string
	pos int
}

// npyHeaderForm is what a .npy header is, said where it is not.
const npyHeaderForm = "a dictionary of 'descr', 'fortran_order' and 'shape', as numpy.save writes: {'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }"

// checkNPYHeader checks that the header text h (after the preamble) is
// a dictionary of Python literals with the keys 'descr' (a string),
// 'fortran_order' (True or False) and 'shape' (a tuple of whole numbers
// ≥ 0), as numpy reads it, and says what is wrong where it is not: the
// reader's own parse let through or misread much of that, or reported
// it in its internals' words ("strconv.Atoi: parsing \"8)\": invalid
// syntax"). It returns the shape, against which the reader's is checked.
func checkNPYHeader(h string) (shape []int, err error) {
	p := npyHeaderParser{h: h}
	p.space()
	if p.pos == len(h) {
		return nil, fmt.Errorf("malformed .npy header: blank, not %s", npyHeaderForm)
	}
	if !p.eat('{') {
		return nil, fmt.Errorf("malformed .npy header: %s, not %s", p.found(), npyHeaderForm)
	}
	keys := map[string]npyLit{}
	var order []string
	for {
		p.space()
		if p.eat('}') {
			break
		}
		k, err := p.value(0)
		if err != nil {
			return nil, fmt.Errorf("malformed .npy header: a key %v", err)
		}
		if k.kind != 's' {
			return nil, fmt.Errorf("malformed .npy header: the key %s is not a string (want %s)", showNPY(k.text, 40), npyHeaderForm)
		}
		p.space()
		if !p.eat(':') {
			return nil, fmt.Errorf("malformed .npy header: %s after the key %s, not ':'", p.found(), showNPY(k.text, 40))
		}
		v, err := p.value(0)
		if err != nil {
			return nil, fmt.Errorf("malformed .npy header: the value of %s %v", showNPY(k.text, 40), err)
		}
		if _, ok := keys[k.str]; ok {
			return nil, fmt.Errorf("malformed .npy header: the key %s is given twice", showNPY(k.text, 40))
		}
		keys[k.str] = v
		order = append(order, k.str)
		p.space()
		if p.eat(',') {
			continue
		}
		if !p.eat('}') {
			return nil, fmt.Errorf("malformed .npy header: %s after the value of %s, not ',' or '}'", p.found(), showNPY(k.text, 40))
		}
		break
	}
	p.space()
	if p.pos < len(h) {
		return nil, fmt.Errorf("malformed .npy header: %s after the dictionary (only spaces and a newline may follow it)", p.found())
	}
	for _, k := range order {
		if k != "descr" && k != "fortran_order" && k != "shape" {
			return nil, fmt.Errorf("malformed .npy header: the key %s besides 'descr', 'fortran_order' and 'shape' (want %s)", showNPY("'"+k+"'", 40), npyHeaderForm)
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if _, ok := keys[k]; !ok {
			return nil, fmt.Errorf("malformed .npy header: no key '%s' (want %s)", k, npyHeaderForm)
		}
	}
	switch d := keys["descr"]; d.kind {
	case 's':
	case 'l':
		return nil, fmt.Errorf("the header's descr %s is a structured dtype: not supported (float32 '<f4', float64 '<f8')", showNPY(d.text, 60))
	default:
		return nil, fmt.Errorf("the header's descr is %s: want a dtype string, '<f4' (float32) or '<f8' (float64)", showNPY(d.text, 60))
	}
	if o := keys["fortran_order"]; o.kind != 'b' {
		return nil, fmt.Errorf("the header's fortran_order is %s: want True or False", showNPY(o.text, 60))
	}
	tuple := keys["shape"]
	if tuple.kind != 't' {
		what := "not a tuple"
		if tuple.kind == 'l' {
			what = "a list, not a tuple"
		}
		return nil, fmt.Errorf("the header's shape is %s, %s: want a tuple of whole numbers ≥ 0, such as (4, 8)", showNPY(tuple.text, 60), what)
	}
	for _, d := range tuple.items {
		switch {
		case d.kind != 'i':
			return nil, fmt.Errorf("the header's shape %s is not a tuple of whole numbers ≥ 0, such as (4, 8): it holds %s", showNPY(tuple.text, 60), showNPY(d.text, 40))
		case d.big:
			return nil, fmt.Errorf("the header's shape %s holds %s, beyond 2^63", showNPY(tuple.text, 60), showNPY(d.text, 40))
		case d.v < 0:
			return nil, fmt.Errorf("the header's shape %s holds %s: dimensions must be ≥ 0", showNPY(tuple.text, 60), d.text)
		}
		shape = append(shape, int(d.v))
	}
	return shape, nil
}

// space skips white space.
func (p *npyHeaderParser) space() {
	for p.pos < len(p.h) && strings.IndexByte(" \t\r\n", p.h[p.pos]) >= 0 {
		p.pos++
	}
}

// eat skips c where it comes next, reporting whether it did.
func (p *npyHeaderParser) eat(c byte) bool {
	if p.pos < len(p.h) && p.h[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// found says what the header holds at the parser's place, for a message:
// "found X at byte N".
func (p *npyHeaderParser) found() string {
	if p.pos >= len(p.h) {
		return "found the header's end"
	}
	return fmt.Sprintf("found %s at byte %d", showNPY(strings.TrimRight(p.h[p.pos:], " \n"), 24), p.pos)
}

// maxNPYDepth bounds the nesting of a .npy header's tuples and lists.
const maxNPYDepth = 8

// value reads a literal: a string, a number, True, False, None, or a tuple
// or list of literals (depth: the enclosing ones). Its error completes a
// sentence about the literal ("is not a Python literal: found …").
func (p *npyHeaderParser) value(depth int) (npyLit, error) {
	p.space()
	start := p.pos
	bad := func(what string) (npyLit, error) {
		p.pos = start
		return npyLit{}, fmt.Errorf("%s: %s", what, p.found())
	}
	if p.pos >= len(p.h) {
		return bad("is cut short")
	}
	switch c := p.h[p.pos]; {
	case c == '\'' || c == '"':
		for p.pos++; p.pos < len(p.h) && p.h[p.pos] != c && p.h[p.pos] != '\n'; p.pos++ {
			if p.h[p.pos] == '\\' {
				p.pos++
			}
		}
		if p.pos >= len(p.h) || p.h[p.pos] != c {
			return bad("is a string without its closing quote")
		}
		p.pos++
		return npyLit{kind: 's', text: p.h[start:p.pos], str: p.h[start+1 : p.pos-1]}, nil
	case c == '(' || c == '[':
		if depth >= maxNPYDepth {
			return bad(fmt.Sprintf("is nested too deep (over %d tuples or lists)", maxNPYDepth))
		}
		end, kind := byte(')'), byte('t')
		if c == '[' {
			end, kind = ']', 'l'
		}
		p.pos++
		var items []npyLit
		comma := false
		for {
			p.space()
			if p.eat(end) {
				break
			}
			if len(items) > 0 && !comma {
				return npyLit{}, fmt.Errorf("%s… lacks a ',' or '%c': %s", showNPY(strings.TrimRight(p.h[start:p.pos], " \t\r\n"), 40), end, p.found())
			}
			it, err := p.value(depth + 1)
			if err != nil {
				if depth > 0 {
					return npyLit{}, err // (said once, by the outermost)
				}
				return npyLit{}, fmt.Errorf("%s… holds an item that %v", showNPY(p.h[start:p.pos], 40), err)
			}
			items = append(items, it)
			p.space()
			comma = p.eat(',')
		}
		if kind == 't' && len(items) == 1 && !comma {
			// (4) is 4 in Python, not a tuple.
			it := items[0]
			it.text = p.h[start:p.pos]
			return it, nil
		}
		return npyLit{kind: kind, text: p.h[start:p.pos], items: items}, nil
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		p.pos++
		for p.pos < len(p.h) && (isNPYWord(p.h[p.pos]) || p.h[p.pos] == '.' ||
			(p.h[p.pos] == '-' || p.h[p.pos] == '+') && (p.h[p.pos-1] == 'e' || p.h[p.pos-1] == 'E')) {
			p.pos++
		}
		t := p.h[start:p.pos]
		lit := npyLit{kind: 'n', text: t}
		// Whole numbers; Python 2's longs (4L), which numpy reads too.
		digits := strings.TrimLeft(strings.TrimRight(t, "Ll"), "+-")
		if len(t)-len(strings.TrimLeft(t, "+-")) <= 1 && len(t)-len(strings.TrimRight(t, "Ll")) <= 1 &&
			digits != "" && strings.Trim(digits, "0123456789") == "" {
			lit.kind = 'i'
			v, err := strconv.ParseInt(strings.TrimRight(t, "Ll"), 10, 64)
			lit.v, lit.big = v, err != nil
		}
		return lit, nil
	case isNPYWord(c):
		for p.pos < len(p.h) && isNPYWord(p.h[p.pos]) {
			p.pos++
		}
		switch t := p.h[start:p.pos]; t {
		case "True", "False":
			return npyLit{kind: 'b', text: t}, nil
		case "None":
			return npyLit{kind: '0', text: t}, nil
		}
	}
	return bad("is not a Python literal")
}

// isNPYWord reports whether c may be part of a name or number.
func isNPYWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// showNPY returns a piece of a .npy header for a message: at most max
// bytes of it (saying how long it was), quoted where it holds what would
// not read as itself on one line.
func showNPY(s string, max int) string {
	clipped := len(s) > max
	if clipped {
		s = s[:max]
	}
	for _, r := range s {
		if r < ' ' || r > '~' {
			s = strconv.QuoteToASCII(s)
			break
		}
	}
	if clipped {
		s += "…"
	}
	return s
}

// checkNPYPreamble checks the magic, version and header length of the .npy
// file f against the file's size before npyio allocates for the header,
// and returns the header's text and where the data start, leaving f at
// its start.
func checkNPYPreamble(f *os.File) (header string, dataOffset int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	var pre [12]byte
	n, _ := io.ReadFull(f, pre[:])
	if n < 6 || string(pre[:6]) != "\x93NUMPY" {
		return "", 0, errors.New("not a .npy file (no \\x93NUMPY magic)")
	}
	if n < 10 {
		return "", 0, fmt.Errorf("malformed .npy file: %d bytes, cut short before its header length", n)
	}
	var hlen, start int64
	switch pre[6] {
	case 1:
		hlen, start = int64(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 3:
		// (The reader takes 1.0 and 2.0; numpy writes 3.0 only for
		// structured dtypes with non-Latin-1 field names.)
		return "", 0, errors.New("format version 3.0 is not read here (1.0 or 2.0, as numpy.save writes a float32 or float64 array)")
	case 2:
		if n < 12 {
			return "", 0, errors.New("malformed .npy file: the header length is cut short")
		}
		hlen, start = int64(binary.LittleEndian.Uint32(pre[8:12])), 12
	default:
		return "", 0, fmt.Errorf("unsupported .npy format version %d.%d (1.0 or 2.0)", pre[6], pre[7])
	}
	switch {
	case hlen > maxNPYHeader:
		return "", 0, fmt.Errorf("malformed .npy file: header of %d bytes, at most %d", hlen, maxNPYHeader)
	case start+hlen > st.Size() && st.Mode().IsRegular():
		return "", 0, fmt.Errorf("malformed .npy file: the header claims %d bytes, the file has %d after the preamble", hlen, st.Size()-start)
	case hlen < 2:
		return "", 0, fmt.Errorf("malformed .npy file: header of %d bytes", hlen)
	}
	buf := make([]byte, hlen)
	if _, err := f.ReadAt(buf, start); err != nil {
		return "", 0, fmt.Errorf("malformed .npy file: %v", err)
	}
	_, err = f.Seek(0, io.SeekStart)
	return string(buf), start + hlen, err
}

// WriteOutputs writes each output as DIR/NAME.npy, atomically (package
// outfile), and returns the file names written. A name that is not a plain
// file name (CheckOutputName) is refused before anything is written.
func WriteOutputs(dir string, outs []Output) ([]string, error) {
	for _, o := range outs {
		if err := CheckOutputName(o.Name); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for _, o := range outs {
		path := filepath.Join(dir, o.Name+".npy")
		err := outfile.Write(path, func(f io.Writer) error {
			switch {
			case o.F32 != nil:
				return writeNPY(f, o.F32, o.Shape)
			case o.F16 != nil:
				return writeNPYf16(f, o.F16, o.Shape)
			case o.F64 != nil:
				return writeNPYAs(f, "<f8", o.F64, o.Shape)
			case o.I32 != nil:
				return writeNPYAs(f, "<i4", o.I32, o.Shape)
			case o.I8 != nil:
				return writeNPYAs(f, "|i1", o.I8, o.Shape)
			}
			return nil
		})
		if err != nil {
			return names, fmt.Errorf("%s: %v", path, err)
		}
		names = append(names, o.Name+".npy")
	}
	return names, nil
}

// CheckOutputName reports whether name can name an output array written
// as DIR/NAME.npy: a plain file name of letters, digits, '_', '-' and '.',
// not starting with '.' — never a path that could leave DIR.
func CheckOutputName(name string) error {
	ok := name != "" && name[0] != '.' && len(name) <= 200
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("output name %q: must be a plain file name (letters, digits, _ - .; not starting with .)", name)
	}
	return nil
}

// writeNPY writes v as a little-endian float32 array of the given shape
// (row-major). npyio writes 1-D slices itself; it derives a 2-D shape only
// from fixed-size arrays or gonum's float64 matrices, so 2-D float32 arrays
// get their (version 1.0) header written here and the data from npyio's
// encoding of the flat slice.
func writeNPY(f io.Writer, v []float32, shape []int) error {
	if len(shape) != 2 {
		return npyio.Write(f, v)
	}
	return writeNPYAs(f, "<f4", v, shape)
}

// writeNPYAs writes a 2-D array of fixed-size values with numpy type descr
// (e.g. <f4, <i4, |i1).
func writeNPYAs[T float32 | float64 | int32 | int8](f io.Writer, descr string, v []T, shape []int) error {
	dims := fmt.Sprintf("(%d, %d)", shape[0], shape[1])
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + dims + ", }"
	// Magic (6) + version (2) + header length (2) + dict + padding + '\n'
	// must be a multiple of 64.
	pad := 64 - (10+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	buf := []byte("\x93NUMPY\x01\x00")
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(hdr)))
	buf = append(buf, hdr...)
	if _, err := f.Write(buf); err != nil {
		return err
	}
	return binary.Write(f, binary.LittleEndian, v)
}

// writeNPYf16 writes FP16 patterns as float32 values (numpy reads both; the
// values are exact), keeping the file readable without float16 support.
func writeNPYf16(f io.Writer, v []uint16, shape []int) error {
	out := make([]float32, len(v))
	for i, h := range v {
		out[i] = fp.F16ToF32(h)
	}
	return writeNPY(f, out, shape)
}

// pow2 returns 2^e.
func pow2(e int) float64 { return math.Ldexp(1, e) }
