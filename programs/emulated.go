package programs

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
)

func init() {
	register(&Kind{Name: "emulated-gemm", KBatch: true, FlagIDs: 4, Params: reflect.TypeFor[EmulatedParams](), Sections: map[string]reflect.Type{"scheme": reflect.TypeFor[Scheme]()}, SectionPresets: map[string]func(string) (map[string]any, bool){"scheme": schemePresetValue}, Omit: []string{"split", "accumulation", "input"}, Machines: []string{"nvidia-sm", "amd-cu", "davinci"}, Example: "a100-emulated-gemm.yaml",
		Summary: "emulated FP32 GEMM from low-precision matrix units: a split kernel, product GEMM kernels, an epilogue (scheme: hgemm, markidis, ootomo, ape-fp32f, ape-fp32b, bf16x9, sgemm-cube, le-gemm, ape-int16, native, … or your own)",
		Build:   buildEmulated})
}

// EmulatedParams are the parameters of kind emulated-gemm: a GEMM's
// (m, k, n, tiling, inputs, numerics, check) and its scheme, a preset's
// name (scheme: ootomo) or a Scheme (scheme: {name: …, pieces: …, groups:
// …}; keys given override the named preset's): File.Decode leaves a name a
// string and decodes a section to a Scheme (the kind's Sections), checked
// as the file's other keys.
type EmulatedParams struct {
	GEMMParams `mapstructure:",squash"`
	Scheme     any `mapstructure:"scheme"`
	// TargetBits is the accuracy scheme: auto must meet (bits of the
	// relative Frobenius error); 0 = FP32 SGEMM's on the same data.
	TargetBits float64 `mapstructure:"target_bits"`
	// HistogramBins > 0 adds program.error_histogram to the report: the
	// per-element symmetric error against a CPU FP32 SGEMM in that many
	// log10 bins over [1e-12, 1] (numerics sampled or full).
	HistogramBins int `mapstructure:"histogram_bins"`
}

// Split-kernel geometry: elements per block, warps per block.
const (
	splitChunk = 8192
	splitWarps = 8
)

// emulatedJob runs an emulated GEMM on a GPU machine.
type emulatedJob struct {
	runContext // Finish's numerics stop with the run (seconds at 4096³)
	file       string
	p          GEMMParams
	// inputNotes are gemmInputs' notes on input files.
	inputNotes []string
	sp         *schemePlan
	tg         *gpuTarget
	kernels    []*gpuGEMMPlan // the product kernels
	kgroup     []int          // first group of each kernel
	groupK     []int          // kernel of each group
	gmA32      int64          // FP32 A and B (read by the split kernel)
	gmB32      int64
	gmAP       []int64 // pieces of A, B (indexed by piece)
	gmBP       []int64
	gmC        int64
	a, b       []float32
	aP, bP     [][]uint32 // host pieces (numerics on)
	outs       []Output
	auto       *autoChoice // scheme: auto's choice (report program.auto)
	// histBins: bins of the error histogram (0: none).
	histBins int
}

func buildEmulated(f *File, m *machines.Machine, o Options) (Job, error) {
	bad := f.badKey
	var ep EmulatedParams
	if err := f.Decode(&ep, o); err != nil {
		return nil, err
	}
	switch ep.Scheme {
	case "native":
		j, err := buildEmulatedNative(f, m, o, ep, bad)
		if err != nil {
			return nil, err
		}
		return j, nil
	case "ape-int16":
		return buildEmulatedInt16(f, m, o, ep, bad)
	}
	tg, ok := newGPUTarget(m)
	if !ok {
		return buildEmulatedDaVinci(f, m, o, ep, bad)
	}
	if ep.Scheme == "auto" {
		return buildEmulatedAuto(f, m, o, ep, gpuAuto{tg}, bad)
	}
	if ep.TargetBits != 0 {
		return nil, bad("target_bits", "applies to scheme: auto")
	}
	return buildEmulatedScheme(f, m, o, ep, tg, bad)
}

