package gpu_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	_ "github.com/davinci-sim/davinci-sim/arch/amd"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	_ "github.com/davinci-sim/davinci-sim/arch/nvidia"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
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
// bound when the grid is admitted, for as many blocks as the kernel fits
// on an SM — not every block slot the machine has (A100: 32, where a
// GEMM's blocks hold 1 or 2): the chip's own estimate holds none of it.
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
	grid := func(smem int64, timingOnly bool) isa.Grid {
		return isa.Grid{Name: "g", CTAs: 8, CTA: func(int) isa.Stream { return ctaAt(0) }, TimingOnly: timingOnly,
			Resources: isa.Resources{SharedBytes: smem, Registers: 4 << 10, Warps: 4}}
	}
	for _, c := range []struct {
		mode    arch.Mode
		g       isa.Grid
		refused bool
	}{
		{arch.Functional, grid(64<<10, false), true},
		{arch.Functional, grid(100<<10, false), false},
		{arch.Functional, grid(64<<10, true), false},
		{arch.Timing, grid(64<<10, false), false},
	} {
		chip, err := arch.NewChip(m, arch.Options{Mode: c.mode, MaxBytes: bound})
		if err != nil {
			t.Fatal(err)
		}
		_, err = chip.Run(isa.Program{Name: "p", Grids: []isa.Grid{c.g}})
		var fe *arch.FootprintError
		if got := errors.As(err, &fe); got != c.refused {
			t.Errorf("mode %v, %d KiB of shared memory, timing only %v: refused %v (%v), want %v",
				c.mode, c.g.Resources.SharedBytes>>10, c.g.TimingOnly, got, err, c.refused)
		} else if got && !strings.Contains(err.Error(), "(4 cores × 640 KiB of CTAs' shared memory, registers and accumulators — this grid's 2 resident CTAs × 320 KiB") {
			t.Errorf("message %q", err)
		}
	}
}
