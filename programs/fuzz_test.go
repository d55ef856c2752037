package programs

import (
	"context"
	"errors"
	"io/fs"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// heapAllocated is the bytes allocated on the heap so far (cumulative): a
// fuzz target's bound on what one input may make the code allocate.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// fuzzAllocBound is what one input of a fuzz target may allocate: a file
// of a few kilobytes that claims a huge size must be refused before the
// allocation, not after it.
const fuzzAllocBound = 512 << 20

// FuzzProgramFile feeds arbitrary YAML and --set lines (one a line, \x1e in
// a line a newline in its value) to the program
// parser and the kinds' parameter decoding and validation as Execute
// checks them (timing only, or with ownNumerics the file's numerics under
// a host-memory bound of fuzzAllocBound/4 — a model or values beyond it
// refused, as run refuses them, and what the run allocates held to
// fuzzAllocBound: an estimate short by 4× or more fails; on a GPU machine
// both bounds with the model's estimate on top; on a cluster or
// node description the cluster build), and walks the start of the
// streams they generate — a core's, or a grid's first and last block's
// (a build that simulates, scheme auto's, stops after 5 s):
// it must never panic, only return errors of a line a violation, each
// naming a file or a --set, and never allocate more than fuzzAllocBound
// (and a GPU model's estimate). Seeds: every example program (each kind,
// on DaVinci, GPUs and a node description), inline emulated-gemm schemes
// and --set overrides of program, machine, node and cluster keys.
func FuzzProgramFile(f *testing.F) {
	names, err := fs.Glob(Examples, "examples/*.yaml")
	if err != nil || len(names) == 0 {
		f.Fatal("no examples", err)
	}
	for _, name := range names {
		b, err := Examples.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "", false)
		f.Add(b, "", true) // its own numerics
	}
	f.Add([]byte("kind: sgemm-cube\nm: -1\n"), "", false)
	f.Add([]byte("kind: asm\nasm: \"repeat 3 i {\\n scalar cycles=i\\n}\\n\"\ncores: 2\n"), "", false)
	f.Add([]byte("kind: hgemm\ntiling: {bm: 0}\n"), "", false)
	f.Add([]byte("kind: [\n"), "", false)
	// Inline schemes (a preset changed, one written out) and --set of a
	// scheme's keys or of the whole scheme.
	emu := "kind: emulated-gemm\nmachine: %s\nm: 256\nk: 256\nn: 256\nnumerics: off\nscheme: %s\n"
	for _, c := range []struct{ machine, scheme, sets string }{
		{"a100", "{name: ootomo, split: fused}", ""},
		{"a100", "{name: mine, pieces: [{format: fp16, rounding: rne}, {format: fp16, rounding: rne, scale: 11}], groups: [{products: [hh], accumulate: outside}, {products: [hl, lh]}], kernels: fused, epilogue: ordered}", ""},
		{"a100", "{pieces: [{format: bf16}, {format: bf16}, {format: bf16}], groups: [{products: [hh]}, {products: [hl, lh]}, {products: [ll, hm, mh]}]}", ""},
		{"ascend-910a", "{name: x, pieces: [{format: fp16}, {format: fp16, scale: 11}], groups: [{products: [hh]}, {products: [hl, lh]}]}", ""},
		{"ascend-910a", "ootomo", "program.scheme.split=fused"},
		{"a100", "ape-fp32f", "program.scheme.split=fused"},
		{"a100", "ape-fp32f", "program.scheme={name: le-gemm, split: fused}\nprogram.scheme.split=pass"},
		{"a100", "{name: markidis}", "program.scheme.pieces[1].scale=11"},
		{"a100", "ootomo", "program.scheme.pieces[1]={format: fp16, rounding: rz, scale: 9}\nprogram.scheme.groups[1].products[0]=lh"},
		{"mi210", "le-gemm", "program.scheme.pieces[7].scale=1\nprogram.scheme=bf16x9"},
		{"mi210", "native", "program.scheme=ape-int16\nprogram.m=4096"},
		{"ascend-910b3", "bf16x9", "program.scheme.epilogue=corrections-first\nmachine.cores=2"},
		{"h100-sxm", "auto", "program.m=64\nprogram.n=64\nprogram.k=64"},
	} {
		f.Add([]byte(strings.ReplaceAll(strings.Replace(emu, "%s", c.machine, 1), "scheme: %s", "scheme: "+c.scheme)), c.sets, false)
	}
	// --set of machine keys, and of a cluster's and a node's.
	hgemm, _ := Examples.ReadFile("examples/hgemm.yaml")
	f.Add(hgemm, "machine.core.buffers.L1=512KiB\nprogram.tiling.bm=64", false)
	f.Add(hgemm, "machine.cores=0", false)
	f.Add(hgemm, "program.machine=a100", false)
	f.Add(hgemm, "core.cores=2", false)         // a path neither program. nor machine.
	f.Add(hgemm, "program.m", false)            // no value
	f.Add(hgemm, "program.scheme=hgemm", false) // a key of another kind
	// Values too large for the fuzz's host-memory bound: the estimate
	// refuses them before the matrices are allocated.
	f.Add(hgemm, "program.m=8192\nprogram.n=8192\nprogram.k=8192\nprogram.numerics=full", true)
	lu, _ := Examples.ReadFile("examples/lu-cluster-small.yaml")
	f.Add(lu, "cluster.nodes=2\nnode.npus=4", false)
	f.Add(lu, "program.machine=cloudbrain2\ncluster.nodes=2\nprogram.grid.p=4\nprogram.grid.q=4", false)
	f.Add(lu, "node.hosts.cores=0\nmachine.core.buffers.L1=256KiB", false)
	f.Add(lu, "program.fidelity=sampled\nprogram.n=1048576", false)
	f.Add(lu, "host.cores=2", false)
	f.Add(lu, "machine.host.cores=2", false)
	// --set values holding a newline (\x1e, above).
	f.Add(hgemm, "program.m=64\x1e128", false)
	f.Add(hgemm, "program.tiling={bm: 64,\x1e bn: 0}", false)
	f.Add(hgemm, "machine.core.buffers.L1=512KiB\x1e# comment", false)
	f.Add(hgemm, "program.m=|\x1e  64", false)
	f.Add(lu, "cluster.fabric.port_bandwidth=12.5GB/s\x1e\x1ex", false)
	f.Fuzz(func(t *testing.T, data []byte, sets string, ownNumerics bool) {
		before := heapAllocated()
		allowed := uint64(fuzzAllocBound) // (and a GPU model's estimate, below)
		defer func() {
			if n := heapAllocated() - before; n > allowed {
				t.Fatalf("allocated %d MiB, more than %d MiB", n>>20, allowed>>20)
			}
		}()
		// A line a violation (two bad values: two lines), each naming
		// a file (the program's, a machine's or a cluster's) or a --set.
		ref := "fuzz.yaml"
		oneLine := func(err error) {
			if err == nil {
				return
			}
			for _, l := range strings.Split(err.Error(), "\n") {
				if !strings.Contains(l, ".yaml") && !strings.Contains(l, "--set") && !strings.Contains(l, ref) {
					t.Fatalf("error line %q names neither a file nor a --set (in %q)", l, err)
				}
			}
		}
		// A build that runs simulations (scheme auto's candidates at the
		// file's size) stops after a few seconds: long, not hung.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		opts := Options{Numerics: NumericsOff, run: &RunHooks{Context: ctx}}
		if ownNumerics {
			// The file's numerics (values computed, inputs generated or
			// read) under a host-memory bound well below fuzzAllocBound:
			// a size whose values would not fit is refused by the
			// estimate, before anything is allocated.
			opts.Numerics, opts.MaxHostBytes = "", fuzzAllocBound/4
		}
		if sets != "" {
			for _, s := range strings.Split(sets, "\n") {
				// (within a line, \x1e stands for a newline: a --set
				// value may hold one, as the shell passes it)
				o, err := machines.ParseOverride(strings.ReplaceAll(s, "\x1e", "\n"))
				if err != nil {
					oneLine(err) // (as run refuses it)
					return
				}
				opts.Overrides = append(opts.Overrides, o)
			}
		}
		file, err := Parse("fuzz.yaml", ".", data)
		if oneLine(err); err != nil {
			return
		}
		if err := file.Kind.checkKindKept(opts); err != nil {
			oneLine(err)
			return
		}
		if err := file.Kind.checkOptions(file, opts); err != nil {
			oneLine(err)
			return
		}
		ref = machineRef(file, opts) // (a machine file's errors name it)
		if name := ClusterMachine(file, opts); name != "" {
			if err := checkClusterOverrides(opts.Overrides); err != nil {
				oneLine(err)
				return
			}
			if file.Kind.BuildCluster == nil {
				return
			}
			topo, err := cluster.LoadSystem(name, opts.Overrides)
			if oneLine(err); err != nil {
				return
			}
			_, err = file.Kind.BuildCluster(file, topo, opts)
			if oneLine(err); err == nil {
				simulateStart(t, ctx, file, opts, oneLine)
			}
			return
		}
		if err := CheckOverrides(opts.Overrides); err != nil {
			oneLine(err)
			return
		}
		m, err := MachineFor(file, opts)
		if oneLine(err); err != nil {
			return
		}
		if ownNumerics && arch.RunsGrids(m) {
			// A GPU run's estimate counts its kernels' blocks and their
			// data on every core (A100 HGEMM 2048³: 51 MiB; it counted
			// every block slot of every core, 243 MiB, before
			// 2026-12-04), and the model: within fuzzAllocBound/4
			// alone no GPU but the T4 reached its numerics here. The
			// blocks' and the model's estimate are added to the bound,
			// so the data keep fuzzAllocBound/4 of room, and to what the
			// run may allocate, so that the data's estimate short by 4×
			// still fails (the model allocates less than its estimate:
			// TestFootprintCoversRunningGPU).
			if e, ok := runEstimate(file, opts); ok {
				est := e.blocks + e.models // (as HostBytes counts them)
				opts.MaxHostBytes += int64(est)
				allowed += uint64(est)
			}
		}
		job, err := file.Kind.BuildFor(file, m, opts)
		if ctx.Err() != nil {
			return
		}
		if oneLine(err); err != nil {
			return
		}
		// Walk a bounded prefix of core 0's stream and of the first and
		// last block of each grid (asking their classes).
		p := job.Program()
		walk := func(s isa.Stream) {
			n := 0
			for range s {
				if n++; n > 2000 {
					break
				}
			}
		}
		if len(p.Cores) > 0 && p.Cores[0] != nil {
			walk(p.Cores[0])
		}
		for _, g := range p.Grids {
			for _, i := range []int{0, g.CTAs - 1} {
				if i < 0 {
					continue
				}
				if g.Class != nil {
					g.Class(i)
				}
				walk(g.CTA(i))
			}
		}
		simulateStart(t, ctx, file, opts, oneLine)
	})
}