// decodeScheme resolves a program's scheme: a preset's name or a Scheme
// given inline.
func decodeScheme(scheme any, bad func(key, format string, a ...any) error) (*schemePlan, error) {
	var s Scheme
	switch v := scheme.(type) {
	case nil:
		return nil, bad("scheme", "missing: name a preset (%s), auto, or give pieces and groups", strings.Join(SchemeNames(), ", "))
	case string:
		s.Name = v
	case Scheme: // a section, decoded and checked as the file's keys (File.Decode)
		s = v
		if s.Name == "auto" {
			return nil, bad("scheme", "auto picks a preset and its split itself: give it alone (scheme: auto), without other scheme keys")
		}
	default:
		return nil, bad("scheme", "want a preset's name (%s, auto) or a section of keys (name, pieces, groups, kernels, epilogue, split), got %v", strings.Join(SchemeNames(), ", "), v)
	}
	return resolveScheme(s, bad)
}

// matrixFrom returns the keys, as --set addresses them (KeyError.From),
// whose values decide whether machine m's matrix units take inputs of
// format f: the machine itself (program.machine, where a --set names it) and
// its key for the type where it has one — a DaVinci cube's k-step
// (machine.core.cube.kstep_bf16), an nvidia-sm machine's tensor-core rate
// (machine.core.tensor.flops_per_cycle.tf32), an amd-cu machine's MFMA
// instruction (machine.core.mfma.instructions.xf32, read against
// core.arch: limitSetBy names that too).
func matrixFrom(m *machines.Machine, f fp.Format) []string {
	from := []string{"program.machine"}
	switch {
	case m.DaVinci() != nil:
		switch f {
		case fp.FP16, fp.BF16, fp.FP32, fp.INT8:
			from = append(from, "machine.core.cube.kstep_"+f.String())
		}
	case m.NvidiaSM() != nil:
		if t, ok := m.NvidiaSM().Tensor.FlopsPerCycle.Of(f); ok {
			from = append(from, "machine.core.tensor.flops_per_cycle."+t.Key)
		}
	case m.AMDCU() != nil:
		if key, ok := machines.InstructionKey(f); ok {
			from = append(from, "machine."+key)
		}
	}
	return from
}

// buildEmulatedScheme builds the emulated GEMM of ep's (named or given)
// scheme.
func buildEmulatedScheme(f *File, m *machines.Machine, o Options, ep EmulatedParams, tg *gpuTarget, bad func(key, format string, a ...any) error) (*emulatedJob, error) {
	p := ep.GEMMParams
	o.applyGEMM(f, &p)
	sp, err := decodeScheme(ep.Scheme, bad)
	if err != nil {
		return nil, err
	}
	sp.k = p.K // (its accumulators' bound: checkRange, reportRange)
	if key := p.derivedKindKey(f); key != "" {
		return nil, bad(key, "does not apply to emulated-gemm on %s (%s): the scheme says how inputs split and where products run", m.Name, m.Kind)
	}
	if err := p.gpuDefaults(f.Path); err != nil {
		return nil, err
	}
	if p.SampleTiles < 1 {
		return nil, bad("sample_tiles", "must be ≥ 1 (got %d)", p.SampleTiles)
	}
	// The machine's matrix units must take the pieces' format.
	if !tg.hasMatrix(sp.format) {
		what := tg.typeName(sp.format)
		return nil, limitedBy(bad("scheme.pieces[0].format", "%s pieces need %s %s; %s has none", sp.s.Pieces[0].Format, what, tg.units, tg.describe()), matrixFrom(m, sp.format)...)
	}
	if p.Inputs.A == "" {
		if err := sp.checkRange(p.Inputs.rangeMax(), p.Inputs.rangeExponent(), p.Inputs.rangeKey(), bad); err != nil {
			return nil, err
		}
	}
	if p.Numerics != NumericsOff {
		if tg.unmodelled(sp.format) {
			return nil, bad("numerics", "the numerics preset %q of machine %s has no model of %s %s instructions; use --numerics off (timing only)",
				m.NumericsPreset(), m.Name, strings.ToUpper(sp.format.String()), tg.matrix)
		}
	}
	// The run's estimate: its data's bytes per element the scheme's on
	// GPUs, 32 + 12 a piece (schemePerElem).
	if err := p.checkHostMemory(f.Path); err != nil {
		return nil, err
	}
	if ep.HistogramBins < 0 || ep.HistogramBins > 1000 {
		return nil, bad("histogram_bins", "must be in 0..1000 (0: no histogram) (got %d)", ep.HistogramBins)
	}
	if ep.HistogramBins > 0 && p.Numerics == NumericsOff {
		return nil, bad("histogram_bins", "the error histogram needs the simulated C: numerics full or sampled (this run is timing only)")
	}
	j := &emulatedJob{file: f.Path, p: p, sp: sp, tg: tg, histBins: ep.HistogramBins}
	if err := j.plan(f, m); err != nil {
		return nil, err
	}
	if p.Numerics != NumericsOff {
		if j.a, j.b, j.inputNotes, err = gemmInputs(f, &p, o.stop()); err != nil {
			if errors.Is(err, errStopped) {
				return nil, o.stoppedBuilding(f.Path, "drawing the inputs")
			}
			return nil, err
		}
		var okA, okB bool
		j.aP, okA = sp.splitAll(j.a, o.stop())
		j.bP, okB = sp.splitAll(j.b, o.stop())
		if !okA || !okB {
			return nil, o.stoppedBuilding(f.Path, "splitting the inputs")
		}
	} else if err := checkInputs(f, &p); err != nil {
		return nil, err
	}
	return j, nil
}

