package gpu_test

import (
	"reflect"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/isa"
)

// An instruction whose end only queues its set_flags' signals and stops
// its lane at a wait (Core.quietDone), and a landing whose signals no lane
// waits for yet (Core.eagerLandings), do not wake the SM: the statistics
// are those of a run that wakes it at every end and landing, with fewer
// events — on a
// starved grid (bandwidth stalls, issue units stopped at full queues),
// fast-forwarded too, and on a grid of four CTAs per SM with several MMAs
// and vector work per k-step, on an NVIDIA and an AMD machine. (Equal on
// these grids because no two SMs act at one instant in an order the
// wake-ups would change: in general the quiet run books its SM's next
// wake-up at another moment, so SMs woken at the same instant may run in
// another order, which moves the L2's races — docs/design-notes.md.)
func TestQuietDone(t *testing.T) {
	products := isa.Program{Name: "products", Grids: []isa.Grid{{Name: "products", CTAs: 16,
		CTA:       func(i int) isa.Stream { return ctaProducts(int64(i)<<22, 1024, 1+i%3, true) },
		Resources: isa.Resources{SharedBytes: 40 << 10, Registers: 8 << 10, Warps: 4}}}}
	for _, name := range []string{"a100", "mi210"} {
		for _, c := range []struct {
			name string
			prog isa.Program
			ff   bool
			set  []string
		}{
			{"starved", starved(), false, []string{"machine.gm.bandwidth=60GB/s", "machine.l2.capacity=256KiB"}},
			{"starved/fast-forward", starved(), true, []string{"machine.gm.bandwidth=60GB/s", "machine.l2.capacity=256KiB"}},
			{"products", products, false, nil},
		} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				run := func(quiet bool) *arch.Stats {
					t.Helper()
					gpu.SetQuietDone(quiet)
					defer gpu.SetQuietDone(true)
					m := archtest.Machine(t, name, append([]string{"machine.cores=4"}, c.set...)...)
					o := arch.Options{Mode: arch.Timing}
					if c.ff {
						ff := arch.DefaultFastForward
						ff.Tolerance, ff.Mix = 0.5, 1
						o.FastForward = &ff
					}
					chip, err := arch.NewChip(m, o)
					if err != nil {
						t.Fatal(err)
					}
					st, err := chip.Run(c.prog)
					if err != nil {
						t.Fatal(err)
					}
					return st
				}
				quiet, woken := run(true), run(false)
				if quiet.Events*20 > woken.Events*19 {
					t.Errorf("%d events quietly, %d woken at every end: want a twentieth fewer at least", quiet.Events, woken.Events)
				}
				if c.ff && len(quiet.FastForward) == 0 {
					t.Error("nothing skipped")
				}
				quiet.Events = woken.Events
				for i := range quiet.FastForward {
					if i < len(woken.FastForward) {
						quiet.FastForward[i].Events = woken.FastForward[i].Events
					}
				}
				if !reflect.DeepEqual(quiet, woken) {
					t.Errorf("statistics differ:\n%+v quietly\n%+v woken", quiet, woken)
				}
			})
		}
	}
}
