package davinci_test

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/isa"
)

// A generated stream (not checked before the run, isa.Check) whose flag id
// is past the machine's flag_ids fails the run, naming the id and the key:
// before, the id indexed another pipe pair's counter (MTE2→V id 8 on a
// machine of 8 is MTE2→MTE3's id 0), and the kernels raced silently — or,
// on the last pipe pairs, the index left the counters (a panic).
func TestGeneratedFlagIDPastMachine(t *testing.T) {
	m := archtest.Machine(t, "ascend-910a")
	ids := m.DaVinci().FlagIDs
	for _, id := range []int{ids, ids + 100} {
		prog := isa.Program{Name: "flags", Generated: true, Cores: []isa.Stream{isa.Slice([]isa.Instr{
			isa.SetFlag(isa.MTE2, isa.V, id),
			isa.WaitFlag(isa.MTE2, isa.V, id),
		})}}
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
		if err != nil {
			t.Fatal(err)
		}
		_, err = chip.Run(prog)
		if err == nil || !strings.Contains(err.Error(), "is past the machine's") || !strings.Contains(err.Error(), "core.flag_ids") {
			t.Errorf("flag id %d of %d: %v", id, ids, err)
		}
	}
}
