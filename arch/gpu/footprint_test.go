package gpu_test

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	_ "github.com/davinci-sim/davinci-sim/arch/amd"
	_ "github.com/davinci-sim/davinci-sim/arch/nvidia"
	"github.com/davinci-sim/davinci-sim/machines"
)

// Every embedded GPU machine passes the host-memory estimate in
// functional mode (every block slot holding a register file, shared
// memory and accumulator store): the guard refuses typos, not machines.
func TestEmbeddedMachinesFitFunctional(t *testing.T) {
	n := 0
	for _, name := range machines.Names() {
		m, err := machines.Load(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Kind != "nvidia-sm" && m.Kind != "amd-cu" {
			continue
		}
		n++
		if _, err := arch.NewChip(m, arch.Options{Mode: arch.Functional}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n < 5 {
		t.Errorf("%d GPU machines embedded", n)
	}
}
