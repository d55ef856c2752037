package programs

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/stopwork"
)

func init() {
	register(&Kind{Name: "sgemm-cube", Params: reflect.TypeFor[GEMMParams](), Omit: append([]string{"input"}, gpuOnlyGEMMKeys...), Machines: []string{"davinci"}, Example: "sgemm-cube.yaml",
		Summary: "emulated FP32 GEMM from three FP16 cube GEMMs (SGEMM-cube: split, hh+hl+lh, reconstruction)",
		Build: func(f *File, m *machines.Machine, o Options) (Job, error) {
			return buildGEMM(f, m, o, gemmVariant{split: true})
		}})
	register(&Kind{Name: "sgemm", KBatch: true, Params: reflect.TypeFor[GEMMParams](), Omit: []string{"input", "split", "split_chunk"}, Machines: []string{"davinci", "nvidia-sm", "amd-cu"}, Example: "sgemm-910b3.yaml",
		Summary: "native FP32 GEMM: the FP32 cube on DaVinci machines that have one (ascend-910b3), the CUDA cores on NVIDIA, FP32 VALU/MFMA on AMD",
		Build: func(f *File, m *machines.Machine, o Options) (Job, error) {
			return buildGEMM(f, m, o, gemmVariant{native: true})
		}})
	register(&Kind{Name: "igemm", Params: reflect.TypeFor[GEMMParams](), Omit: []string{"baselines", "input", "split", "split_chunk"}, Machines: []string{"davinci", "nvidia-sm", "amd-cu"}, Example: "a100-igemm.yaml",
		Summary: "INT8 GEMM with exact INT32 accumulation on the tensor cores (GPUs) or the INT8 cube (DaVinci)",
		Build: func(f *File, m *machines.Machine, o Options) (Job, error) {
			return buildGEMM(f, m, o, gemmVariant{int8: true})
		}})
	register(&Kind{Name: "tf32gemm", Params: reflect.TypeFor[GEMMParams](), Omit: append([]string{"input"}, davinciOnlyGEMMKeys...), Machines: []string{"nvidia-sm", "amd-cu"}, Example: "a100-tf32gemm.yaml",
		Summary: "FP32 GEMM on TF32 tensor cores (GPUs): FP32 data, TF32 products, FP32 accumulation",
		Build: func(f *File, m *machines.Machine, o Options) (Job, error) {
			return buildGEMM(f, m, o, gemmVariant{tf32: true})
		}})
	register(&Kind{Name: "dgemm", KBatch: true, Params: reflect.TypeFor[GEMMParams](), Omit: append([]string{"input"}, davinciOnlyGEMMKeys...), Machines: []string{"nvidia-sm", "amd-cu"}, Example: "a100-dgemm.yaml",
		Summary: "FP64 GEMM (GPUs): FP64 tensor cores (DMMA) where the machine has them, else the CUDA cores",
		Build: func(f *File, m *machines.Machine, o Options) (Job, error) {
			return buildGEMM(f, m, o, gemmVariant{fp64: true})
		}})
	register(&Kind{Name: "hgemm", Params: reflect.TypeFor[GEMMParams](), Omit: []string{"split.sb"}, Machines: []string{"davinci", "nvidia-sm", "amd-cu"}, Example: "hgemm.yaml",
		Summary: "plain FP16 GEMM: inputs rounded once to FP16, FP32 accumulation (the low-accuracy baseline)",
		Build: func(f *File, m *machines.Machine, o Options) (Job, error) {
			return buildGEMM(f, m, o, gemmVariant{split: false})
		}})
}

// gemmJob runs a GEMM program.
type gemmJob struct {
	runContext // Finish's reference, baselines and check (full) stop with the run
	file       string
	pl         *gemmPlan
	a, b       []float32 // inputs (nil with numerics off)
	// inputNotes are gemmInputs' notes on input files.
	inputNotes []string
	c          []float32 // simulated result (full numerics)
	outs       []Output
	side       *beside      // the sampled tiles' computation (startBeside)
	smp        *gemmSampled // its result
	// cpuTiles: the sampled tiles' CPU FP32 SGEMM is computed without
	// baselines too (emulated-gemm's error against it).
	cpuTiles bool
}

