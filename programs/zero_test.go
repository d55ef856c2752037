package programs

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// An explicit n_fused: 0 (file or --set) is refused with the key named;
// leaving the key out keeps the default. GEMM cores: 0 is the documented
// "all cores".
func TestZeroRefusedOrAuto(t *testing.T) {
	build := func(t *testing.T, text string, sets ...string) error {
		t.Helper()
		f, err := Parse("p.yaml", ".", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		ovs, err := machines.ParseOverrides(sets)
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Overrides: ovs, Numerics: NumericsOff}
		m, err := MachineFor(f, opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Kind.BuildFor(f, m, opts)
		return err
	}
	for _, c := range []struct {
		text string
		sets []string
	}{
		{"kind: lu-fused\nn: 1024\nnb: 256\nn_fused: 0\n", nil},
		{"kind: lu-fused\nn: 1024\nnb: 256\n", []string{"program.n_fused=0"}},
		{"kind: lu-gemm\nm: 512\nnb: 256\nn_fused: 0\n", nil},
	} {
		err := build(t, c.text, c.sets...)
		if err == nil || !strings.Contains(err.Error(), `key "n_fused"`) || !strings.Contains(err.Error(), "got 0") {
			t.Errorf("%q %v: err = %v, want n_fused refused", c.text, c.sets, err)
		}
	}
	for _, text := range []string{"kind: lu-fused\nn: 1024\nnb: 256\n", "kind: lu-gemm\nm: 512\nnb: 256\n",
		"kind: hgemm\nm: 64\nn: 64\nk: 64\ncores: 0\n"} {
		if err := build(t, text); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}
