package davinci_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/davinci"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/sim"
)

// intervalLog records every observed pipe interval and flag event.
type intervalLog struct{ lines []string }

func (l *intervalLog) Interval(core, pipe int, cause arch.Cause, from, to sim.Time, in *isa.Instr) {
	op := ""
	if in != nil {
		op = in.Op.String()
	}
	l.lines = append(l.lines, fmt.Sprintf("c%d %s %s [%d,%d) %s", core, isa.Pipe(pipe), cause, from, to, op))
}

func (l *intervalLog) Flag(core, src, dst, id int, set bool, t sim.Time) {
	l.lines = append(l.lines, fmt.Sprintf("c%d flag %s->%s %d %v @%d", core, isa.Pipe(src), isa.Pipe(dst), id, set, t))
}

func (l *intervalLog) Occupancy(core, buf int, bytes int64, t sim.Time) {
	l.lines = append(l.lines, fmt.Sprintf("c%d occ %s %d @%d", core, isa.Buffer(buf), bytes, t))
}

func (l *intervalLog) Bandwidth(t sim.Time, bps float64) {}

// Waking a core only when it can make progress (state changes on the way
// deferred and replayed) gives the same run — every interval, flag event,
// statistic and the simulated time — as waking it at every time its state
// may change, on programs with flags, full queues, latency waits, GM
// transfers and several cores, in timing and functional mode.
func TestDeferredTransitionsMatchEagerWakeUps(t *testing.T) {
	cases := []struct {
		file string
		sets []string
	}{
		{"flag-pingpong.yaml", nil},
		{"l1-l0-bandwidth.yaml", nil},
		{"cube-peak.yaml", nil},
		{"gm-bandwidth-1core.yaml", nil},
		{"sgemm-cube.yaml", []string{"program.m=352", "program.n=352", "program.k=256", "program.numerics=full", "machine.cores=4"}},
		{"sgemm-cube.yaml", []string{"program.m=528", "program.n=352", "program.k=320", "program.numerics=off", "program.buffering=single", "program.accumulation=elementwise", "program.tiling.bm=96", "program.tiling.bn=96"}},
		{"lu-fused-small.yaml", nil},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s%v", tc.file, tc.sets), func(t *testing.T) {
			f, err := programs.ReadFile("../../programs/examples/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			ovs, err := machines.ParseOverrides(tc.sets)
			if err != nil {
				t.Fatal(err)
			}
			run := func(eager bool) (*arch.Stats, []string) {
				davinci.SetEagerWake(eager)
				defer davinci.SetEagerWake(false)
				log := &intervalLog{}
				res, err := programs.Execute(f, programs.Options{Overrides: ovs}, programs.RunHooks{Observer: log})
				if err != nil {
					t.Fatal(err)
				}
				st := *res.Stats
				st.Events = 0
				return &st, log.lines
			}
			lazySt, lazy := run(false)
			eagerSt, eager := run(true)
			// Observers are told at different moments of the run; compare
			// what they were told.
			slices.Sort(lazy)
			slices.Sort(eager)
			if len(lazy) != len(eager) {
				t.Errorf("%d observed events with deferred transitions, %d with eager wake-ups", len(lazy), len(eager))
			}
			for i := range min(len(lazy), len(eager)) {
				if lazy[i] != eager[i] {
					for j := max(0, i-3); j < min(i+4, len(lazy), len(eager)); j++ {
						t.Logf("%d: %q | %q", j, lazy[j], eager[j])
					}
					t.Fatalf("event %d: deferred %q, eager %q", i, lazy[i], eager[i])
				}
			}
			if !reflect.DeepEqual(lazySt, eagerSt) {
				t.Errorf("statistics differ:\ndeferred %+v\neager    %+v", lazySt, eagerSt)
			}
		})
	}
}
