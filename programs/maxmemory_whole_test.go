package programs

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
)

// --max-memory bounds the whole estimate of a run — its base, its data
// and its chip model(s) together (HostBytes) —, not the data and the
// model each alone: a numerics-off hgemm, whose data is none and whose
// 910A model is 7 MiB, ran under 20 MiB (55 MiB resident), its chip model
// checked against the whole bound; and a full hgemm 1024³ whose data and
// base (192 MiB) pass the data check at 200 MiB is refused by its chip
// model (59 MiB functional), which the bound no longer holds beside them.
// The refusal names the room, quotes the run's whole estimate (as a data
// check's refusal does: the bound that runs it) and records the run's
// whole bound (badinput.HostMemory), not the room, for a sweep's
// --resume to compare.
func TestMaxMemoryBoundsWholeEstimate(t *testing.T) {
	f, err := ReadFile("examples/hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		numerics string
		bound    int64
		want     string
	}{
		{"numerics off", NumericsOff, 20 << 20,
			"machine ascend-910a: simulating it would take about 7 MiB of host memory (32 cores × 102 KiB, L2 and LLC directories 4 MiB), above what --max-memory 20MiB leaves beside the run's data and base (about 48 MiB, so nothing): check keys"},
		{"numerics full", NumericsFull, 200 << 20,
			`above the 8 MiB that --max-memory 200MiB leaves beside the run's data and base (about 192 MiB): check keys "cores", "core.queue_depth", "core.buffers", "l2.capacity" and "llc.capacity"; the run needs about 252MiB of host memory in all (its data 144MiB, its chip model 59MiB and the run's base 48MiB)`},
		{"room left", NumericsOff, 52 << 20,
			"above the 4 MiB that --max-memory 52MiB leaves beside the run's data and base (about 48 MiB): check keys"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Numerics: c.numerics, MaxHostBytes: c.bound}
			_, err := Execute(f, o, RunHooks{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !badinput.Is(err) {
				t.Fatalf("got %v, want bad input containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("a refusal of more than one line: %q", err)
			}
			if b, ok := badinput.HostMemoryBound(err); !ok || b != c.bound {
				t.Errorf("HostMemoryBound = %d, %v; want the run's whole bound %d (not the room)", b, ok, c.bound)
			}
			if est, ok := HostBytes(f, o); !ok || est <= c.bound {
				t.Errorf("HostBytes = %d, %v: within the bound %d that refused the run", est, ok, c.bound)
			}
		})
	}
}

// The sweep's estimate (HostBytes) and the run's refusal agree at the
// boundary: a run whose estimate is exactly its bound is not refused for
// host memory, one byte less refuses it (badinput.HostMemory, that bound)
// — an asm program's tensors and outputs, a DaVinci GEMM with numerics
// off, full and sampled, a GPU GEMM whose model counts its tensors' span,
// a functional GPU grid whose CTAs' data (43 MiB) the base and data hold
// (arch's grid check: the whole bound), a cluster's NPUs at fidelity full
// and one kernel's chip at fidelity sampled.
func TestMaxMemoryAgreesWithHostBytes(t *testing.T) {
	small := []string{"program.m=256", "program.n=256", "program.k=256"}
	for _, c := range []struct {
		name, file, src, numerics, fidelity string
		sets                                []string
	}{
		{name: "asm full", src: "kind: asm\ncores: 1\ngm: [{name: x, addr: 0, shape: [512, 512]}]\noutputs: [{name: x, addr: 0, shape: [512, 512]}]\nasm: |\n  nop\n"},
		{name: "asm off", src: "kind: asm\ncores: 1\ngm: [{name: x, addr: 0, shape: [512, 512]}]\nasm: |\n  nop\n", numerics: NumericsOff},
		{name: "hgemm off", file: "examples/hgemm.yaml", numerics: NumericsOff, sets: small},
		{name: "hgemm full", file: "examples/hgemm.yaml", numerics: NumericsFull, sets: small},
		{name: "hgemm sampled", file: "examples/hgemm.yaml", numerics: NumericsSampled, sets: small},
		{name: "a100 hgemm off", file: "examples/a100-hgemm.yaml", numerics: NumericsOff, sets: small},
		{name: "a100 hgemm full", file: "examples/a100-hgemm.yaml", numerics: NumericsFull, sets: append([]string{"machine.gm.capacity=64MiB"}, small...)},
		{name: "cluster full", file: "examples/lu-cluster-small.yaml", numerics: NumericsOff, fidelity: "full"},
		{name: "cluster sampled", file: "examples/lu-cluster-small.yaml", numerics: NumericsOff, fidelity: "sampled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := textOrFile(t, c.src, c.file)
			o := Options{Overrides: mustSets(t, c.sets...), Numerics: c.numerics, Fidelity: c.fidelity}
			est, ok := HostBytes(f, o)
			if !ok {
				t.Fatal("no estimate")
			}
			for _, bound := range []int64{est, est - 1} {
				o.MaxHostBytes = bound
				_, err := Execute(f, o, RunHooks{})
				b, refused := badinput.HostMemoryBound(err)
				switch {
				case bound == est && refused:
					t.Errorf("bound = the estimate, %d: refused: %v", est, err)
				case bound == est && err != nil:
					t.Errorf("bound = the estimate, %d: %v", est, err)
				case bound < est && (!refused || b != bound):
					t.Errorf("bound %d, a byte below the estimate: %v (HostMemoryBound %d, %v), want a refusal for host memory under that bound", bound, err, b, refused)
				}
			}
		})
	}
}

// A run without --max-memory bounds its models by the host's default, and
// a refusal says so ("the default --max-memory"); with one, by it.
func TestModelRoomNamesDefault(t *testing.T) {
	var a arch.Options
	Options{}.modelRoom(&a, runHostBytes, "")
	if !a.RunBoundDefault || a.RunBound != DefaultMaxHostBytes() || a.RunBeside != runHostBytes {
		t.Errorf("no --max-memory: %+v", a)
	}
	Options{MaxHostBytes: 1 << 30}.modelRoom(&a, runHostBytes, "")
	if a.RunBoundDefault || a.RunBound != 1<<30 || a.RunBeside != runHostBytes {
		t.Errorf("--max-memory 1GiB: %+v", a)
	}
}