// splitAll returns the pieces of every element of x (piece-major), or
// false once stop (nil: never), asked chunk by chunk, said true: chunks of
// elements on every processor (eachTile; A100 4096², two inputs: 3.4 s on
// one).
func (sp *schemePlan) splitAll(x []float32, stop func() bool) ([][]uint32, bool) {
	out := make([][]uint32, len(sp.rounds))
	for i := range out {
		out[i] = make([]uint32, len(x))
	}
	const chunk = 1 << 14
	err := eachTile((len(x)+chunk-1)/chunk, nil, func(c int) error {
		if stop != nil && stop() {
			return errStopped
		}
		buf := make([]uint32, len(sp.rounds))
		for e, v := range x[c*chunk : min(c*chunk+chunk, len(x))] {
			sp.split(v, buf)
			for i, b := range buf {
				out[i][c*chunk+e] = b
			}
		}
		return nil
	})
	return out, err == nil
}

// plan lays out global memory and builds the product kernels: one with an
// accumulator per group (fused) or one per group (termwise).
func (j *emulatedJob) plan(f *File, m *machines.Machine) error {
	sp, p := j.sp, &j.p
	var sets [][]int // groups of each kernel
	cf := sp.s.Epilogue == "corrections-first" && len(sp.groups) > 1
	if sp.s.Kernels == "termwise" {
		// Chained through C (beta = 1) in the epilogue's order: with
		// corrections first, the corrections' kernels run before hh's,
		// which scales their sum.
		for g := range sp.groups {
			if cf {
				g = (g + 1) % len(sp.groups)
			}
			sets = append(sets, []int{g})
		}
	} else {
		all := make([]int, len(sp.groups))
		for g := range all {
			all[g] = g
		}
		sets = [][]int{all}
	}
	// Global memory: FP32 A and B, the pieces, C, the planes — checked
	// before the kernels' plans, which check the part each one reads.
	align := func(x int64) int64 { return (x + 511) &^ 511 }
	mk, kn, mn := int64(p.M)*int64(p.K), int64(p.K)*int64(p.N), int64(p.M)*int64(p.N)
	es := int64(sp.format.Bytes())
	at := int64(0)
	next := func(bytes int64) int64 {
		a := at
		at = align(at + bytes)
		return a
	}
	j.gmA32, j.gmB32 = next(4*mk), next(4*kn)
	j.gmAP, j.gmBP = make([]int64, len(sp.rounds)), make([]int64, len(sp.rounds))
	if sp.s.Split == "pass" { // a fused split keeps its pieces in registers
		for _, i := range sp.nA {
			j.gmAP[i] = next(es * mk)
		}
		for _, i := range sp.nB {
			j.gmBP[i] = next(es * kn)
		}
	}
	j.gmC = next(4 * mn)
	if at > int64(m.GM.Capacity) {
		return limitedBy(f.badKey("m", "FP32 A and B, their pieces and C need %d bytes of global memory; machine %s has %d (gm.capacity)", at, m.Name, int64(m.GM.Capacity)), "machine.gm.capacity")
	}
	j.groupK = make([]int, len(sp.groups))
	var fill []func() // the pieces' addresses, once laid out
	for ki, set := range sets {
		// The pieces this kernel stages, its products and accumulators.
		var usedA, usedB []int
		ops := &gpuOperands{name: fmt.Sprintf("%s/%s", p.Kind, kernelName(sp, set))}
		temps := 0
		for li, g := range set {
			j.groupK[g] = ki
			gr := sp.groups[g]
			acc := gpuAcc{outside: gr.outside, weight: gr.weight}
			if gr.outside {
				acc.temp = temps
				temps++
			}
			ops.accs = append(ops.accs, acc)
			for pi, pr := range gr.prods {
				if pieceSlot(usedA, pr[0]) < 0 {
					usedA = append(usedA, pr[0])
				}
				if pieceSlot(usedB, pr[1]) < 0 {
					usedB = append(usedB, pr[1])
				}
				ops.mmas = append(ops.mmas, gpuProduct{a: pieceSlot(usedA, pr[0]), b: pieceSlot(usedB, pr[1]), acc: li, first: pi == 0})
			}
		}
		if sp.s.Kernels == "termwise" {
			ops.readC = ki > 0
			if cf && set[0] != 0 {
				ops.accs[0].weight = 0 // scaled with the others by hh's kernel
			}
			if cf && set[0] == 0 {
				ops.scaleC = sp.groups[1].weight
			}
		} else {
			ops.correctionsFirst = cf
		}
		fused := sp.s.Split == "fused"
		if fused {
			ops.split, ops.aPieces, ops.bPieces = sp, usedA, usedB
		}
		sh := gpuShape{a: len(usedA), b: len(usedB), groups: len(set), temps: temps, readsC: ops.readC, fused: fused}
		kp, err := newGPUGEMMPlan(f.Path, *p, m, sp.format, sh)
		if err != nil {
			return err
		}
		kp.ops = ops
		if fused {
			kp.setFusedSplit(ops)
		}
		j.kernels = append(j.kernels, kp)
		j.kgroup = append(j.kgroup, set[0])
		// Remember which pieces (by index) the kernel's slots read.
		ops.gmA = make([]int64, len(usedA))
		ops.gmB = make([]int64, len(usedB))
		fill = append(fill, func() {
			for x, i := range usedA {
				ops.gmA[x] = j.gmAP[i]
			}
			for x, i := range usedB {
				ops.gmB[x] = j.gmBP[i]
			}
			ops.gmA32, ops.gmB32 = j.gmA32, j.gmB32
		})
	}
	for _, f := range fill {
		f()
	}
	for _, kp := range j.kernels {
		kp.gmC = j.gmC
	}
	return nil
}

