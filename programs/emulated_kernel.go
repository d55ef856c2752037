package programs

import (
	"math"

	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/dma"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// The GPU GEMM generator's hooks for emulated GEMMs (kind emulated-gemm):
// a kernel may stage several pieces of A and of B per k-step (hi, lo …,
// each from its own matrix in global memory), run a list of MMAs over
// them into several accumulators, and end with an epilogue that combines
// the accumulators. A plain GEMM is the case of one piece each, one MMA
// and one accumulator (pl.ops == nil), and its instruction stream is
// unchanged by these hooks.

// gpuShape is what sizes a kernel beyond its tile: the A and B pieces
// staged per k-step, the accumulators, and the temporary accumulators of
// groups accumulated outside the matrix units.
type gpuShape struct {
	a, b, groups, temps int
	// readsC: the epilogue reads C (beta = 1) in slices of cSliceRows
	// rows into registers.
	readsC bool
	// fused: the kernel reads FP32 tiles of A and B and splits them into
	// the pieces itself (scheme split: fused; register staging).
	fused bool
}

// cSliceRows is the rows of C a beta = 1 epilogue reads at a time: one
// band of the FP32 fractal accumulator layout, contiguous in it.
const cSliceRows = 16

// norm fills the zero shape's counts: one piece each, one accumulator.
func (sh gpuShape) norm() gpuShape {
	sh.a, sh.b, sh.groups = max(sh.a, 1), max(sh.b, 1), max(sh.groups, 1)
	return sh
}

// accs is the number of accumulator tiles a block holds.
func (sh gpuShape) accs() int { return sh.groups + sh.temps }

// gpuProduct is one MMA of a k-step: A piece a times B piece b into
// accumulator acc; first marks the first product into acc in the k-step.
type gpuProduct struct {
	a, b, acc int
	first     bool
}

// gpuAcc is an accumulator of an emulated kernel.
type gpuAcc struct {
	// outside: every k-step's products start from zero in temporary
	// accumulator temp and are added to this one in FP32 on the vector
	// units (Ootomo's hh).
	outside bool
	temp    int
	// weight: the epilogue scales the accumulator by 2^-weight.
	weight int
}

// gpuOperands are the pieces, products and epilogue of an emulated kernel.
type gpuOperands struct {
	name     string
	gmA, gmB []int64 // global addresses of the A and B pieces
	mmas     []gpuProduct
	accs     []gpuAcc
	// The epilogue, in FP32 RNE on the vector units: every accumulator
	// scaled by its weight, then summed into accumulator 0 in order
	// (correctionsFirst: accumulators 2.. into 1 before 1 is scaled, then
	// 1 into 0); with readC, C's tile is read and added (after scaling it
	// by 2^-scaleC). Accumulator 0 is stored as C.
	correctionsFirst bool
	readC            bool
	scaleC           int
	// split, with a fused split: the scheme whose pieces the kernel makes
	// from the FP32 A and B at gmA32 and gmB32 (every k-step, on the
	// vector units); aPieces and bPieces are the scheme's piece index of
	// each staged piece.
	split            *schemePlan
	gmA32, gmB32     int64
	aPieces, bPieces []int
}

// name is the kernel's grid name.
func (pl *gpuGEMMPlan) name() string {
	if pl.ops != nil && pl.ops.name != "" {
		return pl.ops.name
	}
	return pl.p.Kind
}

// stage returns the shared-memory addresses of stage s's first A and
// first B piece (the others follow, aStage and bStage apart).
func (pl *gpuGEMMPlan) stage(s int) (a, b int64) {
	base := int64(s) * (int64(pl.sh.a)*pl.aStage + int64(pl.sh.b)*pl.bStage)
	return base, base + int64(pl.sh.a)*pl.aStage
}

// gmAOf and gmBOf are the global addresses of A piece x and B piece x.
func (pl *gpuGEMMPlan) gmAOf(x int) int64 {
	if pl.ops == nil {
		return pl.gmA
	}
	return pl.ops.gmA[x]
}

func (pl *gpuGEMMPlan) gmBOf(x int) int64 {
	if pl.ops == nil {
		return pl.gmB
	}
	return pl.ops.gmB[x]
}

// fragAOf and fragBOf are the registers of A (B) piece x in fragment
// buffer f.
func (pl *gpuGEMMPlan) fragAOf(f, x int) int64 {
	return pl.rfA + int64(f*pl.sh.a+x)*pl.fragA
}

func (pl *gpuGEMMPlan) fragBOf(f, x int) int64 {
	return pl.rfB + int64(f*pl.sh.b+x)*pl.fragB
}

// accAt is the address of accumulator tile i.
func (pl *gpuGEMMPlan) accAt(i int) int64 {
	return pl.rfAcc + int64(i)*dma.FractalBytes(pl.t.bm, pl.t.bn, pl.out)
}

// operand returns where a piece of a k-step is read: address, row stride
// (shared-memory operands) and buffer.
type operand func(x int) (addr, stride int64, buf isa.Buffer)

// products emits k-step kt's MMAs (mm×kk×nn) reading the A and B pieces
// where opA and opB say, into accumulators in buffer acc; accumulators
// accumulated outside get their k-step's sum added on the vector units.
func (pl *gpuGEMMPlan) products(e *emitter, kt, mm, kk, nn int, opA, opB operand, acc isa.Buffer) {
	mmas := []gpuProduct{{first: true}}
	if pl.ops != nil {
		mmas = pl.ops.mmas
	}
	t := pl.t
	for _, p := range mmas {
		dst, init := pl.accAt(p.acc), kt == 0 && p.first
		var out *gpuAcc
		if pl.ops != nil && pl.ops.accs[p.acc].outside {
			out = &pl.ops.accs[p.acc]
			dst, init = pl.accAt(pl.sh.groups+out.temp), p.first
			if p.first {
				e.waitFlag(gpu.LaneVector, pl.lane, 1+out.temp) // the temporary is free
			}
		}
		a, as, ab := opA(p.a)
		b, bs, bb := opB(p.b)
		var run isa.Instr
		if ab == gpu.BufShared && bb == gpu.BufShared {
			run = gpu.MMAShared(dst, a, as, b, bs, mm, kk, nn, pl.in, pl.out, init)
		} else {
			run = gpu.MMA(dst, a, b, mm, kk, nn, pl.in, pl.out, init)
		}
		run.Pipe = pl.lane
		run.Dst.Buf = acc
		e.emit(gpu.WithWarpTiles(run, t.bm, t.bn))
	}
	if pl.ops == nil {
		return
	}
	// The additions compute the valid mm×nn part; they are timed over
	// the whole warp tiles, as the MMAs: every thread adds its whole
	// accumulator fragment, in or out of bounds.
	n := int(dma.FractalBytes(mm, nn, fp.FP32) / 4)
	for g, a := range pl.ops.accs {
		if !a.outside {
			continue
		}
		e.setFlag(pl.lane, gpu.LaneVector, 1+a.temp)
		e.waitFlag(pl.lane, gpu.LaneVector, 1+a.temp)
		// The first k-step's sum is the accumulator (a copy, keeping the
		// sign of a zero as the golden model does); later ones are added.
		v := gpu.Elementwise(isa.VAdd, pl.accAt(g), pl.accAt(g), pl.accAt(pl.sh.groups+a.temp), n, fp.FP32)
		if kt == 0 {
			v = gpu.Scale(pl.accAt(g), pl.accAt(pl.sh.groups+a.temp), n, 1)
		}
		v.Dst.Buf, v.Src.Buf, v.Src1.Buf = acc, acc, acc
		e.emit(gpu.WithWarpTiles(v, t.bm, t.bn))
		e.setFlag(gpu.LaneVector, pl.lane, 1+a.temp)
	}
}

// fragProducts is products reading every piece from register fragment
// buffer f.
func (pl *gpuGEMMPlan) fragProducts(e *emitter, kt, mm, kk, nn, f int) {
	pl.products(e, kt, mm, kk, nn, func(x int) (int64, int64, isa.Buffer) { return pl.fragAOf(f, x), 0, gpu.BufRegs },
		func(x int) (int64, int64, isa.Buffer) { return pl.fragBOf(f, x), 0, gpu.BufRegs }, pl.tg.accBuf)
}

// outsideStart frees the temporary accumulators (before the k-loop).
func (pl *gpuGEMMPlan) outsideStart(e *emitter) {
	for i := 0; i < pl.sh.temps; i++ {
		e.setFlag(gpu.LaneVector, pl.lane, 1+i)
	}
}

// outsideEnd consumes their tokens (after the k-loop), leaving the flags
// at zero and the vector units' additions done before the epilogue.
func (pl *gpuGEMMPlan) outsideEnd(e *emitter) {
	for i := 0; i < pl.sh.temps; i++ {
		e.waitFlag(gpu.LaneVector, pl.lane, 1+i)
	}
}

// combineOps returns the epilogue's vector operations on the accumulators
// (n FP32 elements each, in buffer buf) that leave the combination in
// accumulator 0, timed over the whole warp tiles (as the MMAs: the
// threads combine their whole fragments; the store is masked).
func (pl *gpuGEMMPlan) combineOps(n int, buf isa.Buffer) []isa.Instr {
	ops := pl.ops
	var out []isa.Instr
	emit := func(in isa.Instr) {
		in.Dst.Buf, in.Src.Buf, in.Src1.Buf = buf, buf, buf
		out = append(out, gpu.WithWarpTiles(in, pl.t.bm, pl.t.bn))
	}
	weights := make([]int, len(ops.accs))
	for g, a := range ops.accs {
		weights[g] = a.weight
	}
	for _, st := range epilogueSteps(weights, ops.correctionsFirst) {
		if st.add {
			emit(gpu.Elementwise(isa.VAdd, pl.accAt(st.dst), pl.accAt(st.dst), pl.accAt(st.src), n, fp.FP32))
		} else {
			emit(gpu.Scale(pl.accAt(st.dst), pl.accAt(st.dst), n, math.Ldexp(1, -st.shift)))
		}
	}
	return out
}

// emulatedEpilogue ends block (bi, bj) of an emulated kernel once its
// accumulators are final and readable in src: their combination on the
// vector units (adding C's tile, read in slices through shared memory
// into registers, when readC) stored as C.
func (pl *gpuGEMMPlan) emulatedEpilogue(e *emitter, bi, bj int, src isa.Buffer) {
	t, p, ops := pl.t, &pl.p, pl.ops
	mm, nn := pl.rows(bi), pl.cols(bj)
	off := (int64(bi*t.bm)*int64(p.N) + int64(bj*t.bn)) * 4
	n := int(dma.FractalBytes(mm, nn, fp.FP32) / 4)
	vec := pl.combineOps(n, src)
	if len(vec) > 0 || ops.readC {
		ready := pl.lane // the MMAs are done
		if pl.tmem() {
			ready = gpu.LaneLoad // and the accumulators read from tensor memory
		}
		e.setFlag(ready, gpu.LaneVector, 2)
		e.waitFlag(ready, gpu.LaneVector, 2)
		for _, in := range vec {
			e.emit(in)
		}
	}
	if ops.readC {
		// beta = 1: C's tile, a band of cSliceRows rows at a time, through
		// shared memory (free now) into FP32 fractal registers, added to
		// the band of the accumulator (bands are contiguous in it). The
		// loads read the valid mm×nn part (masked); the scaling and the
		// additions are timed over the whole warp tiles, the band's rows
		// across t.bn columns and, in the last valid band, the rows below
		// it too.
		band := dma.FractalBytes(cSliceRows, nn, fp.FP32)
		// Shared memory is free once the load lane's last read of it is
		// done: a register-staged kernel's copy lane does not wait for
		// that (its stages are refilled by the store lane), so without
		// this its first band overwrote the last k-step's tiles while
		// they were being read (shared-memory pipelines already drained
		// it: their copy lane waits for every stage to be freed).
		e.setFlag(gpu.LaneLoad, gpu.LaneCopy, 0)
		e.waitFlag(gpu.LaneLoad, gpu.LaneCopy, 0)
		for r := 0; r < mm; r += cSliceRows {
			rows := min(cSliceRows, mm-r)
			if r > 0 {
				e.waitFlag(gpu.LaneVector, gpu.LaneCopy, 3) // the previous band is consumed
			}
			e.emit(gpu.CopyToShared(0, pl.gmC+off+int64(r)*int64(p.N)*4, rows, int64(nn)*4, int64(nn)*4, int64(p.N)*4))
			e.setFlag(gpu.LaneCopy, gpu.LaneLoad, 0)
			e.waitFlag(gpu.LaneCopy, gpu.LaneLoad, 0)
			e.emit(gpu.LoadMatrix(pl.rfC, 0, rows, nn, int64(nn)*4, fp.FP32, false))
			e.setFlag(gpu.LaneLoad, gpu.LaneVector, 0)
			e.waitFlag(gpu.LaneLoad, gpu.LaneVector, 0)
			cn := int(dma.FractalBytes(rows, nn, fp.FP32) / 4)
			whole := cSliceRows // the rows the threads compute
			if r+cSliceRows >= mm {
				whole = max(t.bm-r, cSliceRows)
			}
			if ops.scaleC != 0 {
				e.emit(gpu.WithWarpTiles(gpu.Scale(pl.rfC, pl.rfC, cn, math.Ldexp(1, -ops.scaleC)), whole, t.bn))
			}
			at := pl.accAt(0) + int64(r/cSliceRows)*band
			v := gpu.Elementwise(isa.VAdd, at, at, pl.rfC, cn, fp.FP32)
			v.Dst.Buf, v.Src.Buf = src, src
			e.emit(gpu.WithWarpTiles(v, whole, t.bn))
			if r+cSliceRows < mm {
				e.setFlag(gpu.LaneVector, gpu.LaneCopy, 3)
			}
		}
	}
	if len(vec) > 0 || ops.readC {
		e.setFlag(gpu.LaneVector, gpu.LaneStore, 0)
		e.waitFlag(gpu.LaneVector, gpu.LaneStore, 0)
	}
	st := gpu.StoreAccumulators(pl.gmC+off, pl.accAt(0), mm, nn, int64(p.N)*4, pl.out, pl.out, fp.RNE, false)
	st.Src.Buf = src
	e.emit(st)
}
