package programs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// The kernels a run's estimate counts the blocks of (gpuKernels) are the
// ones its build launches — as many, of as many blocks, with the same
// resources, timed only or not — for every kind and scheme it follows, on
// NVIDIA and AMD machines, for square, odd and thin shapes (whose tiles
// the builds pick by shape), with the parameters the estimate decodes
// (its numerics full and off: the kernels do not depend on them).
func TestBlocksHostBytesFollowKernels(t *testing.T) {
	shapes := [][]string{
		{"program.m=200", "program.n=136", "program.k=72"},
		{"program.m=1024", "program.n=1024", "program.k=1024"},
		{"program.m=16", "program.n=8192", "program.k=512"},
	}
	for _, c := range []struct {
		file, machine string
		sets          []string
	}{
		{"a100-hgemm.yaml", "a100", nil},
		{"a100-hgemm.yaml", "b200", nil},
		{"a100-hgemm.yaml", "mi300x", []string{"program.input=bf16"}},
		{"a100-hgemm.yaml", "h100-sxm", []string{"program.input=e4m3"}},
		{"a100-hgemm.yaml", "a100", []string{"program.tiling.bm=64", "program.tiling.bn=64", "program.tiling.bk=32"}},
		{"a100-sgemm.yaml", "a100", nil},
		{"a100-tf32gemm.yaml", "h100-sxm", nil},
		{"a100-dgemm.yaml", "a100", nil},
		{"a100-dgemm.yaml", "mi300x", nil},
		{"a100-igemm.yaml", "mi210", nil},
		{"a100-emulated-gemm.yaml", "a100", nil}, // ape-fp32f, termwise
		{"a100-emulated-gemm.yaml", "mi300x", []string{"program.scheme=markidis"}},
		{"a100-emulated-gemm.yaml", "b200", []string{"program.scheme=bf16x9"}},
		{"a100-emulated-gemm.yaml", "h100-sxm", []string{"program.scheme=ootomo"}},
		{"a100-emulated-gemm.yaml", "a100", []string{"program.scheme=native"}},
		{"a100-emulated-gemm.yaml", "mi210", []string{"program.scheme=ape-int16"}},
	} {
		for _, shape := range shapes {
			name := fmt.Sprintf("%s on %s %v %v", c.file, c.machine, c.sets, shape)
			opts := Options{Machine: c.machine, Numerics: NumericsOff, Overrides: mustSets(t, append(c.sets, shape...)...)}
			f, m, job := buildRun(t, "examples/"+c.file, opts)
			built := job.Program().Grids
			for _, numerics := range []string{NumericsOff, NumericsFull} {
				o := opts
				o.Numerics = numerics
				params, err := o.estimateOf(f).params()
				if err != nil {
					t.Fatal(err)
				}
				got, ok := gpuKernels(f, params, m)
				if !ok {
					t.Fatalf("%s, numerics %s: the estimate does not follow its kernels", name, numerics)
				}
				sameKernels(t, fmt.Sprintf("%s, numerics %s", name, numerics), got, built)
			}
		}
	}
}

