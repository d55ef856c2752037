package machines

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// DefaultKind is the kind of a machine file without a kind: key.
const DefaultKind = "davinci"

// Kind is a machine kind: a family of cores with its own core: section.
type Kind struct {
	Name    string
	Summary string
	// decode decodes and checks a file whose kind is this one.
	decode func(c *Config, overrides []Override) (*Machine, error)
	// file is the type a file of this kind decodes into.
	file reflect.Type
}

var kinds = map[string]*Kind{}

// registerKind adds the machine kind whose core: section is C (a struct
// whose pointer implements CoreSpec). Called from the kinds' init functions.
func registerKind[C any, PC interface {
	*C
	CoreSpec
}](name, summary string) {
	kinds[name] = &Kind{Name: name, Summary: summary, decode: decodeKind[C, PC], file: reflect.TypeFor[machineFile[C]]()}
}

// otherKind returns a machine kind other than kind whose keys the file's
// all are ("" when none): a file whose kind: line is wrong.
func (c *Config) otherKind(kind string) string {
	if c.doc == nil {
		return ""
	}
	if kind == "" {
		kind = DefaultKind
	}
	for _, name := range kindNames() {
		k := kinds[name]
		if name == kind {
			continue
		}
		var errs []error
		c.check(c.doc, k.file, "", 0, &errs)
		if len(errs) == 0 {
			return name
		}
	}
	return ""
}

// kindExample names an embedded machine of kind (a complete file to copy).
func kindExample(kind string) string {
	switch kind {
	case "nvidia-sm":
		return "a100"
	case "amd-cu":
		return "mi210"
	}
	return "ascend-910a"
}

// Kinds returns every machine kind, sorted by name.
func Kinds() []*Kind {
	return slices.SortedFunc(maps.Values(kinds), func(a, b *Kind) int { return strings.Compare(a.Name, b.Name) })
}

func kindNames() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.Name)
	}
	return out
}

// machineFile is the file layout of a machine of kind with core section C:
// Machine with a concrete core type, so that the strict decoder, the
// required-key check and --set all see the kind's own keys.
type machineFile[C any] struct {
	Name        string       `mapstructure:"name"`
	Description string       `mapstructure:"description"`
	Kind        string       `mapstructure:"kind"`
	Cores       int          `mapstructure:"cores"`
	Core        C            `mapstructure:"core"`
	GM          GlobalMemory `mapstructure:"gm"`
	L2          L2Cache      `mapstructure:"l2"`
	LLC         LLC          `mapstructure:"llc"`
	Power       Power        `mapstructure:"power"`
	Host        Host         `mapstructure:"host"`
}

func decodeKind[C any, PC interface {
	*C
	CoreSpec
}](c *Config, overrides []Override) (*Machine, error) {
	f := new(machineFile[C])
	if err := ApplyOverrides(c, f, "machine", overrides); err != nil {
		return nil, err
	}
	if err := DecodeStrict(c, f); err != nil {
		kind, _ := c.v.Get("kind").(string)
		if other := c.otherKind(kind); other != "" && unknownKeys(err) > 2 {
			where, _ := c.where("kind")
			if kind == "" {
				return nil, fmt.Errorf("%s: key \"kind\": missing (so %s), but the file's keys are kind %s's: add kind: %s", where, DefaultKind, other, other)
			}
			return nil, fmt.Errorf("%s: key \"kind\": %s, but the file's keys are kind %s's (each unknown to %s)", where, kind, other, kind)
		}
		return nil, err
	}
	if err := c.requireAll(reflect.TypeFor[machineFile[C]](), "", kindExample(f.Kind)); err != nil {
		return nil, err
	}
	m := &Machine{Name: f.Name, Description: f.Description, Kind: f.Kind, Cores: f.Cores,
		Core: PC(&f.Core), GM: f.GM, L2: f.L2, LLC: f.LLC, Power: f.Power, Host: f.Host}
	if m.Kind == "" {
		m.Kind = DefaultKind
	}
	if err := c.zeroSections(m); err != nil {
		return nil, err
	}
	if errs := m.problems(); len(errs) > 0 {
		out := make([]error, len(errs))
		for i, e := range errs {
			where, key := c.where(strings.ToLower(e.key))
			msg := e.msg
			if !strings.HasPrefix(where, "--set ") && len(c.overridden) > 0 {
				// A key the file sets, refused next to a value an
				// override gave (smem_per_cta against --set smem).
				msg += " (with --set " + strings.Join(slices.Sorted(maps.Values(c.overridden)), ", --set ") + ")"
			}
			out[i] = fmt.Errorf("%s: key %q: %s", where, key, msg)
		}
		return nil, errors.Join(out...)
	}
	return m, nil
}

