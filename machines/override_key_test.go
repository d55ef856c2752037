package machines

import (
	"regexp"
	"strings"
	"testing"
)

// A --set value refused for its type (cores=1.5) and one refused against
// the key's constraints (cores=0) name the key the same way: as the
// machine file names it, after the override ("--set machine.cores=0: key
// "cores": …") — cores=1.5 named machine.cores.
func TestOverrideRefusalsNameOneKey(t *testing.T) {
	keyOf := regexp.MustCompile(`^--set [^ ]+: key "([^"]+)": `)
	for _, c := range []struct{ machine, path, badType, badValue, key string }{
		{"ascend-910a", "machine.cores", "1.5", "0", "cores"},
		{"ascend-910a", "machine.core.buffers.L1", "lots", "33B", "core.buffers.L1"},
		{"ascend-910a", "machine.core.clock", "fast", "0Hz", "core.clock"},
		{"a100", "machine.core.tensor.efficiency", "high", "2", "core.tensor.efficiency"},
		{"ascend-910a", "machine.CORE.Queue_Depth", "deep", "0", "core.queue_depth"}, // (as the file spells it, whatever the --set's case)
	} {
		var keys []string
		for _, v := range []string{c.badType, c.badValue} {
			_, err := Load(c.machine, []Override{{Path: c.path, Value: v}})
			if err == nil {
				t.Fatalf("%s=%s on %s: accepted", c.path, v, c.machine)
			}
			m := keyOf.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("%s=%s: %v: want --set %s=%s: key \"…\": …", c.path, v, err, c.path, v)
			}
			keys = append(keys, m[1])
		}
		if keys[0] != c.key || keys[1] != c.key {
			t.Errorf("%s: the type's refusal names key %q, the value's %q: want %q both", c.path, keys[0], keys[1], c.key)
		}
	}
	// A machine file's own spelling of its key.
	data := strings.Replace(string(mustSource(t, "ascend-910a")), "\ncores:", "\nCores:", 1)
	for _, v := range []string{"1.5", "0"} {
		_, err := LoadBytes("m.yaml", []byte(data), []Override{{Path: "machine.cores", Value: v}})
		if err == nil || !strings.HasPrefix(err.Error(), "--set machine.cores="+v+`: key "Cores": `) {
			t.Errorf("cores=%s on a file writing Cores: %v", v, err)
		}
	}
}

func mustSource(t *testing.T, name string) []byte {
	t.Helper()
	b, err := Source(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