// A GPU run's kernels' blocks are counted for the blocks a core holds at
// once, no more than the kernels' blocks, not for every block slot of
// every core (arch/gpu SlotsBytes, what a kind whose kernels the estimate
// does not follow still counts): an A100 HGEMM 4096³ holds 1 block an
// SM, ~70 KiB, against 32 slots, 2.2 MiB; a GEMM of fewer blocks than
// SMs counts those blocks. A functional run counts each block's data as
// the grid scheduler does, on every core (and a timing run none).
func TestBlocksHostBytesCountResidentBlocks(t *testing.T) {
	f, err := ReadFile("examples/a100-hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := machines.Load("a100", nil)
	if err != nil {
		t.Fatal(err)
	}
	all, ok := gpu.SlotsBytes(m)
	if !ok {
		t.Fatal("no estimate of an A100 SM's slots")
	}
	for _, c := range []struct {
		size     int
		numerics string
	}{{4096, NumericsOff}, {4096, NumericsFull}, {256, NumericsOff}, {256, NumericsFull}} {
		o := Options{Numerics: c.numerics, Overrides: mustSets(t, fmt.Sprintf("program.m=%d", c.size), fmt.Sprintf("program.n=%d", c.size), fmt.Sprintf("program.k=%d", c.size))}
		e, ok := runEstimate(f, o)
		if !ok {
			t.Fatal("no estimate")
		}
		params, _ := o.estimateOf(f).params()
		kernels, ok := gpuKernels(f, params, m)
		if !ok || len(kernels) != 1 {
			t.Fatalf("%d³: kernels %v, %v", c.size, kernels, ok)
		}
		g := kernels[0]
		n, slot, data, _ := gpu.BlockBytes(m, g.Resources)
		made := min(g.CTAs, m.Cores*n) // (breadth first: a slot a block, up to n a core)
		want := float64(made) * float64(slot)
		if c.numerics == NumericsFull {
			want += float64(made) * float64(data)
		}
		if e.blocks != want {
			t.Errorf("%d³ numerics %s (%d blocks, %d an SM): blocks %.0f bytes, want %.0f", c.size, c.numerics, g.CTAs, n, e.blocks, want)
		}
		if c.numerics == NumericsOff && e.blocks >= float64(m.Cores)*float64(all)/4 {
			t.Errorf("%d³ numerics off: blocks %.1f MiB, every slot of every SM %.1f MiB: not below a quarter", c.size, e.blocks/(1<<20), float64(m.Cores)*float64(all)/(1<<20))
		}
	}
	// Ozaki's kernels are followed too (they counted every slot of every
	// SM, without data, before 2026-12-05): its numerics off count no
	// data, below every slot's objects.
	oz, err := ReadFile("examples/b200-ozaki.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b200, err := machines.Load("b200", nil)
	if err != nil {
		t.Fatal(err)
	}
	per, _ := gpu.SlotsBytes(b200)
	if e, ok := runEstimate(oz, Options{Numerics: NumericsOff}); !ok || e.blocks <= 0 || e.blockData != 0 || e.blocks >= float64(b200.Cores)*float64(per) {
		t.Errorf("ozaki on the B200, numerics off: blocks %.0f, their data %.0f (%v), want some, none, below every slot's %.0f", e.blocks, e.blockData, ok, float64(b200.Cores)*float64(per))
	}
	// A DaVinci run has none.
	if e, ok := runEstimate(textOrFile(t, "", "examples/hgemm.yaml"), Options{Numerics: NumericsFull}); !ok || e.blocks != 0 {
		t.Errorf("hgemm on the 910A: blocks %.0f (%v), want 0", e.blocks, ok)
	}
}

// A functional GPU run given the figure its refusal quotes as its bound
// is not refused by its grids either: the estimate holds the data of the
// blocks of the kernels it follows as the grid scheduler counts it
// (arch's admitStorage: each resident block's shared memory and a register
// file and accumulator store of the core's size, on every core). Before,
// the estimate did not count it, and the grid refused these runs under
// the figure, quoting its own: MI300X markidis 256³ at 414MiB (the grid
// 963 MiB), A100 dgemm 512³ at 328MiB (503 MiB), A100 HGEMM 256³ on 256
// SMs at 650MiB (986 MiB), A100 markidis 512³ at 334MiB (351 MiB), MI300X
// ape-int16 256³ at 412MiB (1.3 GiB), B200 HGEMM 1024³ at 526MiB (661
// MiB). Each is refused under a small bound, then run under the figure
// until its simulation starts.
func TestMaxMemoryGPUBlocksQuotedRuns(t *testing.T) {
	size := func(n string) []string { return []string{"program.m=" + n, "program.n=" + n, "program.k=" + n} }
	for _, c := range []struct {
		name, file, machine string
		sets                []string
	}{
		{"mi300x markidis 256", "examples/a100-emulated-gemm.yaml", "mi300x", append(size("256"), "program.scheme=markidis")},
		{"a100 dgemm 512", "examples/a100-dgemm.yaml", "", size("512")},
		{"a100 hgemm 256 on 256 SMs", "examples/a100-hgemm.yaml", "", append(size("256"), "machine.gm.capacity=64MiB", "machine.cores=256")},
		{"a100 markidis 512", "examples/a100-emulated-gemm.yaml", "", append(size("512"), "program.scheme=markidis")},
		{"mi300x ape-int16 256", "examples/a100-emulated-gemm.yaml", "mi300x", append(size("256"), "program.scheme=ape-int16")},
		{"b200 hgemm 1024", "examples/a100-hgemm.yaml", "b200", size("1024")},
		// Kernels not followed before 2026-12-05 (every slot of every
		// core counted, without data): ozaki 256³ on the MI300X quoted
		// 427MiB, and its grid refused it (~950 MiB).
		{"mi300x ozaki 256", "examples/b200-ozaki.yaml", "mi300x", append(size("256"), "machine.gm.capacity=1GiB")},
		{"a100 ozaki dynamic 200", "examples/b200-ozaki.yaml", "a100", append(size("200"), "program.precision=dynamic")},
		{"t4 ozaki-ii 128", "examples/b200-ozaki.yaml", "t4", append(size("128"), "program.method=ozaki-ii", "program.precision=", "program.mantissa_bits=40")},
		{"h100 auto 128", "examples/a100-emulated-gemm.yaml", "h100-sxm", append(size("128"), "program.scheme=auto")},
		{"a100 auto 256", "examples/a100-emulated-gemm.yaml", "", append(size("256"), "program.scheme=auto")},
		{"a100 lu-fused 512 whole", "examples/a100-lu-fused.yaml", "", []string{"program.n=512", "program.nb=128"}},
		{"h100 lu-fused 768 diag gpu whole", "examples/a100-lu-fused.yaml", "h100-sxm", []string{"program.n=768", "program.nb=128", "program.diag=gpu", "program.trailing=fp32"}},
		{"mi300x gpu-bench smem", "examples/a100-smem-bandwidth.yaml", "mi300x", []string{"program.repeats=4"}},
		{"t4 hgemm 512", "examples/a100-hgemm.yaml", "t4", size("512")},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := textOrFile(t, "", c.file)
			o := Options{Machine: c.machine, Overrides: mustSets(t, c.sets...), Numerics: NumericsFull, MaxHostBytes: 1 << 20}
			if strings.Contains(c.name, "gpu-bench") {
				o.Numerics = "" // (timed only)
			}
			_, err := Execute(f, o, RunHooks{})
			if _, refused := badinput.HostMemoryBound(err); !refused {
				t.Fatalf("under 1 MiB: %v, want a refusal for host memory", err)
			}
			all := quotedBound.FindAllStringSubmatch(err.Error(), -1)
			if all == nil {
				t.Fatalf("the refusal quotes no figure (%s): %v", quotedBound, err)
			}
			figure, perr := machines.ParseSize(all[len(all)-1][1])
			if perr != nil {
				t.Fatal(perr)
			}
			o.MaxHostBytes = int64(figure)
			if strings.HasSuffix(c.name, " whole") { // (kernels launched as it runs: run it through)
				if _, err := Execute(f, o, RunHooks{}); err != nil {
					t.Fatalf("under the figure quoted, %d MiB: %v", figure>>20, err)
				}
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			started := false
			_, err = Execute(f, o, RunHooks{Context: ctx, ProgressEvery: 1, Progress: func(sim.Time, uint64) {
				started = true
				cancel()
			}})
			if b, refused := badinput.HostMemoryBound(err); refused {
				t.Fatalf("under the figure quoted, %d MiB: refused again (bound %d): %v", figure>>20, b, err)
			}
			if err != nil && (!started || !errors.Is(err, context.Canceled)) {
				t.Errorf("under %d MiB: started %v, %v; want the simulation started (or run)", figure>>20, started, err)
			}
		})
	}
}

// sameKernels fails the test where the kernels the estimate planned (got)
// are not, one by one, those the build launched (built): their blocks,
// resources and timing-only mark (gridShape's).
func sameKernels(t *testing.T, name string, got, built []isa.Grid) {
	t.Helper()
	if len(got) != len(built) {
		t.Fatalf("%s: %d kernels estimated, %d launched", name, len(got), len(built))
	}
	for i, g := range built {
		if e := got[i]; !sameShape(e, g) {
			t.Errorf("%s, kernel %d (%s): estimated %d blocks of %+v (timed only %v), launched %d of %+v (%v)",
				name, i, g.Name, e.CTAs, e.Resources, e.TimingOnly, g.CTAs, g.Resources, g.TimingOnly)
		}
	}
}

// sameShape reports whether grids a and b have the same blocks, resources
// and timing-only mark.
func sameShape(a, b isa.Grid) bool {
	return a.CTAs == b.CTAs && a.Resources == b.Resources && a.TimingOnly == b.TimingOnly
}
