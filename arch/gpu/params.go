package gpu

import (
	"fmt"
	"sort"
	"strings"
	"unsafe"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/mem"
	"github.com/davinci-sim/davinci-sim/sim"
)

// Terms are the words a kind uses for its parts in messages: an NVIDIA SM
// runs CTAs of warps, an AMD CU workgroups of wavefronts.
type Terms struct {
	Core   string // "SM", "CU"
	Block  string // "CTA", "workgroup"
	Warp   string // "warp", "wave"
	Matrix string // "tensor cores", "matrix cores"
	Vector string // "CUDA cores", "VALUs"
	// SharedPerBlockKey is the machine-file key of the most shared memory
	// one block may allocate (messages).
	SharedPerBlockKey string
}

// MatrixInput is what a core's matrix units do with one input format.
// Arrays indexed by format hold them, not maps: every MMA looks one up.
type MatrixInput struct {
	// Rate is the dense FLOP (or OP) per cycle of the whole core the
	// instruction family sustains (0: the format is not taken).
	Rate float64
	// Latency is the cycles from one instruction's issue to its result.
	Latency int
	// ChainLatency, when > 0, is the cycles from one instruction's issue to
	// a dependent one's (reading its result as the accumulator): a run
	// whose sub-cores have too few independent output tiles to cover it
	// is slowed to one dependent instruction per ChainLatency (AMD's
	// dependent-MFMA wait states). 0: not modelled (kernels are assumed to
	// hold enough accumulators).
	ChainLatency int
	// Flops is 2·m·n·k of one hardware instruction.
	Flops float64
	// Dims is the M, N, K a run's extents are rounded up to (whole
	// instructions); zero when the file names no shape.
	Dims [3]int
	// WarpLevel: one instruction runs on one sub-core's unit (mma.sync,
	// DMMA, MFMA), so it occupies 1/SubCores of the core's rate; otherwise
	// it spreads over the whole core (wgmma, tcgen05).
	WarpLevel bool
	// VectorCycles is the vector-unit cycles each instruction keeps from
	// other work on its sub-core (AMD's MFMA/VALU co-execution delay); 0:
	// the units run independently.
	VectorCycles float64
}

// Params are a GPU core's figures, resolved once from the machine file by
// its kind (arch/nvidia, arch/amd). Rates are per core per clock.
type Params struct {
	Terms Terms
	// SubCores is the number of sub-partitions each with its own scheduler
	// and matrix unit (NVIDIA SMSPs, AMD SIMDs).
	SubCores int
	// WarpSize is the threads of a warp (32) or wavefront (64).
	WarpSize         int
	MaxWarps         int   // resident warps per core
	MaxBlocks        int   // resident blocks per core
	MaxRegsPerThread int   // 32-bit registers one thread may use
	Registers        int64 // 32-bit registers per core
	Shared           int64 // shared memory (LDS) per core, bytes
	SharedPerBlock   int64 // the most one block may allocate
	Banks, BankBytes int   // shared-memory banking
	// Matrix is indexed by input format.
	Matrix [fp.NumFormats]MatrixInput
	// VectorRate is the vector units' FLOP per cycle per core by format
	// (FMA = 2); VectorLanes the element-wise operations per cycle;
	// VectorLatency one operation's latency in cycles.
	VectorRate    [fp.NumFormats]float64
	VectorLanes   float64
	VectorLatency int
	// TensorMemory is the accumulator memory per core that blocks
	// allocate explicitly (Blackwell TMEM, buffer BufAcc); 0 without one.
	TensorMemory int64
	// Launch is the cost of one kernel launch.
	Launch sim.Time

	geom     *machines.Geometry
	clock    sim.Clock
	issue    sim.Time      // per block-level instruction issued
	degrees  map[int64]int // bank-conflict degree by row stride (cache)
	fmaModel cube.Model    // numerics of vector-unit GEMMs (sequential FMA)
	paths    []machines.PathSpec
	pathAt   [numBuffers][numBuffers][numLanes]int8 // index into paths by source, destination and lane (−1: none)
}

// RegisterKind registers a GPU machine kind whose cores run on this model
// with the figures params resolves from the machine file;
// footprintKeys names, for the message refusing a machine too large to
// simulate, the machine-file keys the host memory grows with.
func RegisterKind(name string, params func(*machines.Machine) (*Params, error), footprintKeys string) {
	kindParams[name] = params
	arch.RegisterKind(&arch.Kind{
		Name:  name,
		Grids: true,
		// NVIDIA's 32-byte sectors, AMD's 128-byte lines: the files' fetch
		// granularity.
		WholeLineFetch: true,
		GMRead:         gmRead,
		NewCores: func(c *arch.Chip) ([]arch.CoreModel, error) {
			p, err := params(c.M)
			if err != nil {
				return nil, err
			}
			return NewCores(c, p)
		},
		Limits: func(*arch.Chip) isa.Limits { return isa.Limits{} },
		CoreBytes: func(m *machines.Machine, _ arch.Mode) int64 {
			p, err := params(m)
			if err != nil {
				return arch.DefaultCoreBytes // building the cores reports the error
			}
			g := m.Geometry()
			return p.coreBytes(len(g.Paths), len(g.Buffers)) // (its block slots: BlockBytes, SlotsBytes)
		},
		FootprintKeys: footprintKeys,
		LaunchLatency: func(c *arch.Chip) sim.Time {
			if p, err := params(c.M); err == nil {
				return p.Launch
			}
			return 0
		},
	})
}

