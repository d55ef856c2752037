package programs

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
)

func init() {
	register(&Kind{Name: "gpu-bench", Params: reflect.TypeFor[GPUBenchParams](), Machines: []string{"nvidia-sm", "amd-cu"}, Example: "a100-tensor-peak.yaml",
		Summary: "GPU microbenchmarks: matrix (tensor/MFMA) peak, MMA latency, HBM stream, L2 and shared-memory (LDS) bandwidth",
		Build:   buildGPUBench})
}

// The microbenchmarks (GPUBenchParams.Test).
const (
	benchTensorPeak = "tensor-peak"    // every core's matrix units busy: achieved vs dense peak (alias matrix-peak)
	benchMMALatency = "mma-latency"    // one warp (group): a chain of dependent MMAs, cycles per link
	benchHBMStream  = "hbm-stream"     // all SMs stream a large array global→shared: GB/s
	benchL2         = "l2-bandwidth"   // all SMs re-read a working set that fits the L2: GB/s
	benchSMEM       = "smem-bandwidth" // all cores load shared memory into registers: bytes per cycle per core (alias lds-bandwidth)
)

// benchAliases are the AMD names of tests.
var benchAliases = map[string]string{"matrix-peak": benchTensorPeak, "lds-bandwidth": benchSMEM}

// GPUBenchParams are the parameters of the gpu-bench kind.
type GPUBenchParams struct {
	Kind    string `mapstructure:"kind"`
	Machine string `mapstructure:"machine"`
	// Test is one of tensor-peak (matrix-peak), mma-latency, hbm-stream,
	// l2-bandwidth, smem-bandwidth (lds-bandwidth).
	Test string `mapstructure:"test"`
	// DType is the matrix input type (fp16, bf16, tf32 or xf32, fp8, int8,
	// fp32, fp64) of the matrix tests.
	DType string `mapstructure:"dtype"`
	// Bytes is the data a memory test moves (hbm-stream: the array; 0 = 1
	// GiB) or re-reads (l2-bandwidth: the working set; 0 = a quarter of the
	// L2).
	Bytes machines.Size `mapstructure:"bytes"`
	// Repeats scales the work (tensor MMAs per CTA, latency links, L2 and
	// shared-memory passes); 0 = the test's default.
	Repeats int `mapstructure:"repeats"`
}

type gpuBenchJob struct {
	p     GPUBenchParams
	m     *machines.Machine
	tg    *gpuTarget
	test  string // the test (aliases resolved)
	in    fp.Format
	grids []isa.Grid
	work  float64 // flops (tensor) or bytes (memory) of the measured grid, or links (latency)
	// memSize is the bytes a memory test moves: hbm-stream's array,
	// l2-bandwidth's working set (bytes or its default: memBytes).
	memSize int64
	// repeats is the test's repetitions, its default resolved (tensor-peak,
	// mma-latency, smem-bandwidth).
	repeats int
	// l2Passes is l2-bandwidth's re-reads (repeats or its default, 8).
	l2Passes int
}

func buildGPUBench(f *File, m *machines.Machine, o Options) (Job, error) {
	var p GPUBenchParams
	if err := f.Decode(&p, o); err != nil {
		return nil, err
	}
	j, err := planGPUBench(p, m, f.badKey)
	if err != nil {
		return nil, err
	}
	return j, nil
}