func buildGEMM(f *File, m *machines.Machine, o Options, v gemmVariant) (Job, error) {
	if _, gpu := newGPUTarget(m); gpu {
		return buildGPUGEMM(f, m, o, v)
	}
	var p GEMMParams
	if err := f.Decode(&p, o); err != nil {
		return nil, err
	}
	o.applyGEMM(f, &p)
	j, err := buildDaVinciGEMM(f, m, p, v, o.stop())
	if errors.Is(err, errStopped) {
		return nil, o.stoppedBuilding(f.Path, "drawing the inputs")
	}
	return j, err
}

// buildDaVinciGEMM builds a DaVinci GEMM job from decoded parameters (kind
// emulated-gemm's native scheme reuses it), drawing the inputs asking stop
// (nil: never): errStopped once it says true.
func buildDaVinciGEMM(f *File, m *machines.Machine, p GEMMParams, v gemmVariant, stop func() bool) (Job, error) {
	given := p.Tiling.BM != 0 || p.Tiling.BK != 0 || p.Tiling.BN != 0
	if (v.native || v.int8) && f.keySet(&p, "split_chunk") {
		return nil, f.badKey("split_chunk", "the chunk of sgemm-cube's and hgemm's split pass; this kind's inputs go to the cube as they are (no split)")
	}
	p.defaults(v)
	if err := p.validate(f.Path, m, v); err != nil {
		return nil, err
	}
	pl, err := newGEMMPlan(f.Path, p, v, m)
	if err != nil && !given && errors.As(err, new(tileFitError)) {
		// The default tile does not fit this machine's buffers (the
		// 910B3's 192 KiB UB does not hold two FP32 tiles of 176²): the
		// emulation schemes' search for the largest tile that does.
		pl, err = daVinciSchemePlan(f.Path, p, false, v, m)
	}
	if err != nil {
		return nil, err
	}
	if v.int8 {
		return newDaVinciIGEMM(f, pl, stop)
	}
	return newGEMMJob(f, pl, stop)
}

// newGEMMJob is the job of a planned DaVinci GEMM (FP16/BF16 pieces or
// native FP32): its inputs made (numerics; drawn asking stop, nil: never,
// errStopped once it says true) or checked.
func newGEMMJob(f *File, pl *gemmPlan, stop func() bool) (*gemmJob, error) {
	p := pl.p
	j := &gemmJob{file: f.Path, pl: pl}
	if p.Numerics != NumericsOff {
		if err := j.makeInputs(f, stop); err != nil {
			return nil, err
		}
	} else if err := checkInputs(f, &p); err != nil {
		return nil, err // timing only: the files are not read, but must be right
	}
	return j, nil
}

// makeInputs reads or generates A (m×k) and B (k×n), the draw asking stop
// (nil: never).
func (j *gemmJob) makeInputs(f *File, stop func() bool) (err error) {
	j.a, j.b, j.inputNotes, err = gemmInputs(f, &j.pl.p, stop)
	return err
}

// checkInputs checks inputs.a and inputs.b as gemmInputs would, without
// reading their data.
func checkInputs(f *File, p *GEMMParams) error {
	if p.Inputs.A == "" {
		return nil
	}
	if g := f.given; g != nil {
		return checkInputShapes(f, p, g.m, g.k, g.k, g.n)
	}
	ar, ac, err := CheckNPYFloat32(f.Resolve(string(p.Inputs.A)))
	if err != nil {
		return f.badKey("inputs.a", "%v", err)
	}
	br, bc, err := CheckNPYFloat32(f.Resolve(string(p.Inputs.B)))
	if err != nil {
		return f.badKey("inputs.b", "%v", err)
	}
	return checkInputShapes(f, p, ar, ac, br, bc)
}

// checkInputShapes checks that A is m×k and B k×n (and that no --seed was
// given for them: they are not drawn).
func checkInputShapes(f *File, p *GEMMParams, ar, ac, br, bc int) error {
	if p.seedFlag {
		return fmt.Errorf("%s: --seed: A and B are the files inputs.a and inputs.b, nothing is drawn; leave --seed out", f.Path)
	}
	if ar != p.M || ac != p.K || br != p.K || bc != p.N {
		key := "inputs.a"
		if ar == p.M && ac == p.K {
			key = "inputs.b"
		}
		return f.badKey(key, "A is %d×%d and B %d×%d, but m, k, n = %d, %d, %d (A is m×k, B k×n)", ar, ac, br, bc, p.M, p.K, p.N)
	}
	return nil
}