// kindOf returns the kind a configuration names (after --set machine.kind),
// or an error naming the file, line and the known kinds.
func kindOf(c *Config, overrides []Override) (*Kind, error) {
	name := DefaultKind
	file := DefaultKind
	if s, ok := c.v.Get("kind").(string); ok && c.v.IsSet("kind") {
		file = s
	}
	for _, o := range overrides {
		if strings.EqualFold(o.Path, "machine.kind") {
			if _, known := kinds[o.Value]; known && o.Value != file { // the file's keys are its kind's: every one would be unknown
				return nil, fmt.Errorf("--set %s: the machine kind is the file's (%s), whose keys are that kind's; pick a machine of kind %s with -m (davinci-sim machines lists them)", o, file, o.Value)
			}
			c.overridden["kind"] = o.String()
			c.v.Set("kind", o.Value)
		}
	}
	if c.v.IsSet("kind") {
		v := c.v.Get("kind")
		s, ok := v.(string)
		if !ok {
			where, _ := c.where("kind")
			return nil, fmt.Errorf("%s: key \"kind\": want a string, got %v", where, v)
		}
		name = s
	}
	k, ok := kinds[name]
	if !ok {
		where, _ := c.where("kind")
		return nil, fmt.Errorf("%s: key \"kind\": unknown machine kind %+q (known: %s)", where, clipValue(name), strings.Join(kindNames(), ", "))
	}
	return k, nil
}

// ResolveKey is ResolvePath for a key of a machine of kind (e.g.
// core.buffers.L1 on davinci): the core section's keys are the kind's.
func ResolveKey(kind, path string) (reflect.Type, string, error) {
	k, ok := kinds[kind]
	if !ok {
		return nil, "", fmt.Errorf("unknown machine kind %+q (known: %s)", clipValue(kind), strings.Join(kindNames(), ", "))
	}
	return ResolvePath(k.file, path)
}

// zeroSections refuses an optional section (llc, power, host) that the
// file or a --set gives but whose values are all zero: a section of zeros
// is no section, so what was given would be dropped unnoticed (--set
// machine.llc.ways=0 on a machine without an LLC, power: {}).
func (c *Config) zeroSections(m *Machine) error {
	for _, sec := range []struct {
		name, article, noun, example string // (example: an embedded machine that has it)
		given                        bool
	}{{"llc", "an llc", "LLC", "mi300x", m.LLC.Given()}, {"power", "a power", "power model", "ascend-910a", m.Power.Given()},
		{"host", "a host", "host", "ascend-910a", m.Host.Given()}} {
		if sec.given {
			continue
		}
		var keys []string
		in := func(k string) bool { return k == sec.name || strings.HasPrefix(k, sec.name+".") }
		for k := range c.keys {
			if in(k) {
				keys = append(keys, k)
			}
		}
		for k := range c.overridden {
			if in(k) {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		slices.Sort(keys)
		where, key := c.where(keys[len(keys)-1]) // (the deepest of a branch)
		return fmt.Errorf("%s: key %q: %s section of zeros describes no %s, so this value would be dropped: leave %s out (a machine without it has none), or give the whole section (as `davinci-sim machines %s --resolved` shows it)",
			where, key, sec.article, sec.noun, sec.name, sec.example)
	}
	return nil
}
