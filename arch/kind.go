package arch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// CoreModel is one core of a machine kind as the chip holds it: the chip
// owns the engine, global memory, the L2, the host and the statistics; the
// core model owns everything inside the core. Nothing outside a kind's
// package looks at its instructions' opcodes.
type CoreModel interface {
	// Handle is the core's wake-up (sim.Handler).
	Handle(now sim.Time, arg int64)
	// Blocked reports, for deadlock messages, whether the core waits on
	// something and what (sim.Waiter).
	Blocked() (bool, string)
	// Load starts stream s on the core; a core that finished a stream can
	// be loaded again (host kernel launches).
	Load(s isa.Stream)
	// Wake schedules a wake-up of the core at t (chip-wide barriers).
	Wake(t sim.Time)
	// Close releases the core's stream.
	Close()
	// Finish returns when the core's last stream finished (0: never ran).
	Finish() sim.Time
	// Finalize closes the core's accounting at end and returns its
	// statistics, indexed as the machine's Geometry indexes lanes and
	// buffers.
	Finalize(end sim.Time) CoreStats
}

// Kind is the core model of one machine kind (machines.Kind describes its
// files). Kinds register from their packages' init functions, as program
// kinds do.
type Kind struct {
	Name string
	// NewCores checks what the kind needs of chip c's machine and builds
	// its cores (c.M.Cores of them, core i at index i).
	NewCores func(c *Chip) ([]CoreModel, error)
	// Limits returns the static-check limits of programs on chip c.
	Limits func(c *Chip) isa.Limits
	// LaunchLatency, if not nil, is the time from one kernel grid's end
	// (or the run's start) to the next grid's first CTA (isa.Grid).
	LaunchLatency func(c *Chip) sim.Time
	// CoreBytes, if not nil, estimates the host memory one core of
	// machine m takes in mode, so that NewChip refuses a machine too large
	// to simulate before building it (nil: DefaultCoreBytes).
	CoreBytes func(m *machines.Machine, mode Mode) int64
	// FootprintKeys names, for the message refusing a machine too large
	// to simulate, the machine-file keys its estimate grows with ("":
	// DaVinci's).
	FootprintKeys string
	// Grids says the kind runs kernel grids (isa.Grid): only they have
	// waves for fast-forward to skip (FastForwardSkips).
	Grids bool
	// WholeLineFetch says a read that misses the L2 pays for the whole
	// lines it fetches (mem.L2.Read2D; Chip.wholeLines): the kinds whose
	// files give the L2's fetch granularity.
	WholeLineFetch bool
	// GMRead, if not nil, returns the global-memory region instruction in
	// reads, if it reads one: fast-forward's step skips install what the
	// skipped steps would have read in the LLC (Chip.installSkipped).
	GMRead func(in *isa.Instr) (GMSpan, bool)
}

// FastForwardSkips reports whether fast-forward can skip anything on
// machine m: its kind runs kernel grids. On the others (DaVinci: pipe
// programs on every core, no waves) a run asked to fast-forward is
// simulated in full — NewChip ignores Options.FastForward there — and a
// trace of it misses nothing. False for a kind with no core model (NewChip
// says so).
func FastForwardSkips(m *machines.Machine) bool { return RunsGrids(m) }

// RunsGrids reports whether machine m's kind runs kernel grids (Kind.Grids:
// the GPU kinds); false for a kind with no core model.
func RunsGrids(m *machines.Machine) bool {
	k, ok := kinds[m.Kind]
	return ok && k.Grids
}

// DefaultCoreBytes is the per-core estimate of kinds without CoreBytes.
const DefaultCoreBytes = 64 << 10

// MaxModelBytes bounds the host memory NewChip's estimate may reach: a
// machine needing more (a typo such as cores=100000000) is refused with a
// message instead of exhausting memory.
const MaxModelBytes = 16 << 30

var kinds = map[string]*Kind{}

// RegisterKind adds a core model for machine kind k.Name.
func RegisterKind(k *Kind) { kinds[k.Name] = k }

// kindFor returns the core model of a machine kind.
func kindFor(name string) (*Kind, error) {
	if k, ok := kinds[name]; ok {
		return k, nil
	}
	var names []string
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("machine kind %+q has no core model in this build (models: %s)", name, strings.Join(names, ", "))
}
