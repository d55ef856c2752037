package programs

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/dma"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// lu-fused on GPU machines (nvidia-sm, amd-cu): the same HPL-MxP program as
// on DaVinci (lu.go) — blocked right-looking LU without pivoting, FP16
// GEMMs with FP32 accumulation, TRSM as GEMM with the diagonal block's
// inverses, look-ahead, multi-iteration fusion of the far trailing matrix,
// FP64 refinement on the host — with every GEMM a grid of CTAs on the
// matrix units (the GPU GEMM generator of gpu_gemm.go with lu-fused's
// epilogues) and the kernels in one stream: they run one after the other,
// the host's work (diagonal factorization, transfers, launches) overlaps
// them. The diagonal blocks are factored and inverted on the host (diag:
// host, the default) or timed on the GPU's CUDA cores (diag: gpu: kernels
// timed only, values as the host computes them). See docs/lu-fused.md,
// "On GPUs".

// luGPUJob runs lu-fused on a GPU: luJob's host code, GM layout and
// refinement, with GPU kernels.
type luGPUJob struct {
	luJob // its runContext is the job's: the refinement and Finish's golden model read it
	tg    *gpuTarget
	tile  gpuTile // the GEMM kernels' CTA tile (one for all of them)
	diag  string  // host | gpu
	infos []string
}

// luGPUKeys are lu-fused's keys that only mean something on DaVinci.
func luGPUKeys(file string, p *LUParams) error {
	switch {
	case p.NFusion != 0:
		return keyError(file, "n_fusion", "applies to davinci machines (the AI cores of the fusion zone); on a GPU every kernel has the whole GPU, one after the other in one stream")
	}
	return nil
}

func buildLUGPU(f *File, m *machines.Machine, o Options) (Job, error) {
	p := LUParams{NB: DefaultNB}
	if err := f.Decode(&p, o); err != nil {
		return nil, err
	}
	if o.Fidelity != "" {
		p.Fidelity = o.Fidelity // --fidelity wins over the file's
	}
	if err := p.checkOneChip(f.Path, m); err != nil {
		return nil, err
	}
	o.applyLU(f, &p)
	j, err := planLUGPU(f, p, m)
	if err != nil {
		return nil, err
	}
	j.hooks = o.run
	if j.p.Numerics != NumericsOff {
		j.mat = newLUMatrix(j.p.N, j.p.Seed)
	}
	return j, nil
}