// kernelName names a product kernel by its products ("hh+hl+lh", "hh|hl+lh").
func kernelName(sp *schemePlan, set []int) string {
	var gs []string
	for _, g := range set {
		var ps []string
		for _, pr := range sp.groups[g].prods {
			ps = append(ps, sp.productName(pr))
		}
		gs = append(gs, strings.Join(ps, "+"))
	}
	return strings.Join(gs, "|")
}

// splitOps is the FP32 vector operations per element of the split.
func (sp *schemePlan) splitOps() int { return len(sp.splitSteps(len(sp.rounds) - 1)) }

// splitOpsText is splitOps in words ("1 FP32 operation", "5 FP32
// operations").
func (sp *schemePlan) splitOpsText() string {
	if n := sp.splitOps(); n != 1 {
		return fmt.Sprintf("%d FP32 operations", n)
	}
	return "1 FP32 operation"
}

// splitInstrs are the split's operations (splitSteps) on the vector units
// on n elements in registers: r holds x and then its residual, tmp a
// temporary; piece i (i ≤ last) is written to piece(i). The split kernel
// and a fused split (a product kernel's k-loop) run them.
func (sp *schemePlan) splitInstrs(r, tmp int64, piece func(i int) int64, n, last int) []isa.Instr {
	at := func(x int) int64 {
		switch x {
		case splitResidual:
			return r
		case splitTemp:
			return tmp
		}
		return piece(x)
	}
	var out []isa.Instr
	for _, st := range sp.splitSteps(last) {
		switch st.op {
		case isa.VMuls:
			out = append(out, gpu.Scale(at(st.dst), at(st.src0), n, st.scalar))
		case isa.VCast:
			out = append(out, gpu.Convert(at(st.dst), at(st.src0), n, st.from, st.to, st.round.Round, st.round.Saturate))
		default:
			out = append(out, gpu.Elementwise(st.op, at(st.dst), at(st.src0), at(st.src1), n, fp.FP32))
		}
	}
	return out
}

