package machines

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/davinci-sim/davinci-sim/badinput"

	"go.yaml.in/yaml/v3"
)

//go:embed *.yaml
var files embed.FS

// Names lists the embedded machines, sorted.
func Names() []string { return YAMLNames(files) }

// YAMLNames lists the names of the .yaml files at the top of an embedded
// file system (without the extension), sorted.
func YAMLNames(fsys embed.FS) []string {
	entries, err := fsys.ReadDir(".")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// RefError is Load's error where the machine named is not there — neither
// embedded nor a readable file —, as opposed to one in the machine's
// contents (which names its file): the caller knows where the name came
// from (a program file's key, -m) and says so.
type RefError struct{ Err error }

func (e *RefError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *RefError) Unwrap() error { return e.Err }

// UnknownError is Load's error for a name that is neither an embedded
// machine nor a file. Callers that take other names where a machine goes
// (cluster and node descriptions) list them in Also.
type UnknownError struct {
	Name string
	// Also names what else the name could have been ("a cluster or node
	// description (cloudbrain2, cloudbrain2-node)"; "" for none).
	Also string
}

func (e *UnknownError) Error() string {
	name := fmt.Sprintf("%+q", e.Name)
	if s := suggestMachine(e.Name); s != "" {
		name += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if e.Also != "" {
		return fmt.Sprintf("unknown machine %s: not an embedded machine (%s), %s, nor a file", name, strings.Join(Names(), ", "), e.Also)
	}
	return fmt.Sprintf("unknown machine %s: not an embedded machine (%s) nor a file", name, strings.Join(Names(), ", "))
}

// suggestMachine returns the embedded machine name likely meant by name:
// the only one that name begins or is a whole part of ("mi300" for
// mi300x, "h100" for h100-sxm, "910a" for ascend-910a), else a typo of one
// (badinput.Suggest); "" for none.
func suggestMachine(name string) string {
	lower := strings.ToLower(name)
	if lower == "" {
		return ""
	}
	var parts []string
	for _, n := range Names() {
		if strings.HasPrefix(n, lower) || slices.Contains(strings.Split(n, "-"), lower) {
			parts = append(parts, n)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	if len(parts) > 1 {
		return ""
	}
	return badinput.Suggest(name, Names())
}

// Source returns the YAML text (with its comments) of the embedded machine
// name.
func Source(name string) ([]byte, error) {
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("unknown machine %+q (embedded: %s)", name, strings.Join(Names(), ", "))
	}
	return files.ReadFile(name + ".yaml")
}

// Text returns the YAML text Load reads for nameOrPath: the embedded
// machine's, or the file's.
func Text(nameOrPath string) ([]byte, error) {
	if slices.Contains(Names(), nameOrPath) {
		return Source(nameOrPath)
	}
	return ReadFile(nameOrPath, "machine file")
}

// Load reads a machine — an embedded name such as "ascend-910a" or the path
// of a YAML file — applies the overrides whose path starts with "machine."
// (others are ignored), decodes it strictly and validates it. Every error
// names the file and key.
func Load(nameOrPath string, overrides []Override) (*Machine, error) {
	if slices.Contains(Names(), nameOrPath) {
		data, err := Source(nameOrPath)
		if err != nil {
			return nil, err
		}
		m, err := LoadBytes(nameOrPath+".yaml", data, overrides)
		if err == nil && m.Name == "" { // (--set machine.name= resets it)
			m.Name = nameOrPath
		}
		return m, err
	}
	data, err := ReadFile(nameOrPath, "machine file")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(nameOrPath, `/\`) && filepath.Ext(nameOrPath) == "" {
			err = &UnknownError{Name: nameOrPath}
		}
		return nil, &RefError{err}
	}
	m, err := LoadBytes(nameOrPath, data, overrides)
	if err != nil {
		if IsStudy(nameOrPath, data) {
			return nil, NotAStudy(nameOrPath, "machine")
		}
		return nil, err
	}
	if m.Name == "" {
		m.Name = strings.TrimSuffix(filepath.Base(nameOrPath), filepath.Ext(nameOrPath))
	}
	return m, nil
}

// LoadBytes is Load on YAML text; source names it in messages. The name
// key may be empty here (Load defaults it to the file name).
func LoadBytes(source string, data []byte, overrides []Override) (*Machine, error) {
	c, err := ReadYAML(source, data)
	if err != nil {
		return nil, err
	}
	k, err := kindOf(c, overrides)
	if err != nil {
		return nil, err
	}
	return k.decode(c, overrides)
}

// optionalKeys may be left out of a machine file: they default to zero
// (core.tensor.sustained_clock: no entry, every type at core.clock).
var optionalKeys = []string{"name", "description", "kind", "l2", "llc", "power", "host", "core.tensor.sustained_clock"}

// requireAll reports the value keys of t that neither the file nor an
// override sets: a machine file spells out every number, so a forgotten
// latency cannot silently become 0.
func (c *Config) requireAll(t reflect.Type, prefix, example string) error {
	var missing []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for _, key := range fieldNames(t) {
			p := join(prefix, key)
			if slices.Contains(optionalKeys, strings.ToLower(p)) {
				continue
			}
			ft, _ := field(t, key)
			if ft = deref(ft); ft.Kind() == reflect.Struct && !isUnitOrText(ft) {
				walk(ft, p)
			} else if !c.v.IsSet(strings.ToLower(p)) {
				missing = append(missing, p)
			}
		}
	}
	walk(t, prefix)
	if len(missing) == 0 {
		return nil
	}
	more := ""
	if len(missing) > 4 {
		more = fmt.Sprintf(" and %d more", len(missing)-4)
		missing = missing[:4]
	}
	return fmt.Errorf("%s: missing key %s%s (a machine file gives every value; see `davinci-sim machines %s`)",
		c.Source, strings.Join(quoteAll(missing), ", "), more, example)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// MaxFileBytes bounds the size of a text input file (machine, program,
// study or assembly file): far above any real one, far below what would
// exhaust memory when read (a device such as /dev/zero never ends).
const MaxFileBytes = 64 << 20

// ReadFile reads a text input file of at most MaxFileBytes; what names the
// kind of file in messages ("machine file", "program file", …).
func ReadFile(path, what string) ([]byte, error) {
	if err := badinput.NotFile(path, article(what)+" "+what); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if data, ok := pipesRead.Load(path); ok {
		return data.([]byte), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	tooLarge := fmt.Errorf("%s: %s is larger than %d MiB, more than any %s holds", what, path, MaxFileBytes>>20, what)
	if st, err := f.Stat(); err == nil && st.Size() > MaxFileBytes {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if len(data) > MaxFileBytes {
		return nil, tooLarge
	}
	if st, err := f.Stat(); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		// An anonymous pipe (-m <(…), /dev/stdin) reads once; a run reads
		// its machine more than once (is it a cluster description? then
		// the machine): later reads get what the first read.
		pipesRead.Store(path, data)
	}
	return data, nil
}

// article returns "a" or "an" for a noun.
func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an"
	}
	return "a"
}

// pipesRead holds what ReadFile read from each anonymous pipe, by path.
var pipesRead sync.Map

// IsStudy reports whether data is a study file's YAML (a top-level mapping
// with metrics and vary or points, and no kind; keys case aside): given
// where a program or machine file was meant, its message says so.
func IsStudy(path string, data []byte) bool {
	keys := TopLevel(data)
	return keys != nil && keys["kind"] == nil && keys["metrics"] != nil && (keys["vary"] != nil || keys["points"] != nil)
}

// TopLevel returns the top level of YAML text data, a mapping: each key's
// value node by its name, lower-cased (the first of a key given twice; an
// alias resolved), or nil where data is not one YAML document whose top
// level is a mapping. The text is parsed into nodes, never decoded into a
// map: go-yaml's check of a map's repeated keys builds a message for each
// pair of them (a program naming one key 10^4 times took 8 GB and a
// crash to say what kind of file it was, 3000 times 3 s).
func TopLevel(data []byte) map[string]*yaml.Node {
	root, err := ParseYAML("", data)
	if err != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	doc := root.Content[0]
	keys := map[string]*yaml.Node{}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := strings.ToLower(doc.Content[i].Value), doc.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if _, ok := keys[k]; !ok {
			keys[k] = v
		}
	}
	return keys
}

// NotAStudy is the error for a study file given where a file of kind
// what ("program", "machine") was meant.
func NotAStudy(path, what string) error {
	return fmt.Errorf("%s: a study file (vary or points, metrics), not a %s: run it with davinci-sim sweep %s -o DIR", path, what, path)
}