// planLUGPU is buildLUGPU's plan of lu-fused with parameters p (decoded,
// the run's options applied) on GPU machine m: the kernels' tile and the
// matrices' layout, no matrix (also the run's estimate's, luGPUKernels).
func planLUGPU(f *File, p LUParams, m *machines.Machine) (*luGPUJob, error) {
	if err := luGPUKeys(f.Path, &p); err != nil {
		return nil, err
	}
	p.defaults()
	if p.Diag == "" {
		p.Diag = "host"
	}
	bad := f.badKey
	if p.Diag != "host" && p.Diag != "gpu" {
		return nil, bad("diag", "must be host or gpu (got %q)", p.Diag)
	}
	if p.NFused == -1 {
		return nil, bad("n_fused", "−1 (the most that fit L1) applies to davinci machines; give n_fused ≥ 1")
	}
	if p.NB <= 0 || p.NB%16 != 0 {
		return nil, bad("nb", "must be a positive multiple of 16 (got %d)", p.NB)
	}
	p.unusedNotes(f)
	// The CTA tile: the library's default for a GEMM whose epilogue reads
	// C (the trailing update), or tiling.bm/bn/bk; one tile for every
	// kernel so that TRSM and updates share the k order.
	// Keys given replace the default tile's (its stages and warps stay).
	// One CTA per tile (cta_group 1): the kernels join parts of any shape.
	probe, err := newGPUGEMMPlan(f.Path, GEMMParams{Kind: "lu-fused", M: p.NB, N: p.NB, K: p.NB, Tiling: Tiling{CTAGroup: 1}, anyShape: true}, m, fp.FP16, gpuShape{readsC: true})
	if err != nil {
		return nil, err
	}
	if tl := p.Tiling; tl != (LUTiling{}) {
		d := probe.t
		tt := Tiling{BM: d.bm, BN: d.bn, BK: d.bk, Stages: d.stages, Warps: d.warps, CTAGroup: 1}
		if tl.BM != 0 {
			tt.BM = tl.BM
		}
		if tl.BN != 0 {
			tt.BN = tl.BN
		}
		if tl.BK != 0 {
			tt.BK = tl.BK
		}
		if probe, err = newGPUGEMMPlan(f.Path, GEMMParams{Kind: "lu-fused", M: p.NB, N: p.NB, K: p.NB, Tiling: tt}, m, fp.FP16, gpuShape{readsC: true}); err != nil {
			return nil, err
		}
	}
	if probe.lane != gpu.LaneMatrix {
		return nil, bad("kind", "lu-fused needs FP16 %s on %s", probe.tg.units, m.Name)
	}
	t := probe.t
	p.Tiling = LUTiling{BM: t.bm, BN: t.bn, BK: t.bk}
	if p.NB%t.bk != 0 {
		return nil, bad("tiling.bk", "the k-step %d must divide nb = %d", t.bk, p.NB)
	}
	// validate's tiling rule (multiples of 16 dividing nb) is DaVinci's; on
	// a GPU bm and bn may exceed nb (edge tiles are masked).
	chk := p
	chk.Tiling = LUTiling{BM: 16, BN: 16, BK: 16}
	if chk.NFused > 1 {
		chk.NFusion = 1 // the fusion zone has the whole GPU
	}
	if err := chk.validate(f.Path, m); err != nil {
		return nil, err
	}
	if !m.HasHost() {
		return nil, fmt.Errorf("%s: machine %s has no host section: lu-fused needs a host CPU and link (see a100, h100-sxm)", f.Path, m.Name)
	}
	pl := &luPlan{p: p, mach: m, n: p.N, nb: p.NB, nbk: p.N / p.NB, bm: p.NB, bn: p.NB, bk: t.bk, F: p.NFused, gpu: true, tb: 4}
	if p.Trailing == "fp16" {
		pl.tb = 2
	}
	pl.placeMatrices()
	if pl.gmEnd > int64(m.GM.Capacity) {
		return nil, bad("n", "the matrices need %d bytes of GM; machine %s has %d", pl.gmEnd, m.Name, int64(m.GM.Capacity))
	}
	j := &luGPUJob{luJob: luJob{file: f.Path, pl: pl, p: p, s: 1}, tg: probe.tg, tile: t, diag: p.Diag}
	j.luJob.gpu = j
	return j, nil
}

// Program is empty: the host launches every kernel grid.
func (j *luGPUJob) Program() isa.Program {
	return isa.Program{Name: "lu-fused", Generated: true}
}

// Prepare writes A to GM (full numerics) and attaches the host program
// (the golden factors are computed beside the run: luJob.startBeside).
func (j *luGPUJob) Prepare(chip *arch.Chip) error {
	j.chip = chip
	if err := j.mat.fill(j.runCtx()); err != nil {
		return err
	}
	if j.p.Numerics == NumericsFull {
		if err := writeLUMatrix(chip, j.mat, j.pl.a, j.pl.n, j.pl.tb); err != nil {
			return err
		}
	}
	h, err := chip.NewHost()
	if err != nil {
		return err
	}
	j.host = h
	j.buildGPUHost(h)
	chip.AttachHost(h)
	return nil
}

// Epilogues of the GPU GEMM kernels.
const (
	luGPUSub   = iota // C (trailing, GM, fp32 or fp16) = C − alpha·acc, in FP32
	luGPUStore        // out (FP16, GM) = FP16(acc), RNE, saturating
)

