// Package nvidia is the core model of the nvidia-sm machine kind: a
// streaming multiprocessor with Tensor Cores, modelled at the level that
// decides GEMM-class throughput (GPU-FACTS.md §6). The unit of work is a
// CTA-level instruction standing for a run of identical hardware
// instructions — a warp tile's mma.syncs over one k-tile, a CTA's cp.asyncs
// of one pipeline stage, its ldmatrix loads of one k-tile — timed from the
// unit's per-SM rate and the first instruction's latency, exactly as
// DaVinci's m.mmad covers a whole block.
//
// Kernel launches are grids of CTAs (isa.Grid) that the chip's block
// scheduler places on SMs by occupancy (shared memory, registers, warps,
// CTAs per SM). Each resident CTA issues its stream in order into its own
// lanes (issue, copy = cp.async/TMA global→shared, ldsm = ldmatrix
// shared→registers, tensor, fma = CUDA cores, store), synchronised by
// flags as on DaVinci (cp.async groups, mbarriers and the buffer-free tokens
// of a multistage pipeline are all set/wait pairs between lanes). The CTAs
// of an SM share its tensor cores, CUDA cores and shared-memory bandwidth
// (max-min fair channels: two CTAs issuing MMAs at once each get half the
// tensor throughput), and the chip's L2 and HBM through Chip.StartGM. The
// SM's lanes in the report and traces merge its CTAs' lanes: busy when any
// CTA keeps the unit busy, else the most telling stall.
//
// Functional mode keeps each resident CTA's shared memory and registers
// and computes MMAs through the machine's numerics preset (package cube)
// on fragments in the instruction's own k order, bit-exact to a golden
// model.
package nvidia

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/arch"
	"sort"
	"strings"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// The lanes of an SM, indices into its geometry (isa.Pipe values in its
// instructions).
const (
	LaneIssue  = 0 // the CTA's instruction issue (warp schedulers)
	LaneCopy   = 1 // asynchronous global→shared copies (cp.async, TMA) and global loads
	LaneLDSM   = 2 // shared→register loads (ldmatrix)
	LaneTensor = 3 // Tensor Core MMAs
	LaneFMA    = 4 // CUDA cores: FP32/FP64 FMAs, element-wise epilogues
	LaneStore  = 5 // stores to global or shared memory
	numLanes   = 6
)

// The buffers an SM's instructions address (isa.Buffer values).
const (
	BufGM      isa.Buffer = 0 // global memory
	BufSMEM    isa.Buffer = 1 // the CTA's shared memory
	BufRF      isa.Buffer = 2 // the CTA's registers (fragments, accumulators)
	BufTMEM    isa.Buffer = 3 // tensor memory (Blackwell accumulators)
	numBuffers            = 4
)

// params are the SM's figures, resolved once from the machine file.
type params struct {
	geom             *machines.Geometry
	clock            sim.Clock
	issue            sim.Time // per CTA-level instruction issued
	subCores         int
	maxWarps         int
	maxCTAs          int
	maxRegsPerThread int
	regs             int64 // 32-bit registers per SM
	smem             int64 // shared memory per SM (bytes)
	smemPerCTA       int64
	banks, bankBytes int
	degrees          map[int64]int // bank-conflict degree by row stride (cache)

	tensor           [fp.NumFormats]tensorInput // by input format (rate 0: not taken)
	tensorEfficiency float64                    // fraction of the rate the instruction family reaches
	warpLevel        bool                       // mma.sync: one instruction runs on one sub-core's tensor core
	cudaRate         [fp.NumFormats]float64     // CUDA-core FLOP per cycle per SM (FMA = 2)
	cudaLanes        float64                    // element-wise FP32 operations per cycle per SM
	fmaLatency       int
	fmaModel         cube.Model // numerics of CUDA-core GEMMs (sequential FMA)

	paths []machines.PathSpec
}

