package programs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
)

// The FP32 emulation schemes on a DaVinci machine (the 910A's FP16 cube,
// the 910B3's FP16 and BF16 cube), generated as SGEMM-cube's pipe programs
// are (gemm_stream.go), the phases separated by sync_all as kernel
// launches are:
//
//  1. the split on the vector unit (schemePlan.split's FP32 operations over
//     UB chunks of A and B), each piece a product reads to GM;
//  2. the product passes on the cube — fused: one pass staging every
//     piece, an L0C accumulator per group; termwise: one pass per group —
//     SGEMM-cube Algorithm 1's tiles, L1 groups of resident A blocks and
//     double-buffered L0/L0C/UB. An inside accumulator chains its products
//     through the MMADs over an L1 group; the groups' partial sums are
//     added in FP32 on the vector unit (the 910A's L0C holds a tile over
//     one L1 group only). An outside one (Ootomo) takes each k-block's
//     products from zero in an L0C slot of its own and is added in FP32 on
//     the vector unit while the cube runs the next k-block;
//  3. the epilogue pass on the vector unit, over chunks of C: the groups'
//     FP32 planes combined as the scheme says (none when one unscaled
//     accumulator is C itself: hgemm, Markidis, Ape FP32-M).
//
// The golden model (gemmPlan.goldenTile) does the same arithmetic on the
// host: kind sgemm-cube and hgemm build from the sgemm-cube and hgemm
// presets, so scheme sgemm-cube runs SGEMM-cube's own program.

// daVinciTileSizes are the square output tiles (bm = bn) tried, largest
// first, for a scheme on a DaVinci machine when the program gives no
// tiling: SGEMM-cube's 176 (its Sec. 5.1.1) down (daVinciSchemePlan).
var daVinciTileSizes = []int{176, 160, 144, 128, 112, 96, 80, 64, 48, 32, 16}

// daVinciSchemeJob is an FP32 emulation scheme on a DaVinci machine: the
// GEMM job of its plan, whose report it completes with the scheme and
// LE-GEMM's error metrics against a CPU FP32 SGEMM.
type daVinciSchemeJob struct {
	*gemmJob
	histBins int
	auto     *autoChoice // scheme: auto's choice (report program.auto)
}

// buildEmulatedDaVinci builds kind emulated-gemm's FP32 schemes on a
// DaVinci machine m.
func buildEmulatedDaVinci(f *File, m *machines.Machine, o Options, ep EmulatedParams, bad func(key, format string, a ...any) error) (Job, error) {
	p := ep.GEMMParams
	o.applyGEMM(f, &p)
	if ep.Scheme == "auto" {
		return buildEmulatedAuto(f, m, o, ep, daVinciAuto{m}, bad)
	}
	if ep.TargetBits != 0 {
		return nil, bad("target_bits", "applies to scheme: auto")
	}
	sp, err := decodeScheme(ep.Scheme, bad)
	if err != nil {
		return nil, err
	}
	sp.k = p.K // (its accumulators' bound: checkRange, reportRange)
	for _, d := range []struct {
		key string
		set bool
	}{{"accumulation", p.Accumulation != ""}, {"split", p.Split != (Split{})}} {
		if d.set {
			return nil, bad(d.key, "does not apply to emulated-gemm: the scheme says how inputs split and where products accumulate (SGEMM-cube's elementwise accumulation: kind sgemm-cube)")
		}
	}
	if sp.s.Split == "fused" {
		return nil, bad("scheme.split", "fused is generated for GPU machines (a register-staged product kernel splits its FP32 tiles); on DaVinci the split is a pass on the vector unit (split: pass)")
	}
	if ok, detail := (daVinciAuto{m}).cubeMode(sp.format); !ok {
		// (Worded as on GPUs: "bf16 pieces need BF16 tensor cores;
		// machine t4 (nvidia-sm) has none".)
		return nil, limitedBy(bad("scheme.pieces[0].format", "%s pieces need a %s cube; machine %s (%s) has none (%s)",
			sp.s.Pieces[0].Format, strings.ToUpper(sp.format.String()), m.Name, m.Kind, detail), matrixFrom(m, sp.format)...)
	}
	if ep.HistogramBins < 0 || ep.HistogramBins > 1000 {
		return nil, bad("histogram_bins", "must be in 0..1000 (0: no histogram) (got %d)", ep.HistogramBins)
	}
	if ep.HistogramBins > 0 && p.Numerics == NumericsOff {
		return nil, bad("histogram_bins", "the error histogram needs the simulated C: numerics full or sampled (this run is timing only)")
	}
	v := gemmVariant{scheme: sp}
	t := &p.Tiling
	given := t.BM != 0 || t.BK != 0 || t.BN != 0
	if given { // dimensions not given: bk 64, a square tile
		t.BK = cmp.Or(t.BK, 64)
		t.BM = cmp.Or(t.BM, t.BN, 128)
		t.BN = cmp.Or(t.BN, t.BM)
	}
	p.defaults(v)
	if err := p.validate(f.Path, m, v); err != nil {
		return nil, err
	}
	if p.Inputs.A == "" {
		if err := sp.checkRange(p.Inputs.rangeMax(), p.Inputs.rangeExponent(), p.Inputs.rangeKey(), bad); err != nil {
			return nil, err
		}
	}
	// (The host memory: validate checked the run's estimate, its data's
	// bytes per element the scheme's on DaVinci, schemePerElem.)
	pl, err := daVinciSchemePlan(f.Path, p, given, v, m)
	if err != nil {
		return nil, err
	}
	j, err := newGEMMJob(f, pl, o.stop()) // (the inputs drawn hearing the run's context)
	if errors.Is(err, errStopped) {
		return nil, o.stoppedBuilding(f.Path, "drawing the inputs")
	}
	if err != nil {
		return nil, err
	}
	j.cpuTiles = true // program.error_vs_cpu_sgemm, with or without baselines
	return &daVinciSchemeJob{gemmJob: j, histBins: ep.HistogramBins}, nil
}

