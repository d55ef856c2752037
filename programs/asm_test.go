package programs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// An asm program's gm tensors land in simulated GM before the run and its
// outputs read GM after it (full numerics): a tensor read back as an
// output is its initial values; timing only, neither is built.
func TestAsmGMTensorsAndOutputs(t *testing.T) {
	src := "kind: asm\ncores: 1\ngm: [{name: x, addr: 4096, shape: [4, 8], init: uniform, low: -1, high: 1, seed: 3}]\n" +
		"outputs: [{name: x, addr: 4096, shape: [4, 8]}]\nasm: |\n  nop\n"
	res, err := Execute(programText(t, src), Options{}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	want := UniformFP32(NewRand(3, 7), 32, -1, 1)
	if len(res.Outputs) != 1 || !slices.Equal(res.Outputs[0].F32, want) {
		t.Fatalf("outputs %+v, want x = %v", res.Outputs, want)
	}
	res, err = Execute(programText(t, src), Options{Numerics: NumericsOff}, RunHooks{})
	if err != nil || len(res.Outputs) != 0 {
		t.Fatalf("timing only: %v, %d outputs", err, len(res.Outputs))
	}
}

// A program's scalar work counts in its time also when nothing follows it:
// scalar cycles=50 alone ran in 1 ps (the core finished without waiting
// for the scalar unit below its 64-slot issue horizon).
func TestAsmTrailingScalarWork(t *testing.T) {
	for _, c := range []struct {
		asm    string
		cycles int64
	}{
		{"scalar cycles=1", 1}, {"scalar cycles=50", 50}, {"scalar cycles=63", 63}, {"scalar cycles=64", 64}, {"scalar cycles=200", 200},
		{"scalar cycles=2\n  scalar cycles=2\n  scalar cycles=2", 6},
	} {
		res, err := Execute(programText(t, "kind: asm\ncores: 1\nnumerics: off\nasm: |\n  "+c.asm+"\n"), Options{}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Report.Time.Cycles; got != c.cycles {
			t.Errorf("%q: %d cycles, want %d", c.asm, got, c.cycles)
		}
	}
}

// asmFiles writes files (name → content) beside program.yaml (src) and
// reads the program.
func asmFiles(t *testing.T, src string, files map[string]string) *File {
	t.Helper()
	return programFiles(t, src, files)
}

// streams[i] runs on core i only: it is expanded (and its errors found)
// for core = i, not for the cores before it (a stream whose address is
// right for its own core was refused as negative for core 0).
func TestAsmStreamsExpandForTheirCore(t *testing.T) {
	f := asmFiles(t, "kind: asm\nnumerics: off\nstreams: [a.s, b.s]\n", map[string]string{
		"a.s": "nop\n",
		"b.s": "mte2.copy gm=(core-1)*4096 ub=0 bytes=4096\n",
	})
	res, err := Execute(f, Options{}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Report.Memory.GMReadBytes; got != 4096 {
		t.Errorf("GM read %d bytes, want 4096 (core 1's copy)", got)
	}
	// An error of the stream for its own core is still found before the run.
	f = asmFiles(t, "kind: asm\nnumerics: off\nstreams: [a.s, b.s]\n", map[string]string{
		"a.s": "nop\n",
		"b.s": "mte2.copy gm=(core-2)*4096 ub=0 bytes=4096\n",
	})
	if _, err := Execute(f, Options{}, RunHooks{}); err == nil || !strings.Contains(err.Error(), "b.s:1: mte2.copy: negative GM address -4096 (core=1)") {
		t.Errorf("got %v, want b.s's negative address for core 1", err)
	}
}

// countdownCtx is a context that is done from its n-th Err call on (the
// assembly's expansion looks at it every isa.CancelCheckEvery
// instructions, so n picks the phase that sees it done); at is when.
type countdownCtx struct {
	context.Context
	left atomic.Int64
	done chan struct{}
	once sync.Once
	at   time.Time
}

var errCountdown = errors.New("interrupted (countdown)")

func newCountdownCtx(n int64) *countdownCtx {
	c := &countdownCtx{Context: context.Background(), done: make(chan struct{})}
	c.left.Store(n)
	return c
}

func (c *countdownCtx) Done() <-chan struct{} { return c.done }

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) > 0 {
		return nil
	}
	c.once.Do(func() { c.at = time.Now(); close(c.done) })
	return errCountdown
}

// A core takes a run of nops (no simulated time) in one event, and a run
// checks its context between events: 2^26 nops per core on 32 cores ran
// ~130 s in 32 events, deaf to SIGTERM. The expansion of an assembly
// stream looks at the context itself: a run stops promptly whether the
// context is done during the expansion that finds errors before the run,
// during the static check or during the run, and says it was stopped.
func TestAsmLongEventCancels(t *testing.T) {
	const nops = 1 << 24
	src := fmt.Sprintf("kind: asm\ncores: 1\nnumerics: off\nasm: |\n  repeat %d {\n    nop\n  }\n", nops)
	walk := int64(nops / isa.CancelCheckEvery) // context looks per walk of the stream
	for _, c := range []struct {
		phase string
		after int64
	}{{"expansion", walk / 2}, {"check", walk + walk/2}, {"run", 2*walk + 10}} {
		ctx := newCountdownCtx(c.after)
		res, err := Execute(programText(t, src), Options{}, RunHooks{Context: ctx})
		end := time.Now()
		if !errors.Is(err, errCountdown) {
			t.Errorf("%s: %v (report %v), want an error wrapping %v", c.phase, err, res != nil, errCountdown)
			continue
		}
		t.Logf("%s: %v", c.phase, err)
		if badinput.Is(err) {
			t.Errorf("%s: %v taken as bad input", c.phase, err)
		}
		if d := end.Sub(ctx.at); d > time.Second {
			t.Errorf("%s: stopped %v after the context was done", c.phase, d)
		}
	}
}

// Nops (and the scalar unit's other own instructions) cost no time in the
// model: a program of only them takes 0 cycles and says so in a note (it
// reported 1 cycle, 1e-12 s: a sentinel of the core's finish time). Time
// they do not cost is not added to a program that does timed work.
func TestAsmNopsTakeNoTime(t *testing.T) {
	for _, c := range []struct {
		asm    string
		cycles int64
	}{
		{"nop", 0}, {"repeat 1000 {\n    nop\n  }", 0}, {"alloc UB off=0 size=256 name=u\n  free name=u\n  set_flag S MTE2 0\n  pipe_barrier S\n  sync_all\n  pipe_barrier ALL", 0},
		{"nop\n  scalar cycles=5\n  nop", 5},
	} {
		res, err := Execute(programText(t, "kind: asm\ncores: 2\nasm: |\n  "+c.asm+"\n"), Options{}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Report
		if r.Time.Cycles != c.cycles || (c.cycles == 0) != (r.Time.Seconds == 0) {
			t.Errorf("%q: %d cycles (%g s), want %d", c.asm, r.Time.Cycles, r.Time.Seconds, c.cycles)
		}
		if noted := slices.Contains(r.Notes, noTimedWorkNote); noted != (c.cycles == 0) {
			t.Errorf("%q: note of no timed work %v, want %v (notes %q)", c.asm, noted, c.cycles == 0, r.Notes)
		}
		for _, cr := range r.Cores {
			if c.cycles == 0 && cr.FinishCycle != 0 {
				t.Errorf("%q: core %d finished at cycle %d", c.asm, cr.Core, cr.FinishCycle)
			}
		}
		if err := r.WriteJSON(io.Discard); err != nil {
			t.Errorf("%q: report.json: %v", c.asm, err)
		}
	}
}

// An output is read from GM after the run: it has no initial contents, and
// the keys that give them (gm's) are refused on an output rather than
// ignored.
func TestAsmOutputRefusesContentKeys(t *testing.T) {
	for _, kv := range []string{"init: uniform", "low: -1", "high: 1", "seed: 3", "file: x.npy", "low: 0"} {
		src := "kind: asm\ncores: 1\noutputs: [{name: o, addr: 0, shape: [4], " + kv + "}]\nasm: |\n  nop\n"
		key := strings.SplitN(kv, ":", 2)[0]
		_, err := Execute(programText(t, src), Options{}, RunHooks{})
		want := `program.yaml:3: unknown key "outputs[0].` + key + `": "outputs[0]" has no key "` + key + `" (it has: name, addr, shape, dtype)`
		if err == nil || !strings.HasSuffix(err.Error(), want) || !badinput.Is(err) {
			t.Errorf("%s: got %v, want bad input ending %q", kv, err, want)
		}
	}
}

// Two gm tensors may not share a name or a byte: each gives the initial
// contents of its bytes, and one silently overwrote the other. Tensors
// that touch are fine, and so is an output over a tensor (it reads it back).
func TestAsmGMTensorsOverlap(t *testing.T) {
	for _, c := range []struct {
		gm   string
		want string // "" = accepted
	}{
		{"[{name: a, addr: 0, shape: [16]}, {name: b, addr: 64, shape: [16]}]", ""},
		{"[{name: a, addr: 0, shape: [16]}, {name: b, addr: 60, shape: [4]}]", `key "gm[1]": tensor b, bytes [0x3c, 0x4c), overlaps gm[0] (a, bytes [0x0, 0x40))`},
		{"[{name: a, addr: 4096, shape: [4, 4]}, {name: b, addr: 0, shape: [16]}, {name: c, addr: 4100, shape: [2], dtype: fp16}]", `key "gm[2]": tensor c, bytes [0x1004, 0x1008), overlaps gm[0] (a, bytes [0x1000, 0x1040))`},
		{"[{name: a, addr: 4096, shape: [16]}, {name: b, addr: 0, shape: [16384]}]", `key "gm[1]": tensor b, bytes [0x0, 0x10000), overlaps gm[0] (a, bytes [0x1000, 0x1040))`},
		{"[{name: a, addr: 0, shape: [16]}, {name: b, addr: 4096, shape: [16]}, {name: a, addr: 8192, shape: [16]}]", `key "gm[2]": named "a" as gm[0] is (a tensor's name is its own)`},
	} {
		for _, numerics := range []string{"full", "off"} {
			src := "kind: asm\ncores: 1\nnumerics: " + numerics + "\ngm: " + c.gm + "\noutputs: [{name: o, addr: 0, shape: [16]}]\nasm: |\n  nop\n"
			_, err := Execute(programText(t, src), Options{}, RunHooks{})
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s (%s): %v", c.gm, numerics, err)
			case c.want != "" && (err == nil || !strings.HasSuffix(err.Error(), "program.yaml: "+c.want) || !badinput.Is(err)):
				t.Errorf("%s (%s): got %v, want bad input ending %q", c.gm, numerics, err, c.want)
			}
		}
	}
}

// With full numerics an asm program's data work and host memory are
// bounded before any data exist (as the other kinds bound theirs): the
// multiply-adds and bytes its instructions compute (2^40), and the GM
// pages its tensors and writes span plus its outputs (the run's bound, 8 GiB
// here: Options.MaxHostBytes). Timing only,
// the same programs are accepted.
func TestAsmFullNumericsBounds(t *testing.T) {
	for _, c := range []struct {
		name, rest string
		want       string // "" = accepted
	}{
		{"mmads past 2^40 multiply-adds", "asm: |\n  repeat 67108864 {\n    m.mmad c=0 a=0 b=0 m=128 k=128 n=128 in=fp16 out=fp32 init\n  }\n",
			`key "numerics": full numerics would compute more than 2^40 multiply-adds and bytes (mmad m·k·n plus the bytes each copy, load and vector op writes, over every core: a 10000³ GEMM's multiply-adds, up to hours of computing here; ` +
				`passed at core 0, @DIR@/program.yaml (asm) line 2: m.mmad c=0 a=0 b=0 m=128 k=128 n=128 in=fp16 out=fp32 init); use numerics off`},
		{"vector ops on 32 cores", "asm: |\n  repeat 67108864 {\n    v.add dst=0 src0=65536 src1=131072 dtype=fp16 repeat=255\n  }\n",
			`full numerics would compute more than 2^40 multiply-adds and bytes`},
		{"GM writes over 12 GiB", "asm: |\n  repeat 200000 i {\n    mte3.copy ub=0 gm=i*65536 bytes=32\n  }\n",
			`key "numerics": full numerics needs more host memory than the run may take (8GiB, --max-memory): the GM pages that the gm tensors and the program's writes touch, 8144 MiB, passed at core 0, @DIR@/program.yaml (asm) line 2: mte3.copy ub=0 gm=8539537408 bytes=32, the outputs and the largest tensor's staging, 0 MiB, and the run's own 48 MiB; use numerics off`},
		{"one strided write over 9 GiB of pages", "asm: |\n  mte3.copy ub=0 gm=0 nburst=150000 len=32 src_stride=0 dst_stride=65600\n",
			`full numerics needs more host memory than the run may take (8GiB, --max-memory)`},
		{"fixp writes over 9 GiB of pages", "machine: ascend-910b3\nasm: |\n  repeat 600 i {\n    fixp.l0c gm=i*65536 l0c=0 rows=256 cols=16 stride=39321600\n  }\n",
			`full numerics needs more host memory than the run may take (8GiB, --max-memory)`},
		{"a strided write 6 GiB apart (3 pages)", "asm: |\n  mte3.copy ub=0 gm=0 nburst=3 len=32 src_stride=0 dst_stride=6GiB\n", ""},
		{"outputs of 9 GiB", "outputs: [" + strings.Repeat("{name: o@, addr: 0, shape: [16384, 16384]}, ", 8) + "{name: last, addr: 0, shape: [16384, 16384]}]\nasm: |\n  nop\n",
			`key "numerics": full numerics needs more host memory than the run may take (8GiB, --max-memory): the GM pages that the gm tensors and the program's writes touch, 0 MiB, the outputs and the largest tensor's staging, 9216 MiB, and the run's own 48 MiB; use numerics off`},
		{"tensors and writes under 8 GiB", "gm: [{name: x, addr: 0, shape: [1024, 1024]}]\nasm: |\n  repeat 1000 i {\n    mte3.copy ub=0 gm=i*65536 bytes=65536\n  }\n  repeat 100000 {\n    mte3.copy ub=0 gm=0 bytes=65536\n  }\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) { asmBoundCase(t, c.name, c.rest, c.want) })
	}
}

// asmBoundCase runs one case of TestAsmFullNumericsBounds: the program
// rest (on 1 core, or 32 when the name says so; o@ numbers outputs) is
// refused with an error containing want, or runs ("").
func asmBoundCase(t *testing.T, name, rest, want string) {
	cores := 1
	if strings.Contains(name, "32 cores") {
		cores = 32
	}
	src := fmt.Sprintf("kind: asm\ncores: %d\n", cores) + rest
	for k := 0; strings.Contains(src, "o@"); k++ {
		src = strings.Replace(src, "o@", fmt.Sprintf("o%d", k), 1)
	}
	f := programText(t, src)
	_, err := Execute(f, Options{MaxHostBytes: 8 << 30}, RunHooks{})
	if want == "" {
		if err != nil {
			t.Error(err)
		}
		return
	}
	want = strings.ReplaceAll(want, "@DIR@", filepath.Dir(f.Path))
	if err == nil || !strings.Contains(err.Error(), want) || !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v, want one line of bad input containing %q", err, want)
	}
	off := Options{Numerics: NumericsOff}
	m, err := MachineFor(f, off)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Kind.Build(f, m, off); err != nil { // (Prepare bounds nothing timing only)
		t.Errorf("timing only: %v", err)
	}
}

// pageSet counts the distinct pages of the ranges marked (word and chunk
// edges included), as a map of every page does.
func TestPageSet(t *testing.T) {
	r := NewRand(1, 0)
	var s pageSet
	ref := map[int64]bool{}
	for range 2000 {
		p0 := r.Int64N(1 << 14)
		if r.IntN(4) == 0 {
			p0 += r.Int64N(1 << 40)
		}
		p1 := p0 + r.Int64N([]int64{1, 3, 64, 700, 5000}[r.IntN(5)])
		s.mark(p0, p1)
		for p := p0; p <= p1; p++ {
			ref[p] = true
		}
		if s.n != int64(len(ref)) {
			t.Fatalf("after [%d, %d]: %d pages, want %d", p0, p1, s.n, len(ref))
		}
	}
	c := s.clone()
	c.mark(1<<50, 1<<50+9)
	if c.n != s.n+10 || s.n != int64(len(ref)) {
		t.Errorf("clone: %d and %d pages", c.n, s.n)
	}
}

// A gm tensor's init is checked also timing only (where no data are
// made): a misspelt init was accepted and ignored.
func TestAsmTensorInitChecked(t *testing.T) {
	for _, numerics := range []string{"full", "off"} {
		for _, c := range []struct{ init, want string }{
			{"init: unifrom", `key "gm[0]": tensor x: init "unifrom": must be zero, uniform or npy`},
			{"init: uniform, low: 1, high: -1", `key "gm[0]": tensor x: uniform: high -1 < low 1`},
			{"init: uniform, low: -1e308, high: 1e308", `uniform: low -1e+308 and high 1e+308 must lie within ±2^100`},
			{"dtype: fp16, init: uniform, low: 0, high: 1e5", `uniform: low 0 and high 100000 must lie within ±65504, FP16's largest`},
		} {
			src := "kind: asm\ncores: 1\nnumerics: " + numerics + "\ngm: [{name: x, addr: 0, shape: [16], " + c.init + "}]\nasm: |\n  nop\n"
			_, err := Execute(programText(t, src), Options{}, RunHooks{})
			if err == nil || !strings.HasSuffix(err.Error(), c.want) || !badinput.Is(err) {
				t.Errorf("%s (%s): got %v, want bad input ending %q", c.init, numerics, err, c.want)
			}
		}
	}
}

// A deadlocked run's report lists as placeholders the finish cycles of
// the cores that had work left — not of a core that finished, even at
// time 0 (a stream of nops costs no time).
func TestDeadlockNotMeaningfulRunningCores(t *testing.T) {
	f := programFiles(t, "kind: asm\nnumerics: off\nstreams: [a.asm, b.asm]\n", map[string]string{
		"a.asm": "wait_flag MTE1 M 3\n",
		"b.asm": "nop\nnop\n",
	})
	res, err := Execute(f, Options{}, RunHooks{})
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) || res == nil || res.Report.Failure == nil {
		t.Fatalf("result %v, error %v: want a deadlock with its report", res, err)
	}
	want := []string{"cores.0.finish_cycle", "memory.operational_intensity", "memory.operational_intensity_hbm", "energy.gflops_per_watt"}
	if got := res.Report.Failure.NotMeaningful; !slices.Equal(got, want) {
		t.Errorf("not_meaningful %q, want %q", got, want)
	}
}

