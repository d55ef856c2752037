package programs

import (
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/machines"
)

// InputFile is a file a run reads: the program file, a machine file, a
// file a key of the program names (inputs.a, an asm tensor's file).
type InputFile struct {
	What string // as messages name it: "the program file", "key \"inputs.a\""
	Path string // as the run opens it
}

// InputFiles returns the files on disk a run of f with opts reads, so that
// the command line can refuse an output (-o DIR, --trace, a profile) that
// would replace one: the program file (not an embedded example), the
// machine file where the machine is one, and every file a string key of
// the program names once the run's overrides are applied (a value naming
// no regular file is no input). A program whose keys do not decode gives
// the program and machine files only (its run refuses it). They are
// InputPaths' that are regular files.
func InputFiles(f *File, opts Options) []InputFile {
	var out []InputFile
	for _, in := range InputPaths(f, opts) {
		if st, err := os.Stat(in.Path); err == nil && st.Mode().IsRegular() {
			out = append(out, in)
		}
	}
	return out
}

// InputPaths returns the files InputFiles returns without looking at
// which of them are regular files: those it keeps, and the names of none
// (a program key's value that names no file: buffering's "double",
// resolved against the program's folder). For a caller that looks at
// each distinct path once for many runs: a study's check of its outputs
// against the files its points read.
//
// The program's keys are decoded once per parsed file and distinct set
// of its string-naming overrides, not once per call (stringKeys): a study
// asks for each of its points, 100000 decodes of one program that differ
// only in program.m.
func InputPaths(f *File, opts Options) []InputFile {
	out := []InputFile{{What: "the program file", Path: f.Path}}
	ref := machineRef(f, opts)
	if isMachinePath(ref) {
		out = append(out, InputFile{What: "the machine file", Path: ref})
	}
	if cluster.IsDescription(ref) { // (ClusterMachine)
		if topo, err := cluster.LoadSystem(ref, opts.Overrides); err == nil {
			for _, p := range topo.Files() { // (the node file a cluster file names)
				out = append(out, InputFile{What: "a cluster or node description", Path: p})
			}
		}
	}
	for _, k := range stringKeys(f, opts) {
		out = append(out, InputFile{What: k.what, Path: k.path})
	}
	return out
}

// stringKey is a non-empty string key of a program's decoded parameters:
// as InputFiles names it ("key \"inputs.a\""), and its value resolved
// against the program's folder.
type stringKey struct{ what, path string }

// stringKeysOf returns the string keys of params (a pointer to a kind's
// decoded Params), in the order of the struct's fields: each non-empty
// string on one line but the machine's (machineRef's, not a file a
// program key reads), resolved against f's folder.
func stringKeysOf(f *File, params any) []stringKey {
	var out []stringKey
	var walk func(v reflect.Value, key string)
	walk = func(v reflect.Value, key string) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), key)
			}
		case reflect.Struct:
			t := v.Type()
			for i := range t.NumField() {
				if !t.Field(i).IsExported() {
					continue
				}
				name, _, _ := strings.Cut(t.Field(i).Tag.Get("mapstructure"), ",")
				k := key
				if name != "" {
					k = joinKey(key, name)
				}
				walk(v.Field(i), k)
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i), key+"["+strconv.Itoa(i)+"]")
			}
		case reflect.Map:
			for _, mk := range v.MapKeys() {
				walk(v.MapIndex(mk), joinKey(key, strings.ToLower(mk.String())))
			}
		case reflect.String:
			if s := v.String(); s != "" && key != "machine" && !strings.ContainsAny(s, "\n\x00") {
				out = append(out, stringKey{"key " + strconv.Quote(key), f.Resolve(s)})
			}
		}
	}
	walk(reflect.ValueOf(params).Elem(), "")
	return out
}

