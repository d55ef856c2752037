package programs

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/cube"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/mem"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
)

func init() {
	register(&Kind{Name: "lu-fused", NoArrays: true, Params: reflect.TypeFor[LUParams](), Machines: []string{"davinci", "nvidia-sm", "amd-cu"}, Example: "lu-fused.yaml",
		Summary: "HPL-MxP: blocked LU without pivoting (FP16 cube GEMMs, host FP32 diagonal blocks, TRSM as GEMM, look-ahead, multi-iteration fusion) + FP64 refinement",
		Build:   buildLU, BuildCluster: buildLUCluster})
}

// luJob runs an lu-fused program: the host program (arch.Host) drives
// kernels on the chip; see docs/lu-fused.md for the schedule.
type luJob struct {
	runContext
	file string
	pl   *luPlan
	p    LUParams
	mat  *luMatrix // nil with numerics off

	// Host state filled while the program runs.
	s      float32 // L-panel scale (power of two), fixed at iteration 0
	diags  []*luDiag
	blk    []float32 // the diagonal block read back by the host
	host   *arch.Host
	chip   *arch.Chip
	iterAt []sim.Time // host time at the start of each iteration
	factAt sim.Time   // all factorization kernels done
	ref    *luRefineResult
	refErr error
	// golden factors (numerics sampled; full with check), computed beside
	// the run (startBeside, gw) and taken by goldenDone
	golden *luGolden
	gw     *luGoldenWork            // the golden model's computation beside the run
	hooks  *RunHooks                // the run's (its progress line, while the run waits for the model)
	gpu    *luGPUJob                // a GPU run: the job that embeds this one
	paths  map[*arch.Kernel]luPaths // GM bytes per path of each kernel (bounds)
	outs   []Output
}

func buildLU(f *File, m *machines.Machine, o Options) (Job, error) {
	if m.DaVinci() == nil {
		return buildLUGPU(f, m, o) // lu_gpu.go
	}
	p, err := decodeLU(f, m, o, true)
	if err != nil {
		return nil, err
	}
	if !m.HasHost() {
		return nil, fmt.Errorf("%s: machine %s has no host section: lu-fused needs a host CPU and link (see ascend-910a)", f.Path, m.Name)
	}
	pl, err := newLUPlan(f.Path, p, m)
	if err != nil {
		return nil, err
	}
	j := &luJob{file: f.Path, pl: pl, p: p, s: 1, hooks: o.run}
	if p.Numerics != NumericsOff {
		j.mat = newLUMatrix(p.N, p.Seed)
	}
	return j, nil
}

// decodeLU reads an lu-fused program for DaVinci machine m (one chip, or
// each NPU of a cluster when oneChip is false): decode, the run's
// overrides, defaults, tiling, n_fused from L1, validation.
func decodeLU(f *File, m *machines.Machine, o Options, oneChip bool) (LUParams, error) {
	p := LUParams{NB: DefaultNB} // before decoding: an explicit nb: 0 stays 0 and is refused
	if err := f.Decode(&p, o); err != nil {
		return p, err
	}
	o.applyLU(f, &p)
	if o.Fidelity != "" {
		p.Fidelity = o.Fidelity // --fidelity wins over the file's
	}
	if oneChip {
		if err := p.checkOneChip(f.Path, m); err != nil {
			return p, err
		}
	}
	p.defaults()
	p.chooseTiling(m)
	p.fusedFromL1(m)
	if err := p.validate(f.Path, m); err != nil {
		return p, err
	}
	p.unusedNotes(f)
	switch p.Diag {
	case "", "host":
	case "gpu":
		return p, f.badKey("diag", "%q applies to GPU machines (the CUDA cores); on davinci machines the hosts factor the diagonal blocks", p.Diag)
	default:
		return p, f.badKey("diag", "must be host (or gpu, on GPU machines); got %q", badinput.Clip(p.Diag, 80))
	}
	return p, nil
}

// Program returns an empty stream per core: the work is launched by the
// host program attached in Prepare (the report then covers every core).
func (j *luJob) Program() isa.Program {
	p := isa.Program{Name: "lu-fused", Cores: make([]isa.Stream, j.pl.mach.Cores), Generated: true}
	for c := range p.Cores {
		p.Cores[c] = func(func(isa.Instr) bool) {}
	}
	return p
}

// Mode is functional with full numerics.
func (j *luJob) Mode() arch.Mode { return modeFor(j.p.Numerics) }

