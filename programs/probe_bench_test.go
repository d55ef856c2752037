package programs

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
)

// benchMachines is a MachineCache of every machine loaded, as a study's
// probes keep theirs (sweep's machineCache, without its bound).
type benchMachines map[string]*machines.Machine

func benchMachineKey(ref string, overrides []machines.Override) string {
	var b strings.Builder
	b.WriteString(ref)
	for _, o := range overrides {
		if strings.HasPrefix(strings.ToLower(o.Path), "machine.") {
			b.WriteString("\x00" + o.Full())
		}
	}
	return b.String()
}

func (c benchMachines) Machine(ref string, overrides []machines.Override) *machines.Machine {
	return c[benchMachineKey(ref, overrides)]
}

func (c benchMachines) Loaded(ref string, overrides []machines.Override, m *machines.Machine) {
	c[benchMachineKey(ref, overrides)] = m
}

// benchProbes runs the probes of a study (sweep's checkSet): Execute of
// file, parsed once and taken again for each point, with its context
// cancelled before the run, sets and point(i)'s overrides, the machines
// kept. Every probe must be refused (bad input), as the study's set is.
func benchProbes(b *testing.B, file string, sets []string, points int, point func(i int) []string) {
	f, err := ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cache := benchMachines{}
	i := 0
	for b.Loop() {
		g, err := f.Again()
		if err != nil {
			b.Fatal(err)
		}
		opts := Options{Overrides: mustSets(b, append(append([]string(nil), sets...), point(i%points)...)...)}
		if _, err := Execute(g, opts, RunHooks{Context: ctx, Machines: cache}); err == nil || !badinput.Is(err) {
			b.Fatalf("point %d: want a refusal, got %v", i%points, err)
		}
		i++
	}
}

// BenchmarkProbeEmulated is a study's probes of emulated-gemm on the
// ascend-910a, numerics full, refused for their tiling (bm 4096), m and the
// machine's cores varied.
func BenchmarkProbeEmulated(b *testing.B) {
	benchProbes(b, "examples/ascend-910a-emulated-gemm.yaml", []string{"program.numerics=full", "program.tiling.bm=4096"}, 5000, func(i int) []string {
		return []string{fmt.Sprintf("program.m=%d", 16+16*(i/10)), fmt.Sprintf("machine.cores=%d", 1+i%10)}
	})
}

// BenchmarkProbeHGEMM is a study's probes of hgemm refused for their tiling
// (bm 4096), m varied.
func BenchmarkProbeHGEMM(b *testing.B) {
	benchProbes(b, "examples/hgemm.yaml", []string{"program.tiling.bm=4096"}, 5000, func(i int) []string {
		return []string{fmt.Sprintf("program.m=%d", 16+16*i)}
	})
}
