package programs

import (
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
		if _, ok := dataHostBytes(k.Name, reflect.New(k.Params).Interface()); !ok {
			t.Errorf("program kind %s (%v): no host memory estimate (programs/hostbytes.go dataHostBytes)", k.Name, k.Params)
		}
	}
	if _, ok := dataHostBytes("x", new(struct{ N int })); ok {
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
	if want := runHostBytes + int64(gemmBytes("hgemm", &GEMMParams{M: 256, N: 256, K: 256})+footprint("ascend-910a", arch.Functional)); full != want {
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
