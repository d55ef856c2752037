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

// A machine that is not there — neither embedded nor a readable file —
// is named with where the name came from: the program file's key, -m, or
// --set program.machine, in one line.
func TestUnknownMachineSaysWhere(t *testing.T) {
	f, err := Parse("p.yaml", ".", []byte("kind: hgemm\nmachine: nosuch\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, `p.yaml: key "machine": unknown machine "nosuch": not an embedded machine`},
		{Options{Machine: "nosuch2"}, `-m nosuch2: unknown machine "nosuch2": not an embedded machine (a100, `},
		{Options{Machine: "cloudbrain3"}, `-m cloudbrain3: unknown machine "cloudbrain3": not an embedded machine (a100, a800, ascend-910a, ascend-910b3, b200, gb200, h100-sxm, mi100, mi210, mi300x, rtx-pro-6000, t4, v100), a cluster or node description (cloudbrain2, cloudbrain2-node), nor a file`},
		{Options{Overrides: mustSets(t, "program.machine=gone.yaml")}, "--set program.machine=gone.yaml: machine file: open gone.yaml: "},
	} {
		_, err := MachineFor(f, c.o)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line starting %q", c.o, err, c.want)
		}
	}
}
