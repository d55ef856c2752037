package gpu_test

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	_ "github.com/davinci-sim/davinci-sim/arch/amd"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	_ "github.com/davinci-sim/davinci-sim/arch/nvidia"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// Every embedded GPU machine passes the chip's host-memory estimate in
// functional mode (its cores' block slots; the blocks' data is a grid's,
// counted when it is admitted: TestGridDataFootprint): the guard refuses
// typos, not machines.
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

// A functional grid's data (each resident block's shared memory and a
// register file of the SM's size) counts against the chip's host-memory
// bound when the grid is admitted, for the slots its blocks make: as many
// blocks as the kernel fits on an SM, no more than the grid's blocks — not
// every block slot the machine has (A100: 32, where a GEMM's blocks hold 1
// or 2): the chip's own estimate holds none of it.
// A timing-only grid, or a timing run, keeps no data and is not refused.
func TestGridDataFootprint(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	base, err := arch.Footprint(m, arch.Functional)
	if err != nil {
		t.Fatal(err)
	}
	if timing, _ := arch.Footprint(m, arch.Timing); timing != base {
		t.Errorf("functional estimate %.0f bytes, timing %.0f: the chip's own holds no block data", base, timing)
	}
	const regFile = 256 << 10
	// Two blocks of 64 KiB fit an SM's 164 KiB (4 × 2 × 320 KiB = 2.5
	// MiB); one of 100 KiB (4 × 356 KiB = 1.4 MiB).
	bound := int64(base) + 4*(64<<10+regFile)*3/2
	grid := func(ctas int, smem int64, timingOnly bool) isa.Grid {
		return isa.Grid{Name: "g", CTAs: ctas, CTA: func(int) isa.Stream { return ctaAt(0) }, TimingOnly: timingOnly,
			Resources: isa.Resources{SharedBytes: smem, Registers: 4 << 10, Warps: 4}}
	}
	for _, c := range []struct {
		mode    arch.Mode
		g       isa.Grid
		refused bool
	}{
		{arch.Functional, grid(8, 64<<10, false), true},
		{arch.Functional, grid(8, 100<<10, false), false},
		{arch.Functional, grid(8, 64<<10, true), false},
		{arch.Timing, grid(8, 64<<10, false), false},
		// Six blocks make six slots (two cores hold two), not eight:
		// 6 × 320 KiB fit. (Before 2026-12-05 every core counted both.)
		{arch.Functional, grid(6, 64<<10, false), false},
		{arch.Functional, grid(7, 64<<10, false), true},
	} {
		chip, err := arch.NewChip(m, arch.Options{Mode: c.mode, RunBound: bound})
		if err != nil {
			t.Fatal(err)
		}
		_, err = chip.Run(isa.Program{Name: "p", Grids: []isa.Grid{c.g}})
		var fe *arch.FootprintError
		if got := errors.As(err, &fe); got != c.refused {
			t.Errorf("mode %v, %d KiB of shared memory, timing only %v: refused %v (%v), want %v",
				c.mode, c.g.Resources.SharedBytes>>10, c.g.TimingOnly, got, err, c.refused)
		} else if b, marked := badinput.HostMemoryBound(err); got && (!marked || b != bound) {
			t.Errorf("refusal marked %v, bound %d: want the run's bound %d", marked, b, bound)
		} else if want := fmt.Sprintf("(%d CTA slots, 2 MiB of CTAs' shared memory, registers and accumulators — this grid's %d CTAs, 2 resident a core × 320 KiB", c.g.CTAs, c.g.CTAs); got && !strings.Contains(err.Error(), want) {
			t.Errorf("message %q", err)
		}
	}
}

// hostBytesNow returns the bytes of live heap objects and goroutine stacks
// after a collection (as the DaVinci chip's test measures them).
func hostBytesNow() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}, {Name: "/memory/classes/os-stacks:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() + s[1].Value.Uint64() + s[2].Value.Uint64())
}

// spanGrid is a grid of small blocks of smem bytes of shared memory, as
// many resident on a core as that allows, whose copies from global memory
// reach over the first span bytes: each block reads rows of rows·128
// bytes spread over the span, the last block up to its end.
func spanGrid(ctas int, span, smem int64) isa.Grid {
	const rows, row = 48, 128
	step := span / int64(ctas*rows) &^ (row - 1)
	return isa.Grid{Name: "span", CTAs: ctas, Resources: isa.Resources{Warps: 1, SharedBytes: smem, Registers: 32},
		CTA: func(i int) isa.Stream {
			return func(yield func(isa.Instr) bool) {
				for r := range rows {
					addr := (int64(i)*rows + int64(r)) * step
					if i == ctas-1 && r == rows-1 {
						addr = span - row
					}
					if !yield(gpu.CopyToShared(0, addr, 1, row, row, row)) {
						return
					}
				}
			}
		}}
}