// part returns one GEMM of a kernel: C (M×N at c, ldc elements a row) =
// epilogue(A (M×K FP16 at a, lda) · B (K×N FP16 at b, ldb)).
func (j *luGPUJob) part(M, N, K int, a, lda, b, ldb, c, ldc int64, epi int) *gpuGEMMPlan {
	t := j.tile
	sh := gpuShape{readsC: true} // every kernel has the update's resources
	pl, err := newGPUGEMMPlan(j.file, GEMMParams{Kind: "lu-fused", M: M, N: N, K: K,
		Tiling: Tiling{BM: t.bm, BN: t.bn, BK: t.bk, Stages: t.stages, Warps: t.warps}}, j.pl.mach, fp.FP16, sh)
	if err != nil {
		panic(fmt.Sprintf("lu-fused: a GEMM part of the resolved tile does not plan: %v", err)) // the probe planned the same tile
	}
	pl.gmA, pl.lda, pl.gmB, pl.ldb, pl.gmC, pl.ldc = a, lda, b, ldb, c, ldc
	tb := int64(j.pl.tb)
	switch epi {
	case luGPUStore:
		pl.epi = func(e *emitter, bi, bj int, src isa.Buffer) {
			st := gpu.StoreAccumulators(pl.gmC+(int64(bi*pl.t.bm)*pl.ldc+int64(bj*pl.t.bn))*2, pl.accAt(0), pl.rows(bi), pl.cols(bj),
				pl.ldc*2, fp.FP32, fp.FP16, fp.RNE, true)
			st.Src.Buf = src
			e.emit(st)
		}
	case luGPUSub:
		// alpha = 1/s: the scale is fixed by the host at iteration 0, before
		// any update's CTA stream is generated.
		pl.epi = func(e *emitter, bi, bj int, src isa.Buffer) { luSubEpilogue(pl, e, bi, bj, src, tb, 1/float64(j.s)) }
	}
	return pl
}

// luSubEpilogue ends tile (bi, bj) of a trailing update: the accumulators
// scaled by −alpha (exact: a power of two), C's tile read a band of
// cSliceRows rows at a time through shared memory (free after the k-loop)
// into FP32 registers (FP16 C loaded and widened), added, and the sum stored
// in the trailing precision (RNE) — CUTLASS's linear-combination epilogue
// with beta = 1 in FP32.
func luSubEpilogue(pl *gpuGEMMPlan, e *emitter, bi, bj int, src isa.Buffer, tb int64, alpha float64) {
	t := pl.t
	mm, nn := pl.rows(bi), pl.cols(bj)
	off := pl.gmC + (int64(bi*t.bm)*pl.ldc+int64(bj*t.bn))*tb
	n := int(dma.FractalBytes(mm, nn, fp.FP32) / 4)
	ready := pl.lane
	if pl.tmem() {
		ready = gpu.LaneLoad
	}
	e.setFlag(ready, gpu.LaneVector, 2)
	e.waitFlag(ready, gpu.LaneVector, 2)
	// The vector work computes the valid mm×nn part and is timed over
	// the whole warp tiles, as the MMAs: every thread works on its whole
	// accumulator fragment; the loads and the store are masked.
	sc := gpu.Scale(pl.accAt(0), pl.accAt(0), n, -alpha)
	sc.Dst.Buf, sc.Src.Buf, sc.Src1.Buf = src, src, src
	e.emit(gpu.WithWarpTiles(sc, t.bm, t.bn))
	// The bands go through shared memory at 0. The multistage and
	// shared-operand pipelines order the copy lane after the k-loop's last
	// shared-memory reads (their drained tokens); the register-staged one
	// does not (its copy lane waits for the last LDS write only), so there
	// the first band's copy waits for the vector units, which waited for
	// the MMAs.
	staged := pl.t.regStaged
	if staged {
		e.setFlag(gpu.LaneVector, gpu.LaneCopy, 3)
	}
	band := dma.FractalBytes(cSliceRows, nn, fp.FP32)
	rf16 := pl.rfC + dma.FractalBytes(cSliceRows, t.bn, fp.FP32) // FP16 C band (fp16 trailing)
	cf := fp.FP32
	if tb == 2 {
		cf = fp.FP16
	}
	for r := 0; r < mm; r += cSliceRows {
		rows := min(cSliceRows, mm-r)
		if r > 0 || staged {
			e.waitFlag(gpu.LaneVector, gpu.LaneCopy, 3)
		}
		e.emit(gpu.CopyToShared(0, off+int64(r)*pl.ldc*tb, rows, int64(nn)*tb, int64(nn)*tb, pl.ldc*tb))
		e.setFlag(gpu.LaneCopy, gpu.LaneLoad, 0)
		e.waitFlag(gpu.LaneCopy, gpu.LaneLoad, 0)
		cn := int(dma.FractalBytes(rows, nn, fp.FP32) / 4)
		if tb == 2 {
			e.emit(gpu.LoadMatrix(rf16, 0, rows, nn, int64(nn)*2, cf, false))
		} else {
			e.emit(gpu.LoadMatrix(pl.rfC, 0, rows, nn, int64(nn)*4, cf, false))
		}
		e.setFlag(gpu.LaneLoad, gpu.LaneVector, 0)
		e.waitFlag(gpu.LaneLoad, gpu.LaneVector, 0)
		whole := cSliceRows // the rows the threads compute: the last valid band's, those below it too
		if r+cSliceRows >= mm {
			whole = max(t.bm-r, cSliceRows)
		}
		if tb == 2 {
			e.emit(gpu.WithWarpTiles(gpu.Convert(pl.rfC, rf16, cn, fp.FP16, fp.FP32, fp.RNE, false), whole, t.bn))
		}
		at := pl.accAt(0) + int64(r/cSliceRows)*band
		v := gpu.Elementwise(isa.VAdd, at, at, pl.rfC, cn, fp.FP32)
		v.Dst.Buf, v.Src.Buf = src, src
		e.emit(gpu.WithWarpTiles(v, whole, t.bn))
		if r+cSliceRows < mm {
			e.setFlag(gpu.LaneVector, gpu.LaneCopy, 3)
		}
	}
	e.setFlag(gpu.LaneVector, gpu.LaneStore, 0)
	e.waitFlag(gpu.LaneVector, gpu.LaneStore, 0)
	st := gpu.StoreAccumulators(off, pl.accAt(0), mm, nn, pl.ldc*tb, fp.FP32, cf, fp.RNE, false)
	st.Src.Buf = src
	e.emit(st)
}