// Prepare writes A to GM (full numerics), computes the golden factors and
// their refinement (sampled numerics), and attaches the host program.
// writeLUMatrix writes the n×n matrix to GM at addr in the trailing
// precision (tb = 4: FP32; 2: FP16, RNE, saturating).
func writeLUMatrix(chip *arch.Chip, mat *luMatrix, addr int64, n, tb int) error {
	gm := chip.GM()
	row := make([]float64, n)
	r32 := make([]float32, n)
	r16 := make([]uint16, n)
	for i := 0; i < n; i++ {
		mat.Row(i, row)
		for k, v := range row {
			r32[k] = float32(v)
		}
		if err := writeTrailingRow(gm, addr+int64(i)*int64(n)*int64(tb), r32, r16, tb); err != nil {
			return err
		}
	}
	return nil
}

// writeTrailingRow writes row r32 at GM address at in the trailing
// precision (tb = 4: FP32; 2: FP16, RNE, saturating, through r16).
func writeTrailingRow(gm *mem.GM, at int64, r32 []float32, r16 []uint16, tb int) error {
	if tb == 4 {
		return gm.WriteFloat32s(at, r32)
	}
	for k, v := range r32 {
		r16[k] = uint16(fp.FromFloat32(v, fp.FP16, luSat))
	}
	return gm.WriteUint16s(at, r16)
}

func (j *luJob) Prepare(chip *arch.Chip) error {
	j.chip = chip
	pl := j.pl
	if err := j.mat.fill(j.runCtx()); err != nil {
		return err
	}
	if j.p.Numerics == NumericsFull {
		if err := writeLUMatrix(chip, j.mat, pl.a, pl.n, pl.tb); err != nil {
			return err
		}
	}
	h, err := chip.NewHost()
	if err != nil {
		return err
	}
	j.host = h
	if err := j.buildHost(h); err != nil {
		return err
	}
	chip.AttachHost(h)
	return nil
}

// checkOneChip refuses the cluster-only keys (grid, fidelity) on a
// one-chip machine m (DaVinci or GPU; a DaVinci chip with a host runs
// fidelity isolated or sampled as a node of one NPU: Execute).
func (p *LUParams) checkOneChip(file string, m *machines.Machine) error {
	if p.Fidelity != "" && p.Fidelity != "full" {
		return keyError(file, "fidelity", "%q applies to lu-fused on NPUs: a cluster or node description, or one DaVinci chip with a host (run as a node of one NPU); machine %s is simulated in full", p.Fidelity, m.Name)
	}
	if p.N > MaxLUChipN {
		return keyError(file, "n", "at most %d on one chip (got %d)", MaxLUChipN, p.N)
	}
	if g := p.Grid; g != (LUGrid{}) && g != (LUGrid{P: 1, Q: 1}) {
		return keyError(file, "grid", "a %d × %d process grid needs a cluster or node description (-m cloudbrain2-node); machine %s is one chip (1 × 1)", g.P, g.Q, m.Name)
	}
	if p.Sampling.Windows < 0 {
		return keyError(file, "sampling.windows", "%d: must be ≥ 1", p.Sampling.Windows)
	}
	return nil
}

// bandFlops returns 2·nb²·K per block of band z.
func (pl *luPlan) bandFlops(z band, K int) float64 {
	blocks := 0
	for _, r := range z.rects(pl.nbk) {
		blocks += (r[1] - r[0]) * (r[3] - r[2])
	}
	return float64(blocks) * 2 * float64(pl.nb) * float64(pl.nb) * float64(K)
}