// A deadlock reached while the scalar issued ahead of the engine (a
// batch stamped with its own issue times) is at the time the scalar
// reached, with its issue slots counted: the cube waits for a flag set
// after 40 MMADs, the scalar fills the cube's 32-entry queue one
// instruction a cycle. It was "deadlock at 0s", time 0, S 0 % busy.
func TestDeadlockWhileIssuingAhead(t *testing.T) {
	src := "kind: asm\ncores: 1\nnumerics: off\nasm: |\n  alloc L0A off=0 size=32KiB name=a\n  alloc L0B off=0 size=32KiB name=b\n  alloc L0C off=0 size=64KiB name=c\n" +
		"  wait_flag MTE1 M 0\n  repeat 40 {\n    m.mmad c=0 a=0 b=0 m=16 k=16 n=16 in=fp16 out=fp32 init\n  }\n  set_flag MTE1 M 0\n"
	res, err := Execute(programText(t, src), Options{}, RunHooks{})
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) || res == nil {
		t.Fatalf("result %v, error %v: want a deadlock with its report", res, err)
	}
	cyc := res.Report.Time.Cycles
	if cyc < 30 || cyc > 40 || dl.Time != sim.Time(cyc)*1000 {
		t.Errorf("deadlock at %v, report %d cycles; want about 32 cycles (the queue full), both the same", dl.Time, cyc)
	}
	if b := res.Report.Pipes["S"].Busy; b < 0.9 {
		t.Errorf("S busy %.2f: the issue slots before the deadlock are lost", b)
	}
}