// luGrid joins GEMM parts (same tile) into one kernel grid: CTAs of the
// first part, then the second's …
func luGrid(name string, parts []*gpuGEMMPlan) isa.Grid {
	gs := make([]isa.Grid, len(parts))
	for x, p := range parts {
		gs[x] = p.grid()
	}
	return groupedGrid(name, gs)
}

// updateGrid is the trailing update of band z by the terms of iterations
// [i0, i1): one GEMM part per block rectangle of the band.
func (j *luGPUJob) updateGrid(name string, z band, i0, i1 int) (isa.Grid, bool) {
	pl := j.pl
	n, nb := int64(pl.n), int64(pl.nb)
	var parts []*gpuGEMMPlan
	kc := int64(i0) * nb
	for _, r := range z.rects(pl.nbk) {
		r0, c0 := int64(r[0])*nb, int64(r[2])*nb
		parts = append(parts, j.part((r[1]-r[0])*pl.nb, (r[3]-r[2])*pl.nb, (i1-i0)*pl.nb,
			pl.lh+(r0*n+kc)*2, n, pl.uh+(kc*n+c0)*2, n, pl.a+(r0*n+c0)*int64(pl.tb), n, luGPUSub))
	}
	if len(parts) == 0 {
		return isa.Grid{}, false
	}
	return luGrid(name, parts), true
}

// trsmGrid is TRSM as GEMM of iteration i: Lh_ji = FP16(A_ji · s·U_ii⁻¹)
// (rows below the diagonal block) and Uh_il = FP16(L_ii⁻¹ · A_il) (columns
// right of it), both parts in one kernel.
func (j *luGPUJob) trsmGrid(i int) isa.Grid {
	pl := j.pl
	n, nb := int64(pl.n), int64(pl.nb)
	rest := pl.n - (i+1)*pl.nb
	a, lda := pl.panelA(i, (i+1)*pl.nb)
	b, ldb := pl.panelB(i, 0, (i+1)*pl.nb)
	par := i % 2
	left := j.part(rest, pl.nb, pl.nb, a, lda/2, pl.uinv[par], nb, pl.lh+(int64(i+1)*nb*n+int64(i)*nb)*2, n, luGPUStore)
	right := j.part(pl.nb, rest, pl.nb, pl.linv[par], nb, b, ldb/2, pl.uh+(int64(i)*nb*n+int64(i+1)*nb)*2, n, luGPUStore)
	return luGrid(fmt.Sprintf("trsm%d", i), []*gpuGEMMPlan{left, right})
}