// stringKeys returns the string keys of f's parameters decoded with opts'
// program.* overrides (stringKeysOf), none where they do not decode —
// what decoding them each time gives, with fewer decodes:
//
// An override of a scalar key (an integer, size, number or boolean, not
// in a section: program.m, program.tiling.bm — scalarKeys) sets that key's
// field alone, and whether its value is refused (not a number, a 0 where
// 0 is refused) depends on that value alone. So calls whose other
// overrides are the same and that override the same scalar keys (a
// group) have the same string keys where they decode, and decode where
// each of their scalar values does in place of the same key's in a call
// of the group that decoded (ref): one decode per group and scalar value,
// ~10000 for a study of 100000 points over 10000 sizes. (machine.*
// overrides do not reach a program's keys: they are in no group's key. A
// group none of whose calls decodes decodes at each.) The decodes are
// kept per parsed file (memoFor) while it is in use.
func stringKeys(f *File, opts Options) []stringKey {
	if f.Kind == nil || f.Kind.Params == nil || f.data == nil {
		return nil // (decodedParams: no parameters)
	}
	m := memoFor(f)
	var prog []machines.Override // the overrides Decode applies, in order
	for _, o := range opts.Overrides {
		if _, ok := machines.CutPrefixFold(o.Path, "program."); ok && len(o.Path) > len("program.") {
			prog = append(prog, o)
		}
	}
	plain := m.plainOf(prog)
	var key strings.Builder // the group: each override's path, and its value where not plain
	for i, o := range prog {
		key.WriteString(strconv.Itoa(len(o.Path)) + ":" + strings.ToLower(o.Path))
		if plain[i] {
			key.WriteString("=")
		} else {
			key.WriteString(strconv.Itoa(len(o.Value)) + ":" + o.Value)
		}
	}
	g := m.group(key.String())
	g.mu.Lock()
	ref := g.ref
	g.mu.Unlock()
	if ref == nil {
		// No call of the group has decoded yet: this one decodes as a
		// call alone does, and stands for the group where it decodes.
		m.decodes.Add(1)
		params, err := decodedParams(f, opts)
		if err != nil {
			return nil
		}
		keys := stringKeysOf(f, params)
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.ref == nil {
			g.ref, g.keys = prog, keys
			for i, o := range prog {
				if plain[i] {
					g.ok[valueKey(i, o.Value)] = true
				}
			}
		}
		return keys
	}
	for i, o := range prog {
		if !plain[i] {
			continue
		}
		vk := valueKey(i, o.Value)
		g.mu.Lock()
		good, seen := g.ok[vk]
		g.mu.Unlock()
		if !seen {
			// The group's call that decoded, with this value in place of
			// its own.
			with := append([]machines.Override(nil), ref...)
			with[i].Value = o.Value
			m.decodes.Add(1)
			_, err := decodedParams(f, Options{Overrides: with})
			good = err == nil
			g.mu.Lock()
			g.ok[vk] = good
			g.mu.Unlock()
		}
		if !good {
			return nil
		}
	}
	return g.keys
}

// valueKey is the key of g.ok for the value v of a group's i-th override.
func valueKey(i int, v string) string { return strconv.Itoa(i) + ":" + v }

// inputMemo holds the decodes stringKeys made of one parsed file.
type inputMemo struct {
	mu sync.Mutex
	// scalar holds the file's kind's scalar keys (scalarKeys), in
	// lower case.
	scalar map[string]bool
	groups map[string]*inputGroup // by stringKeys' key of the group
	// decodes counts the decodes of the file's keys made.
	decodes atomic.Int64
}

// inputGroup is what stringKeys knows of a group of calls (alike but for
// the values of the scalar keys they override).
type inputGroup struct {
	mu sync.Mutex
	// ref is the program.* overrides of the group's call that decoded,
	// nil until one did; keys are its string keys.
	ref  []machines.Override
	keys []stringKey
	// ok holds, for the scalar overrides' values (valueKey), whether ref
	// with that value in place of its own decodes.
	ok map[string]bool
}

// group returns the memo's group of the key, made where new.
func (m *inputMemo) group(key string) *inputGroup {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.groups[key]
	if g == nil {
		g = &inputGroup{ok: map[string]bool{}}
		m.groups[key] = g
	}
	return g
}

// plainOf reports, for each of the program.* overrides prog, whether it
// is plain: it sets a scalar key of the file's kind (scalarKeys). (Its
// value is checked in its place among the group's overrides, which are
// the same paths in the same order: one set twice, or a key and a key
// under it, are checked as the call applies them.)
func (m *inputMemo) plainOf(prog []machines.Override) []bool {
	plain := make([]bool, len(prog))
	for i, o := range prog {
		plain[i] = m.scalar[strings.ToLower(o.Path[len("program."):])]
	}
	return plain
}

// scalarKeys returns, in lower case, the keys of kind k that take one
// number or boolean (an integer, size, number, frequency, bandwidth or
// boolean key) outside its sections. (A section's value is assembled from
// a name, its presets and its keys — machines.Config.SetSections —: its
// keys are left to a decode per value, a choice to be safe rather than a
// case known to differ. A key in a list has no such path: an override
// names its entry, pieces[1].scale.)
func scalarKeys(k *Kind) map[string]bool {
	out := map[string]bool{}
	for _, key := range k.Keys() {
		switch key.Type {
		case "integer", "size", "number", "frequency", "bandwidth", "boolean":
		default:
			continue
		}
		top, _, _ := strings.Cut(key.Path, ".")
		inSection := false
		for s := range k.Sections {
			if strings.EqualFold(s, top) {
				inSection = true
			}
		}
		if inSection {
			continue
		}
		out[strings.ToLower(key.Path)] = true
	}
	return out
}

// memos holds each parsed file's inputMemo while the file is in use: a
// study's stamps and output check keep its program files for its run;
// a file collected takes its memo with it.
var memos struct {
	mu sync.Mutex
	m  map[weak.Pointer[File]]*inputMemo
}

// memoFor returns f's inputMemo, made where new.
func memoFor(f *File) *inputMemo {
	w := weak.Make(f)
	memos.mu.Lock()
	defer memos.mu.Unlock()
	if m := memos.m[w]; m != nil {
		return m
	}
	if memos.m == nil {
		memos.m = map[weak.Pointer[File]]*inputMemo{}
	}
	m := &inputMemo{scalar: scalarKeys(f.Kind), groups: map[string]*inputGroup{}}
	memos.m[w] = m
	runtime.AddCleanup(f, func(w weak.Pointer[File]) {
		memos.mu.Lock()
		delete(memos.m, w)
		memos.mu.Unlock()
	}, w)
	return m
}

// joinKey joins a dotted key path and a key.
func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