// kindParams are the registered kinds' figures by kind name
// (RegisterKind), for the estimates of a kernel's blocks made before a
// chip is built (BlockBytes, SlotsBytes).
var kindParams = map[string]func(*machines.Machine) (*Params, error){}

// coreBytes estimates the host memory of one core of a machine of paths
// copy paths and buffers buffers (newCore's allocations) without its
// block slots, each object rounded up to the Go allocator's size class
// (arch.AllocBytes), saturating instead of overflowing: its channels,
// occupancy, the chip's bytes by core and the statistics the run collects
// of it. A core makes a block slot when a block starts and finds every
// slot it has in use (StartCTA), and reuses it for its next blocks: it
// holds as many as its kernels keep resident at once, which the chip does
// not know when it is built — a GEMM's 1–9 of the A100's 32 —, so the
// slots are counted beside it for the kernels a program runs (slotBytes:
// BlockBytes), or every slot where those are not known (SlotsBytes).
// Before 2026-12-04 this estimate held every slot of every core (A100: 2287
// KiB a core, 243 MiB for the chip, where a 2048³ HGEMM with numerics off
// peaks at 31 MiB in all).
func (p *Params) coreBytes(paths, buffers int) int64 {
	alloc := func(n float64) float64 { return float64(arch.AllocBytes(int64(min(n, 1<<62)))) }
	np, nb := float64(paths), float64(buffers)
	channel := alloc(float64(unsafe.Sizeof(mem.Channel{}))) + alloc(float64(unsafe.Sizeof(sim.Waker{})))
	core := alloc(float64(unsafe.Sizeof(Core{}))) + alloc(float64(unsafe.Sizeof(sim.Waker{}))) +
		float64(3*channel) + // the units' (tensor, fma, ldsm)
		alloc(nb*8) + float64(nb*alloc(float64(unsafe.Sizeof(mem.Occupancy{})))) +
		alloc(np*8) + // pathBytes
		arch.ChipBytesPerCore +
		alloc(float64(numLanes)*float64(unsafe.Sizeof(arch.LaneStats{}))) + alloc(nb*float64(unsafe.Sizeof(arch.BufferStats{}))) +
		float64(unsafe.Sizeof(arch.CoreStats{}))
	return int64(min(core, 1<<62))
}

// slotBytes estimates the host memory of one block slot of a core of a
// machine of paths copy paths (StartCTA's allocations), without the data
// a functional block keeps there (slotData), each object rounded up to
// its size class: its lane queues, flags and work counts, the stream it
// reads (arch.StreamReaderBytes: its read-ahead ring, ~37 KiB with its
// coroutine — more than the slot's own objects) and a flow per lane on
// the core's units and the chip's L2 and HBM channels. Without the
// streams and the rounding an A100 SM with its 32 slots in use was
// estimated at 1022 KiB and held ~2.1 MiB.
func (p *Params) slotBytes(paths int) int64 {
	alloc := func(n float64) float64 { return float64(arch.AllocBytes(int64(min(n, 1<<62)))) }
	lanes, np := float64(numLanes), float64(paths)
	work := alloc(lanes*8) + alloc(np*8) // a CTAWork's counts (resetWork)
	slot := alloc(float64(unsafe.Sizeof(cta{}))) +
		alloc(float64(lanes*lanes*flagIDs*4)) +
		float64(lanes*(alloc(queueDepth*float64(unsafe.Sizeof(isa.Instr{})))+alloc(queueDepth*float64(unsafe.Sizeof(sim.Time(0)))))) +
		float64(3*work) + // work, body, last
		float64(arch.StreamReaderBytes(true)) +
		float64(3*lanes*flowBytes) +
		2*8 // its pointer in Core.ctas, grown by appending
	return int64(min(slot, 1<<62))
}

// resident returns how many blocks holding r a core holds at once at most
// (Fits' limits on an empty core; at least one).
func (p *Params) resident(r isa.Resources) int {
	n := int64(max(p.MaxBlocks, 1))
	bound := func(have, need int64) {
		if need > 0 {
			n = min(n, have/need)
		}
	}
	bound(int64(p.MaxWarps), int64(r.Warps))
	bound(p.Shared, r.SharedBytes)
	bound(p.Registers, r.Registers)
	bound(p.TensorMemory, r.AccBytes)
	return int(max(n, 1))
}