// cvtGrid converts iteration i's column and row panels of an FP32 trailing
// matrix to FP16 (RNE, saturating) for TRSM: per CTA a chunk of up to 32
// rows × nb columns, GM → shared memory → FP32 fragments → stored as FP16.
func (j *luGPUJob) cvtGrid(i int) isa.Grid {
	pl := j.pl
	n, nb := int64(pl.n), int64(pl.nb)
	const rowsPer = 32
	type chunk struct {
		src, dst, ss, ds int64
		rows             int
	}
	var cs []chunk
	for r := (i + 1) * pl.nb; r < pl.n; r += rowsPer {
		cs = append(cs, chunk{src: pl.a + (int64(r)*n+int64(i)*nb)*4, dst: pl.pc + int64(r)*nb*2, ss: n * 4, ds: nb * 2, rows: min(rowsPer, pl.n-r)})
	}
	for l := i + 1; l < pl.nbk; l++ {
		for r := 0; r < pl.nb; r += rowsPer {
			row := int64(i)*nb + int64(r)
			cs = append(cs, chunk{src: pl.a + (row*n+int64(l)*nb)*4, dst: pl.pr + (int64(r)*n+int64(l)*nb)*2, ss: n * 4, ds: n * 2, rows: min(rowsPer, pl.nb-r)})
		}
	}
	warps := 4
	threads := j.tg.threads(warps)
	regs := dma.FractalBytes(rowsPer, pl.nb, fp.FP32)/4 + 32*threads
	regs = (regs + threads - 1) / threads * threads
	return isa.Grid{Name: fmt.Sprintf("cvt%d", i), CTAs: len(cs),
		Resources: isa.Resources{SharedBytes: rowsPer * nb * 4, Registers: regs, Warps: warps},
		CTA: func(k int) isa.Stream {
			c := cs[k]
			return func(yield func(isa.Instr) bool) {
				e := newEmitter(yield, pl.mach)
				e.emit(gpu.CopyToShared(0, c.src, c.rows, nb*4, nb*4, c.ss))
				e.setFlag(gpu.LaneCopy, gpu.LaneLoad, 0)
				e.waitFlag(gpu.LaneCopy, gpu.LaneLoad, 0)
				e.emit(gpu.LoadMatrix(0, 0, c.rows, pl.nb, nb*4, fp.FP32, false))
				e.setFlag(gpu.LaneLoad, gpu.LaneStore, 0)
				e.waitFlag(gpu.LaneLoad, gpu.LaneStore, 0)
				e.emit(gpu.StoreAccumulators(c.dst, 0, c.rows, pl.nb, c.ds, fp.FP32, fp.FP16, fp.RNE, true))
			}
		}}
}