// gemmInputs reads (inputs.a, inputs.b) or generates A (m×k) and B (k×n).
// Its notes (for the report) say what in the files a run may not take as
// meant: float64 arrays rounded to FP32, NaN and ±Inf values. It draws
// A and B asking stop (nil: never) every stopwork.Every values
// (genMatrixUntil): errStopped once it says true (4096²: ~1 s deaf to an
// interrupt before).
func gemmInputs(f *File, p *GEMMParams, stop func() bool) (a, b []float32, notes []string, err error) {
	if p.Numerics == NumericsFull && f.keyGiven("sample_tiles") {
		notes = append(notes, fmt.Sprintf("sample_tiles (%d) applies to numerics sampled: not used (numerics full computes every tile)", p.SampleTiles))
	}
	if g := f.given; g != nil && p.Inputs.A != "" {
		if err := checkInputShapes(f, p, g.m, g.k, g.k, g.n); err != nil {
			return nil, nil, nil, err
		}
		return slices.Clone(g.a), slices.Clone(g.b), notes, nil
	}
	if p.Inputs.A != "" {
		read := func(key, path string) ([]float32, int, int, error) {
			v32, rows, cols, rounded, err := readNPYAsFloat32(f.Resolve(path))
			if err != nil {
				return nil, 0, 0, f.badKey(key, "%v", err)
			}
			if rounded {
				notes = append(notes, fmt.Sprintf("%s (%s) is float64: rounded to FP32 (RNE), the inputs the kernels take", key, path))
			}
			if key == "inputs.a" {
				notes = append(notes, drawnKeysUnused(f)...)
			}
			if n := inputNonFinite(v32); n.nan+n.inf > 0 {
				notes = append(notes, fmt.Sprintf("%s (%s) holds %d NaN and %d ±Inf of its %d values: the elements of C they reach are NaN or ±Inf (error.non_finite counts them) — or finite where a conversion to the pieces saturates them (NaN → 0, ±Inf → ±max: Ascend's default, the split's or scheme piece's saturate key)", key, path, n.nan, n.inf, len(v32)))
			}
			return v32, rows, cols, nil
		}
		a, ar, ac, err := read("inputs.a", string(p.Inputs.A))
		if err != nil {
			return nil, nil, nil, err
		}
		b, br, bc, err := read("inputs.b", string(p.Inputs.B))
		if err != nil {
			return nil, nil, nil, err
		}
		if err := checkInputShapes(f, p, ar, ac, br, bc); err != nil {
			return nil, nil, nil, err
		}
		return a, b, notes, nil
	}
	if a = genMatrixUntil(p.Inputs, 1, p.M, p.K, stop); a != nil {
		b = genMatrixUntil(p.Inputs, 2, p.K, p.N, stop)
	}
	if b == nil {
		return nil, nil, nil, errStopped
	}
	return a, b, notes, nil
}