// buildHost appends the host program: per iteration the diagonal block
// goes to the host (FP32 LU and inverses) and back, the NPU converts the
// panels and runs TRSM as GEMM, then the trailing zones; see
// docs/lu-fused.md for the zones, look-ahead and fusion schedule. It
// stops where the run's context does, at an iteration's start: building
// a large n's program takes long (n = 2^18: ~40 s, deaf to a SIGINT).
func (j *luJob) buildHost(h *arch.Host) error {
	pl, p := j.pl, j.p
	nb, nbk, F := pl.nb, pl.nbk, pl.F
	full := p.Numerics == NumericsFull
	la := *p.LookAhead
	j.diags = make([]*luDiag, nbk)
	j.iterAt = make([]sim.Time, nbk+1)
	now := func() sim.Time { return j.chip.Engine().Now() }
	wait := func(k *arch.Kernel) { h.Wait("wait", k) } // (Wait skips nil)
	sync := func(k *arch.Kernel) {
		if !la {
			wait(k)
		}
	}
	launchUpdate := func(name, zone string, cores []int, z band, i0, i1 int, after ...*arch.Kernel) *arch.Kernel {
		if z.empty(nbk) {
			return nil
		}
		var g *luGEMM
		build := func() *luGEMM {
			if g == nil {
				g = pl.update(z, i0, i1, 1/float64(j.s))
			}
			return g
		}
		k := h.Launch(name, zone, cores, func(core int) isa.Stream {
			return pl.gemmStream(indexOf(cores, core), len(cores), build())
		}, after...)
		k.Flops = pl.bandFlops(z, (i1-i0)*nb)
		// The same work list as build's (the scale, fixed at iteration 0,
		// moves no bytes).
		j.setPaths(k, gemmPaths(pl, len(cores), pl.update(z, i0, i1, 1)))
		return k
	}
	diagBytes := int64(nb) * int64(nb)
	var prevZ *arch.Kernel
	for k0 := 0; k0 < nbk; k0 += F {
		k1 := min(k0+F, nbk)
		k2 := min(k1+F, nbk)
		for i := k0; i < k1; i++ {
			if err := stopped(j.runCtx(), "building the host program"); err != nil {
				return err
			}
			h.Call("iteration", func() error { j.iterAt[i] = now(); return nil })
			var cvt *arch.Kernel
			if pl.tb == 4 && i < nbk-1 {
				cvt = h.Launch(fmt.Sprintf("cvt%d", i), "trsm", pl.main, func(core int) isa.Stream {
					return pl.cvtStream(i, indexOf(pl.main, core), len(pl.main))
				})
				j.setPaths(cvt, cvtPaths(pl, i))
				sync(cvt)
			}
			var rd, fac, wr func() error
			if full {
				rd, fac, wr = j.readDiag(i), j.factor(i), j.writeInv(i)
			}
			h.Transfer("d2h", diagBytes*int64(pl.tb), rd)
			// LU of the block and its two triangular inverses, which go
			// back to the NPU; the last block's only LU (luFactorOnly).
			fl, by := luDiagWork(nb, i, nbk)
			h.Compute("diag", fl, by, false, 0, fac)
			if luFactorOnly(i, nbk) {
				break
			}
			h.Transfer("h2d", 2*diagBytes*2, wr)
			trsm := h.Launch(fmt.Sprintf("trsm%d", i), "trsm", pl.main, func(core int) isa.Stream {
				l, r := pl.trsm(i)
				return pl.gemmStream(indexOf(pl.main, core), len(pl.main), l, r)
			})
			trsm.Flops = 2 * 2 * float64(nb) * float64(nb) * float64(pl.n-(i+1)*nb)
			l, r := pl.trsm(i)
			j.setPaths(trsm, gemmPaths(pl, len(pl.main), l, r))
			sync(trsm)
			prevZ = luLaunchZones(pl, launchUpdate, wait, sync, i, k0, k1, k2, trsm, prevZ)
		}
	}
	j.appendFinal(h)
	return nil
}

// luUpdater launches the update of band z with the terms of iterations
// [i0, i1) on cores (nil when there is nothing to update).
type luUpdater func(name, zone string, cores []int, z band, i0, i1 int, after ...*arch.Kernel) *arch.Kernel

// luLaunchZones appends iteration i's trailing updates (window [k0, k1),
// the next window ending at k2): inside a window the next panel
// (priority 1, waited for: the next iteration needs it) and the rest of
// the window's band (priority 2), one rank-nb update each; at the
// window's last iteration the next window's band with the window's fused
// terms and the fusion zone (on the fusion cores, after the TRSM and the
// previous fusion kernel prevZ). It returns the fusion kernel now in
// flight. wait has the host wait for a kernel (nil: none); sync waits for
// one when look-ahead is off.
func luLaunchZones(pl *luPlan, launch luUpdater, wait, sync func(*arch.Kernel), i, k0, k1, k2 int, trsm, prevZ *arch.Kernel) *arch.Kernel {
	if i+1 < k1 {
		p1 := launch(fmt.Sprintf("p1-%d", i), "priority1", pl.main, band{i + 1, i + 2}, i, i+1)
		p2 := launch(fmt.Sprintf("p2-%d", i), "priority2", pl.main, band{i + 2, k1}, i, i+1)
		wait(p1)
		sync(p2)
		return prevZ
	}
	nb1 := launch(fmt.Sprintf("p1-%d", i), "priority1", pl.main, band{k1, k1 + 1}, k0, k1, prevZ)
	nb2 := launch(fmt.Sprintf("p2-%d", i), "priority2", pl.main, band{k1 + 1, k2}, k0, k1, prevZ)
	z := launch(fmt.Sprintf("fusion%d", i), "fusion", pl.fu, band{k2, pl.nbk}, k0, k1, trsm, prevZ)
	if z != nil {
		prevZ = z
	}
	wait(nb1)
	sync(nb2)
	sync(z)
	return prevZ
}

