package programs

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// quotedBound matches a figure a refusal for host memory quotes; the last
// is the one it states for the run (a chip model's refusal names the
// model's first): the run's whole estimate, rounded up as --max-memory
// takes it.
var quotedBound = regexp.MustCompile(`about (\d+(?:\.\d+)? ?[MG]iB) of host memory`)

// A run refused for host memory quotes its whole estimate (HostBytes: its
// base, its data and its chip model), whichever check refuses it first —
// its data's, or its chip model's —, so that a run given that figure as
// its bound (--max-memory) passes every check. Before, the checks quoted
// their own figures: emulated-gemm 2048³ on the 910A was refused at 60MiB
// as needing 384MiB (the GEMM's 28 bytes an element), at 384MiB as
// needing 624MiB (the scheme's 48), at 624MiB for its chip model beside
// 1.3 GiB of data (the sweep's 104), and ran at 1434MiB. Each case is
// refused under a small bound, then run under the figure quoted until its
// simulation starts (the refusals come before it), and then stopped.
//
// (Not the CTAs' data of a functional GPU grid, which arch holds to the
// whole bound beside the chip model as a grid starts, and which HostBytes
// does not count: where they take more than the run's data and base — an
// emulated GEMM of 512³ on the A100, its CTAs ~108 MiB — the grid refuses
// the run under its estimate, quoting its own figure. At 1024³ the data
// hold them.)
func TestMaxMemoryQuotedFigureRuns(t *testing.T) {
	size := func(n string) []string { return []string{"program.m=" + n, "program.n=" + n, "program.k=" + n} }
	for _, c := range []struct {
		name, file, src, numerics string
		sets                      []string
		files                     map[string]string
		bound                     int64
	}{
		{name: "hgemm 910A", file: "examples/hgemm.yaml", numerics: NumericsFull, sets: size("512"), bound: 60 << 20},
		{name: "hgemm 910A sampled", file: "examples/hgemm.yaml", numerics: NumericsSampled, sets: size("1024"), bound: 60 << 20},
		{name: "emulated-gemm 910A", file: "examples/ascend-910a-emulated-gemm.yaml", numerics: NumericsFull, sets: size("512"), bound: 60 << 20},
		{name: "ozaki 910A", file: "examples/ascend-910a-ozaki.yaml", numerics: NumericsFull, sets: size("512"), bound: 60 << 20},
		{name: "dgemm a100", file: "examples/a100-dgemm.yaml", numerics: NumericsFull, sets: size("512"), bound: 60 << 20},
		{name: "emulated-gemm a100 markidis", file: "examples/a100-emulated-gemm.yaml", numerics: NumericsFull, sets: append(size("1024"), "program.scheme=markidis"), bound: 60 << 20},
		{name: "lu-fused 910A", file: "examples/lu-fused-small.yaml", numerics: NumericsFull, bound: 60 << 20},
		// The chip model refuses first: no data, or data within the bound.
		{name: "hgemm 910A off", file: "examples/hgemm.yaml", numerics: NumericsOff, bound: 20 << 20},
		{name: "hgemm 910A data within", file: "examples/hgemm.yaml", numerics: NumericsFull, sets: size("1024"), bound: 200 << 20},
		{name: "asm parse", src: "kind: asm\nfile: a.s\n", files: map[string]string{"a.s": strings.Repeat("nop\n", 9000)}, bound: 64 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f *File
			if c.files != nil {
				f = programFiles(t, c.src, c.files)
			} else {
				f = textOrFile(t, c.src, c.file)
			}
			o := Options{Overrides: mustSets(t, c.sets...), Numerics: c.numerics, MaxHostBytes: c.bound}
			_, err := Execute(f, o, RunHooks{})
			if _, refused := badinput.HostMemoryBound(err); !refused {
				t.Fatalf("under %d MiB: %v, want a refusal for host memory", c.bound>>20, err)
			}
			all := quotedBound.FindAllStringSubmatch(err.Error(), -1)
			if all == nil {
				t.Fatalf("the refusal quotes no figure (%s): %v", quotedBound, err)
			}
			q := all[len(all)-1]
			figure, perr := machines.ParseSize(q[1]) // (as --max-memory reads it)
			if perr != nil {
				t.Fatalf("the figure quoted, %q: %v", q[1], perr)
			}
			if est, ok := HostBytes(f, o); !ok || float64(figure) < float64(est) || float64(figure) > float64(est)+1<<28 {
				t.Errorf("quoted %s (%d), HostBytes %d (%v): want the estimate rounded up", q[1], figure, est, ok)
			}
			// Under the figure: no refusal; the simulation starts, then
			// stops.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			started := false
			o.MaxHostBytes = int64(figure)
			_, err = Execute(f, o, RunHooks{Context: ctx, ProgressEvery: 1, Progress: func(sim.Time, uint64) {
				started = true
				cancel()
			}})
			if b, refused := badinput.HostMemoryBound(err); refused {
				t.Fatalf("under the figure quoted, %s: refused again (bound %d): %v", q[1], b, err)
			}
			if err != nil && (!started || !errors.Is(err, context.Canceled)) {
				t.Errorf("under %s: started %v, %v; want the simulation started (or run)", q[1], started, err)
			}
		})
	}
}

// A refusal's figure is the estimate rounded up to what --max-memory
// takes (machines.ParseSize: whole bytes, "1.4GiB" is not), never down:
// a bound of it holds the estimate.
func TestAboutBytesRoundsUp(t *testing.T) {
	for _, c := range []struct {
		b    float64
		want string
	}{
		{48 << 20, "48MiB"},
		{48<<20 + 1, "49MiB"},
		{1434.2 * (1 << 20), "1435MiB"},
		{10 << 30, "10GiB"},
		{10<<30 + 1, "10.25GiB"},
		{34.6 * (1 << 30), "34.75GiB"},
	} {
		got := aboutBytes(c.b)
		if got != c.want {
			t.Errorf("aboutBytes(%g) = %q, want %q", c.b, got, c.want)
		}
		if n, err := machines.ParseSize(got); err != nil || float64(n) < c.b {
			t.Errorf("aboutBytes(%g) = %q: --max-memory reads %d, %v", c.b, got, n, err)
		}
	}
}