// daVinciSchemePlan plans the scheme with the program's tiling (given), or
// (none given) the largest square tile of daVinciTileSizes with bk = 64
// whose L0A/L0B buffers ping-pong (with buffering: double: the cube does
// not wait for every k-block's loads); when that tile is under 128 (many
// pieces: B is read again for every row block of a small tile) the
// largest with bk = 32 if larger; without ping-pong, the largest that
// fits. L0C need not ping-pong: a tile leaves once per L1 group of
// k-blocks. (Measured at 8192³: Markidis on the 910A 73.2 TFLOP/s at
// 128×64×128 against 69.7 at 176×32×176; Ape FP32-B on the 910B3 37.4 at
// 144×32×144 against 25.6 at 80×64×80.)
func daVinciSchemePlan(file string, p GEMMParams, given bool, v gemmVariant, m *machines.Machine) (*gemmPlan, error) {
	if given {
		return newGEMMPlan(file, p, v, m)
	}
	var fits *gemmPlan
	var err error
	var from []string // the buffers the tiles tried do not fit (KeyError.From)
	largest := func(bk int) (*gemmPlan, error) {
		for _, t := range daVinciTileSizes {
			p.Tiling.BM, p.Tiling.BK, p.Tiling.BN = t, bk, t
			var pl *gemmPlan
			if pl, err = newGEMMPlan(file, p, v, m); err != nil {
				if !errors.As(err, new(tileFitError)) { // not the tile's size: the tile search cannot help
					return nil, err
				}
				if ke := new(KeyError); errors.As(err, &ke) {
					for _, k := range ke.From {
						if !slices.Contains(from, k) {
							from = append(from, k)
						}
					}
				}
				continue
			}
			if p.Buffering != "double" || pl.nL0 == 2 {
				return pl, nil
			}
			if fits == nil || pl.bm > fits.bm {
				fits = pl
			}
		}
		return nil, nil
	}
	best, e := largest(64)
	if e != nil {
		return nil, e
	}
	if best == nil || best.bm < 128 {
		alt, e := largest(32)
		if e != nil {
			return nil, e
		}
		if alt != nil && (best == nil || alt.bm > best.bm) {
			best = alt
		}
	}
	if best == nil {
		best = fits
	}
	if best == nil { // (a refusal of the tiling the program leaves out: the one it would get)
		smallest := err.Error()
		if ke := new(KeyError); errors.As(err, &ke) {
			smallest = ke.Msg
		}
		return nil, limitedBy(keyError(file, "tiling", "no square tile of %d..%d with bk = 64 or 32 fits machine %s's buffers (the smallest, bm = bn = %d and bk = %d: %s)",
			daVinciTileSizes[0], daVinciTileSizes[len(daVinciTileSizes)-1], m.Name, p.Tiling.BM, p.Tiling.BK, smallest), from...)
	}
	return best, nil
}