// planGPUBench is buildGPUBench's plan of test p (decoded) on machine m,
// its errors made by bad (also the run's estimate's: gpuKernels).
func planGPUBench(p GPUBenchParams, m *machines.Machine, bad func(key, format string, a ...any) error) (*gpuBenchJob, error) {
	tg, ok := newGPUTarget(m)
	if !ok {
		return nil, bad("machine", "gpu-bench runs on GPU machines (nvidia-sm, amd-cu); %s is a %s machine", m.Name, m.Kind)
	}
	j := &gpuBenchJob{p: p, m: m, tg: tg, test: p.Test}
	if t, ok := benchAliases[p.Test]; ok {
		j.test = t
	}
	if p.Repeats < 0 || p.Repeats > maxBenchRepeats {
		return nil, bad("repeats", "must be in 0..%d (0 = the test's default; more adds time, not accuracy) (got %d)", maxBenchRepeats, p.Repeats)
	}
	if p.Bytes != 0 && (j.test == benchTensorPeak || j.test == benchMMALatency || j.test == benchSMEM) {
		return nil, bad("bytes", "applies to %s and %s; %s moves no global memory (leave it out)", benchHBMStream, benchL2, j.test)
	}
	switch j.test {
	case benchTensorPeak, benchMMALatency:
		if j.p.DType == "" {
			j.p.DType = "fp16"
		}
		in, ok := benchDTypes[j.p.DType]
		if !ok {
			return nil, bad("dtype", "must be fp16, bf16, tf32 (xf32), fp8, int8, fp32 or fp64 (got %q)", j.p.DType)
		}
		if j.in = in; !tg.hasMatrix(in) {
			return nil, bad("dtype", "machine %s has no %s %s", m.Name, j.p.DType, tg.units)
		}
	case benchHBMStream, benchL2, benchSMEM:
		if p.DType != "" {
			return nil, bad("dtype", "applies to %s and %s; %s moves bytes (leave it out)", benchTensorPeak, benchMMALatency, j.test)
		}
		if j.test == benchHBMStream && p.Repeats != 0 {
			return nil, bad("repeats", "does not apply to %s: it streams its array once (bytes sets the array's size)", benchHBMStream)
		}
		if j.test == benchL2 && m.L2.Capacity == 0 {
			return nil, bad("test", "%s measures the L2: machine %s has none (l2.capacity 0)", p.Test, m.Name)
		}
		if j.test != benchSMEM {
			size, err := j.memBytes(bad)
			if err != nil {
				return nil, err
			}
			j.memSize = size
		}
		if j.test == benchL2 {
			j.l2Passes = p.Repeats
			if j.l2Passes == 0 {
				j.l2Passes = 8
			}
			if j.memSize > maxBenchTraffic/int64(j.l2Passes) {
				return nil, bad("bytes", "bytes × repeats = %v × %d re-reads more than %v (hours of simulation; fewer repeats give the same bandwidth)", machines.Size(j.memSize), j.l2Passes, machines.Size(maxBenchTraffic))
			}
		}
	default:
		return nil, bad("test", "must be one of %s (matrix-peak), %s, %s, %s, %s (lds-bandwidth) (got %q)", benchTensorPeak, benchMMALatency, benchHBMStream, benchL2, benchSMEM, p.Test)
	}
	if need, why := j.sharedPerBlock(); need > tg.sharedPerBlock {
		return nil, limitedBy(bad("test", "%s needs %v of shared memory per %s (%s); machine %s allows %v (%s)",
			p.Test, machines.Size(need), tg.block, why, m.Name, machines.Size(tg.sharedPerBlock), tg.sharedKey), machineKeys(tg.sharedKey)...)
	}
	j.build()
	return j, nil
}

// memBytes returns the bytes a memory test moves (hbm-stream: its array;
// l2-bandwidth: its working set): bytes, or the test's default (1 GiB; a
// quarter of the L2), refusing a size the machine cannot hold. A size
// given is at least a 32 KiB copy per core and at most half of
// gm.capacity; the default must fit that half too, and l2-bandwidth's hold
// one copy at least — a test that copies nothing has no time to divide by.
// Where no size fits the GM, it says how large a GM the test needs.
func (j *gpuBenchJob) memBytes(badKey func(key, format string, a ...any) error) (int64, error) {
	m, test, core := j.m, j.p.Test, j.tg.core
	chunk := machines.Size(benchChunk)
	lo, hi := int64(m.Cores)*benchChunk, int64(m.GM.Capacity)/2
	what, def, of := "array", int64(1<<30), ""
	if j.test == benchL2 {
		what, def, of = "working set", int64(m.L2.Capacity)/4, ", a quarter of l2.capacity"
	}
	defGiven := fmt.Sprintf("the default %v%s", machines.Size(def), of)
	defIs := fmt.Sprintf("the default %s (%v%s)", what, machines.Size(def), of)
	perCore := fmt.Sprintf("a %v copy per %s, %d × %v = %v", chunk, core, m.Cores, chunk, machines.Size(lo))
	// The bounds come from gm.capacity, the cores and (l2-bandwidth's
	// default) l2.capacity.
	from := machineKeys("gm.capacity", "cores")
	if j.test == benchL2 {
		from = append(from, "machine.l2.capacity")
	}
	bad := func(key, format string, a ...any) error { return limitedBy(badKey(key, format, a...), from...) }
	tooSmall := func(given string, need int64) error {
		return bad("bytes", "machine %s's GM is too small for %s: its %s (%s) must fit in half of gm.capacity (%v); it needs gm.capacity ≥ %v",
			m.Name, test, what, given, m.GM.Capacity, machines.Size(2*need))
	}
	if size := int64(j.p.Bytes); size != 0 {
		switch {
		case lo > hi:
			return 0, tooSmall(fmt.Sprintf("bytes %v: at least %s", j.p.Bytes, perCore), lo)
		case size < lo || size > hi:
			return 0, bad("bytes", "must be 0 (the default) or in %v..%v (%s .. half of gm.capacity %v) (got %v)",
				machines.Size(lo), machines.Size(hi), perCore, m.GM.Capacity, j.p.Bytes)
		}
		return size, nil
	}
	setBytes := ""
	if lo <= hi {
		setBytes = fmt.Sprintf("; set bytes in %v..%v", machines.Size(lo), machines.Size(hi))
	}
	switch {
	case def < benchChunk:
		return 0, bad("bytes", "%s holds no %v copy: machine %s's L2 (l2.capacity %v) is too small for %s%s",
			defIs, chunk, m.Name, m.L2.Capacity, test, setBytes)
	case def > hi && lo > hi:
		return 0, tooSmall(fmt.Sprintf("%s; or bytes, at least %s", defGiven, perCore), min(def, lo))
	case def > hi:
		return 0, bad("bytes", "%s is more than half of gm.capacity (%v)%s", defIs, m.GM.Capacity, setBytes)
	}
	return def, nil
}