// splitGrid is the split kernel, a memory-bound elementwise pass on the
// vector units: each block reads splitChunk FP32 elements of A or B into
// registers, splits them (schemePlan.split's operations, in FP32), and
// stores each piece a product kernel reads. Its register count is a
// streaming kernel's (a few values per element in flight); the functional
// layout keeps the whole chunk: x and its residual r, a temporary t, then
// the pieces.
func (j *emulatedJob) splitGrid() isa.Grid {
	p, sp := &j.p, j.sp
	mk, kn := int64(p.M)*int64(p.K), int64(p.K)*int64(p.N)
	ca, cb := int((mk+splitChunk-1)/splitChunk), int((kn+splitChunk-1)/splitChunk)
	es := int64(sp.format.Bytes())
	threads := j.tg.threads(splitWarps)
	regs := int64(splitChunk) + 32*threads
	regs = (regs + threads - 1) / threads * threads
	// A block's registers: x and its residual r, a temporary, the pieces
	// (the same in every block: a full chunk's operations made once).
	r, tmp := int64(0), 4*int64(splitChunk)
	piece := func(x int) int64 { return 8*int64(splitChunk) + int64(x)*es*splitChunk }
	full := sp.splitInstrs(r, tmp, piece, splitChunk, len(sp.rounds)-1)
	// chunk returns block i's part: its FP32 source, the pieces it
	// stores and their arrays, its offset and length in elements.
	chunk := func(i int) (src int64, pieces []int, base []int64, off, n int64) {
		src, total, pieces, base := j.gmA32, mk, sp.nA, j.gmAP
		if i >= ca {
			i -= ca
			src, total, pieces, base = j.gmB32, kn, sp.nB, j.gmBP
		}
		off = int64(i) * splitChunk
		return src, pieces, base, off, min(int64(splitChunk), total-off)
	}
	cta := func(i int) isa.Stream {
		src, pieces, base, off, n := chunk(i)
		return func(yield func(isa.Instr) bool) {
			e := newEmitter(yield, j.kernels[0].mach)
			e.emit(gpu.CopyToRegisters(r, src+4*off, 1, 4*n, 4*n, 4*n))
			e.setFlag(gpu.LaneCopy, gpu.LaneVector, 0)
			e.waitFlag(gpu.LaneCopy, gpu.LaneVector, 0)
			ops := full
			if n < splitChunk {
				ops = sp.splitInstrs(r, tmp, piece, int(n), len(sp.rounds)-1)
			}
			for _, in := range ops {
				e.emit(in)
			}
			e.setFlag(gpu.LaneVector, gpu.LaneStore, 0)
			e.waitFlag(gpu.LaneVector, gpu.LaneStore, 0)
			for _, pc := range pieces {
				e.emit(isa.Copy2D(gpu.LaneStore, isa.Operand{Buf: gpu.BufGM, Addr: base[pc] + es*off},
					isa.Operand{Buf: gpu.BufRegs, Addr: piece(pc)}, 1, es*n, es*n, es*n))
			}
		}
	}
	// Blocks alike but for addresses (isa.Grid.Class): those of a chunk's
	// length storing as many pieces — A's and B's full chunks where they
	// split into as many; fast-forward compared every block's stream
	// before each wave skip (7 % of an MI300X Ape FP32-F run's CPU time,
	// 12160 blocks).
	class := func(i int) int {
		_, pieces, _, _, n := chunk(i)
		return int(n)<<8 | len(pieces)
	}
	return isa.Grid{Name: p.Kind + "/split", CTAs: ca + cb, CTA: cta, Class: class,
		Resources: isa.Resources{Registers: regs, Warps: splitWarps}}
}

func (j *emulatedJob) Program() isa.Program {
	var grids []isa.Grid
	if j.sp.s.Split == "pass" {
		grids = append(grids, j.splitGrid())
	}
	for _, kp := range j.kernels {
		grids = append(grids, kp.grid())
	}
	return isa.Program{Name: j.p.Kind, Generated: true, Grids: grids}
}

