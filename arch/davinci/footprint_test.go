package davinci_test

import (
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/isa"
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
// or not), and its statistics collected — and is not far above it read
// ahead (the ring it counts, so as to be the same on every host). It had
// left out the streams and the allocator's rounding: ~20 % short on a
// 4096-core chip (a fidelity sampled LU past its --max-memory).
func TestFootprintCoversRunningChip(t *testing.T) {
	const cores = 1024
	m := archtest.Machine(t, "ascend-910a", "machine.cores="+strconv.Itoa(cores))
	est, err := arch.Footprint(m, arch.Timing)
	if err != nil {
		t.Fatal(err)
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
		stats := make([]arch.CoreStats, cores)
		for i := range cores {
			chip.Core(i).Load(func(yield func(isa.Instr) bool) {
				for range 1000 {
					if !yield(isa.Scalar(1)) {
						return
					}
				}
			})
		}
		for i := range cores {
			stats[i] = chip.Core(i).Finalize(0)
		}
		used := hostBytesNow() - before
		for i := range cores {
			chip.Core(i).Close()
		}
		runtime.KeepAlive(chip)
		runtime.KeepAlive(stats)
		t.Logf("read ahead %v: estimate %.1f MiB, held %.1f MiB", ahead, est/(1<<20), float64(used)/(1<<20))
		if est < float64(used) || ahead && est > 1.2*float64(used) {
			t.Errorf("read ahead %v: %d cores estimated at %.1f MiB, held %.1f MiB built and reading their streams", ahead, cores, est/(1<<20), float64(used)/(1<<20))
		}
	}
}