// maxBenchTraffic bounds the bytes the l2-bandwidth test re-reads (its
// working set times its passes): ~20 s of simulation here.
const maxBenchTraffic = 1 << 40

// benchDTypes are the matrix tests' input types by dtype value.
var benchDTypes = map[string]fp.Format{"fp16": fp.FP16, "bf16": fp.BF16, "tf32": fp.TF32, "xf32": fp.TF32,
	"fp8": fp.E4M3, "int8": fp.INT8, "fp32": fp.FP32, "fp64": fp.FP64}

// ctaWarps is the warps of a benchmark block: 4 (one per sub-core, or one
// warp group), and at most what a core holds.
func (j *gpuBenchJob) ctaWarps() int { return min(4, j.tg.maxWarps) }

// blockRegs is the registers of a benchmark block of w warps: 64 per thread.
func (j *gpuBenchJob) blockRegs(w int) int64 { return j.tg.threads(w) * 64 }

// resident is how many benchmark blocks (4 warps, 64 registers per thread,
// shared bytes each) a core holds.
func (j *gpuBenchJob) resident(shared int64) int {
	w := j.ctaWarps()
	n := min(j.tg.maxBlocks, j.tg.maxWarps/w, int(j.tg.registers/4/j.blockRegs(w)))
	if shared > 0 {
		n = min(n, int(j.tg.shared/shared))
	}
	return max(n, 1)
}