// appendFinal waits for every kernel, then copies the factors to the host
// and runs (and times) the refinement.
func (j *luJob) appendFinal(h *arch.Host) {
	pl, p := j.pl, j.p
	n2 := float64(pl.n) * float64(pl.n)
	h.Call("factorized", func() error {
		// All kernels are launched by now: wait for each.
		h.Wait("wait", h.Kernels()...)
		h.Call("factorized", func() error {
			j.factAt = j.chip.Engine().Now()
			j.iterAt[pl.nbk] = j.factAt
			h.Transfer("d2h-factors", int64(pl.n)*int64(pl.n)*2, nil)
			h.Call("refine", func() error {
				switch p.Numerics {
				case NumericsFull:
					f, err := j.readFactors()
					if err != nil {
						return err
					}
					j.ref, j.refErr = refine(j.runCtx(), j.mat, f, p.Refinement.Method, p.Refinement.Restart, p.Refinement.Tolerance, p.Refinement.MaxIterations)
				case NumericsSampled:
					if err := j.goldenDone(); err != nil { // (its refinement's steps are timed here)
						return err
					}
				}
				// x0 = (LU)⁻¹ b and its residual, then each step one LU
				// solve (forward and back: 2n² flops, reading the factors,
				// FP16 off the diagonal blocks: 2 bytes per entry) and one
				// product with A (2n² flops; A regenerated from the seed:
				// no bytes).
				h.Compute("refine", 4*n2, int64(n2)*2, true, 0, nil)
				for range luTimedSteps(p.Refinement, j.ref) {
					h.Compute("refine", 4*n2, int64(n2)*2, true, 0, nil)
				}
				return nil
			})
			return nil
		})
		return nil
	})
}

func indexOf(set []int, c int) int {
	for i, x := range set {
		if x == c {
			return i
		}
	}
	return -1
}

// readDiag returns the callback that reads block (i, i) from GM.
func (j *luJob) readDiag(i int) func() error {
	return func() error {
		pl := j.pl
		nb := pl.nb
		j.blk = make([]float32, nb*nb)
		gm := j.chip.GM()
		for r := 0; r < nb; r++ {
			addr := pl.a + (int64(i*nb+r)*int64(pl.n)+int64(i*nb))*int64(pl.tb)
			if pl.tb == 4 {
				if err := gm.ReadFloat32s(addr, j.blk[r*nb:(r+1)*nb]); err != nil {
					return err
				}
				continue
			}
			h := make([]uint16, nb)
			if err := gm.ReadUint16s(addr, h); err != nil {
				return err
			}
			for k, v := range h {
				j.blk[r*nb+k] = fp.F16ToF32(v)
			}
		}
		return nil
	}
}

// factor returns the callback that factors the block read by readDiag.
func (j *luJob) factor(i int) func() error {
	return func() error {
		d, err := luHostDiag(j.blk, j.pl.nb, i, j.pl.nbk, &j.s)
		if err != nil {
			return fmt.Errorf("iteration %d: %w", i, err)
		}
		j.diags[i] = d
		return nil
	}
}

// luHostDiag factors block i of nbk and, but for the last (luFactorOnly),
// computes its inverses; at i = 0 it fixes the L-panel scale *s.
func luHostDiag(blk []float32, nb, i, nbk int, s *float32) (*luDiag, error) {
	d, err := luFactorBlock(blk, nb)
	if err != nil {
		return nil, err
	}
	if i == 0 {
		*s = luScale(d.u, nb)
	}
	if !luFactorOnly(i, nbk) {
		d.invert(nb, *s)
	}
	return d, nil
}

// writeInv returns the callback that writes the FP16 inverses to GM.
func (j *luJob) writeInv(i int) func() error {
	return func() error {
		gm := j.chip.GM()
		d := j.diags[i]
		if err := gm.WriteUint16s(j.pl.uinv[i%2], d.uinv); err != nil {
			return err
		}
		return gm.WriteUint16s(j.pl.linv[i%2], d.linv)
	}
}

// readFactors assembles the factors from GM (Lh/s, Uh) and the host's
// diagonal blocks.
func (j *luJob) readFactors() (*luFactors, error) {
	lh, uh, err := j.readPanels()
	if err != nil {
		return nil, err
	}
	return assembleFactors(j.pl.n, j.pl.nb, lh, uh, j.diags, j.s), nil
}