// fuzzEvents is how many events of a fuzzed program's run FuzzProgramFile
// simulates (about: the run's context is asked every 4096).
const fuzzEvents = 4096

// errFuzzEnough stops a fuzzed program's run after fuzzEvents.
var errFuzzEnough = errors.New("enough events simulated")

// simulateStart runs the program of file, which builds, for its first
// fuzzEvents events (on one chip or a cluster), the way `run` does: it
// must not panic, and end only with the stop, a deadlock or a refusal of
// bad input (each line naming a file or a --set: oneLine) — an error of
// another kind is a simulation failure that the parameters' checks let
// through.
func simulateStart(t *testing.T, ctx context.Context, file *File, opts Options, oneLine func(error)) {
	g, err := file.Again()
	if err != nil {
		t.Fatalf("the file parsed once, not again: %v", err)
	}
	simCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	hooks := RunHooks{Context: simCtx, ProgressEvery: fuzzEvents / 4, Progress: func(_ sim.Time, events uint64) {
		if events >= fuzzEvents {
			stop(errFuzzEnough)
		}
	}}
	opts.run = nil
	_, err = Execute(g, opts, hooks)
	var deadlock *sim.DeadlockError
	switch {
	case err == nil, errors.Is(err, errFuzzEnough), ctx.Err() != nil, errors.As(err, &deadlock):
	case badinput.Is(err):
		oneLine(err)
	default:
		t.Fatalf("the run failed, not for bad input: %v", err)
	}
}
