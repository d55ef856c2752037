package arch

import (
	"fmt"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
)

// A chip model's room that a run's bound leaves it (Options.RunBound less
// RunBeside) refuses the model past it in words saying where the room
// comes from, marked as a refusal for host memory with the run's whole
// bound (not the room); no room at all refuses any model; a room past
// MaxModelBytes leaves that limit, unmarked.
func TestRunBoundRoom(t *testing.T) {
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	model, err := Footprint(m, Timing)
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	room := float64(model-1) / mib // (a byte short of the model: its estimate moves with the core's state)
	for _, c := range []struct {
		name  string
		opts  Options
		want  string // "" : built
		bound int64  // the refusal's HostMemoryBound; 0: unmarked
	}{
		{"room enough", Options{RunBound: 100 * mib, RunBeside: 100*mib - model}, "", 0},
		{"room a byte short", Options{RunBound: 64 * mib, RunBeside: 64*mib - model + 1},
			fmt.Sprintf("above the %.2f MiB that --max-memory 64MiB leaves beside the run's data and base (about %.0f MiB): check keys", room, (64*mib-model+1)/mib), 64 * mib},
		{"no room", Options{RunBound: 20 * mib, RunBeside: 48 * mib},
			"above what --max-memory 20MiB leaves beside the run's data and base (about 48 MiB, so nothing): check keys", 20 * mib},
		{"none exactly", Options{RunBound: 48 * mib, RunBeside: 48 * mib, RunBesideWhat: "the run's base"},
			"above what --max-memory 48MiB leaves beside the run's base (about 48 MiB, so nothing)", 48 * mib},
		{"the host's default bound", Options{RunBound: 64 * mib, RunBeside: 64*mib - model + 1, RunBoundDefault: true},
			fmt.Sprintf("above the %.2f MiB that the default --max-memory, 64MiB, leaves beside the run's data and base (about %.0f MiB): check keys", room, (64*mib-model+1)/mib), 64 * mib},
		{"the run's bound itself", Options{RunBound: 1 * mib},
			"above the 1 MiB that --max-memory 1MiB leaves beside the run's data and base (about 0 KiB): check keys", 1 * mib},
		{"room past MaxModelBytes", Options{RunBound: 3 * MaxModelBytes, RunBeside: MaxModelBytes}, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Mode = Timing
			_, err := NewChip(m, c.opts)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if b, ok := badinput.HostMemoryBound(err); !ok || b != c.bound {
				t.Errorf("HostMemoryBound = %d, %v; want %d", b, ok, c.bound)
			}
		})
	}
	// Past MaxModelBytes the refusal is that limit's, the same on every
	// host: not marked for host memory, whatever the run's bound.
	ovs, err := machines.ParseOverrides([]string{"machine.cores=300000"})
	if err != nil {
		t.Fatal(err)
	}
	big, err := machines.Load("ascend-910a", ovs)
	if err != nil {
		t.Skipf("a machine of 300000 cores: %v", err)
	}
	_, err = NewChip(big, Options{Mode: Timing, RunBound: 3 * MaxModelBytes, RunBeside: MaxModelBytes})
	if err == nil || !strings.Contains(err.Error(), "above the limit of 16 GiB: check keys") {
		t.Fatalf("got %v, want the refusal past MaxModelBytes", err)
	}
	if b, ok := badinput.HostMemoryBound(err); ok {
		t.Errorf("marked for host memory (bound %d): MaxModelBytes is no host's bound", b)
	}
}