// readPanels reads the FP16 factor panels Lh and Uh (n×n) from GM.
func (j *luJob) readPanels() (lh, uh []uint16, err error) {
	n := j.pl.n
	lh, uh = make([]uint16, n*n), make([]uint16, n*n)
	gm := j.chip.GM()
	if err := readResultUint16s(gm, j.pl.lh, lh); err != nil {
		return nil, nil, err
	}
	if err := readResultUint16s(gm, j.pl.uh, uh); err != nil {
		return nil, nil, err
	}
	return lh, uh, nil
}

// assembleFactors builds the combined LU array.
func assembleFactors(n, nb int, lh, uh []uint16, diags []*luDiag, s float32) *luFactors {
	f := &luFactors{n: n, lu: make([]float32, n*n)}
	inv := 1 / s
	for r := 0; r < n; r++ {
		bi := r / nb
		for c := 0; c < n; c++ {
			bj := c / nb
			var v float32
			switch {
			case bi == bj:
				d := diags[bi]
				k := (r%nb)*nb + c%nb
				if c < r {
					v = d.l[k]
				} else {
					v = d.u[k]
				}
			case bj < bi:
				v = fp.F16ToF32(lh[r*n+c]) * inv
			default:
				v = fp.F16ToF32(uh[r*n+c])
			}
			f.lu[r*n+c] = v
		}
	}
	return f
}

// Outputs returns nothing beyond report.json (the factors are n² values).
func (j *luJob) Outputs() []Output { return j.outs }

// Finish fills the report: time, HPL-MxP flops, the hplmxp section, and
// fails the run (exit 1) when refinement did not pass HPL-MxP's check
// (scaled residual below 16; a stricter tolerance not reached is
// reported, hplmxp.converged, not a failure) or the factors differ from
// the golden model (check: true).
func (j *luJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	pl, p := j.pl, j.p
	if p.Numerics == NumericsSampled {
		if err := j.goldenDone(); err != nil { // (the host's refinement waited for it already)
			return err
		}
	}
	n := float64(pl.n)
	total := j.host.Finish().Seconds()
	fact := j.factAt.Seconds()
	flops := float64(2.0/3*n*n*n) + float64(1.5*n*n)
	peak, _ := pl.mach.Peak("FP16")
	rep.Program = map[string]any{"kind": "lu-fused", "n": p.N, "nb": p.NB, "n_fused": p.NFused, "n_fusion": p.NFusion,
		"look_ahead": *p.LookAhead, "trailing": p.Trailing, "refinement": p.Refinement, "seed": p.Seed, "numerics": p.Numerics,
		"tiling": p.Tiling}
	conv := "HPL-MxP 2/3·n³ + 3/2·n² over the whole solve; peak = FP16 cube peak"
	if pl.gpu {
		// A GPU run (lu_gpu.go): no fusion-zone cores, its CTA tile.
		delete(rep.Program, "n_fusion")
		rep.Program["tiling"] = j.gpu.tiling()
		rep.Program["diag"] = p.Diag
		conv = "HPL-MxP 2/3·n³ + 3/2·n² over the whole solve; peak = dense FP16 tensor peak"
	}
	rep.Flops = &report.FlopsReport{Total: flops, PeakTFLOPS: peak / 1e12, Convention: conv}
	if total > 0 {
		rep.Flops.TFLOPS = flops / total / 1e12
		rep.Flops.PeakFraction = flops / total / peak
	}
	if rb := float64(st.GMReadBytes + st.GMWriteBytes); rb > 0 {
		rep.Memory.OperationalIntensity = st.MMADFlops / rb
	}
	sec := &report.HPLMxP{N: p.N, NB: p.NB, NFused: p.NFused, NFusion: p.NFusion, LookAhead: *p.LookAhead,
		TrailingPrecision: p.Trailing, FactorizationSeconds: fact, TotalSeconds: total,
		Flops: flops, TFLOPS: rep.Flops.TFLOPS, PeakFraction: rep.Flops.PeakFraction}
	switch {
	case p.Numerics == NumericsFull:
		sec.LPanelScale = ptr(j.s)
	case j.golden != nil:
		sec.LPanelScale = ptr(j.golden.s)
	}
	if fact > 0 {
		sec.FactorizationTFLOPS = luFactorFlops(n) / fact / 1e12
	}
	sec.Iterations, sec.Windows = luSamples(j.iterAt, pl.nbk, pl.F, n, float64(pl.nb), peak)
	zs := newLUZones()
	for _, k := range j.host.Kernels() {
		gm := k.GMBytes
		if pl.gpu {
			gm += float64(k.Traffic.GM()) // GPU kernels: the bytes their CTAs requested
		}
		z := zs.add(k, gm)
		if pl.gpu {
			continue // the DaVinci bounds (cube, GM paths) do not apply
		}
		if z.Bound == nil {
			z.Bound = &report.Bound{}
		}
		addBound(z.Bound, pl.bound(k.Flops, len(k.Cores), j.paths[k], k.Traffic))
	}
	sec.Zones = zs.finish()
	sec.HostStagesSeconds = map[string]float64{}
	for k, v := range j.host.StageTimes() {
		sec.HostStagesSeconds[k] = v.Seconds()
	}
	failure := setRefinement(sec, p, j.ref, j.refErr)
	if p.Numerics == NumericsFull && p.Check {
		if err := j.goldenDone(); err != nil {
			return err
		}
		mism, err := j.compareGolden(j.golden)
		if err != nil {
			return err
		}
		sec.GoldenMismatches = ptr(mism)
		if mism > 0 && failure == nil {
			failure = fmt.Errorf("%w: %d factor values differ from the golden model", ErrCheckFailed, mism)
		}
		if mism == 0 {
			rep.Notes = append(rep.Notes, luFactorsChecked)
		}
	}
	rep.HPLMxP = sec
	rep.Notes = append(rep.Notes, p.notes()...)
	if p.Sampling.Windows != 0 { // (as on a cluster at fidelity full: a study may sweep the fidelity)
		rep.Notes = append(rep.Notes, fmt.Sprintf("sampling.windows (%d) applies to fidelity sampled: not used on one chip simulated in full", p.Sampling.Windows))
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("lu-fused: trailing matrix in GM is %s; TFLOP/s by the HPL-MxP count over factorization + refinement", p.Trailing))
	if n := fp16DiagonalNote(p.Trailing, p.N); n != "" {
		rep.Notes = append(rep.Notes, n)
	}
	if j.ref != nil && p.Numerics == NumericsSampled {
		rep.Notes = append(rep.Notes, "numerics sampled: the factors refined, and so the scaled residual and passed, are the golden model's (the kernels were timed, not computed; at numerics full a check shows the simulated factors equal them bit for bit)")
	}
	rep.Notes = append(rep.Notes, luSummary(fact, sec.FactorizationTFLOPS, total, rep.Flops.TFLOPS, p.Refinement.Method, j.ref))
	return failure
}