func (j *gpuBenchJob) build() {
	tg, m := j.tg, j.m
	w := j.ctaWarps()
	regs := j.blockRegs(w)
	one := func(name string, ctas int, shared int64, s func(int) isa.Stream) isa.Grid {
		return isa.Grid{Name: name, CTAs: ctas, CTA: s, Resources: isa.Resources{SharedBytes: shared, Registers: regs, Warps: w}}
	}
	out := fp.FP32
	switch j.in {
	case fp.INT8:
		out = fp.INT32
	case fp.FP64:
		out = fp.FP64
	}
	switch j.test {
	case benchTensorPeak:
		// Every resident block issues MMAs of peakTile² tiles on its registers.
		reps := j.p.Repeats
		if reps == 0 {
			reps = 256
		}
		j.repeats = reps
		mm, nn, kk := tg.peakTile, tg.peakTile, 256
		ctas := m.Cores * j.resident(0)
		s := repeat(reps, gpu.MMA(0, 16<<10, 32<<10, mm, kk, nn, j.in, out, false))
		j.grids = []isa.Grid{one("tensor-peak", ctas, 0, func(int) isa.Stream { return s })}
		j.work = float64(ctas*reps) * 2 * float64(mm*nn*kk)
	case benchMMALatency:
		links := j.p.Repeats
		if links == 0 {
			links = 1000
		}
		j.repeats = links
		d := tg.matrixDims[j.in]
		mm, nn, kk := d[0], d[1], d[2]
		link := []isa.Instr{gpu.MMA(0, 16<<10, 32<<10, mm, kk, nn, j.in, out, false),
			isa.SetFlag(gpu.LaneMatrix, gpu.LaneMatrix, 0), isa.WaitFlag(gpu.LaneMatrix, gpu.LaneMatrix, 0)}
		chain := func(yield func(isa.Instr) bool) { // generated as read: memory flat in the links
			for i := 0; i < links; i++ {
				for _, in := range link {
					if !yield(in) {
						return
					}
				}
			}
		}
		warps := 1
		if !tg.warpLevel {
			warps = w // a warp group (wgmma) or the CTA (tcgen05)
		}
		g := one("mma-latency", 1, 0, func(int) isa.Stream { return chain })
		g.Resources.Warps = warps
		g.Resources.Registers = j.blockRegs(warps)
		j.grids = []isa.Grid{g}
		j.work = float64(links)
	case benchHBMStream:
		total := j.memSize
		j.grids = []isa.Grid{j.stream("hbm-stream", total, 0, 1)}
		j.work = float64(total / (32 << 10) * (32 << 10))
	case benchL2:
		ws, passes := j.memSize, j.l2Passes
		// A first grid brings the working set into the L2; the measured one
		// re-reads it.
		warm := j.stream("l2-warm", ws, 0, 1)
		hot := j.stream("l2-bandwidth", ws, 0, passes)
		j.grids = []isa.Grid{warm, hot}
		j.work = float64(ws/(32<<10)*(32<<10)) * float64(passes)
	case benchSMEM:
		reps := j.p.Repeats
		if reps == 0 {
			reps = 1024
		}
		j.repeats = reps
		const rows, cols, stride = smemRows, smemCols, smemStride
		shared, _ := j.sharedPerBlock()
		ctas := m.Cores * j.resident(shared)
		s := repeat(reps, gpu.LoadMatrix(0, 0, rows, cols, stride, fp.FP16, false))
		j.grids = []isa.Grid{one("smem-bandwidth", ctas, shared, func(int) isa.Stream { return s })}
		j.work = float64(float64(ctas*reps)*rows*cols) * 2 // ·2 compiles to p+p: round p
	}
}

// benchChunk is the bytes of one copy of the memory tests.
const benchChunk = 32 << 10

// The shared-memory test's tile: FP16, rows padded by 16 bytes (conflict
// free).
const (
	smemRows, smemCols = 64, 64
	smemStride         = smemCols*2 + 16
)

// sharedPerBlock is the shared memory a block of the test takes, and what
// for (0 for the matrix tests).
func (j *gpuBenchJob) sharedPerBlock() (int64, string) {
	switch j.test {
	case benchHBMStream, benchL2:
		return 2 * benchChunk, fmt.Sprintf("two %v copy buffers", machines.Size(benchChunk))
	case benchSMEM:
		return smemRows * smemStride, fmt.Sprintf("a %d×%d FP16 tile, rows padded to %d bytes", smemRows, smemCols, smemStride)
	}
	return 0, ""
}

// stream returns a grid whose CTAs copy the first total bytes of global
// memory (from base) into shared memory in 32 KiB copies, passes times, the
// copies spread over every SM's resident CTAs round-robin.
func (j *gpuBenchJob) stream(name string, total, base int64, passes int) isa.Grid {
	const chunk = benchChunk
	n := total / chunk
	shared, _ := j.sharedPerBlock()
	ctas := j.m.Cores * min(j.resident(shared), 4)
	w := j.ctaWarps()
	return isa.Grid{Name: name, CTAs: ctas, Resources: isa.Resources{SharedBytes: shared, Registers: j.blockRegs(w), Warps: w},
		CTA: func(c int) isa.Stream {
			return func(yield func(isa.Instr) bool) {
				for p := 0; p < passes; p++ {
					for i, k := int64(c), 0; i < n; i, k = i+int64(ctas), k+1 {
						if !yield(gpu.CopyToShared(int64(k%2)*chunk, base+i*chunk, 1, chunk, chunk, chunk)) {
							return
						}
					}
				}
			}
		}}
}

// repeat returns a stream of n copies of in, generated as read (memory
// flat in n).
func repeat(n int, in isa.Instr) isa.Stream {
	return func(yield func(isa.Instr) bool) {
		for i := 0; i < n; i++ {
			if !yield(in) {
				return
			}
		}
	}
}

// maxBenchRepeats bounds gpu-bench's repeats: the defaults (256 to 1024)
// already measure a steady state.
const maxBenchRepeats = 1 << 16

func (j *gpuBenchJob) Program() isa.Program {
	return isa.Program{Name: "gpu-bench " + j.test, Generated: true, Grids: j.grids}
}

