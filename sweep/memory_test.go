package sweep

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/programs"
)

// bigAsm is an asm program whose full numerics hold some 4 GiB: three
// 512 MiB FP32 tensors, read back (the reviewer's; a nop, so that only
// the build's estimate matters here: the test runs none).
const bigAsm = `kind: asm
cores: 1
numerics: full
gm:
  - {name: x, addr: 0, shape: [16384, 8192], dtype: fp32, init: uniform, low: 0, high: 1, seed: 1}
  - {name: x2, addr: 0x40000000, shape: [16384, 8192], dtype: fp32, init: uniform, low: 0, high: 1, seed: 1}
  - {name: x3, addr: 0x80000000, shape: [16384, 8192], dtype: fp32, init: uniform, low: 0, high: 1, seed: 1}
outputs:
  - {name: y, addr: 0, shape: [16384, 8192], dtype: fp32}
  - {name: y2, addr: 0x40000000, shape: [16384, 8192], dtype: fp32}
  - {name: y3, addr: 0x80000000, shape: [16384, 8192], dtype: fp32}
asm: |
  nop
`

// The estimates of a point's host memory: two of the big asm program do
// not fit the default budget together, its timing-only run (and a tiny
// program's) is small, and the values the study sets count.
func TestHostBytes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.yaml"), []byte(bigAsm), 0o644); err != nil {
		t.Fatal(err)
	}
	writeProg(t, dir)
	study := "program: big.yaml\nmetrics: [time.seconds]\nvary: {program.numerics: [full, off]}\n"
	s, err := ParseStudy("s.yaml", dir, []byte(study))
	if err != nil {
		t.Fatal(err)
	}
	const budget = 8 << 30
	full, off := s.hostBytes(s.Points[0], budget), s.hostBytes(s.Points[1], budget)
	if full < 4<<30 || 2*full <= budget {
		t.Errorf("big asm, numerics full: %d MiB, want ≥ 4 GiB (its budget's), two past an 8 GiB budget", full>>20)
	}
	if off > 64<<20 {
		t.Errorf("big asm, numerics off: %d MiB, want a small run's", off>>20)
	}
	s, err = ParseStudy("s.yaml", dir, []byte("program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.numerics: [off, full], program.m: [256, 8192]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, p := range s.Points {
		got = append(got, s.hostBytes(p, budget))
	}
	// off: m's data none, the timing chip model; full: (m·k + k·n + m·n)·48
	// B and the functional model (its buffers), over the run's 48 MiB.
	const run = 48 << 20
	timing, functional := int64(chipModel(t, "ascend-910a", arch.Timing)), int64(chipModel(t, "ascend-910a", arch.Functional))
	if got[0] != run+timing || got[1] != run+timing {
		t.Errorf("numerics off: %v, want %d each", got[:2], run+timing)
	}
	if want := int64(run+(256*256+256*512+256*512)*48) + functional; got[2] != want {
		t.Errorf("full, m 256: %d, want %d", got[2], want)
	}
	if want := int64(run+(8192*256+256*512+8192*512)*48) + functional; got[3] != want {
		t.Errorf("full, m 8192: %d, want %d", got[3], want)
	}
	// A program that cannot be read fails at once: a run's.
	s, err = ParseStudy("s.yaml", dir, []byte("program: nope.yaml\nmetrics: [time.seconds]\nvary: {program.m: [1]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.hostBytes(s.Points[0], budget); got != failingPointBytes {
		t.Errorf("no program: %d", got)
	}
}

// chipModel is arch.Footprint of the machine name with the --set values
// sets in mode.
func chipModel(t *testing.T, name string, mode arch.Mode, sets ...string) float64 {
	t.Helper()
	b, err := arch.Footprint(archtest.Machine(t, name, sets...), mode)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A point's estimate holds its chip model, of the machine the study's
// values give: the reviewer's two points of numerics off on 4096 DaVinci
// cores were each estimated at the run's 48 MiB (no data) and ran at once
// under --max-memory 500MiB, 683 MB together (428 MB alone). Here 1024
// cores, under a budget that two such points' estimates with their models
// pass and without them fit: they run one at a time.
func TestRunChipModelWithinBudget(t *testing.T) {
	gates := recordGates(t)
	s := writeStudy(t, "program: prog.yaml\nset: {machine.cores: 1024}\nmetrics: [time.seconds]\nvary: {program.inputs.seed: [1, 2]}\n")
	const run = 48 << 20
	arch.SetReadAhead(false) // (as Run with -j above 1: the model's streams are the smaller)
	model := int64(chipModel(t, "ascend-910a", arch.Timing, "machine.cores=1024"))
	for _, p := range s.Points {
		if got := s.hostBytes(p, 8<<30); got != run+model {
			t.Errorf("point %d: %d MiB, want the run's 48 MiB and the chip model's %d MiB", p.Index, got>>20, model>>20)
		}
	}
	arch.SetReadAhead(true)
	if model < 32<<20 {
		t.Fatalf("1024 cores' model %d MiB: too small to tell", model>>20)
	}
	budget := 2*(run+model) - 1
	if _, err := Run(s, Options{Out: t.TempDir(), Jobs: 2, MemoryBudget: budget}); err != nil {
		t.Fatal(err)
	}
	if len(*gates) != 1 {
		t.Fatalf("%d gates", len(*gates))
	}
	if g := (*gates)[0]; g.peakHeld != 1 {
		t.Errorf("budget %d MiB: %d points at once holding an estimated %d MiB, want one at a time", budget>>20, g.peakHeld, g.peakUsed>>20)
	}
}

// GPU points are gated on their chip model for the span of global memory
// their tensors occupy, not the whole memory's where indexes: two MI300X
// HGEMM points (numerics off, 512³ and 1024³, real peaks ~35 MB) were
// estimated at 1.3 GiB each — nine 128 MiB indexes — and ran one at a
// time under any budget below 2.7 GiB; estimated for their spans, they
// run at once within the two estimates' sum, which the whole memory's
// estimates pass.
func TestRunGPUPointsBySpan(t *testing.T) {
	gates := recordGates(t)
	dir := t.TempDir()
	prog := "kind: hgemm\nmachine: mi300x\nm: 512\nk: 512\nn: 512\nnumerics: off\n"
	if err := os.WriteFile(filepath.Join(dir, "gpu.yaml"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ParseStudy("s.yaml", dir, []byte("program: gpu.yaml\nmetrics: [time.seconds]\nvary: {program.m: [512, 1024]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	const run = 48 << 20
	whole := run + int64(chipModel(t, "mi300x", arch.Timing))
	var budget int64
	for _, p := range s.Points {
		n := s.hostBytes(p, 8<<30)
		if n > whole-1<<30 {
			t.Errorf("point %d: %d MiB, want the model for its span, 1 GiB below the whole memory's %d MiB", p.Index, n>>20, whole>>20)
		}
		budget += n
	}
	if budget >= 2*whole-2<<30 {
		t.Fatalf("budget %d MiB: the whole memory's estimates would fit", budget>>20)
	}
	if _, err := Run(s, Options{Out: t.TempDir(), Jobs: 2, MemoryBudget: budget}); err != nil {
		t.Fatal(err)
	}
	if len(*gates) != 1 {
		t.Fatalf("%d gates", len(*gates))
	}
	// Whether both ran at once depends on scheduling (the first may end
	// before the second starts on a loaded box); that neither waited for
	// memory does not.
	if g := (*gates)[0]; g.heldBack {
		t.Errorf("budget %d MiB (the two estimates' sum): a point waited for memory", budget>>20)
	}
}

// The gate admits points while their estimates fit, one past the budget
// alone, and in the order asked.
func TestMemGate(t *testing.T) {
	g := newMemGate(10)
	ctx := context.Background()
	stop := make(chan struct{})
	if !g.acquire(ctx, stop, 0, 6) || !g.acquire(ctx, stop, 1, 4) {
		t.Fatal("points within the budget waited")
	}
	admitted := make(chan int64, 2)
	go func() {
		for i, n := range []int64{20, 1} {
			if g.acquire(ctx, stop, 2+i, n) {
				admitted <- n
			}
		}
	}()
	// none fails if a point is admitted within 50 ms (what: where).
	none := func(what string) {
		t.Helper()
		select {
		case n := <-admitted:
			t.Fatalf("%d admitted %s", n, what)
		case <-time.After(50 * time.Millisecond):
		}
	}
	none("past the budget")
	g.release(6)
	none("beside another point past the budget")
	g.release(4)
	if n := <-admitted; n != 20 {
		t.Fatalf("admitted %d, want the point past the budget, alone", n)
	}
	none("beside the point past the budget")
	g.release(20)
	if n := <-admitted; n != 1 {
		t.Fatalf("admitted %d", n)
	}
	// An interrupt ends a wait.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan bool)
	go func() { done <- g.acquire(cctx, stop, 4, 100) }()
	cancel()
	if <-done {
		t.Error("admitted after the interrupt")
	}
}

// A sweep runs its points within the memory budget — each past it alone —
// and writes the same files whatever the budget and -j.
func TestRunWithinMemoryBudget(t *testing.T) {
	gates := recordGates(t)
	s := writeStudy(t, tinyStudy)
	base := filepath.Join(t.TempDir(), "j1")
	if _, err := Run(s, Options{Out: base, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if len(*gates) != 0 {
		t.Error("one job: a gate")
	}
	for _, c := range []struct {
		budget   int64
		peakHeld int // at most
	}{{1, 1}, {48<<20 + 1, 1}, {3 * 48 << 20, 3}, {0, 4}} {
		*gates = nil
		out := filepath.Join(t.TempDir(), "out")
		if _, err := Run(s, Options{Out: out, Jobs: 4, MemoryBudget: c.budget}); err != nil {
			t.Fatal(err)
		}
		if len(*gates) != 1 {
			t.Fatalf("budget %d: %d gates", c.budget, len(*gates))
		}
		g := (*gates)[0]
		if g.peakHeld > c.peakHeld || g.peakHeld > 1 && g.peakUsed > g.budget {
			t.Errorf("budget %d: %d points at once holding %d bytes", c.budget, g.peakHeld, g.peakUsed)
		}
		if g.held != 0 || g.used != 0 {
			t.Errorf("budget %d: %d points (%d bytes) still held", c.budget, g.held, g.used)
		}
		if c.budget == 0 && g.budget != programs.DefaultMaxHostBytes() {
			t.Errorf("default budget %d", g.budget)
		}
		for _, f := range []string{ResultsJSONL, ResultsCSV} {
			if a, b := readFile(t, filepath.Join(base, f)), readFile(t, filepath.Join(out, f)); string(a) != string(b) {
				t.Errorf("budget %d: %s differs from -j 1's", c.budget, f)
			}
		}
	}
}

// recordGates makes the sweeps of test t record the memory gates they
// make (newGate), in the slice it returns, until the test ends.
func recordGates(t *testing.T) *[]*memGate {
	var mu sync.Mutex
	gates := new([]*memGate)
	newGate = func(budget int64) *memGate {
		g := newMemGate(budget)
		mu.Lock()
		*gates = append(*gates, g)
		mu.Unlock()
		return g
	}
	t.Cleanup(func() { newGate = newMemGate })
	return gates
}
