package programs

import (
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/davinci-sim/davinci-sim/cluster"
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
// the program and machine files only (its run refuses it).
func InputFiles(f *File, opts Options) []InputFile {
	var out []InputFile
	add := func(what, path string) {
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			out = append(out, InputFile{What: what, Path: path})
		}
	}
	add("the program file", f.Path)
	if ref := machineRef(f, opts); isMachinePath(ref) {
		add("the machine file", ref)
	}
	if name := ClusterMachine(f, opts); name != "" {
		if topo, err := cluster.LoadSystem(name, opts.Overrides); err == nil {
			for _, p := range topo.Files() { // (the node file a cluster file names)
				add("a cluster or node description", p)
			}
		}
	}
	params, err := decodedParams(f, opts)
	if err != nil {
		return out
	}
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
				add("key "+strconv.Quote(key), f.Resolve(s))
			}
		}
	}
	walk(reflect.ValueOf(params).Elem(), "")
	return out
}

// joinKey joins a dotted key path and a key.
func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