// tensorInput is what the tensor cores do with one input format: arrays
// indexed by format, not maps, because every MMA looks them up.
type tensorInput struct {
	rate    float64 // dense FLOP (or OP) per cycle per SM
	latency int     // cycles from one instruction's issue to its result
	flops   float64 // flops of one hardware instruction
	dims    [3]int  // its M, N, K (zero when the file names no shape)
}

// path returns the copy path src→dst that lane runs.
func (p *params) path(src, dst isa.Buffer, lane isa.Pipe) (machines.PathSpec, bool) {
	for _, ps := range p.paths {
		if ps.Src == int(src) && ps.Dst == int(dst) && ps.Lane == int(lane) {
			return ps, true
		}
	}
	return machines.PathSpec{}, false
}

func (p *params) bufName(b isa.Buffer) string {
	if int(b) < len(p.geom.Buffers) {
		return p.geom.Buffers[b].Name
	}
	return fmt.Sprintf("buffer%d", b)
}

// tensorInputs lists the input types the tensor cores take.
func (p *params) tensorInputs() string {
	var names []string
	for f, in := range p.tensor {
		if in.rate > 0 {
			names = append(names, fp.Format(f).String())
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func init() {
	arch.RegisterKind(&arch.Kind{
		Name: "nvidia-sm",
		NewCores: func(c *arch.Chip) ([]arch.CoreModel, error) {
			p, err := paramsFor(c)
			if err != nil {
				return nil, err
			}
			cores := make([]arch.CoreModel, c.M.Cores)
			for i := range cores {
				cores[i] = newSM(c, p, i)
			}
			return cores, nil
		},
		Limits: func(c *arch.Chip) isa.Limits { return isa.Limits{} },
		LaunchLatency: func(c *arch.Chip) sim.Time {
			return sim.Time(c.M.NvidiaSM().LaunchNS * float64(sim.Nanosecond))
		},
	})
}

// paramsFor resolves the SM figures of chip c's machine.
func paramsFor(c *arch.Chip) (*params, error) {
	m := c.M
	sc := m.NvidiaSM()
	if sc == nil {
		return nil, fmt.Errorf("machine kind %s is not nvidia-sm", m.Kind)
	}
	fmaModel, err := cube.Preset("fp32-rne")
	if err != nil {
		return nil, err
	}
	t := &sc.Tensor
	p := &params{
		geom:             c.Geometry(),
		clock:            c.Clock(),
		issue:            c.Clock().Cycles(1),
		subCores:         sc.SubCores,
		maxWarps:         sc.MaxWarps,
		maxCTAs:          sc.MaxCTAs,
		maxRegsPerThread: sc.MaxRegistersPerThread,
		regs:             int64(sc.Registers) / 4,
		smem:             int64(sc.SMEM),
		smemPerCTA:       int64(sc.SMEMPerCTA),
		banks:            sc.SMEMBanks,
		bankBytes:        sc.SMEMBankBytes,
		tensorEfficiency: t.Efficiency,
		warpLevel:        t.Instruction == machines.NvidiaMMASync,
		cudaLanes:        sc.CUDACores.FP32FlopsPerCycle / 2,
		fmaLatency:       4,
		fmaModel:         fmaModel,
	}
	p.cudaRate[fp.FP32] = sc.CUDACores.FP32FlopsPerCycle
	p.cudaRate[fp.FP64] = sc.CUDACores.FP64FlopsPerCycle
	for f := range fp.NumFormats {
		rate, ok := t.FlopsPerCycle.Of(f)
		if !ok {
			continue
		}
		shape, _ := t.Shapes.Of(f)
		lat, _ := t.LatencyCycles.Of(f)
		in := tensorInput{rate: rate.Value, latency: lat.Value, flops: shape.Value.Flops()}
		if m, n, k, err := shape.Value.Dims(); err == nil && m > 0 {
			in.dims = [3]int{m, n, k}
		}
		p.tensor[f] = in
	}
	p.paths = p.geom.Paths
	p.degrees = map[int64]int{}
	return p, nil
}