// The estimate of a GPU chip's host memory (arch.FootprintSpan, for the
// span of global memory the program's tensors occupy) with its kernel's
// blocks (gpu.BlockBytes: a slot for each block a core holds at once, no
// more than the grid's blocks) covers the chip as it runs the grid —
// each block reading its stream, read ahead or not — and its caches'
// where indexes grown over the span, and is not far above it: it counted
// the indexes for the whole of gm.capacity (A100 128 MiB, MI300X's nine
// directories 1.1 GiB), whatever the program's span; and every block
// slot of every core in the chip's own estimate (A100: 2287 KiB a core),
// where a GEMM's blocks hold 1–9 of the 32. Grids of blocks that fill
// every slot (1 KiB of shared memory), four a core (a quarter of it
// each), and fewer blocks than cores hold at once.
func TestFootprintCoversRunningGPU(t *testing.T) {
	const cores, span = 16, 96 << 20
	for _, c := range []struct {
		name      string
		ctas      int
		smem      func(m *machines.Machine) int64
		wantSlots int // slots the estimate counts
	}{
		{"a100", 4 * cores * 64, func(*machines.Machine) int64 { return 1 << 10 }, cores * 32},
		{"mi300x", 4 * cores * 64, func(*machines.Machine) int64 { return 1 << 10 }, cores * 16}, // (a CU's 16 workgroups)
		{"a100", 4 * cores * 64, func(m *machines.Machine) int64 { return int64(m.Geometry().Buffers[gpu.BufShared].Capacity) / 4 }, cores * 4},
		{"mi300x", 4 * cores * 64, func(m *machines.Machine) int64 { return int64(m.Geometry().Buffers[gpu.BufShared].Capacity) / 4 }, cores * 4},
		{"a100", 3 * cores / 2, func(*machines.Machine) int64 { return 1 << 10 }, 3 * cores / 2},
	} {
		name := c.name
		m := archtest.Machine(t, name, fmt.Sprintf("machine.cores=%d", cores))
		est, err := arch.FootprintSpan(m, arch.Timing, span)
		if err != nil {
			t.Fatal(err)
		}
		g := spanGrid(c.ctas, span, c.smem(m))
		n, slot, _, ok := gpu.BlockBytes(m, g.Resources)
		if !ok {
			t.Fatalf("%s: no estimate of its blocks", name)
		}
		if slots := min(c.ctas, cores*n); slots != c.wantSlots {
			t.Errorf("%s, %d blocks of %d bytes of shared memory: the estimate counts %d slots, want %d", name, c.ctas, g.Resources.SharedBytes, slots, c.wantSlots)
		}
		est += float64(min(c.ctas, cores*n)) * float64(slot)
		for _, ahead := range []bool{false, true} {
			o := arch.Options{Mode: arch.Timing, NoReadAhead: !ahead, GMSpan: span}
			if ahead {
				if o.Ahead = arch.NewAhead(); o.Ahead == nil {
					continue // (one processor: the process reads no streams ahead)
				}
			}
			before := hostBytesNow()
			var used int64
			o.Progress = func(sim.Time, uint64) { used = max(used, hostBytesNow()-before) }
			o.ProgressEvery = 2000
			chip, err := arch.NewChip(m, o)
			if err != nil {
				t.Fatal(err)
			}
			st, err := chip.Run(isa.Program{Name: "span", Grids: []isa.Grid{g}})
			if err != nil {
				t.Fatal(err)
			}
			used = max(used, hostBytesNow()-before)
			if r := chip.GMReach(); r != span {
				t.Errorf("%s: the grid reached %d bytes, want the span %d", name, r, span)
			}
			runtime.KeepAlive(chip)
			runtime.KeepAlive(st)
			t.Logf("%s, %d blocks of %d bytes of shared memory, read ahead %v: estimate %.1f MiB, held %.1f MiB", name, c.ctas, g.Resources.SharedBytes, ahead, est/(1<<20), float64(used)/(1<<20))
			if est < float64(used) || ahead && est > 1.25*float64(used) {
				t.Errorf("%s, %d blocks of %d bytes of shared memory, read ahead %v: %d cores estimated at %.1f MiB, held %.1f MiB running a grid over %d MiB of global memory",
					name, c.ctas, g.Resources.SharedBytes, ahead, cores, est/(1<<20), float64(used)/(1<<20), span>>20)
			}
		}
	}
}
