package machines

import (
	"strings"
	"testing"
)

// A --set value read as YAML with a key in two spellings is refused, as
// the files refuse it: viper took either at random (the A100 ran its FP16
// tensor ops at 1 GHz or at 1.2 GHz from one command line). One spelling,
// or two keys, load.
func TestOverrideValueKeysOnce(t *testing.T) {
	_, err := Load("a100", []Override{{Path: "machine.core.tensor.sustained_clock", Value: "{fp16: 1GHz, FP16: 1.2GHz}"}})
	if err == nil || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), `--set machine.core.tensor.sustained_clock={fp16: 1GHz, FP16: 1.2GHz}: key "core.tensor.sustained_clock": "fp16" given twice (as "FP16" and "fp16"; keys are case-insensitive)`) {
		t.Errorf("two spellings of one key: %v", err)
	}
	for _, v := range []string{"{FP16: 1.2GHz}", "{fp16: 1.2GHz, int8: 990MHz}"} {
		m := mustLoad(t, "a100", Override{Path: "machine.core.tensor.sustained_clock", Value: v})
		if got := m.YAML(nil); !strings.Contains(string(got), "fp16: 1.2GHz") {
			t.Errorf("%s: fp16 not at 1.2GHz:\n%s", v, got)
		}
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{map[string]any{"a": 1, "b": []any{map[string]any{"x": 1}, map[string]any{"Y": 1, "y": 2}}}, `"b[1].y" given twice (as "Y" and "y"`},
		{map[any]any{"K": map[string]any{"q": 1}, "k": 2, 3: 4}, `"k" given twice (as "K" and "k"`},
		{[]any{map[string]any{"n": 1, "N": 2}}, `"[0].n" given twice`},
	} {
		if err := keysOnce(c.v, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.v, err, c.want)
		}
	}
	if err := keysOnce(map[string]any{"a": map[string]any{"a": 1, "b": 2}, "b": []any{1, "x"}}, ""); err != nil {
		t.Errorf("distinct keys: %v", err)
	}
}