// diagGrids are the diagonal block's factorization and inverses timed on
// the CUDA cores (diag: gpu), timing only: getrf on one CTA (the block in
// shared memory chunks, nb dependent rank-1 steps of element-wise FMAs, the
// factors written to GM), then trtri on 2·nb/32 CTAs (each 32 columns of
// U⁻¹ or L⁻¹: nb dependent steps, the FP16 result stored). The values are
// the host's (luHostDiag), written to GM by the host program: the
// element-wise LU is not expressed as vector instructions.
func (j *luGPUJob) diagGrids(i int) []isa.Grid {
	pl := j.pl
	n, nb := int64(pl.n), int64(pl.nb)
	tb := int64(pl.tb)
	warps := 8
	threads := j.tg.threads(warps)
	chunkRows := int64(32)
	smem := chunkRows * nb * 4
	regs := (nb*nb/threads + 64) * threads // the block spread over the threads' registers
	regs = min(regs, j.tg.registers/4/threads*threads, int64(j.tg.maxRegsPerThread)*threads)
	res := isa.Resources{SharedBytes: smem, Registers: regs, Warps: warps}
	src := pl.a + (int64(i)*nb*n+int64(i)*nb)*tb
	getrf := isa.Grid{Name: fmt.Sprintf("getrf%d", i), CTAs: 1, Resources: res, TimingOnly: true,
		CTA: func(int) isa.Stream {
			return func(yield func(isa.Instr) bool) {
				e := newEmitter(yield, pl.mach)
				for r := int64(0); r < nb; r += chunkRows {
					e.emit(gpu.CopyToShared(0, src+r*n*tb, int(min(chunkRows, nb-r)), nb*tb, nb*tb, n*tb))
				}
				e.setFlag(gpu.LaneCopy, gpu.LaneVector, 0)
				e.waitFlag(gpu.LaneCopy, gpu.LaneVector, 0)
				for k := 0; k < pl.nb-1; k++ {
					m := pl.nb - k - 1
					e.emit(gpu.Elementwise(isa.VMul, 0, 0, 0, m, fp.FP32))   // the column scaled by 1/u_kk
					e.emit(gpu.Elementwise(isa.VAdd, 0, 0, 0, m*m, fp.FP32)) // rank-1 update (FMAs)
				}
				e.setFlag(gpu.LaneVector, gpu.LaneCopy, 0)
				e.waitFlag(gpu.LaneVector, gpu.LaneCopy, 0)
				for r := int64(0); r < nb; r += chunkRows {
					e.emit(gpu.StoreToShared(0, 0, int(min(chunkRows, nb-r)), nb*4, nb*4, nb*4)) // factors to the store path
				}
			}
		}}
	// The factors stay in L2 (nb² FP32): each trtri CTA reads its
	// triangle's 32 columns.
	cols := 32
	per := pl.nb / cols
	trtri := isa.Grid{Name: fmt.Sprintf("trtri%d", i), CTAs: 2 * per, Resources: res, TimingOnly: true,
		CTA: func(c int) isa.Stream {
			dst := pl.uinv[i%2]
			if c >= per {
				dst = pl.linv[i%2]
			}
			c0 := int64(c%per) * int64(cols)
			return func(yield func(isa.Instr) bool) {
				e := newEmitter(yield, pl.mach)
				e.emit(gpu.CopyToShared(0, src+c0*tb, pl.nb, int64(cols)*tb, int64(cols)*tb, n*tb))
				e.setFlag(gpu.LaneCopy, gpu.LaneVector, 0)
				e.waitFlag(gpu.LaneCopy, gpu.LaneVector, 0)
				for k := 0; k < pl.nb; k++ {
					e.emit(gpu.Elementwise(isa.VAdd, 0, 0, 0, cols*max(pl.nb-k-1, 1)/2+1, fp.FP32)) // one substitution step of 32 columns
				}
				e.setFlag(gpu.LaneVector, gpu.LaneStore, 0)
				e.waitFlag(gpu.LaneVector, gpu.LaneStore, 0)
				e.emit(gpu.StoreAccumulators(dst+c0*2, 0, pl.nb, cols, nb*2, fp.FP32, fp.FP16, fp.RNE, true))
			}
		}}
	return []isa.Grid{getrf, trtri}
}

// luGPUHost is what buildGPUHost appends the host program to: the chip's
// host (arch.Host), or what records the grids it launches
// (luGPUKernels).
type luGPUHost interface {
	LaunchGrid(name, zone string, g isa.Grid, after ...*arch.Kernel) *arch.Kernel
	Wait(stage string, ks ...*arch.Kernel)
	Call(stage string, fn func() error)
	Transfer(stage string, bytes int64, fn func() error)
	Compute(stage string, flops float64, bytes int64, fp64 bool, cores int, fn func() error)
}