// BlockBytes estimates the host memory the blocks of a kernel holding r
// take on a core of machine m (of a GPU kind) beside the core's own
// (arch.Footprint): blocks is how many the core holds at once (as
// Core.Resident counts them), slot the bytes of a block slot (slotBytes:
// a core makes one as a block starts and finds every slot it has in use,
// so it holds at most blocks of them, and a chip no more than the blocks
// its grids start), data the bytes a functional block keeps in its slot
// (slotData: its shared memory and a register file and accumulator store
// of the core's size — as the grid scheduler counts them against the
// run's bound when it admits the grid, Core.Resident; the pages a block
// does not reach are allocated but not touched). ok is false where m is
// not of a GPU kind or its figures do not resolve (the run refuses it).
func BlockBytes(m *machines.Machine, r isa.Resources) (blocks int, slot, data int64, ok bool) {
	p, g, ok := estimateParams(m)
	if !ok {
		return 0, 0, 0, false
	}
	return p.resident(r), p.slotBytes(len(g.Paths)), p.slotData(g, r), true
}

// SlotsBytes estimates the host memory of every block slot of a core of
// machine m (of a GPU kind) in use, without their data: the blocks'
// estimate (BlockBytes) for a program whose kernels it does not know,
// which is what the chip's estimate held before 2026-12-04 (a functional
// grid's data is then counted as the grid is admitted, Core.Resident).
// ok as BlockBytes'.
func SlotsBytes(m *machines.Machine) (int64, bool) {
	p, g, ok := estimateParams(m)
	if !ok {
		return 0, false
	}
	return int64(min(float64(max(p.MaxBlocks, 1))*float64(p.slotBytes(len(g.Paths))), 1<<62)), true
}

// estimateParams resolves the figures of machine m for an estimate made
// before a chip is built: false where m is not of a GPU kind or they do
// not resolve.
func estimateParams(m *machines.Machine) (*Params, *machines.Geometry, bool) {
	params := kindParams[m.Kind]
	if params == nil {
		return nil, nil, false
	}
	p, err := params(m)
	if err != nil {
		return nil, nil, false
	}
	return p, m.Geometry(), true
}

// flowBytes is what a transfer or an instruction running takes in a
// bandwidth channel (mem.Channel): its flow, rounded up to its size class,
// and the pointers to it in the channel's heap and free list.
const flowBytes = 48 + 2*8

// slotData is the host bytes a functional block holding r keeps
// (StartCTA): its shared memory, and a register file and accumulator
// store of the core's size each, saturating instead of overflowing.
func (p *Params) slotData(g *machines.Geometry, r isa.Resources) int64 {
	n := float64(max(r.SharedBytes, 0))
	for _, b := range []isa.Buffer{BufRegs, BufAcc} {
		if int(b) < len(g.Buffers) {
			n += float64(max(g.Buffers[b].Capacity, 0))
		}
	}
	return int64(min(n, 1<<62))
}

// NewCores builds the chip's cores (c.M.Cores of them) from p.
func NewCores(c *arch.Chip, p *Params) ([]arch.CoreModel, error) {
	fmaModel, err := cube.Preset("fp32-rne")
	if err != nil {
		return nil, err
	}
	p.geom = c.Geometry()
	p.clock = c.Clock()
	p.issue = c.Clock().Cycles(1)
	p.fmaModel = fmaModel
	p.paths = p.geom.Paths
	for s := range p.pathAt {
		for d := range p.pathAt[s] {
			for l := range p.pathAt[s][d] {
				p.pathAt[s][d][l] = -1
			}
		}
	}
	for i, ps := range p.paths {
		if ps.Src < numBuffers && ps.Dst < numBuffers && ps.Lane < numLanes {
			p.pathAt[ps.Src][ps.Dst][ps.Lane] = int8(i)
		}
	}
	p.degrees = map[int64]int{}
	if p.SubCores < 1 || p.WarpSize < 1 {
		return nil, fmt.Errorf("a GPU core needs sub-cores and a warp size (got %d, %d)", p.SubCores, p.WarpSize)
	}
	cores := make([]arch.CoreModel, c.M.Cores)
	for i := range cores {
		cores[i] = newCore(c, p, i)
	}
	return cores, nil
}

// path returns the copy path src→dst that lane runs and its index in the
// geometry.
func (p *Params) path(src, dst isa.Buffer, lane isa.Pipe) (machines.PathSpec, int, bool) {
	if int(src) >= numBuffers || int(dst) >= numBuffers || int(lane) >= numLanes {
		return machines.PathSpec{}, 0, false
	}
	i := p.pathAt[src][dst][lane]
	if i < 0 {
		return machines.PathSpec{}, 0, false
	}
	return p.paths[i], int(i), true
}

func (p *Params) bufName(b isa.Buffer) string {
	if int(b) < len(p.geom.Buffers) {
		return p.geom.Buffers[b].Name
	}
	return fmt.Sprintf("buffer%d", b)
}

// matrixInputs lists the input types the matrix units take.
func (p *Params) matrixInputs() string {
	var names []string
	for f, in := range p.Matrix {
		if in.Rate > 0 {
			names = append(names, fp.Format(f).String())
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