// startBeside starts, beside the simulation, the work that depends on the
// inputs alone (besideRun): the golden factors where the run needs them —
// numerics sampled (the factors it refines, and so its refinement's timed
// steps) or full with check (compared with the simulated ones in Finish)
// — and, sampled, their refinement. They had run before the simulation
// (sampled) or after it (check), on the run's one goroutine: at n = 4096
// on the A100 the golden model is a fifth of a checked run's work.
func (j *luJob) startBeside(_ cube.Model, stop *atomic.Bool) {
	p, pl, mat := j.p, j.pl, j.mat
	if j.gw != nil || mat == nil || !(p.Numerics == NumericsSampled || p.Numerics == NumericsFull && p.Check) {
		return
	}
	var then func(ctx context.Context, w *luGoldenWork)
	if p.Numerics == NumericsSampled {
		then = func(ctx context.Context, w *luGoldenWork) {
			w.ref, w.refErr = refine(ctx, mat, w.golden.factors(pl), p.Refinement.Method, p.Refinement.Restart, p.Refinement.Tolerance, p.Refinement.MaxIterations)
		}
	}
	j.gw = goLUGolden(besideContext(j.runCtx(), stop), pl, mat, then)
}

// goldenDone waits for the work startBeside started (computing it now
// where the run started none) and takes its results: j.golden and, with
// numerics sampled, j.ref and j.refErr.
func (j *luJob) goldenDone() error {
	if j.golden != nil {
		return nil
	}
	if j.gw == nil {
		var stop atomic.Bool
		j.startBeside(cube.Model{}, &stop)
		if j.gw == nil {
			return nil // (nothing to compute)
		}
	}
	j.gw.alone.Store(true) // (the simulation waits for it, or is done: every CPU)
	j.showGolden()
	if err := j.gw.wait(); err != nil {
		return err
	}
	j.golden = j.gw.golden
	if j.p.Numerics == NumericsSampled {
		j.ref, j.refErr = j.gw.ref, j.gw.refErr
	}
	return nil
}

// goldenProgressEvery is how often a run waiting for its golden model
// shows its progress line.
var goldenProgressEvery = time.Second

// showGolden shows the run's progress line while it waits for the golden
// model (showGoldenWait).
func (j *luJob) showGolden() {
	if j.chip == nil {
		return
	}
	showGoldenWait(j.hooks, j.gw, j.pl.n, j.chip.Engine())
}

