package programs

import (
	"encoding/binary"
	"fmt"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
)

// daVinciInt8Tile is the default tiling of INT8 GEMMs on the DaVinci cube
// (igemm, and ozaki's slice GEMMs), chosen as an AscendC kernel writer
// would for 1-byte inputs and 4-byte (INT32) outputs on the 910A's buffers:
//   - L0A, L0B: bm·bk = bk·bn = 128·256 bytes = 32 KiB, half of each, so
//     both ping-pong;
//   - L0C: bm·bn·4 = 64 KiB, two tiles in flight of 256 KiB;
//   - UB: a result and a partial tile per buffer (2 × 64 KiB), two
//     buffers = the whole 256 KiB;
//   - L1: two B blocks (64 KiB) and nfused = 30 resident A blocks;
//   - one k-block is 8·8·8 = 512 cube cycles (16×32×16 per cycle) against
//     32 KiB of B from GM: 64 B/cycle per core, under the 73 B/cycle GM→L1
//     path, with the cores of a wave sharing B blocks through the L2 as
//     SGEMM-cube's do.
//
// bk is a multiple of 32 (the INT8 cube's k step and fractal width).
var daVinciInt8Tile = Tiling{BM: 128, BK: 256, BN: 128}

// newDaVinciInt8Plan plans INT8 cube GEMMs with igemm's tiles and pipeline
// (newGEMMPlan's int8 variant: INT32 products accumulated in L0C, tiles out
// through UB adding the previous L1 groups' partial sums) over operands
// the caller placed in GM: one pass per GEMM, reading A (rows of lda
// elements) and B (rows of n) from the pass's aMats and bMats and writing
// its INT32 C to out. igemm's own A, B and C in the plan's GM layout are
// not used.
func newDaVinciInt8Plan(file string, p GEMMParams, m *machines.Machine, lda int64, passes []gemmPass) (*gemmPlan, error) {
	pl, err := newGEMMPlan(file, p, gemmVariant{int8: true}, m)
	if err != nil {
		return nil, err
	}
	pl.lda, pl.passes = lda, passes
	return pl, nil
}

// daVinciIGEMMJob is kind igemm on a DaVinci machine: INT8 A (m×k) and B
// (k×n) in GM go straight to the cube (no split pass), INT32 products
// accumulate exactly in L0C, and the tiles leave through UB (the 910A has
// no FixPipe), adding the previous L1 groups' INT32 partial sums there.
type daVinciIGEMMJob struct {
	pl     *gemmPlan
	a8, b8 []int8
	outs   []Output
}

// newDaVinciIGEMM builds the job of plan pl, drawing its inputs asking
// stop (nil: never): errStopped once it says true.
func newDaVinciIGEMM(f *File, pl *gemmPlan, stop func() bool) (Job, error) {
	p := &pl.p
	if f.Config.Viper().IsSet("baselines") { // (the GEMM defaults fill the field)
		return nil, f.badKey("baselines", "applies to the FP32 GEMM kinds (hgemm and CPU SGEMM errors); igemm's error is against the exact INT32 product")
	}
	if p.Inputs.A != "" || p.Inputs.B != "" {
		return nil, f.badKey("inputs.a", "igemm draws its INT8 inputs (inputs.seed); .npy inputs are not read yet")
	}
	j := &daVinciIGEMMJob{pl: pl}
	if p.Numerics != NumericsOff {
		// The GPU igemm's inputs (same seed streams).
		j.a8, j.b8 = genInt8(p.Inputs.Seed, 1, p.M*p.K, stop), genInt8(p.Inputs.Seed, 2, p.K*p.N, stop)
		if j.a8 == nil || j.b8 == nil {
			return nil, errStopped
		}
	}
	return j, nil
}

func (j *daVinciIGEMMJob) Program() isa.Program {
	p := isa.Program{Name: j.pl.p.Kind, Cores: make([]isa.Stream, j.pl.ncores), Generated: true}
	for c := range p.Cores {
		p.Cores[c] = j.pl.stream(c)
	}
	return p
}