func (j *emulatedJob) Mode() arch.Mode { return modeFor(j.p.Numerics) }

// Prepare writes the FP32 inputs A and B (functional runs; the split
// kernel makes the pieces).
func (j *emulatedJob) Prepare(chip *arch.Chip) error {
	if j.Mode() != arch.Functional {
		return nil
	}
	gm := chip.GM()
	if err := gm.WriteFloat32s(j.gmA32, j.a); err != nil {
		return err
	}
	return gm.WriteFloat32s(j.gmB32, j.b)
}

func (j *emulatedJob) Outputs() []Output { return j.outs }

// goldenTile computes output tile (bi, bj) of the first kernel's tiling:
// every group's accumulator as its kernel runs it (per k-step of that
// kernel, the products in order through the machine's matrix-unit model;
// outside groups from C = 0 each k-step, added in FP32 RNE), and the
// epilogue's C.
//
// It asks stop (nil: never) every k-step (a 128×256 tile's golden model
// took ~0.25 s at k = 4096): stoppedNumerics once it says true.
func (j *emulatedJob) goldenTile(model cube.Model, r0, mm, c0, nn int, stop func() bool) (accs [][]float32, c []float32, err error) {
	p, sp := &j.p, j.sp
	accs = make([][]float32, len(sp.groups))
	for g, gr := range sp.groups {
		bk := j.kernels[j.groupK[g]].real.bk
		acc := make([]uint32, mm*nn)
		tmp := make([]uint32, mm*nn)
		// A k-step's operands, made once (a step each had made its own:
		// 0.7 GB of garbage at 64×262144×64).
		aStep, bStep := make([]uint32, mm*min(bk, p.K)), make([]uint32, min(bk, p.K)*nn)
		for k0 := 0; k0 < p.K; k0 += bk {
			if stop != nil && stop() {
				return nil, nil, j.stoppedNumerics()
			}
			kk := min(bk, p.K-k0)
			for pi, pr := range gr.prods {
				a := aStep[:mm*kk]
				for r := 0; r < mm; r++ {
					copy(a[r*kk:], j.aP[pr[0]][(r0+r)*p.K+k0:][:kk])
				}
				b := bStep[:kk*nn]
				for r := 0; r < kk; r++ {
					copy(b[r*nn:], j.bP[pr[1]][(k0+r)*p.N+c0:][:nn])
				}
				dst, init := acc, k0 == 0 && pi == 0
				if gr.outside {
					dst, init = tmp, pi == 0
				}
				if err := model.MMAD(sp.format, fp.FP32, mm, kk, nn, a, cube.RowMajor, b, cube.RowMajor, dst, cube.RowMajor, init); err != nil {
					return nil, nil, err
				}
			}
			if gr.outside {
				for i, v := range tmp {
					if k0 == 0 {
						acc[i] = v
					} else {
						acc[i] = math.Float32bits(math.Float32frombits(acc[i]) + math.Float32frombits(v))
					}
				}
			}
		}
		accs[g] = make([]float32, mm*nn)
		for i, v := range acc {
			accs[g][i] = math.Float32frombits(v)
		}
	}
	c = make([]float32, mm*nn)
	buf := make([]float32, len(sp.groups))
	for i := range c {
		for g := range accs {
			buf[g] = accs[g][i]
		}
		c[i] = sp.combine(buf)
	}
	return accs, c, nil
}