// drawnKeysUnused is a note naming the keys of the input distribution
// that f gives (its own, or --set) where the inputs are files, which they
// do not change (an example's distribution, kept where --set names files).
func drawnKeysUnused(f *File) []string {
	var keys []string
	for _, k := range []string{"inputs.distribution", "inputs.offset_exponent", "inputs.low", "inputs.high", "inputs.seed"} {
		if f.keyGiven(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: not used, A and B are the files inputs.a and inputs.b", strings.Join(keys, ", "))}
}

// nonFinite counts an input's NaN and ±Inf values.
type nonFinite struct{ nan, inf int }

func inputNonFinite(v []float32) (n nonFinite) {
	for _, x := range v {
		switch {
		case x != x:
			n.nan++
		case math.IsInf(float64(x), 0):
			n.inf++
		}
	}
	return n
}

// genMatrix draws a rows×cols matrix; row r uses its own PCG stream
// (which<<32 | r), so any row can be regenerated alone.
func genMatrix(in Inputs, which uint64, rows, cols int) []float32 {
	return genMatrixUntil(in, which, rows, cols, nil)
}

// genMatrixUntil is genMatrix asking stop (nil: never) every
// stopwork.Every values, as genFloat64Until: nil once it says true. The
// values are UniformFP32's, drawn in place.
func genMatrixUntil(in Inputs, which uint64, rows, cols int, stop func() bool) []float32 {
	lo, hi := in.interval()
	out := make([]float32, rows*cols)
	st := stopwork.New(stop)
	for r := 0; r < rows; r++ {
		rng := NewRand(in.Seed, which<<32|uint64(r))
		row := out[r*cols : r*cols+cols]
		for len(row) > 0 {
			part := row[:min(len(row), stopwork.Every)]
			if st.StopBefore(len(part)) {
				return nil
			}
			uniformFP32Into(rng, part, lo, hi)
			row = row[len(part):]
		}
	}
	return out
}

func (j *gemmJob) Program() isa.Program {
	p := isa.Program{Name: j.pl.p.Kind, Cores: make([]isa.Stream, j.pl.ncores), Generated: true, Phases: j.pl.phases()}
	for c := range p.Cores {
		p.Cores[c] = j.pl.stream(c)
	}
	return p
}

func (j *gemmJob) Mode() arch.Mode { return modeFor(j.pl.p.Numerics) }

func (j *gemmJob) Prepare(chip *arch.Chip) error {
	if j.Mode() != arch.Functional {
		return nil
	}
	gm := chip.GM()
	if err := gm.WriteFloat32s(j.pl.a32, j.a); err != nil {
		return err
	}
	return gm.WriteFloat32s(j.pl.b32, j.b)
}

func (j *gemmJob) Outputs() []Output { return j.outs }

func (j *gemmJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	rep.Notes = append(rep.Notes, j.inputNotes...)
	pl, p := j.pl, &j.pl.p
	flops := 2 * float64(p.M) * float64(p.N) * float64(p.K)
	fp16Peak, _ := chip.M.Peak("FP16")
	conv, peak := "fp16 (2mnk; peak = FP16 cube peak)", fp16Peak
	switch {
	case pl.v.native:
		conv = "fp32 (2mnk; peak = FP32 cube peak: native cube)"
		peak, _ = chip.M.Peak("FP32")
	case pl.v.split:
		conv, peak = "fp32-equivalent (2mnk; peak = FP16 peak / 3)", fp16Peak/3
	case pl.v.scheme != nil:
		name := strings.ToUpper(pl.in.String())
		fpeak, _ := chip.M.Peak(name)
		n := pl.v.scheme.products()
		conv, peak = fmt.Sprintf("fp32-equivalent (2mnk; peak = %s cube peak / %d %s)", name, n, plural(n, "product", "products")), fpeak/float64(n)
	}
	reportThroughput(rep, st, flops, peak, conv)
	rep.Program = j.programSection()
	if pl.sp != nil && pl.v.scheme == nil { // sgemm-cube's split, hgemm's cast (kindScheme); emulated-gemm reports its own
		if !pl.sp.reportRange(rep, j.a, j.b, flushingUnits(chip.M, "cube"), j.stop()) {
			return j.stoppedNumerics()
		}
	}
	switch p.Numerics {
	case NumericsFull:
		return j.finishFull(chip, rep)
	case NumericsSampled:
		return j.finishSampled(chip, rep)
	}
	return nil
}

// reportThroughput fills what every GEMM kind reports of its speed: flops
// over the simulated time against peak (conv names the counting), the
// operational intensity and the L2 hit rate.
func reportThroughput(rep *report.Report, st *arch.Stats, flops, peak float64, conv string) {
	secs := st.Time.Seconds()
	rep.Flops = &report.FlopsReport{Total: flops, PeakTFLOPS: peak / 1e12, Convention: conv}
	if secs > 0 {
		rep.Flops.TFLOPS = flops / secs / 1e12
		rep.Flops.PeakFraction = flops / secs / peak
	}
	if b := st.GMReadBytes + st.GMWriteBytes; b > 0 {
		rep.Memory.OperationalIntensity = flops / float64(b)
	}
	// The L2's share of the GM reads is in the summary's HBM line
	// (memory.l2_hit_rate); the directory's hit bytes also count the
	// lookups of writes, so they are not quoted as a read hit rate.
}

func (j *gemmJob) programSection() map[string]any {
	pl, p := j.pl, &j.pl.p
	return map[string]any{
		"kind": p.Kind, "m": p.M, "k": p.K, "n": p.N,
		"tiling":       pl.tilingReport(),
		"buffering":    p.Buffering,
		"buffers":      map[string]int{"L1_B": pl.nB, "L0": pl.nL0, "L0C": pl.nC, "UB": pl.nU},
		"accumulation": p.Accumulation,
		"split":        map[string]any{"rounding": p.Split.Rounding, "sb": p.Split.SB, "saturate": *p.Split.Saturate},
		"inputs":       p.Inputs,
		"numerics":     p.Numerics,
		"cores":        pl.ncores,
	}
}

func (j *gemmJob) finishFull(chip *arch.Chip, rep *report.Report) error {
	pl, p := j.pl, &j.pl.p
	c := make([]float32, p.M*p.N)
	if err := readResultFloat32s(chip.GM(), pl.c, c); err != nil {
		return err
	}
	j.c = c
	j.outs = []Output{
		{Name: "C", Shape: []int{p.M, p.N}, F32: c},
		{Name: "A", Shape: []int{p.M, p.K}, F32: j.a},
		{Name: "B", Shape: []int{p.K, p.N}, F32: j.b},
	}
	// The reference, baselines and golden model hear the run's context
	// (each O(mnk): at 4096³ seconds to minutes deaf to an interrupt).
	stop := j.stop()
	ref := referenceGEMMUntil(p.M, p.K, p.N, j.a, j.b, stop)
	if ref == nil {
		return j.stoppedNumerics()
	}
	e := errReport(accuracy.Compare32(ref, c), false)
	rep.Error = &e
	if *p.Baselines {
		if err := j.baselines(chip, rep, ref, nil); err != nil {
			return err
		}
	}
	if p.Check {
		g, err := pl.golden(chip.Cube(), j.a, j.b, stop)
		if errors.Is(err, errStopped) {
			return j.stoppedNumerics()
		}
		if err != nil {
			return err
		}
		for i := range g {
			if math.Float32bits(g[i]) != math.Float32bits(c[i]) {
				return fmt.Errorf("%w: simulated C[%d][%d] = %g (%#08x) but the golden model gives %g (%#08x)",
					ErrCheckFailed, i/p.N, i%p.N, c[i], math.Float32bits(c[i]), g[i], math.Float32bits(g[i]))
			}
		}
		rep.Notes = append(rep.Notes, "check: simulated C equals the golden model bit for bit")
	}
	return nil
}

// baselines adds the hgemm (same machine numerics) and CPU FP32 errors; with
// tiles non-nil, only on those output tiles.
func (j *gemmJob) baselines(chip *arch.Chip, rep *report.Report, ref []float64, tiles [][2]int) error {
	pl, p := j.pl, &j.pl.p
	rep.Baselines = map[string]report.ErrorReport{}
	if pl.hgemmBaseline() {
		got, err := j.hgemmTiles(chip, tiles)
		if errors.Is(err, errStopped) {
			return j.stoppedNumerics()
		}
		if err != nil {
			return err
		}
		rep.Baselines["hgemm"] = errReport(accuracy.Compare32(pick(ref, pl, tiles), got), tiles != nil)
	}
	cpu := cpuSGEMMUntil(p.M, p.K, p.N, j.a, j.b, j.stop())
	if cpu == nil {
		return j.stoppedNumerics()
	}
	rep.Baselines["cpu_sgemm_fp32"] = errReport(accuracy.Compare32(pick(ref, pl, tiles), pick(cpu, pl, tiles)), tiles != nil)
	return nil
}

// hgemmBaseline reports whether the report compares the GEMM with the
// plain FP16 GEMM on the same inputs: every kind but hgemm itself.
func (pl *gemmPlan) hgemmBaseline() bool { return pl.v.split || pl.v.native || pl.v.scheme != nil }

// hgemmTiles computes the given output tiles (all when nil) of the plain
// FP16 GEMM on the same inputs, tiling and cube numerics: the hgemm baseline.
func (j *gemmJob) hgemmTiles(chip *arch.Chip, tiles [][2]int) ([]float32, error) {
	hp := j.pl.p
	hp.Kind = "hgemm"
	hpl, err := newGEMMPlan(j.file, hp, gemmVariant{}, j.pl.mach)
	if err != nil {
		return nil, err
	}
	_, got, err := hpl.tiles(chip, hpl.operands(j.a, j.b, tiles), tiles, j.stop())
	return got, err
}

// cpuSGEMMUntil is accuracy.CPUSGEMM of the m×k A and k×n B, a block of
// rows at a time (byRowBlocks: the same sums), asking stop (nil: never)
// before each block: nil once it says true.
func cpuSGEMMUntil(m, k, n int, a, b []float32, stop func() bool) []float32 {
	out := make([]float32, 0, m*n)
	st := stopwork.New(stop)
	if !byRowBlocks(m, k*n, &st, func(r0, r1 int) {
		out = append(out, accuracy.CPUSGEMM(r1-r0, k, n, a[r0*k:r1*k], b)...)
	}) {
		return nil
	}
	return out
}

// golden computes the whole C (row-major m×n) with the golden model,
// asking stop (nil: never) before each tile: errStopped once it says true.
func (pl *gemmPlan) golden(model cube.Model, a, b []float32, stop func() bool) ([]float32, error) {
	ops := pl.operands(a, b, nil)
	c := make([]float32, pl.p.M*pl.p.N)
	for i := 0; i < pl.nrb; i++ {
		for j := 0; j < pl.ncb; j++ {
			if stop != nil && stop() {
				return nil, errStopped
			}
			t, err := pl.goldenTile(model, ops, i, j)
			if err != nil {
				return nil, fmt.Errorf("golden tile (%d, %d): %w", i, j, err)
			}
			pl.placeTile(c, t, i, j)
		}
	}
	return c, nil
}

// tiles computes the given output tiles (all when nil) with the golden
// model and returns them concatenated tile by tile, asking stop (nil:
// never) before each: errStopped once it says true.
func (pl *gemmPlan) tiles(chip *arch.Chip, ops *goldenOperands, tiles [][2]int, stop func() bool) ([][2]int, []float32, error) {
	if tiles == nil {
		for i := 0; i < pl.nrb; i++ {
			for j := 0; j < pl.ncb; j++ {
				tiles = append(tiles, [2]int{i, j})
			}
		}
	}
	var out []float32
	for _, t := range tiles {
		if stop != nil && stop() {
			return nil, nil, errStopped
		}
		v, err := pl.goldenTile(chip.Cube(), ops, t[0], t[1])
		if err != nil {
			return nil, nil, err
		}
		out = append(out, v...)
	}
	return tiles, out, nil
}

// pick gathers the elements of the given tiles (all when nil, row-major
// order of tiles) from a full row-major m×n matrix.
func pick[T float32 | float64](full []T, pl *gemmPlan, tiles [][2]int) []T {
	if tiles == nil {
		tiles, _, _ = pl.tileList()
	}
	n := 0
	for _, t := range tiles {
		n += pl.rows(t[0]) * pl.cols(t[1])
	}
	out := make([]T, 0, n) // (grown by append, a full C was allocated twice over and held twice at its peak)
	for _, t := range tiles {
		rows, cols := pl.rows(t[0]), pl.cols(t[1])
		for r := 0; r < rows; r++ {
			base := (t[0]*pl.bm+r)*pl.p.N + t[1]*pl.bn
			out = append(out, full[base:base+cols]...)
		}
	}
	return out
}

func (pl *gemmPlan) tileList() ([][2]int, int, int) {
	var t [][2]int
	for i := 0; i < pl.nrb; i++ {
		for j := 0; j < pl.ncb; j++ {
			t = append(t, [2]int{i, j})
		}
	}
	return t, pl.nrb, pl.ncb
}

// gemmSampled is what a sampled run computes of its tiles (by tile).
type gemmSampled struct {
	tiles      [][2]int
	got, hgemm [][]float32 // golden model; hgemm baseline (nil without baselines)
	cpu        [][]float32 // CPU FP32 baseline (nil without baselines)
	ref        [][]float64 // FP64 reference
}

// startBeside computes a sampled run's tiles beside the simulation.
func (j *gemmJob) startBeside(model cube.Model, stop *atomic.Bool) {
	if j.pl.p.Numerics == NumericsSampled && j.side == nil {
		j.side = goBeside(func() error { return j.sampleTiles(model, stop) })
	}
}

// sampleTiles computes SampleTiles random output tiles with the golden
// model (which the tests prove bit-identical to the simulated datapath),
// their FP64 reference and, with baselines, the plain FP16 GEMM's and the
// CPU FP32 SGEMM's, into j.smp.
func (j *gemmJob) sampleTiles(model cube.Model, stop *atomic.Bool) error {
	pl, p := j.pl, &j.pl.p
	all, _, _ := pl.tileList()
	rng := NewRand(p.Inputs.Seed, 99)
	perm := rng.Perm(len(all))
	n := min(p.SampleTiles, len(all))
	idx := perm[:n]
	sort.Ints(idx)
	s := &gemmSampled{tiles: make([][2]int, n), got: make([][]float32, n), ref: make([][]float64, n)}
	for i, k := range idx {
		s.tiles[i] = all[k]
	}
	ops := pl.operands(j.a, j.b, s.tiles)
	var hpl *gemmPlan
	var hops *goldenOperands
	if *p.Baselines || j.cpuTiles {
		s.cpu = make([][]float32, n)
	}
	if *p.Baselines {
		if pl.hgemmBaseline() {
			// The plain FP16 GEMM on the same inputs, tiling and numerics.
			hp := *p
			hp.Kind = "hgemm"
			var err error
			if hpl, err = newGEMMPlan(j.file, hp, gemmVariant{}, pl.mach); err != nil {
				return err
			}
			hops = hpl.operands(j.a, j.b, s.tiles)
			s.hgemm = make([][]float32, n)
		}
	}
	// stopped is asked between a tile's parts too (its golden model, FP64
	// reference and baselines: a second or more each at k = 2048 on the
	// 910B3's FP32 cube).
	stopped := func() bool { return stop != nil && stop.Load() }
	err := eachTile(n, stop, func(i int) error {
		t := s.tiles[i]
		rows, cols := pl.rows(t[0]), pl.cols(t[1])
		var err error
		if s.got[i], err = pl.goldenTile(model, ops, t[0], t[1]); err != nil {
			return err
		}
		if stopped() {
			return errStopped
		}
		s.ref[i] = referenceTile(j.a, j.b, p.K, p.N, t[0]*pl.bm, rows, t[1]*pl.bn, cols)
		if hpl != nil {
			if stopped() {
				return errStopped
			}
			if s.hgemm[i], err = hpl.goldenTile(model, hops, t[0], t[1]); err != nil {
				return err
			}
		}
		if s.cpu != nil && stopped() {
			return errStopped
		}
		if s.cpu != nil {
			// gonum's float32 GEMM on the tile's row and column panels.
			ap := j.a[t[0]*pl.bm*p.K : (t[0]*pl.bm+rows)*p.K]
			bp := make([]float32, p.K*cols)
			for k := 0; k < p.K; k++ {
				copy(bp[k*cols:(k+1)*cols], j.b[k*p.N+t[1]*pl.bn:])
			}
			s.cpu[i] = accuracy.CPUSGEMM(rows, p.K, cols, ap, bp)
		}
		return nil
	})
	j.smp = s
	return err
}

// finishSampled reports the error of the sampled tiles (computed beside the
// simulation, or now).
func (j *gemmJob) finishSampled(chip *arch.Chip, rep *report.Report) error {
	pl, p := j.pl, &j.pl.p
	var err error
	if j.side != nil {
		err = j.side.wait()
	} else {
		err = j.sampleTiles(chip.Cube(), nil)
	}
	if err != nil {
		return err
	}
	s := j.smp
	ref, got := slices.Concat(s.ref...), slices.Concat(s.got...)
	e := errReport(accuracy.Compare32(ref, got), true)
	rep.Error = &e
	all, _, _ := pl.tileList()
	rep.Notes = append(rep.Notes, fmt.Sprintf("numerics sampled: %d of %d output tiles (%d×%d) computed bit-accurately by the golden model", len(s.tiles), len(all), pl.bm, pl.bn))
	if *p.Baselines {
		rep.Baselines = map[string]report.ErrorReport{}
		if s.hgemm != nil {
			rep.Baselines["hgemm"] = errReport(accuracy.Compare32(ref, slices.Concat(s.hgemm...)), true)
		}
		rep.Baselines["cpu_sgemm_fp32"] = errReport(accuracy.Compare32(ref, slices.Concat(s.cpu...)), true)
	}
	return nil
}

// errReport is the report's error section of m (sampled: from sampled
// tiles), its zero-reference counts included — every kind's, DaVinci's,
// igemm's and ozaki's too.
func errReport(m accuracy.Metrics, sampled bool) report.ErrorReport {
	return report.ErrorReport{Reference: "fp64 (gonum)", RelFro: m.RelFro, MaxRel: m.MaxRel, MRED: m.MRED, MaxErr: m.MaxErr,
		Bits: m.Bits, Elements: int64(m.N), Sampled: sampled, NonFinite: int64(m.NonFinite),
		ZeroRef: int64(m.ZeroRef), ZeroRefDiffers: int64(m.ZeroRefDiffers)}
}
