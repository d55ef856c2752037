package machines

import (
	"strings"
	"testing"
)

// The host section is optional (910B3 has none) but complete when given;
// each bad value is named by its key.
func TestHostSection(t *testing.T) {
	m, err := Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasHost() || m.Host.Cores != 24 || float64(m.Host.Link.Bandwidth) != 31.5e9 {
		t.Fatalf("910A host %+v", m.Host)
	}
	b3, err := Load("ascend-910b3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b3.HasHost() {
		t.Fatalf("910B3 should have no host section: %+v", b3.Host)
	}
	for _, c := range []struct{ set, key string }{
		{"machine.host.cores=0", "host.cores"},
		{"machine.host.link.bandwidth=0", "host.link.bandwidth"},
		{"machine.host.fp64_flops_per_cycle=0", "host.fp64_flops_per_cycle"},
		{"machine.host.launch_ns=-1", "host.launch_ns"},
		{"machine.host.memory_bandwidth=0", "host.memory_bandwidth"},
	} {
		ovs, err := ParseOverrides([]string{c.set})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Load("ascend-910a", ovs)
		if err == nil || !strings.Contains(err.Error(), `"`+c.key+`"`) {
			t.Errorf("%s: got %v, want an error naming %q", c.set, err, c.key)
		}
	}
}