func (j *gpuBenchJob) Mode() arch.Mode          { return arch.Timing }
func (j *gpuBenchJob) Prepare(*arch.Chip) error { return nil }
func (j *gpuBenchJob) Outputs() []Output        { return nil }

// kernelTime returns the measured kernel's time (the last grid's, from its
// first block's start), whole periods of the chip's clock.
func (j *gpuBenchJob) kernelTime(chip *arch.Chip) sim.Time {
	gt := chip.GridTimes()
	g := gt[len(gt)-1]
	return g.Finished - g.Started
}

// Finish reports the measured figure of the test and what it is compared
// with (the machine's dense peak, its instruction latency, its measured
// achievable bandwidths from the machine file).
func (j *gpuBenchJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	tg, m := j.tg, j.m
	span := j.kernelTime(chip)
	secs := span.Seconds()
	clock := float64(chip.Clock().Hz())
	sec := report.GPUBench{Test: j.p.Test, KernelSeconds: secs}
	// (The values the test ran with, its defaults resolved: 0 read as
	// the parameters' "the test's default".)
	reps := j.repeats
	switch j.test {
	case benchHBMStream:
		reps = 1
	case benchL2:
		reps = j.l2Passes
	}
	rep.Program = map[string]any{"kind": j.p.Kind, "test": j.p.Test, "bytes": j.memSize, "repeats": reps}
	if j.p.DType != "" { // the matrix tests'
		rep.Program["dtype"] = j.p.DType
	}
	switch j.test {
	case benchTensorPeak:
		// The peak at the clock the chip ran at: its period is whole
		// picoseconds (sim.Clock; A100: 709 ps, 0.03 % above 1.41 GHz), and
		// the kernel's time is measured on it.
		peak, _ := m.Peak(tg.matrixPeak[j.in])
		peak *= clock / float64(m.Clock())
		unit := "TFLOP/s"
		if strings.HasPrefix(j.p.DType, "int") {
			unit = "TOP/s"
		}
		sec.Achieved, sec.Reference, sec.Unit = j.work/secs/1e12, peak/1e12, unit+" (dense peak at the simulated clock)"
		rep.Flops = &report.FlopsReport{Total: j.work, TFLOPS: sec.Achieved, PeakTFLOPS: sec.Reference, PeakFraction: sec.Achieved / sec.Reference,
			Convention: j.p.DType + " " + tg.matrix + " (2mnk over the kernel's time, launch excluded)"}
	case benchMMALatency:
		sec.Achieved = float64(span) / float64(chip.Clock().Period) / j.work // (in whole periods: secs·clock rounded, 64 cycles read 64.00000000000001)
		sec.Reference = float64(tg.matrixLat[j.in])
		sec.Unit = "cycles per dependent instruction (machine file latency)"
	case benchHBMStream:
		sec.Achieved, sec.Reference, sec.Unit = j.work/secs/1e9, float64(m.GM.Bandwidth)/1e9, "GB/s (gm.bandwidth)"
	case benchL2:
		sec.Achieved, sec.Reference, sec.Unit = j.work/secs/1e9, float64(m.L2.Bandwidth)/1e9, "GB/s (l2.bandwidth)"
	case benchSMEM:
		sec.Achieved, sec.Reference, sec.Unit = j.work/secs/clock/float64(m.Cores), tg.loadBPC, "bytes per cycle per "+tg.core+" ("+tg.loadKey+")"
	}
	if sec.Reference > 0 {
		sec.Fraction = sec.Achieved / sec.Reference
	}
	rep.GPUBench = &sec
	rep.Notes = append(rep.Notes, fmt.Sprintf("gpu-bench %s: %.4g %s, %.1f %% of %.4g", j.p.Test, sec.Achieved, sec.Unit, 100*sec.Fraction, sec.Reference))
	if j.test == benchL2 && j.p.Bytes > m.L2.Capacity {
		// Past the L2 the re-reads go to the memory-side cache when the
		// machine has one and the set fits it (MI300X's Infinity Cache),
		// else to HBM.
		below := "the HBM's"
		if m.LLC.Capacity > 0 && j.p.Bytes <= m.LLC.Capacity {
			below = fmt.Sprintf("the memory-side cache's (llc, %v)", m.LLC.Capacity)
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("gpu-bench %s: the working set (bytes %v) exceeds the L2 (%v): its re-reads miss it, so the figure is mostly %s (the L2 served %.1f %% of the reads)",
			j.p.Test, j.p.Bytes, m.L2.Capacity, below, 100*rep.Memory.L2HitRate))
	}
	return nil
}