// showGoldenWait shows a run's progress line (RunHooks.Progress, where the
// run has one) while it waits for its golden model gw of an n × n LU,
// metering the model's flops against the LU's 2/3·n³ — the run stood still
// at its last line for as long as the model took (sampled n = 8192: half a
// minute; a cluster's check at n = 4096: most of the run). It returns once
// the model is done.
func showGoldenWait(h *RunHooks, gw *luGoldenWork, n int, eng *sim.Engine) {
	if h == nil || h.Progress == nil || h.Meter == nil || gw == nil || eng == nil {
		return
	}
	if gw.done() {
		return
	}
	nf := float64(n)
	all := 2.0 / 3 * nf * nf * nf
	h.Meter.watch("its flops (2/3·n³)", "flops", func() (float64, float64) { return float64(gw.flops.Load()), all })
	h.Meter.stage = "golden model"
	waitShowing(gw.side.done, goldenProgressEvery, func() { h.Progress(eng.Now(), eng.Events()) })
}

// waitShowing waits until done is closed, calling show every `every`
// meanwhile (nil show: none): a run's progress line while its engine
// waits for work done beside it (a golden model, kernels simulated
// alone).
func waitShowing[T any](done <-chan T, every time.Duration, show func()) {
	if show == nil {
		<-done
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			show()
		}
	}
}

// luSummary is the run's closing note: the factorization's and the whole
// solve's time and TFLOP/s, and the refinement's outcome where it was
// computed (ref not nil).
func luSummary(fact, factTFLOPS, total, tflops float64, method string, ref *luRefineResult) string {
	line := fmt.Sprintf("hplmxp: factorization %.4g s (%.2f TFLOP/s), total %.4g s (%.2f TFLOP/s)", fact, factTFLOPS, total, tflops)
	if ref != nil {
		line += fmt.Sprintf(", %s %d %s, scaled residual %.3g, passed %v (HPL-MxP: below %d)", method, ref.Iterations, plural(ref.Iterations, "iteration", "iterations"), ref.ScaledResidual, ref.Passed, luPassThreshold)
		if !ref.Converged {
			line += fmt.Sprintf("; tolerance %g not reached (stopped: %s)", ref.Tolerance, ref.StopReason)
		}
	}
	return line
}

// luFactorsChecked is the note of a check (check: true) that passed.
const luFactorsChecked = "check: the simulated L and U factors equal the golden model's bit for bit"

// luZones sums kernels into hplmxp's zones.
type luZones struct {
	zones          map[string]*report.HPLMxPZone
	l2Read, gmRead map[string]float64
}

func newLUZones() *luZones {
	return &luZones{zones: map[string]*report.HPLMxPZone{}, l2Read: map[string]float64{}, gmRead: map[string]float64{}}
}

// add counts kernel k (gm: its GM bytes) in its zone and returns the zone.
func (s *luZones) add(k *arch.Kernel, gm float64) *report.HPLMxPZone {
	z := s.zones[k.Zone]
	if z == nil {
		z = &report.HPLMxPZone{Cores: len(k.Cores)}
		s.zones[k.Zone] = z
	}
	z.Kernels++
	z.Seconds += (k.Finished - k.Started).Seconds()
	z.Flops += k.Flops
	z.GMBytes += gm
	z.HBMBytes += float64(k.Traffic.HBM())
	s.l2Read[k.Zone] += float64(k.Traffic.L2Read)
	s.gmRead[k.Zone] += float64(k.Traffic.GMRead)
	return z
}

// finish derives each zone's rates, intensities, L2 hit rate and bound
// efficiency, and returns the zones.
func (s *luZones) finish() map[string]*report.HPLMxPZone {
	for name, z := range s.zones {
		if z.Seconds > 0 {
			z.TFLOPS = z.Flops / z.Seconds / 1e12
		}
		if z.GMBytes > 0 {
			z.OperationalIntensity = z.Flops / z.GMBytes
		}
		if z.HBMBytes > 0 {
			z.OperationalIntensityHBM = z.Flops / z.HBMBytes
		}
		if rb := s.gmRead[name]; rb > 0 {
			z.L2HitRate = s.l2Read[name] / rb
		}
		if z.Bound != nil {
			finishBound(z.Bound, z.Flops, z.Seconds)
		}
	}
	return s.zones
}

// luFactorFlops is the flops HPL-MxP counts for the factorization of an
// n×n matrix, 2/3·n³ (the report's factorization TFLOP/s; the progress of
// a run on a node or cluster).
func luFactorFlops(n float64) float64 { return 2.0 / 3 * n * n * n }

