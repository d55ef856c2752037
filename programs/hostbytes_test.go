package programs

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
)

// Every program kind has an estimate of its host memory: a kind added
// without one would run alone in every sweep (the budget's worth) — its
// data's bytes belong in dataHostBytes.
func TestHostBytesEveryKind(t *testing.T) {
	for _, k := range Kinds() {
		if k.Params == nil {
			continue
		}
		if _, ok := dataHostBytes(k.Name, reflect.New(k.Params).Interface(), nil); !ok {
			t.Errorf("program kind %s (%v): no host memory estimate (programs/hostbytes.go dataHostBytes)", k.Name, k.Params)
		}
	}
	if _, ok := dataHostBytes("x", new(struct{ N int }), nil); ok {
		t.Error("a kind not known has an estimate")
	}
}

// A run's estimate holds its chip models (arch.Footprint of its machine
// after the overrides, in its mode): a numerics-off hgemm's data is none,
// yet 4096 cores of the 910A take some 250 MiB (measured: 428 MB peak, 2
// such sweep points at once 683 MB where each was estimated at 48 MiB);
// full numerics count the functional model's buffers; a node description
// at fidelity full counts every NPU's model, at sampled one. And the
// estimate agrees with the run's refusal: a run whose model passes its
// bound is refused, and its estimate passes that bound too.
func TestHostBytesChipModel(t *testing.T) {
	f, err := ReadFile("examples/hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	footprint := func(name string, mode arch.Mode, sets ...string) float64 {
		t.Helper()
		m, err := machines.Load(name, mustSets(t, sets...))
		if err != nil {
			t.Fatal(err)
		}
		b, err := arch.Footprint(m, mode)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	small := mustSets(t, "program.m=256", "program.n=256", "program.k=256")
	estimate := func(f *File, o Options) int64 {
		t.Helper()
		n, ok := HostBytes(f, o)
		if !ok {
			t.Fatalf("%s: no estimate", f.Path)
		}
		return n
	}
	off := estimate(f, Options{Overrides: small, Numerics: NumericsOff})
	if want := runHostBytes + int64(footprint("ascend-910a", arch.Timing)); off != want {
		t.Errorf("hgemm 256³ off on the 910A: %d, want the run's base and the chip model, %d", off, want)
	}
	cores := append(mustSets(t, "machine.cores=4096"), small...)
	big := estimate(f, Options{Overrides: cores, Numerics: NumericsOff})
	if want := runHostBytes + int64(footprint("ascend-910a", arch.Timing, "machine.cores=4096")); big != want || big < 250<<20 {
		t.Errorf("hgemm 256³ off on 4096 cores: %d MiB, want %d MiB (≥ 250 MiB)", big>>20, want>>20)
	}
	full := estimate(f, Options{Overrides: small, Numerics: NumericsFull})
	if want := runHostBytes + int64(gemmBytes(&GEMMParams{M: 256, N: 256, K: 256}, gemmPerElem("hgemm", nil, nil))+footprint("ascend-910a", arch.Functional)); full != want {
		t.Errorf("hgemm 256³ full: %d, want %d (the functional model's buffers)", full, want)
	}
	lu, err := ReadFile("examples/lu-cluster-small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	per := footprint("ascend-910a", arch.Timing)
	for fid, npus := range map[string]float64{"full": 8, "sampled": 1} {
		o := Options{Overrides: mustSets(t, "program.fidelity="+fid), Numerics: NumericsOff}
		if got, want := estimate(lu, o), runHostBytes+int64(npus*per); got != want {
			t.Errorf("lu-fused on cloudbrain2-node, fidelity %s: %d, want %d (%g chip models)", fid, got, want, npus)
		}
	}
	// The run's refusal and the estimate agree.
	const bound = 200 << 20
	o := Options{Overrides: cores, Numerics: NumericsOff, MaxHostBytes: bound}
	if _, err := Execute(f, o, RunHooks{}); err == nil {
		t.Fatal("4096 cores under a 200 MiB bound: run")
	} else if b, ok := badinput.HostMemoryBound(err); !ok || b != bound {
		t.Fatalf("4096 cores under a 200 MiB bound: %v, want a refusal for host memory", err)
	}
	if got := estimate(f, o); got <= bound {
		t.Errorf("estimate %d MiB within the bound that refused the run", got>>20)
	}
}

// The span of global memory a GPU GEMM's or emulated GEMM's tensors
// occupy (gmSpanBytes), which the chip model's estimate counts the caches'
// where indexes for, covers how far a run of it reaches — its chip
// indexing the whole memory, so that a tensor the span left out would
// show — and follows the layout (not more than an alignment beyond it):
// the estimate is an upper bound, and the index given the span
// (arch.Options.GMSpan) looks no access up the slow way — and runs the
// same. Shapes not a multiple of the alignment; each element size and
// scheme layout.
func TestGMSpanCoversRun(t *testing.T) {
	shape := []string{"program.m=200", "program.n=136", "program.k=72"}
	for _, c := range []struct {
		file, machine string
		sets          []string
		noShape       bool // (gpu-bench: no m, n, k)
	}{
		{"a100-hgemm.yaml", "a100", nil, false},
		{"a100-hgemm.yaml", "mi300x", []string{"program.input=bf16"}, false},
		{"a100-hgemm.yaml", "h100-sxm", []string{"program.input=e4m3"}, false},
		{"a100-sgemm.yaml", "a100", nil, false},
		{"a100-tf32gemm.yaml", "h100-sxm", nil, false},
		{"a100-dgemm.yaml", "a100", nil, false},
		{"a100-igemm.yaml", "mi300x", nil, false},
		{"a100-emulated-gemm.yaml", "a100", []string{"program.scheme=ootomo"}, false},
		{"a100-emulated-gemm.yaml", "mi300x", []string{"program.scheme=ootomo"}, false},
		{"a100-emulated-gemm.yaml", "a100", nil, false}, // ape-fp32f, termwise
		{"a100-emulated-gemm.yaml", "a100", []string{"program.scheme=bf16x9"}, false},
		{"a100-emulated-gemm.yaml", "a100", []string{"program.scheme=ape-fp32t"}, false},
		{"a100-emulated-gemm.yaml", "h100-sxm", []string{"program.scheme=le-gemm"}, false},
		{"a100-emulated-gemm.yaml", "a100", []string{"program.scheme=native"}, false},
		{"a100-emulated-gemm.yaml", "mi210", []string{"program.scheme=ape-int16"}, false},
		{"b200-ozaki.yaml", "mi300x", nil, false},
		{"b200-ozaki.yaml", "b200", []string{"program.method=ozaki-ii", "program.precision=", "program.mantissa_bits=40"}, false},
		{"a100-hbm-stream.yaml", "mi300x", []string{"program.bytes=80MiB"}, true},
		{"a100-tensor-peak.yaml", "a100", nil, true},
		{"a100-lu-fused.yaml", "a100", []string{"program.n=1024"}, true},
	} {
		name := fmt.Sprintf("%s on %s %v", c.file, c.machine, c.sets)
		sets := append(c.sets, shape...)
		if c.noShape {
			sets = c.sets
		}
		opts := Options{Machine: c.machine, Numerics: NumericsOff, Overrides: mustSets(t, sets...)}
		f, m, job := buildRun(t, "examples/"+c.file, opts)
		span := gmSpanOf(f, opts, m)
		run := func(span int64) (*arch.Chip, *arch.Stats) {
			t.Helper()
			chip, err := arch.NewChip(m, arch.Options{Mode: job.Mode(), GMSpan: span})
			if err != nil {
				t.Fatal(err)
			}
			if err := job.Prepare(chip); err != nil {
				t.Fatal(err)
			}
			st, err := chip.Run(job.Program())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return chip, st
		}
		chip, st := run(0)
		const sector = 128 // (the GPU machines' tags)
		if r := chip.GMReach(); r > (span+sector-1)/sector*sector || r <= span-512 {
			t.Errorf("%s: the run reached %d bytes of global memory; the span counted is %d", name, r, span)
		}
		// The chip given the span runs the same.
		if _, hinted := run(span); hinted.Time != st.Time || hinted.L2HitBytes != st.L2HitBytes || hinted.LLCHitBytes != st.LLCHitBytes {
			t.Errorf("%s: given its span, the run took %v, L2 hits %d, LLC %d; without, %v, %d, %d",
				name, hinted.Time, hinted.L2HitBytes, hinted.LLCHitBytes, st.Time, st.L2HitBytes, st.LLCHitBytes)
		}
	}
}

// A GPU GEMM's chip model is counted for the span of global memory its
// tensors occupy (gmSpanBytes), not for gm.capacity: MI300X's nine where
// indexes hold a byte per 128-byte tag of a 4096³ HGEMM's 128 MiB (9 MiB)
// where its 192 GiB counted 1.1 GiB — the estimate grows with the
// problem, and stays below the whole memory's by about that; a machine or
// kind whose layout is not followed counts the whole memory.
func TestHostBytesGPUSpan(t *testing.T) {
	f, err := ReadFile("examples/a100-hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := machines.Load("mi300x", nil)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := arch.Footprint(m, arch.Timing)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, n := range []int{1024, 4096, 8192} {
		sets := mustSets(t, fmt.Sprintf("program.m=%d", n), fmt.Sprintf("program.n=%d", n), fmt.Sprintf("program.k=%d", n))
		got, ok := HostBytes(f, Options{Machine: "mi300x", Numerics: NumericsOff, Overrides: sets})
		if !ok {
			t.Fatal("no estimate")
		}
		span := int64(2*n*n*2 + 4*n*n) // FP16 A and B, FP32 C
		model, err := arch.FootprintSpan(m, arch.Timing, span)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := runEstimate(f, Options{Machine: "mi300x", Numerics: NumericsOff, Overrides: sets})
		if want := runHostBytes + int64(e.blocks+model); got != want || e.blocks <= 0 {
			t.Errorf("MI300X HGEMM %d³: %d MiB, want the run's, its blocks' (%.0f MiB) and the model's for a %d MiB span, %d MiB", n, got>>20, e.blocks/(1<<20), span>>20, want>>20)
		}
		if index := 9 * span / 128; got <= last || got > runHostBytes+int64(whole)-1<<30+index {
			t.Errorf("MI300X HGEMM %d³: %d MiB after %d MiB; the whole memory's %d MiB (less 1 GiB, plus the span's indexes %d MiB)",
				n, got>>20, last>>20, (runHostBytes+int64(whole))>>20, index>>20)
		}
		last = got
	}
	d, err := ReadFile("examples/hgemm.yaml") // (ascend-910a: its layout is not followed)
	if err != nil {
		t.Fatal(err)
	}
	dm, err := machines.Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := arch.Footprint(dm, arch.Timing)
	if got, _ := HostBytes(d, Options{Numerics: NumericsOff}); got != runHostBytes+int64(want) {
		t.Errorf("hgemm on the 910A: %d, want the run's and the whole memory's model, %d", got, runHostBytes+int64(want))
	}
}