func (j *daVinciIGEMMJob) Mode() arch.Mode { return modeFor(j.pl.p.Numerics) }

func (j *daVinciIGEMMJob) Prepare(chip *arch.Chip) error {
	if j.Mode() != arch.Functional {
		return nil
	}
	if err := chip.GM().Write(j.pl.a8, int8Bytes(j.a8)); err != nil {
		return err
	}
	return chip.GM().Write(j.pl.b8, int8Bytes(j.b8))
}

func (j *daVinciIGEMMJob) Outputs() []Output { return j.outs }

func (j *daVinciIGEMMJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	pl, p := j.pl, &j.pl.p
	peak, _ := chip.M.Peak("INT8")
	reportThroughput(rep, st, 2*float64(p.M)*float64(p.N)*float64(p.K), peak, "int8 ops (2mnk; peak = INT8 cube peak)")
	rep.Program = map[string]any{
		"kind": p.Kind, "m": p.M, "k": p.K, "n": p.N,
		"tiling":    pl.tilingReport(),
		"buffering": p.Buffering,
		"buffers":   map[string]int{"L1_B": pl.nB, "L0": pl.nL0, "L0C": pl.nC, "UB": pl.nU},
		"inputs":    p.Inputs, "numerics": p.Numerics, "cores": pl.ncores,
	}
	var tiles [][2]int
	switch p.Numerics {
	case NumericsOff:
		return nil
	case NumericsFull:
		tiles, _, _ = pl.tileList()
	case NumericsSampled:
		perm := NewRand(p.Inputs.Seed, 99).Perm(pl.nrb * pl.ncb)
		for _, i := range perm[:min(p.SampleTiles, len(perm))] {
			tiles = append(tiles, [2]int{i / pl.ncb, i % pl.ncb})
		}
	}
	var c []int32
	if p.Numerics == NumericsFull {
		raw := make([]byte, 4*p.M*p.N)
		if err := readResult(chip.GM(), pl.c, raw); err != nil {
			return err
		}
		c = make([]int32, p.M*p.N)
		for i := range c {
			c[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		j.outs = []Output{{Name: "C", Shape: []int{p.M, p.N}, I32: c}, {Name: "A", Shape: []int{p.M, p.K}, I8: j.a8},
			{Name: "B", Shape: []int{p.K, p.N}, I8: j.b8}}
	}
	var errs intGEMMErrors
	overflow := false
	for _, t := range tiles {
		rows, cols := pl.rows(t[0]), pl.cols(t[1])
		r0, c0 := t[0]*pl.bm, t[1]*pl.bn
		for i := 0; i < rows; i++ {
			for jj := 0; jj < cols; jj++ {
				var v int64
				for x := 0; x < p.K; x++ {
					v += int64(j.a8[(r0+i)*p.K+x]) * int64(j.b8[x*p.N+c0+jj])
				}
				overflow = overflow || v != int64(int32(v))
				got := int32(v) // sampled: the golden model's (wrap-around)
				if c != nil {
					got = c[(r0+i)*p.N+c0+jj]
				}
				if p.Check && got != int32(v) {
					return fmt.Errorf("%w: simulated C[%d][%d] = %d but the golden model (INT32 wrap-around) gives %d",
						ErrCheckFailed, r0+i, c0+jj, got, int32(v))
				}
				errs.add(v, got)
			}
		}
	}
	rep.Error = errs.report(p.Numerics == NumericsSampled)
	if p.Check && c != nil {
		rep.Notes = append(rep.Notes, "check: simulated C equals the golden model (exact INT32) bit for bit")
	}
	if c == nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("numerics sampled: %d output tiles computed by the golden model (INT32 sums, wrapping as the cube's accumulators do) and compared with the exact sums; the simulation ran timing only", len(tiles)))
	}
	if overflow {
		rep.Notes = append(rep.Notes, "igemm: some sums leave the INT32 range and wrap around, as the cube's accumulators do")
	}
	return nil
}
