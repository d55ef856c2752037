package davinci_test

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// hostBytesNow returns the bytes of live heap objects and goroutine stacks
// after a collection.
func hostBytesNow() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}, {Name: "/memory/classes/os-stacks:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() + s[1].Value.Uint64() + s[2].Value.Uint64())
}

// The estimate of a DaVinci chip's host memory (arch.Footprint, which
// NewChip checks against the run's bound) covers the chip as it runs a
// kernel on every core — built, each core reading its stream (read ahead
// or not) with every pipe's queue full, and its statistics collected —
// and is not far above it read ahead (the ring it counts, so as to be the
// same on every host). It had left out the streams and the allocator's
// rounding: ~20 % short on a 4096-core chip (a fidelity sampled LU past
// its --max-memory). A pipe takes its queue at its first instruction, so
// the kernel here fills every queue: each pipe waits for a flag no one
// sets, behind which the scalar queues barriers until the queues are full
// (the run deadlocks there, its queues held).
func TestFootprintCoversRunningChip(t *testing.T) {
	const cores = 1024
	m := archtest.Machine(t, "ascend-910a", "machine.cores="+strconv.Itoa(cores))
	est, err := arch.Footprint(m, arch.Timing)
	if err != nil {
		t.Fatal(err)
	}
	depth := m.DaVinci().QueueDepth
	fill := func(yield func(isa.Instr) bool) {
		for i := range depth {
			for p := isa.MTE2; p < isa.NumPipes; p++ {
				in := isa.Barrier(p)
				if i == 0 {
					src := isa.MTE2
					if p == isa.MTE2 {
						src = isa.MTE1
					}
					in = isa.WaitFlag(src, p, 0)
				}
				if !yield(in) {
					return
				}
			}
		}
	}
	for _, ahead := range []bool{false, true} {
		o := arch.Options{Mode: arch.Timing, NoReadAhead: !ahead}
		if ahead {
			o.Ahead = arch.NewAhead()
			if o.Ahead == nil {
				continue // (one processor: the process reads no streams ahead)
			}
		}
		before := hostBytesNow()
		chip, err := arch.NewChip(m, o)
		if err != nil {
			t.Fatal(err)
		}
		prog := isa.Program{Name: "fill", Cores: make([]isa.Stream, cores), Generated: true}
		for i := range prog.Cores {
			prog.Cores[i] = fill
		}
		stats, err := chip.Run(prog)
		var dl *sim.DeadlockError
		if !errors.As(err, &dl) {
			t.Fatalf("read ahead %v: the run ended with %v, want a deadlock with every queue full", ahead, err)
		}
		used := hostBytesNow() - before
		runtime.KeepAlive(chip)
		runtime.KeepAlive(stats)
		t.Logf("read ahead %v: estimate %.1f MiB, held %.1f MiB", ahead, est/(1<<20), float64(used)/(1<<20))
		if est < float64(used) || ahead && est > 1.2*float64(used) {
			t.Errorf("read ahead %v: %d cores estimated at %.1f MiB, held %.1f MiB built and reading their streams", ahead, cores, est/(1<<20), float64(used)/(1<<20))
		}
	}
}