// A FixPipe copy from L0C to GM writes the converted output: FP32→FP16
// moves half the bytes of FP32→FP32 over GM and HBM, in half the path
// time (it was charged L0C's FP32 bytes both ways). On the 910B3: 203
// cycles of latency + bytes / 37.84 B/cycle.
func TestAsmFixPipeWritesOutputBytes(t *testing.T) {
	for _, c := range []struct {
		out    string
		bytes  int64
		cycles int64
	}{
		{"fp16", 128 * 128 * 2, 203 + 866}, // ceil(32768 / 37.84) = 866
		{"fp32", 128 * 128 * 4, 203 + 1732},
	} {
		src := "kind: asm\nmachine: ascend-910b3\ncores: 1\nnumerics: off\nasm: |\n  alloc L0C off=0 size=64KiB name=c\n  fixp.l0c gm=0 l0c=0 rows=128 cols=128 in=fp32 out=" + c.out + "\n"
		res, err := Execute(programText(t, src), Options{}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		m := res.Report.Memory
		if m.GMWriteBytes != c.bytes || m.HBMWriteBytes != c.bytes || res.Report.Time.Cycles != c.cycles {
			t.Errorf("out %s: GM %d, HBM %d bytes written in %d cycles; want %d bytes in %d", c.out, m.GMWriteBytes, m.HBMWriteBytes, res.Report.Time.Cycles, c.bytes, c.cycles)
		}
	}
}

// An asm program's matrix rate is compared with its MMADs' type's cube
// peak, in operations for INT8 (it was always the FP16 peak: INT8 at 98 %
// of its peak read 196 %), and with several types with the fastest's.
func TestAsmPeakOfItsTypes(t *testing.T) {
	const head = "kind: asm\ncores: 32\nnumerics: off\nasm: |\n  alloc L0A off=0 size=64KiB name=a\n  alloc L0B off=0 size=64KiB name=b\n  alloc L0C off=0 size=256KiB name=c\n"
	mmad := func(in, out, mode string) string {
		return "  m.mmad c=0 a=0 b=0 m=256 k=128 n=256 in=" + in + " out=" + out + " " + mode + "\n"
	}
	for _, c := range []struct {
		name, body, conv string
		lo, hi           float64
	}{
		{"int8", mmad("int8", "int32", "init") + "  repeat 63 {\n  " + mmad("int8", "int32", "acc") + "  }\n", "int8 ops (2·m·n·k per MMAD; peak = INT8 cube peak)", 0.95, 1},
		{"fp16", mmad("fp16", "fp32", "init") + "  repeat 63 {\n  " + mmad("fp16", "fp32", "acc") + "  }\n", "fp16 (2·m·n·k per MMAD; peak = FP16 cube peak)", 0.95, 1},
		{"mixed", mmad("fp16", "fp32", "init") + "  repeat 63 {\n  " + mmad("int8", "int32", "init") + "  }\n", "cube (2·m·n·k per MMAD, inputs FP16, INT8; peak = the fastest, the INT8 cube peak)", 0.5, 1},
	} {
		res, err := Execute(programText(t, head+c.body), Options{}, RunHooks{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		f := res.Report.Flops
		if f.Convention != c.conv || f.PeakFraction < c.lo || f.PeakFraction > c.hi {
			t.Errorf("%s: %q at %.3f of the peak; want %q in [%g, %g]", c.name, f.Convention, f.PeakFraction, c.conv, c.lo, c.hi)
		}
	}
}
