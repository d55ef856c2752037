package programs

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// n_fused = −1 takes the most fused iterations that fit L1, so it grows
// with L1 (the L1-size study) and the plan accepts it.
func TestLUFusedFromL1(t *testing.T) {
	prev := 0
	for _, l1 := range []string{"512KiB", "1MiB", "2MiB", "4MiB"} {
		ovs, _ := machines.ParseOverrides([]string{"machine.core.buffers.L1=" + l1})
		m, err := machines.Load("ascend-910a", ovs)
		if err != nil {
			t.Fatal(err)
		}
		p := LUParams{N: 8192, NB: 256, NFused: -1, NFusion: 16}
		p.defaults()
		p.chooseTiling(m)
		p.fusedFromL1(m)
		if p.NFused <= prev && p.NFused < 32 {
			t.Fatalf("L1 %s: n_fused %d does not grow (previous %d)", l1, p.NFused, prev)
		}
		if err := p.validate("t.yaml", m); err != nil {
			t.Fatal(err)
		}
		if _, err := newLUPlan("t.yaml", p, m); err != nil {
			t.Fatalf("L1 %s, n_fused %d: %v", l1, p.NFused, err)
		}
		prev = p.NFused
	}
}