// luIterationFlops is the flops HPL counts for the LU iteration leaving an
// m×m trailing matrix with blocks of nb: the trailing update 2m²·nb, the
// two panels' triangular solves nb²·m each and the diagonal block's
// 2/3·nb³ — summing to luFactorFlops over the iterations. (The kernels run
// each TRSM as a GEMM by the inverse, 2nb²·m: executed flops, not
// counted.)
func luIterationFlops(m, nb float64) float64 {
	return float64(2*m*m*nb) + float64(2*nb*nb*m) + float64(2.0/3*nb*nb*nb)
}

// luSamples returns the per-iteration samples (time, measured/theoretical
// performance against peak) of iterations starting at iterAt[i] (iterAt[nbk]:
// the factorization's end), and the same per fusion window of F
// iterations: with fusion the far trailing update of a window runs during
// the next one, so single iterations can show ratios above 1; windows
// average that out.
func luSamples(iterAt []sim.Time, nbk, F int, n, nb, peak float64) ([]report.HPLMxPIteration, []report.HPLMxPWindow) {
	var its []report.HPLMxPIteration
	for i := 0; i < nbk; i++ {
		dt := (iterAt[i+1] - iterAt[i]).Seconds()
		m := n - float64(float64(i+1)*nb)
		fl := luIterationFlops(m, nb)
		s := report.HPLMxPIteration{Iteration: i, StartSeconds: iterAt[i].Seconds(), Seconds: dt, Flops: fl}
		if dt > 0 {
			s.TFLOPS = ptr(fl / dt / 1e12)
			s.MeasuredOverTheoretical = ptr(fl / dt / peak)
		}
		its = append(its, s)
	}
	var ws []report.HPLMxPWindow
	for k0 := 0; k0 < nbk; k0 += F {
		k1 := min(k0+F, nbk)
		dt := (iterAt[k1] - iterAt[k0]).Seconds()
		fl := 0.0
		for i := k0; i < k1; i++ {
			fl += its[i].Flops
		}
		w := report.HPLMxPWindow{FirstIteration: k0, Iterations: k1 - k0, Seconds: dt, Flops: fl, StartSeconds: iterAt[k0].Seconds()}
		if end := iterAt[nbk].Seconds(); end > 0 {
			w.Progress = iterAt[k0].Seconds() / end
		}
		if dt > 0 {
			w.MeasuredOverTheoretical = ptr(fl / dt / peak)
		}
		ws = append(ws, w)
	}
	return its, ws
}

// setRefinement fills sec's refinement keys from ref (nil: timed only)
// and returns the check failure of a refinement that did not pass
// HPL-MxP's check (refErr; a stricter tolerance not reached is none).
func setRefinement(sec *report.HPLMxP, p LUParams, ref *luRefineResult, refErr error) error {
	if ref == nil {
		sec.Refinement.Timed = &report.HPLMxPRefinementTimed{Method: p.Refinement.Method, TimedIterations: p.Refinement.TimingIterations,
			TimedSteps: luTimedSteps(p.Refinement, nil), Note: "numerics off: refinement timed for timing_iterations iterations (timed_steps steps of one LU solve and one product with A), not computed"}
		return nil
	}
	sec.Refinement.Solved = &report.HPLMxPRefinementSolved{Method: p.Refinement.Method, Iterations: ref.Iterations,
		ScaledResidual: ref.ScaledResidual, Threshold: p.Refinement.Tolerance, History: ref.History, TimedSteps: ref.Steps,
		Converged: ptr(ref.Converged), StopReason: ptr(ref.StopReason)}
	sec.RefinementIterations = ptr(ref.Iterations)
	sec.ScaledResidual = ptr(ref.ScaledResidual)
	sec.Passed = ptr(ref.Passed)
	sec.Converged = ptr(ref.Converged)
	if refErr != nil {
		return fmt.Errorf("%w: %v", ErrCheckFailed, refErr)
	}
	return nil
}

// ptr returns a pointer to a copy of v (the report's optional keys).
func ptr[T any](v T) *T { return &v }

// compareGolden counts factor values (Lh, Uh below/right of the diagonal
// blocks, and the diagonal blocks) that differ from the golden run.
func (j *luJob) compareGolden(g *luGolden) (int, error) {
	lh, uh, err := j.readPanels()
	if err != nil {
		return 0, err
	}
	for i, d := range j.diags {
		if d == nil || g.diags[i] == nil {
			return 0, errors.New("missing diagonal block")
		}
	}
	return factorMismatches(j.pl.n, j.pl.nb, lh, uh, j.diags, g), nil
}
