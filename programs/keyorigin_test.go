package programs

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// A machine key's origin is the last --set of the key itself, else the
// last --set of a section holding it or of a key under it, else the
// machine: a bandwidth given by a --set of its whole section is named by
// that --set, not by the machine file that no longer gives it.
func TestMachineKeyOrigin(t *testing.T) {
	sets := func(s ...string) []machines.Override {
		var os []machines.Override
		for _, x := range s {
			o, err := machines.ParseOverride(x)
			if err != nil {
				t.Fatal(err)
			}
			os = append(os, o)
		}
		return os
	}
	for _, c := range []struct {
		sets []string
		key  string
		want string
	}{
		{nil, "gm.bandwidth", `machine a100: key "gm.bandwidth"`},
		{[]string{"machine.gm.bandwidth=1TB/s", "machine.GM.Bandwidth=2TB/s"}, "gm.bandwidth", `--set machine.GM.Bandwidth=2TB/s: key "gm.bandwidth"`},
		{[]string{"machine.gm={bandwidth: 1TB/s, capacity: 40GiB}"}, "gm.bandwidth", `--set machine.gm={bandwidth: 1TB/s, capacity: 40GiB}: key "gm.bandwidth"`},
		{[]string{"machine.gm.bandwidth=1TB/s", "machine.gm={bandwidth: 2TB/s}"}, "gm.bandwidth", `--set machine.gm={bandwidth: 2TB/s}: key "gm.bandwidth"`},
		{[]string{"machine.gm={bandwidth: 2TB/s}", "machine.gm.bandwidth=1TB/s"}, "gm.bandwidth", `--set machine.gm.bandwidth=1TB/s: key "gm.bandwidth"`},
		{[]string{"machine.core.tensor.shapes.fp16=m16n8k16"}, "core.tensor", `--set machine.core.tensor.shapes.fp16=m16n8k16: key "core.tensor"`},
		{[]string{"machine.l2.bandwidth=1TB/s", "program.m=64"}, "gm.bandwidth", `machine a100: key "gm.bandwidth"`},
		{[]string{"machine.gm.bandwidthx=1"}, "gm.bandwidth", `machine a100: key "gm.bandwidth"`},
	} {
		if got := machineKeyOrigin("a100", sets(c.sets...))(c.key); got != c.want {
			t.Errorf("%v: origin of %s = %s, want %s", c.sets, c.key, got, c.want)
		}
	}
}