// buildGPUHost appends the host program: the DaVinci schedule (lu.go
// buildHost) with every kernel a grid in the GPU's one stream.
func (j *luGPUJob) buildGPUHost(h luGPUHost) {
	pl, p := j.pl, j.p
	nb, nbk, F := pl.nb, pl.nbk, pl.F
	full := p.Numerics == NumericsFull
	la := *p.LookAhead
	j.diags = make([]*luDiag, nbk)
	j.iterAt = make([]sim.Time, nbk+1)
	now := func() sim.Time { return j.chip.Engine().Now() }
	sync := func(k *arch.Kernel) {
		if !la && k != nil {
			h.Wait("wait", k)
		}
	}
	launch := func(name, zone string, g isa.Grid, flops float64, after ...*arch.Kernel) *arch.Kernel {
		k := h.LaunchGrid(name, zone, g, after...)
		k.Flops = flops
		return k
	}
	launchUpdate := func(name, zone string, z band, i0, i1 int) *arch.Kernel {
		if z.empty(nbk) {
			return nil
		}
		g, ok := j.updateGrid(name, z, i0, i1)
		if !ok {
			return nil
		}
		return launch(name, zone, g, pl.bandFlops(z, (i1-i0)*nb))
	}
	diagBytes := int64(nb) * int64(nb)
	for k0 := 0; k0 < nbk; k0 += F {
		k1 := min(k0+F, nbk)
		k2 := min(k1+F, nbk)
		for i := k0; i < k1; i++ {
			h.Call("iteration", func() error { j.iterAt[i] = now(); return nil })
			if pl.tb == 4 && i < nbk-1 {
				sync(launch(fmt.Sprintf("cvt%d", i), "trsm", j.cvtGrid(i), 0))
			}
			var rd, fac, wr func() error
			last := luFactorOnly(i, nbk) // no inverses: lu.go buildHost
			if full {
				rd, fac = j.readDiag(i), j.factor(i)
				if !last {
					wr = j.writeInv(i)
				}
			}
			if j.diag == "host" {
				h.Transfer("d2h", diagBytes*int64(pl.tb), rd)
				fl, by := luDiagWork(nb, i, nbk)
				h.Compute("diag", fl, by, false, 0, fac)
				if !last {
					h.Transfer("h2d", 2*diagBytes*2, wr)
				}
			} else {
				// The block is final (the host waited for the kernel that
				// updated it last): its values are computed now, the
				// kernels that stand for the work are timed only.
				if full {
					h.Call("diag-values", func() error {
						for _, f := range []func() error{rd, fac, wr} {
							if f == nil {
								continue
							}
							if err := f(); err != nil {
								return err
							}
						}
						return nil
					})
				}
				// getrf (the LU), then trtri (the inverses) but for the
				// last block.
				gs := j.diagGrids(i)
				dk := launch(gs[0].Name, "diag", gs[0], luFactorFlops(float64(nb)))
				if last {
					h.Wait("wait", dk)
				} else {
					sync(dk)
					dk = launch(gs[1].Name, "diag", gs[1], luFactorFlops(float64(nb)))
				}
				sync(dk)
			}
			if last {
				break
			}
			trsm := launch(fmt.Sprintf("trsm%d", i), "trsm", j.trsmGrid(i), 2*2*float64(nb)*float64(nb)*float64(pl.n-(i+1)*nb))
			sync(trsm)
			if i+1 < k1 {
				p1 := launchUpdate(fmt.Sprintf("p1-%d", i), "priority1", band{i + 1, i + 2}, i, i+1)
				p2 := launchUpdate(fmt.Sprintf("p2-%d", i), "priority2", band{i + 2, k1}, i, i+1)
				h.Wait("wait", p1)
				sync(p2)
				continue
			}
			nb1 := launchUpdate(fmt.Sprintf("p1-%d", i), "priority1", band{k1, k1 + 1}, k0, k1)
			nb2 := launchUpdate(fmt.Sprintf("p2-%d", i), "priority2", band{k1 + 1, k2}, k0, k1)
			z := launchUpdate(fmt.Sprintf("fusion%d", i), "fusion", band{k2, nbk}, k0, k1)
			h.Wait("wait", nb1)
			sync(nb2)
			sync(z)
		}
	}
	if h, ok := h.(*arch.Host); ok {
		j.appendFinal(h)
	}
}

// tiling is the CTA tile of the GEMM kernels, as the program section
// reports it.
func (j *luGPUJob) tiling() map[string]int {
	t := j.tile
	return t.report()
}