// Finish fills the GEMM's report, then names the scheme and adds the
// errors against a CPU FP32 SGEMM (numerics on).
func (j *daVinciSchemeJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	if err := j.gemmJob.Finish(chip, st, rep); err != nil {
		return err
	}
	pl, p, sp := j.pl, &j.pl.p, j.pl.sp
	name := sp.name()
	var kernels []map[string]any
	for _, ps := range pl.passes {
		kernels = append(kernels, map[string]any{"name": p.Kind + "/" + ps.name, "tiles": pl.nrb * pl.ncb})
	}
	prog := rep.Program
	delete(prog, "split")
	delete(prog, "accumulation")
	prog["kind"] = p.Kind
	prog["scheme"] = name
	prog["pieces"], prog["groups"] = sp.reportPieces(), sp.s.Groups
	prog["kernels"], prog["epilogue"], prog["split"] = sp.s.Kernels, sp.s.Epilogue, sp.s.Split
	prog["product_kernels"] = kernels
	reportAuto(rep, j.auto)
	rep.Notes = append(rep.Notes, "scheme "+sp.describe())
	if !sp.reportRange(rep, j.a, j.b, flushingUnits(chip.M, "cube"), j.stop()) {
		return j.stoppedNumerics()
	}
	epilogue := "none: the one accumulator is C"
	if len(pl.planes) > 0 {
		epilogue = fmt.Sprintf("a pass over %d FP32 planes on the vector unit", len(pl.planes))
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("%s on %s: split on the vector unit (%s an element), product passes: %d on the %s cube, epilogue %s",
		name, chip.M.Name, sp.splitOpsText(), len(pl.passes), strings.ToUpper(pl.in.String()), epilogue))
	switch {
	case p.Numerics == NumericsFull && j.c != nil:
		cpu := cpuSGEMMUntil(p.M, p.K, p.N, j.a, j.b, j.stop())
		if cpu == nil {
			return j.stoppedNumerics()
		}
		j.cpuErrors(rep, cpu, j.c)
	case p.Numerics == NumericsSampled && j.smp != nil && j.smp.cpu != nil:
		j.cpuErrors(rep, slices.Concat(j.smp.cpu...), slices.Concat(j.smp.got...))
	}
	return nil
}

// cpuErrors adds LE-GEMM's metrics of got against the CPU FP32 SGEMM cpu
// (same elements) and, with histogram_bins, the error histogram.
func (j *daVinciSchemeJob) cpuErrors(rep *report.Report, cpu, got []float32) {
	rep.Program["error_vs_cpu_sgemm"] = accuracy.Compare32(accuracy.Widen(cpu), got)
	if j.histBins > 0 {
		rep.Program["error_histogram"] = errorHistogram(cpu, got, j.histBins)
	}
}

// daVinciAuto is autoMachine for DaVinci machines: FP16 and BF16 pieces on
// the cube modes the machine has, no kernel launches (the phases are
// separated by sync_all), native FP32 on an FP32 cube with its accuracy
// measured (the cube's FP32 numerics are modelled).
type daVinciAuto struct{ m *machines.Machine }

func (a daVinciAuto) unsupported(f fp.Format) string {
	if ok, detail := a.cubeMode(f); !ok {
		return fmt.Sprintf("no %s cube (%s)", strings.ToUpper(f.String()), detail) // as GPUs' "no BF16 tensor cores"
	}
	return ""
}

// cubeMode reports whether the machine's cube multiplies pieces of format
// f, and where it does not, why (the key that says so, or that the cube
// has no such mode).
func (a daVinciAuto) cubeMode(f fp.Format) (ok bool, why string) {
	cb := a.m.DaVinci().Cube
	switch f {
	case fp.FP16:
		ok = cb.KStepFP16 > 0
	case fp.BF16:
		ok = cb.KStepBF16 > 0
	default:
		return false, fmt.Sprintf("the DaVinci cube has no %s mode", strings.ToUpper(f.String()))
	}
	return ok, fmt.Sprintf("core.cube.kstep_%s = 0", f)
}

// fuses: DaVinci splits in a pass of its own.
func (a daVinciAuto) fuses() bool { return false }

func (a daVinciAuto) bound(sp *schemePlan, flops float64) float64 {
	peak, _ := a.m.Peak(strings.ToUpper(sp.format.String()))
	return float64(sp.products()) * flops / peak
}

func (a daVinciAuto) native(p GEMMParams, ep EmulatedParams, flops, fp32Bits, target float64, measure func(string) (float64, error)) (*autoCandidate, error) {
	c := &autoCandidate{name: "native", units: "FP32 cube"}
	peak, _ := a.m.Peak("FP32")
	switch {
	case a.m.DaVinci().Cube.KStepFP32 == 0 || peak <= 0:
		c.status, c.reason = "unsupported", fmt.Sprintf("no FP32 cube (machine %s: core.cube.kstep_fp32 = 0)", a.m.Name)
		return c, nil
	case ep.HistogramBins != 0:
		c.status, c.reason = "unsupported", "histogram_bins: native (kind sgemm's kernel) reports no error histogram"
		return c, nil
	}
	bits, err := measure("native")
	if err != nil {
		return nil, err
	}
	c.bits, c.measured, c.bound = bits, true, flops/peak
	c.status = "inaccurate"
	if meetsTarget(c.bits, target) {
		c.status = "accurate"
	}
	return c, nil
}

func (a daVinciAuto) build(f *File, o Options, ep EmulatedParams, auto *autoChoice, bad func(key, format string, a ...any) error) (Job, error) {
	j, err := buildEmulatedDaVinci(f, a.m, o, ep, bad)
	if err != nil {
		return nil, err
	}
	j.(*daVinciSchemeJob).auto = auto
	return j, nil
}

func (a daVinciAuto) describe() string { return fmt.Sprintf("machine %s (%s)", a.m.Name, a.m.Kind) }