func (j *emulatedJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	rep.Notes = append(rep.Notes, j.inputNotes...)
	p, sp, tg := &j.p, j.sp, j.tg
	flops := 2 * float64(p.M) * float64(p.N) * float64(p.K)
	nprod := sp.products()
	name := tg.matrixPeak[sp.format]
	peak, _ := chip.M.Peak(name)
	reportThroughput(rep, st, flops, peak/float64(nprod),
		fmt.Sprintf("fp32-equivalent (2mnk; peak = dense %s %s peak / %d %s)", name, tg.matrix, nprod, plural(nprod, "product", "products")))
	var kernels []map[string]any
	for _, kp := range j.kernels {
		kernels = append(kernels, map[string]any{"name": kp.name(), "ctas": kp.nrb * kp.ncb,
			"tiling": kp.tilingReport(),
			"cta":    map[string]int64{"shared_bytes": kp.smem, "registers": kp.grid().Resources.Registers}})
	}
	schemeName := sp.name()
	rep.Program = map[string]any{"kind": p.Kind, "m": p.M, "k": p.K, "n": p.N, "scheme": schemeName,
		"pieces": sp.reportPieces(), "groups": sp.s.Groups, "kernels": sp.s.Kernels, "epilogue": sp.s.Epilogue, "split": sp.s.Split,
		"product_kernels": kernels, "inputs": p.Inputs, "numerics": p.Numerics}
	reportAuto(rep, j.auto)
	rep.Notes = append(rep.Notes, "scheme "+sp.describe())
	if !sp.reportRange(rep, j.a, j.b, flushingUnits(chip.M, tg.units), j.stop()) {
		return j.stoppedNumerics()
	}
	switch {
	case sp.s.Split == "fused":
		rep.Notes = append(rep.Notes, fmt.Sprintf("split fused into the product kernels: each splits its FP32 tiles every k-step on the %s units (%s an element), register-staged, no split kernel", tg.vector, sp.splitOpsText()))
	case p.Numerics != NumericsFull:
		rep.Notes = append(rep.Notes, fmt.Sprintf("split kernel: %s per element on the %s units", sp.splitOpsText(), tg.vector))
	}
	model := chip.Cube()
	k0 := j.kernels[0]
	stop := j.stop()
	switch p.Numerics {
	case NumericsFull:
		outside := ""
		if sp.outside > 0 {
			outside = ", the accumulation outside the matrix units"
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("numerics full: every kernel runs functionally — the split (%s per element)%s and the epilogue on the %s units, the products on the %s", sp.splitOpsText(), outside, tg.vector, tg.units))
		c, ref, err := readFP32Result(chip, j.gmC, p, j.a, j.b, rep, &j.outs, stop)
		if errors.Is(err, errStopped) {
			return j.stoppedNumerics()
		}
		if err != nil {
			return err
		}
		if p.Check {
			for bi := 0; bi < k0.nrb; bi++ {
				for bj := 0; bj < k0.ncb; bj++ {
					r0, c0, mm, nn := bi*k0.t.bm, bj*k0.t.bn, k0.rows(bi), k0.cols(bj)
					_, gc, err := j.goldenTile(model, r0, mm, c0, nn, stop)
					if err != nil {
						return err
					}
					for i := range gc {
						at := (r0+i/nn)*p.N + c0 + i%nn
						if got := c[at]; math.Float32bits(got) != math.Float32bits(gc[i]) {
							return fmt.Errorf("%w: simulated C[%d][%d] = %g (%#08x) but the golden model gives %g (%#08x)", ErrCheckFailed,
								r0+i/nn, c0+i%nn, got, math.Float32bits(got), gc[i], math.Float32bits(gc[i]))
						}
					}
				}
			}
			rep.Notes = append(rep.Notes, "check: the simulated C equals the golden model's bit for bit")
		}
		if err := j.cpuErrors(rep, []errTile{{0, p.M, 0, p.N}}, ref, c, false); err != nil {
			return err
		}
	case NumericsSampled:
		nb, block := k0.sampleBlocks()
		rng := NewRand(p.Inputs.Seed, 99)
		perm := rng.Perm(nb)
		n := min(p.SampleTiles, len(perm))
		var ref []float64
		var got []float32
		var tiles []errTile
		for _, i := range perm[:n] {
			r0, mm, c0, nn := block(i)
			_, gc, err := j.goldenTile(model, r0, mm, c0, nn, stop)
			if err != nil {
				return err
			}
			if stop != nil && stop() { // (its reference: ~0.1 s at k = 4096)
				return j.stoppedNumerics()
			}
			got = append(got, gc...)
			ref = append(ref, referenceTile(j.a, j.b, p.K, p.N, r0, mm, c0, nn)...)
			tiles = append(tiles, errTile{r0, mm, c0, nn})
		}
		e := errReport(accuracy.Compare32(ref, got), true)
		rep.Error = &e
		if err := j.cpuErrors(rep, tiles, ref, got, true); err != nil {
			return err
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("numerics sampled: %d of %d output tiles (%d×%d) computed bit-accurately by the golden model", n, len(perm), sampleBM, sampleBN))
	}
	return nil
}
