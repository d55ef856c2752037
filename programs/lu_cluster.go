package programs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// luCluster is an lu-fused run on a cluster or node description: a P × Q
// process grid, one process per NPU with its share of its node's host
// CPU, the matrix 2-D block-cyclic over the grid. Every NPU is the
// cycle-level chip model of the node's npu machine; all of them, their
// hosts' programs and the cluster's links run on one event engine
// (fidelity full). See docs/cluster.md, "lu-fused on a cluster".
//
// Per rank (process row pr, column pc), GM holds (same layout on every
// rank, since the grid divides the block count):
//   - a: the local trailing matrix, mloc × nloc, row-major (block (jl, ll)
//     is global block (jl·P + pr, ll·Q + pc));
//   - lh: the FP16 L panels of two fusion windows for the local rows,
//     mloc × 2F·nb (panel i at column (i mod 2F)·nb): the owner's TRSM
//     writes there and the row broadcast fills the same place on the other
//     ranks of the process row;
//   - uh: the U panels likewise, 2F·nb × nloc;
//   - pc, pr: FP16 copies of the panels (FP32 trailing matrix only);
//   - uinv, linv: the diagonal block's FP16 inverses (by iteration parity).
//
// The arithmetic of every block is the single-NPU program's (same bands,
// same K order, same kernels): the factors equal lu-fused's golden model,
// which a functional run checks.
type luCluster struct {
	runContext
	file string
	// golden computes the golden factors beside the simulation (numerics
	// full with check)
	golden *luGoldenWork
	// hooks are the run's (its progress line while finish waits for the
	// golden model).
	hooks *RunHooks
	p     LUParams
	topo  *cluster.Topology
	npu   *machines.Machine // each rank's machine, its host the rank's share
	pl    *luPlan           // tiling, buffers, core sets (global n)
	opts  Options
	// windowsUnused is sampling.windows given to a run at another fidelity
	// than sampled (0: not given); the report notes it.
	windowsUnused int
	// chipBytes is the estimate of the host memory of a chip model
	// (arch.Footprint): at fidelity full each NPU's, at isolated or
	// sampled the one each kernel is simulated alone on, where the run's
	// bound limits how many exist at once (chipsAtOnce).
	chipBytes float64
	// beside is the host memory the run holds beside its chip models by
	// its estimate, its base and data (besideModels): the run's bound
	// leaves its chip models the rest (modelRoom).
	beside float64

	P, Q       int
	mloc, nloc int
	ring, W    int // panels kept (2·F), lh row length in elements (ring·nb)

	a, lh, uh, pcp, prp int64
	uinv, linv          [2]int64
	gmEnd               int64

	eng   *sim.Engine
	net   *cluster.Network
	ranks []*luRank
	rv    map[string]*luMeet

	mat    *luMatrix
	s      float32
	diags  []*luDiag
	capL   []uint16 // functional: the global Lh (s·L, FP16) as the owners computed it
	capU   []uint16
	iterAt []sim.Time
	// itersBegun counts the iterations whose owner has begun them (the
	// progress line's share at fidelity isolated and sampled).
	itersBegun int
	factAt     sim.Time
	ref        *luRefineResult
	refErr     error
	failed     error

	hcclRing int // broadcasts HCCL would not form a communicator for, run as P2P rings
	notHCCL  int // such broadcasts run with the explicit collectives.intra_server instead

	// rowGroups and colGroups are the process rows' and columns' NPU
	// groups (checkGroups), built and planned once: every panel broadcast
	// had built and planned its group again (a 4096-NPU run allocated
	// 5.6 GB in it).
	rowGroups, colGroups []*luGroup

	trace *traces.ClusterTrace // nil: no --trace

	zones           *luZones // every rank's kernels, as they finish
	kernelsFinished int

	timer   *luKernelTimer // fidelities isolated and sampled
	collect *[]luPending   // sampled, building the sample: launches are collected, not run
}

// luRank is one process: its NPU chip and the host program driving it.
type luRank struct {
	id, pr, pc int
	npu, host  cluster.Endpoint
	chip       *arch.Chip
	h          *arch.Host
	blk        []float32
	done       sim.Time
	// streamOps are the rank's collectives enqueued in stream order
	// (panelBcast) not yet known finished: every kernel launched after
	// them waits for them (one stream, as HCCL's on the rank's NPU).
	streamOps []*arch.Kernel
	// hcclBusy is the time the rank had an HCCL broadcast in flight
	// (hcclOpen of them since hcclFrom): the union of their spans, which
	// overlap (a row's and a column's, iterations in flight).
	hcclBusy, hcclFrom sim.Time
	hcclOpen           int
}

// streamAfter returns after with the rank's unfinished stream operations
// (luRank.streamOps), which it forgets once finished.
func (r *luRank) streamAfter(after []*arch.Kernel) []*arch.Kernel {
	ops := r.streamOps[:0]
	for _, op := range r.streamOps {
		if !op.Done() {
			ops = append(ops, op)
		}
	}
	clear(r.streamOps[len(ops):])
	r.streamOps = ops
	if len(ops) == 0 {
		return after
	}
	return append(append([]*arch.Kernel(nil), after...), ops...)
}

// luMeet is a collective waiting for its members (a rendezvous).
type luMeet struct {
	need  int
	dones []func()
}

func buildLUCluster(f *File, topo *cluster.Topology, o Options) (ClusterJob, error) {
	m, err := loadClusterNPU(topo, o.Overrides)
	if err != nil {
		return nil, err
	}
	if m.DaVinci() == nil || !m.HasHost() {
		return nil, fmt.Errorf("node %s: npu %s must be a davinci machine with a host section", topo.Node.Name, m.Name)
	}
	if err := generatorNeeds(f.Kind, m, machineKeyOrigin(topo.Node.NPU, o.Overrides)); err != nil {
		return nil, err
	}
	// The rank's host: its share of the socket its NPU is attached to
	// (cores and memory bandwidth split evenly over that socket's NPUs); the
	// flop rates per cycle stay the NPU file's host figures.
	hs := topo.Node.Hosts
	perSocket := max(1, topo.Node.NPUs/hs.Count)
	m.Host.Cores = max(1, hs.Cores/perSocket)
	m.Host.Clock = hs.Clock
	m.Host.MemoryBandwidth = hs.MemoryBandwidth / machines.Bandwidth(perSocket)

	p, err := decodeLU(f, m, o, false)
	if err != nil {
		return nil, err
	}
	if o.Fidelity != "" {
		p.Fidelity = o.Fidelity
	}
	chipBytes := 0.0 // a chip model's (luCluster.chipBytes)
	// The run's base and data, as HostBytes counts them: the chip models
	// get what the run's bound leaves beside them (modelRoom).
	beside := besideModels(f, o)
	switch p.Fidelity {
	case "", "full":
		p.Fidelity = "full"
		// Every NPU's chip model at once: their sum, with the run's base
		// and data, within the run's bound on its host memory (as
		// HostBytes counts them; each chip checks its own against
		// arch.MaxModelBytes).
		mode := arch.Timing
		if p.Numerics == NumericsFull {
			mode = arch.Functional
		}
		per, err := arch.Footprint(m, mode)
		if err != nil {
			return nil, err
		}
		if npus, host := topo.NPUs(), (hostBound{limit: o.maxHostBytes()}); host.exceeds(beside + float64(float64(npus)*per)) {
			return nil, host.refuse(fmt.Errorf("%s: at fidelity full the %d NPUs' chip models, %.1f MiB each, with the run's data and base (%.0f MiB) would take %s: fewer NPUs (cluster.nodes, node.npus) or cores (machine.cores), or fidelity sampled",
				topo.Name, npus, per/(1<<20), beside/(1<<20), host.over(beside+float64(float64(npus)*per))))
		}
		chipBytes = per
	case "isolated", "sampled":
		if p.Numerics != NumericsOff {
			return nil, f.badKey("fidelity", "%s times kernels apart and computes no values: use it with numerics off", p.Fidelity)
		}
		// Each kernel simulated alone on a chip model of its own, as many
		// at once as the run's bound holds beside the run's base (its data
		// none: numerics off; chipsAtOnce): at least one, checked here,
		// before the run (as at fidelity full; NewChip checks the model
		// alone again).
		per, err := arch.Footprint(m, arch.Timing)
		if err != nil {
			return nil, err
		}
		if host := (hostBound{limit: o.maxHostBytes()}); host.exceeds(beside + per) {
			return nil, host.refuse(fmt.Errorf("%s: at fidelity %s each kernel is simulated alone on a chip model of %.1f MiB, which with the run's base (%.0f MiB) would take %s: fewer cores (machine.cores)",
				topo.Name, p.Fidelity, per/(1<<20), beside/(1<<20), host.over(beside+per)))
		}
		chipBytes = per
	default:
		return nil, f.badKey("fidelity", "%q: must be full (every NPU cycle-level), isolated (each distinct kernel simulated alone, once) or sampled (a sample of windows simulated, the rest predicted)", p.Fidelity)
	}
	if p.Numerics == NumericsFull && p.N > MaxLUFunctionalN {
		return nil, f.badKey("n", "%d: numerics full on a cluster keeps the whole factors and the golden model in host memory: n at most %d (numerics off for timing)", p.N, MaxLUFunctionalN)
	}
	windowsUnused := 0
	if p.Sampling.Windows != 0 && p.Fidelity != "sampled" {
		windowsUnused = p.Sampling.Windows
	}
	if p.Sampling.Windows == 0 {
		p.Sampling.Windows = DefaultSampledWindows
	}
	if p.Sampling.Windows < 0 {
		return nil, f.badKey("sampling.windows", "%d: must be ≥ 1", p.Sampling.Windows)
	}
	npus := topo.NPUs()
	if p.Grid.P == 0 && p.Grid.Q == 0 {
		p.Grid = defaultGrid(npus)
	}
	P, Q := p.Grid.P, p.Grid.Q
	if P < 1 || Q < 1 || P > npus || Q > npus || P*Q != npus { // (bounded first: p·q must not wrap)
		return nil, limitedBy(f.badKey("grid", "p × q = %d × %d must equal the NPUs of %s (%d)", P, Q, topo.Name, npus), "node.npus", "cluster.nodes")
	}
	nbk := p.N / p.NB
	if nbk%P != 0 || nbk%Q != 0 {
		return nil, f.badKey("n", "n/nb = %d blocks must divide evenly over the grid's %d process rows and %d columns (2-D block-cyclic with equal shares)", nbk, P, Q)
	}
	pl, err := newLUBudget(f.Path, p, m)
	if err != nil {
		return nil, err
	}
	pl.n, pl.nbk = p.N, nbk
	j := &luCluster{file: f.Path, p: p, topo: topo, npu: m, pl: pl, opts: o, windowsUnused: windowsUnused, chipBytes: chipBytes, beside: beside, P: P, Q: Q,
		mloc: p.N / P, nloc: p.N / Q, ring: 2 * pl.F, rv: map[string]*luMeet{}, s: 1}
	j.W = j.ring * p.NB
	j.zones = newLUZones()
	j.place()
	if j.gmEnd > int64(m.GM.Capacity) {
		return nil, f.badKey("n", "each NPU's share (%d × %d in %s, plus panels) needs %d bytes of GM; %s has %d", j.mloc, j.nloc, p.Trailing, j.gmEnd, m.Name, int64(m.GM.Capacity))
	}
	// Each rank's host holds its share of the factors (FP16, copied back
	// for the refinement; A is regenerated from the seed, not stored:
	// LU-HPLMXP.md) and a few n-vectors, in its share of its socket's DRAM.
	hostShare := int64(topo.Node.Hosts.Memory) / int64(perSocket)
	if need := int64(j.mloc)*int64(j.nloc)*2 + 8*8*int64(p.N); need > hostShare {
		return nil, f.badKey("n", "each rank's host holds its share of the factors (%d × %d FP16) and the refinement's vectors: %d bytes; its share of a host's memory (node.hosts.memory %d B over %d NPUs) is %d", j.mloc, j.nloc, need, int64(topo.Node.Hosts.Memory), perSocket, hostShare)
	}
	return j, nil
}

// defaultGrid returns the most square P × Q = npus with P ≤ Q.
func defaultGrid(npus int) LUGrid {
	p := int(math.Sqrt(float64(npus)))
	for npus%p != 0 {
		p--
	}
	return LUGrid{P: p, Q: npus / p}
}

// place lays out each rank's GM.
func (j *luCluster) place() {
	nb := int64(j.p.NB)
	tb := int64(j.pl.tb)
	at := int64(0)
	put := func(bytes int64) int64 {
		a := at
		at = (at + bytes + 4095) &^ 4095
		return a
	}
	j.a = put(int64(j.mloc) * int64(j.nloc) * tb)
	j.lh = put(int64(j.mloc) * int64(j.W) * 2)
	j.uh = put(int64(j.W) * int64(j.nloc) * 2)
	if tb == 4 {
		j.pcp = put(int64(j.mloc) * nb * 2)
		j.prp = put(nb * int64(j.nloc) * 2)
	}
	for i := range 2 {
		j.uinv[i] = put(nb * nb * 2)
		j.linv[i] = put(nb * nb * 2)
	}
	j.gmEnd = at
}

// Rank geometry.
func (j *luCluster) rankOf(pr, pc int) int { return pr*j.Q + pc }

// localRowsAfter counts rank row pr's block rows j > i.
func (j *luCluster) localRowsAfter(pr, i int) int {
	lo, hi := localRange(i+1, j.pl.nbk, pr, j.P)
	return hi - lo
}

// localColsAfter counts rank column pc's block columns l > i.
func (j *luCluster) localColsAfter(pc, i int) int {
	lo, hi := localRange(i+1, j.pl.nbk, pc, j.Q)
	return hi - lo
}

// update is rank r's share of band z's update with iterations [i0, i1).
func (j *luCluster) update(r *luRank, z band, i0, i1 int, alpha float64) *luGEMM {
	pl := j.pl
	nb, W, nloc := int64(pl.nb), int64(j.W), int64(j.nloc)
	g := &luGEMM{lda: W * 2, ldb: nloc * 2, ldo: nloc * int64(pl.tb), K: (i1 - i0) * pl.nb, epi: epiSub, alpha: alpha}
	kc := int64(i0%j.ring) * nb
	for _, rc := range z.rects(pl.nbk) {
		for jb := rc[0]; jb < rc[1]; jb++ {
			if jb%j.P != r.pr {
				continue
			}
			jl := int64(jb / j.P)
			for rt := 0; rt < pl.nb; rt += pl.bm {
				row := jl*nb + int64(rt)
				job := luRowJob{a: j.lh + (row*W+kc)*2, rows: pl.bm}
				for l := rc[2]; l < rc[3]; l++ {
					if l%j.Q != r.pc {
						continue
					}
					ll := int64(l / j.Q)
					for ct := 0; ct < pl.nb; ct += pl.bn {
						col := ll*nb + int64(ct)
						job.tiles = append(job.tiles, luColTile{b: j.uh + (kc*nloc+col)*2, cols: pl.bn, out: j.a + (row*nloc+col)*int64(pl.tb)})
					}
				}
				if len(job.tiles) > 0 {
					g.jobs = append(g.jobs, job)
				}
			}
		}
	}
	return g
}

// trsm is rank r's share of iteration i's TRSM as GEMM: the left part (its
// rows of the L panel) when it is in process column i mod Q, the right
// part (its columns of the U panel) when it is in process row i mod P.
func (j *luCluster) trsm(r *luRank, i int) (left, right *luGEMM) {
	pl := j.pl
	nb, W, nloc := int64(pl.nb), int64(j.W), int64(j.nloc)
	par := i % 2
	slot := int64(i%j.ring) * nb
	if r.pc == i%j.Q {
		lda := nloc * 2
		if pl.tb == 4 {
			lda = nb * 2
		}
		left = &luGEMM{lda: lda, ldb: nb * 2, ldo: W * 2, K: pl.nb, epi: epiStore16}
		ic := int64(i/j.Q) * nb
		for jl := 0; jl < pl.nbk/j.P; jl++ {
			if jl*j.P+r.pr <= i {
				continue
			}
			for rt := 0; rt < pl.nb; rt += pl.bm {
				row := int64(jl)*nb + int64(rt)
				a := j.a + (row*nloc+ic)*2
				if pl.tb == 4 {
					a = j.pcp + row*nb*2
				}
				job := luRowJob{a: a, rows: pl.bm}
				for ct := 0; ct < pl.nb; ct += pl.bn {
					job.tiles = append(job.tiles, luColTile{b: j.uinv[par] + int64(ct)*2, cols: pl.bn, out: j.lh + (row*W+slot+int64(ct))*2})
				}
				left.jobs = append(left.jobs, job)
			}
		}
	}
	if r.pr == i%j.P {
		right = &luGEMM{lda: nb * 2, ldb: nloc * 2, ldo: nloc * 2, K: pl.nb, epi: epiStore16}
		ir := int64(i/j.P) * nb
		for rt := 0; rt < pl.nb; rt += pl.bm {
			job := luRowJob{a: j.linv[par] + int64(rt)*nb*2, rows: pl.bm}
			for ll := 0; ll < pl.nbk/j.Q; ll++ {
				if ll*j.Q+r.pc <= i {
					continue
				}
				for ct := 0; ct < pl.nb; ct += pl.bn {
					col := int64(ll)*nb + int64(ct)
					b := j.a + (ir*nloc+col)*2
					if pl.tb == 4 {
						b = j.prp + col*2
					}
					job.tiles = append(job.tiles, luColTile{b: b, cols: pl.bn, out: j.uh + ((slot+int64(rt))*nloc+col)*2})
				}
			}
			if len(job.tiles) > 0 {
				right.jobs = append(right.jobs, job)
			}
		}
	}
	return left, right
}

// cvtJobs is rank r's share of iteration i's FP32 → FP16 panel copies.
func (j *luCluster) cvtJobs(r *luRank, i int) []luCvt {
	pl := j.pl
	nb, nloc := int64(pl.nb), int64(j.nloc)
	var out []luCvt
	if r.pc == i%j.Q {
		ic := int64(i/j.Q) * nb
		for jl := 0; jl < pl.nbk/j.P; jl++ {
			if jl*j.P+r.pr <= i {
				continue
			}
			for rr := 0; rr < pl.nb; rr += pl.cvtRows {
				rows := min(pl.cvtRows, pl.nb-rr)
				row := int64(jl)*nb + int64(rr)
				out = append(out, luCvt{src: j.a + (row*nloc+ic)*4, dst: j.pcp + row*nb*2, ss: nloc * 4, ds: nb * 2, rows: rows})
			}
		}
	}
	if r.pr == i%j.P {
		ir := int64(i/j.P) * nb
		for ll := 0; ll < pl.nbk/j.Q; ll++ {
			if ll*j.Q+r.pc <= i {
				continue
			}
			for rr := 0; rr < pl.nb; rr += pl.cvtRows {
				rows := min(pl.cvtRows, pl.nb-rr)
				out = append(out, luCvt{src: j.a + ((ir+int64(rr))*nloc+int64(ll)*nb)*4, dst: j.prp + (int64(rr)*nloc+int64(ll)*nb)*2, ss: nloc * 4, ds: nloc * 2, rows: rows})
			}
		}
	}
	return out
}

// localBlocks counts rank r's blocks of band z.
func (j *luCluster) localBlocks(r *luRank, z band) int {
	c := 0
	for _, rc := range z.rects(j.pl.nbk) {
		r0, r1 := localRange(rc[0], rc[1], r.pr, j.P)
		c0, c1 := localRange(rc[2], rc[3], r.pc, j.Q)
		c += (r1 - r0) * (c1 - c0)
	}
	return c
}

// Run builds every rank's chip and host program, runs them with the
// network on one engine, and fills the report.
func (j *luCluster) Run(hooks RunHooks) (*Result, error) {
	npus := j.P * j.Q
	if hooks.Observer != nil {
		if j.isolated() {
			return nil, badInput(fmt.Errorf("--trace-npu: the per-core trace of an NPU needs fidelity full (--fidelity full): at fidelity %s the NPUs have no core models", j.p.Fidelity))
		}
		if hooks.ObserveRank < 0 || hooks.ObserveRank >= npus {
			return nil, badInput(fmt.Errorf("--trace-npu %d: ranks are 0..%d on this %d × %d grid", hooks.ObserveRank, npus-1, j.P, j.Q))
		}
	}
	j.trace = hooks.ClusterTrace
	j.hooks = &hooks
	if j.trace != nil {
		for _, r := range slices.Sorted(maps.Keys(j.trace.Only)) { // the first one outside, whatever the map's order
			if r < 0 || r >= npus {
				return nil, badInput(fmt.Errorf("--trace-ranks: rank %d does not exist; ranks are 0..%d on this %d × %d grid", r, npus-1, j.P, j.Q))
			}
		}
	}
	mode := modeFor(j.p.Numerics)
	if j.p.Numerics == NumericsSampled {
		return nil, badInput(fmt.Errorf("%s: numerics sampled: not yet on a cluster (use full at small n, off for timing)", j.file))
	}
	j.eng = sim.NewEngine()
	j.net = cluster.NewNetwork(j.eng, j.topo)
	nbk := j.pl.nbk
	j.diags = make([]*luDiag, nbk)
	j.iterAt = make([]sim.Time, nbk+1)
	full := j.p.Numerics == NumericsFull
	if full {
		j.mat = newLUMatrix(j.p.N, j.p.Seed)
		if err := j.mat.fill(hooks.Context); err != nil {
			return nil, err
		}
		j.capL = make([]uint16, j.p.N*j.p.N)
		j.capU = make([]uint16, j.p.N*j.p.N)
		if j.p.Check {
			// The golden factors depend on the inputs alone: computed
			// beside the simulation, compared with the ranks' in finish
			// (they had been computed there, after it, on the run's one
			// goroutine).
			gpl, err := newLUBudget(j.file, j.p, j.npu)
			if err != nil {
				return nil, err
			}
			var stop atomic.Bool
			defer stop.Store(true) // (the run failed: finish waited for it otherwise)
			j.golden = goLUGolden(besideContext(hooks.Context, &stop), gpl, j.mat, nil)
		}
	}
	per := j.topo.Node.NPUs
	// One worker generates the streams of every chip on the shared engine
	// ahead of it (nil where read-ahead is off, and each chip's NewAhead
	// finds it off too).
	ahead := arch.NewAhead()
	for pr := 0; pr < j.P; pr++ {
		for pc := 0; pc < j.Q; pc++ {
			id := j.rankOf(pr, pc)
			node, idx := id/per, id%per
			var chip *arch.Chip
			var err error
			if j.isolated() {
				chip, err = arch.NewHostChip(j.npu, j.eng, fmt.Sprintf("rank %d", id), j.chipKeyOrigin())
			} else {
				o := arch.Options{Mode: mode, Engine: j.eng, KeyOrigin: j.chipKeyOrigin(), Label: fmt.Sprintf("rank %d", id), Ahead: ahead}
				// Its room: what the run's bound leaves beside the run's
				// base and data and the other NPUs' models (the build
				// checked their sum).
				j.opts.modelRoom(&o, j.beside+float64(float64(npus-1)*j.chipBytes), "the run's data and base and the other NPUs' chip models")
				if hooks.Observer != nil && id == hooks.ObserveRank {
					o.Observer = hooks.Observer
				}
				chip, err = arch.NewChip(j.npu, o)
			}
			if err != nil {
				return nil, badInput(err)
			}
			r := &luRank{id: id, pr: pr, pc: pc, npu: cluster.NPU(node, idx), host: cluster.Host(node, j.topo.HostOf(idx)), chip: chip}
			j.ranks = append(j.ranks, r)
		}
	}
	if err := j.checkGroups(); err != nil {
		return nil, badInput(err)
	}
	if !j.isolated() {
		// Transfers between NPUs read and write their HBM beside the
		// GEMMs (rank id = global NPU index: ranks fill the NPUs in order).
		j.net.OnNPULoad(func(npu int, bps float64) { j.ranks[npu].chip.SetGMReserved(bps) })
	}
	start := time.Now()
	if j.isolated() {
		j.timer = newLUKernelTimer(j, j.p.Fidelity == "sampled")
		if j.timer.predict {
			if err := j.timer.prepare(); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range j.ranks {
		if full {
			if err := j.writeLocal(r); err != nil {
				return nil, err
			}
		}
		h, err := r.chip.NewHost()
		if err != nil {
			return nil, badInput(err)
		}
		r.h = h
		j.buildRank(r)
		r.chip.AttachHost(h)
		if err := r.chip.Start(isa.Program{Name: "lu-fused", Generated: true}); err != nil {
			return nil, err
		}
	}
	switch {
	case hooks.Meter != nil && j.isolated():
		// Kernels timed apart (isolated, sampled): the hosts' and the
		// network's events take the run's time, about as many in each
		// iteration — at the 256-NPU point the iterations begun and the
		// events simulated were the same share of the run within 0.01 at
		// every progress line, where the flops done (the trailing updates
		// shrink as n³) made the time left a third of what it was.
		nbk := float64(j.pl.nbk)
		hooks.Meter.watch(fmt.Sprintf("the factorization's %d iterations (%d ranks)", j.pl.nbk, len(j.ranks)), "iterations", func() (done, all float64) {
			return float64(j.itersBegun), nbk
		})
	case hooks.Meter != nil:
		// The ranks' kernels' flops done over the factorization's 2/3·n³
		// (the ranks append their tasks as they go, so what they will
		// launch is not known ahead; their kernels' flops come to it
		// within 1.2 % at n = 16384 on a node, 0.6 % at 32768).
		total := luFactorFlops(float64(j.p.N))
		hooks.Meter.watch(fmt.Sprintf("the factorization's flops (%d ranks)", len(j.ranks)), "flops", func() (done, all float64) {
			for _, r := range j.ranks {
				d, _ := r.chip.HostFlops()
				done += d
			}
			return done, total
		})
	}
	if hooks.Progress != nil || hooks.Context != nil {
		every := hooks.ProgressEvery
		if every == 0 {
			every = 1 << 20
		}
		ctx := hooks.Context
		j.eng.OnProgress(min(every, CancelEvery), func(now sim.Time, events uint64) {
			if ctx != nil && ctx.Err() != nil {
				j.eng.Stop(fmt.Errorf("stopped after %v of simulated time: %w", now, context.Cause(ctx))) // the signal's exit code
				return
			}
			if hooks.Progress != nil && events%every < CancelEvery {
				hooks.Progress(now, events)
			}
		})
	}
	err := j.eng.Run()
	wall := time.Since(start).Seconds()
	stats := make([]*arch.Stats, len(j.ranks))
	for i, r := range j.ranks {
		st, cerr := r.chip.Collect()
		if cerr != nil && err == nil {
			err = cerr
		}
		stats[i] = st
	}
	if err == nil {
		err = j.failed
	}
	var dl *sim.DeadlockError
	if err != nil && (!errors.As(err, &dl) || slices.Contains(stats, nil)) {
		return nil, err
	}
	if j.trace != nil {
		j.traceRanks()
	}
	res, ferr := j.finish(stats, wall, dl)
	if dl == nil {
		return res, ferr
	}
	if ferr != nil { // (the report of the run up to it did not close: the deadlock alone)
		return nil, dl
	}
	return res, dl
}

// luGroup is a process row's or column's NPU group and the algorithm its
// broadcasts use: HCCL's choice, or a ring of point-to-point sends when
// HCCL forms no communicator for the group (a 2- or 4-NPU group spanning a
// 910A node's HCCS meshes, CLUSTER-FACTS §1.2).
type luGroup struct {
	npus    []cluster.Endpoint
	ring    bool // HCCL forms no communicator: a P2P ring
	notHCCL bool // the explicit collectives.intra_server where HCCL would form none (a what-if)
}

// checkGroups builds and plans every row and column group once, so that a
// grid the network cannot serve is bad input before the run.
func (j *luCluster) checkGroups() error {
	j.rowGroups, j.colGroups = make([]*luGroup, j.P), make([]*luGroup, j.Q)
	for pr := 0; pr < j.P && j.Q > 1; pr++ {
		g, err := j.planGroup(true, pr)
		if err != nil {
			return err
		}
		j.rowGroups[pr] = g
	}
	for pc := 0; pc < j.Q && j.P > 1; pc++ {
		g, err := j.planGroup(false, pc)
		if err != nil {
			return err
		}
		j.colGroups[pc] = g
	}
	return nil
}

// planGroup builds and plans the group of process row (row) or column k.
// A plan does not depend on the broadcast's root.
func (j *luCluster) planGroup(row bool, k int) (*luGroup, error) {
	g := &luGroup{}
	if row {
		for pc := 0; pc < j.Q; pc++ {
			g.npus = append(g.npus, j.ranks[j.rankOf(k, pc)].npu)
		}
	} else {
		for pr := 0; pr < j.P; pr++ {
			g.npus = append(g.npus, j.ranks[j.rankOf(pr, k)].npu)
		}
	}
	pl, err := j.net.Plan(cluster.Broadcast, cluster.Auto, g.npus, 0)
	if err != nil {
		if _, err2 := j.net.Plan(cluster.Broadcast, cluster.Ring, g.npus, 0); err2 != nil {
			return nil, err
		}
		g.ring = true
	}
	g.notHCCL = pl.NotHCCL
	return g, nil
}

// meet joins a member to collective key among members (rank ids; root
// sends); the last to arrive starts it with start, whose done releases
// every member. With a trace, the collective's messages are recorded,
// drawn on the hosts' track (meetOn: another).
func (j *luCluster) meet(key string, root int, members []int, start func(done func()) error) func(done func()) error {
	return j.meetOn(0, key, root, members, start)
}

// meetOn is meet with the messages drawn on the ranks' track track (an
// HCCL collective's: luHCCLTrack, where its spans are).
func (j *luCluster) meetOn(track int, key string, root int, members []int, start func(done func()) error) func(done func()) error {
	return func(done func()) error {
		m := j.rv[key]
		if m == nil {
			m = &luMeet{need: len(members)}
			j.rv[key] = m
		}
		m.dones = append(m.dones, done)
		if len(m.dones) < m.need {
			return nil
		}
		delete(j.rv, key)
		sent := j.eng.Now()
		return start(func() {
			if j.trace != nil && root >= 0 {
				for _, to := range members {
					if to != root {
						j.trace.AddMessage(traces.ClusterMessage{From: root, To: to, Sent: sent, Arrived: j.eng.Now(), Name: key, Track: track})
					}
				}
			}
			for _, d := range m.dones {
				d()
			}
		})
	}
}

// hostSpan appends the host tasks of rank r that add appends and, when
// tracing, records the time the host spends in them as one span of its
// host track, named name (its stage first): two untimed calls of stage
// stage (which adds them no time) note when the host reaches the first and
// leaves the last. Not while a sample is built (its hosts do not run).
func (j *luCluster) hostSpan(r *luRank, stage, name string, add func()) {
	if j.trace == nil || j.collect != nil {
		add()
		return
	}
	var t0 sim.Time
	r.h.Call(stage, func() error { t0 = j.eng.Now(); return nil })
	add()
	r.h.Call(stage, func() error {
		j.trace.AddSpan(traces.ClusterSpan{Rank: r.id, Track: 0, Name: name, Cat: luStageCat(stage), From: t0, To: j.eng.Now()})
		return nil
	})
}

// luStageCats are the trace categories of a rank's host stages
// (traces.ClusterSpan.Cat), as a chip trace's host tasks have theirs
// (traces.HostTask.Kind): its own work, kernel launches, data it moves
// (PCIe, its MPI collectives over the host network), and waits — for its
// kernels, at the barrier (report.json's host_stages_seconds wait,
// barrier), which davinci-sim view reads as stalls. (HCCL's collectives
// run on the NPUs' stream, not the host: their own track.)
var luStageCats = map[string]string{
	"diag": "compute", "refine": "compute",
	"launch": "launch",
	"h2d":    "transfer", "d2h": "transfer", "d2h-factors": "transfer", "mpi-bcast": "transfer", "mpi-allreduce": "transfer",
	"wait": "wait", "barrier": "wait",
}

// luStageCat returns the trace category of host stage stage (luStageCats;
// "host" for one it does not list).
func luStageCat(stage string) string {
	if c, ok := luStageCats[stage]; ok {
		return c
	}
	return "host"
}

// async appends a host task waiting for begin's operation, recorded on
// the rank's host track when tracing.
func (j *luCluster) async(r *luRank, stage, name string, begin func(done func()) error) {
	r.h.Async(stage, func(done func()) error {
		t0 := j.eng.Now()
		return begin(func() {
			if j.trace != nil {
				j.trace.AddSpan(traces.ClusterSpan{Rank: r.id, Track: 0, Name: name, Cat: luStageCat(stage), From: t0, To: j.eng.Now()})
			}
			done()
		})
	})
}

// bcastNPU broadcasts bytes over an NPU group from position root; copy
// moves the real bytes (functional) when it is delivered.
func (j *luCluster) bcastNPU(g *luGroup, root int, bytes int64, copyFn func() error) func(done func()) error {
	return func(done func()) error {
		fin := func(sim.Time) {
			if copyFn != nil {
				if err := copyFn(); err != nil && j.failed == nil {
					j.failed = err
					j.eng.Stop(err)
				}
			}
			done()
		}
		if g.ring {
			j.hcclRing++
			return j.net.CollectiveWith(cluster.Broadcast, cluster.Ring, g.npus, root, bytes, fin)
		}
		if g.notHCCL {
			j.notHCCL++
		}
		return j.net.Collective(cluster.Broadcast, g.npus, root, bytes, fin)
	}
}

// bcastHosts is an MPI broadcast among the hosts of ranks (root: a rank
// id); ranks sharing a host need no message.
func (j *luCluster) bcastHosts(ranks []int, root int, bytes int64) func(done func()) error {
	return func(done func()) error {
		var g []cluster.Endpoint
		ri := 0
		seen := map[cluster.Endpoint]bool{}
		for _, id := range ranks {
			e := j.ranks[id].host
			if id == root {
				ri = len(g)
				if seen[e] {
					for k, x := range g {
						if x == e {
							ri = k
						}
					}
				}
			}
			if !seen[e] {
				seen[e] = true
				g = append(g, e)
			}
		}
		if len(g) == 1 {
			j.eng.At(j.eng.Now(), 0, sim.HandlerFunc(func(sim.Time, int64) { done() }), 0)
			return nil
		}
		return j.net.Collective(cluster.Broadcast, g, ri, bytes, func(sim.Time) { done() })
	}
}

// pcie moves bytes between rank r's host and NPU over the network's PCIe
// link (up: NPU → host); fn runs at delivery.
func (j *luCluster) pcie(r *luRank, up bool, bytes int64, fn func() error) func(done func()) error {
	return func(done func()) error {
		src, dst := r.host, r.npu
		if up {
			src, dst = r.npu, r.host
		}
		return j.net.Transfer(src, dst, bytes, func(sim.Time) {
			if fn != nil {
				if err := fn(); err != nil {
					r.chip.Fail(err)
					return
				}
			}
			done()
		})
	}
}

// buildRank appends rank r's host program: the single-NPU schedule
// (lu.go's buildHost) on the rank's blocks, with the diagonal work on the
// owner's host, MPI broadcasts of the inverses, PCIe through the network,
// and HCCL broadcasts of the panels along process rows and columns.
//
// The program is appended one fusion window at a time: the window's last
// task appends the next window (a run of thousands of iterations on
// hundreds of ranks never holds more than a window per rank; the host
// forgets what it has carried out).
func (j *luCluster) buildRank(r *luRank) {
	r.h.Forget()
	j.buildWindow(r, j.rankBuild(r), 0)
}

// compute appends a computation on rank r's host (arch.Host.Compute, on
// all the cores of its share). One whose duration does not fit the
// simulated time range stops the run, naming the node key that makes it
// so slow (the run would stop with sim.ErrTimeOverflow naming none when
// the host reached it).
func (j *luCluster) compute(r *luRank, stage string, flops float64, bytes int64, fp64 bool, fn func() error) {
	if r.h.ComputeTime(flops, bytes, fp64, 0) == sim.MaxTime {
		hm := &j.npu.Host
		per, prec := hm.FP32FlopsPerCycle, "FP32"
		if fp64 {
			per, prec = hm.FP64FlopsPerCycle, "FP64"
		}
		key, what := "node.hosts.clock", fmt.Sprintf("%.3g %s flops at %d cores × %.3g Hz × %g flops per cycle", flops, prec, hm.Cores, float64(hm.Clock), per)
		if sim.CeilPS(float64(bytes)/float64(hm.MemoryBandwidth)*1e12) == sim.MaxTime {
			key, what = "node.hosts.memory_bandwidth", fmt.Sprintf("%d bytes at %.3g B/s, its share of its socket's memory bandwidth", bytes, float64(hm.MemoryBandwidth))
		}
		j.eng.Stop(fmt.Errorf("%s: too slow: rank %d's host computation %q (%s) would end beyond the time a run can reach: %w",
			j.topo.Origin(key), r.id, stage, what, sim.ErrTimeOverflow))
	}
	r.h.Compute(stage, flops, bytes, fp64, 0, fn)
}

// chipKeyOrigin says where the value of a key of a rank's chip was given
// (arch.Options.KeyOrigin): its host's cores, clock and memory bandwidth
// come from the node's hosts (node.hosts.*: a rank's share of its
// socket's), every other key from the NPU's machine.
func (j *luCluster) chipKeyOrigin() func(key string) string {
	npu := machineKeyOrigin(j.topo.Node.NPU, j.opts.Overrides)
	return func(key string) string {
		if node, ok := nodeHostKeys[key]; ok {
			return j.topo.Origin(node)
		}
		return npu(key)
	}
}

// nodeHostKeys are the keys of a rank's chip's host that come from its
// node's hosts (a rank's share of its socket's), by the chip's key: a
// rank's messages name the node's key (chipKeyOrigin), and one chip run as
// a node of one NPU names the chip's (executeOneNPU).
var nodeHostKeys = map[string]string{"host.cores": "node.hosts.cores", "host.clock": "node.hosts.clock", "host.memory_bandwidth": "node.hosts.memory_bandwidth"}

// rankBuild returns the state of rank r's program at its start.
func (j *luCluster) rankBuild(r *luRank) *luRankBuild {
	st := &luRankBuild{}
	for pc := 0; pc < j.Q; pc++ {
		st.rowRanks = append(st.rowRanks, j.rankOf(r.pr, pc))
	}
	for pr := 0; pr < j.P; pr++ {
		st.colRanks = append(st.colRanks, j.rankOf(pr, r.pc))
	}
	return st
}

// luRankBuild is what a rank's program carries from one window to the
// next.
type luRankBuild struct {
	rowRanks, colRanks []int        // the rank's process row and column
	prevZ              *arch.Kernel // the fusion kernel in flight
}

// buildWindow appends rank r's iterations [k0, k0+F) and then the task
// that appends the next window (or the final stage).
func (j *luCluster) buildWindow(r *luRank, st *luRankBuild, k0 int) {
	pl, p := j.pl, j.p
	h := r.h
	nb, nbk, F := pl.nb, pl.nbk, pl.F
	full := p.Numerics == NumericsFull
	la := *p.LookAhead
	now := func() sim.Time { return j.eng.Now() }
	wait := func(k *arch.Kernel) { j.waitKernel(r, k) }
	sync := func(k *arch.Kernel) {
		if !la {
			wait(k)
		}
	}
	launchUpdate := func(name, zone string, cores []int, z band, i0, i1 int, after ...*arch.Kernel) *arch.Kernel {
		if z.empty(nbk) {
			return nil
		}
		blocks := j.localBlocks(r, z)
		if blocks == 0 {
			return nil
		}
		var g *luGEMM
		build := func() *luGEMM {
			if g == nil {
				g = j.update(r, z, i0, i1, 1/float64(j.s))
			}
			return g
		}
		k := j.launch(r, name, cores, func(core int) isa.Stream {
			return pl.gemmStream(indexOf(cores, core), len(cores), build())
		}, j.updateDesc(r, zone, cores, z, i0, i1), after...)
		k.Flops = float64(blocks) * 2 * float64(nb) * float64(nb) * float64((i1-i0)*nb)
		return k
	}
	diagBytes := int64(nb) * int64(nb)
	rowRanks, colRanks := st.rowRanks, st.colRanks
	{
		k1 := min(k0+F, nbk)
		k2 := min(k1+F, nbk)
		for i := k0; i < k1; i++ {
			inCol, inRow := r.pc == i%j.Q, r.pr == i%j.P
			owner := inCol && inRow
			if owner {
				h.Call("iteration", func() error { j.iterAt[i], j.itersBegun = now(), j.itersBegun+1; return nil })
			}
			if pl.tb == 4 && i < nbk-1 && (inCol || inRow) {
				cvt := j.launch(r, fmt.Sprintf("cvt%d", i), pl.main, func(core int) isa.Stream {
					return pl.cvtStreamOf(func() []luCvt { return j.cvtJobs(r, i) }, indexOf(pl.main, core), len(pl.main))
				}, j.cvtDesc(r, i))
				sync(cvt)
			}
			if owner {
				var rd, fac func() error
				if full {
					rd, fac = j.readDiag(r, i), j.factor(r, i)
				}
				j.async(r, "d2h", fmt.Sprintf("d2h diag %d", i), j.pcie(r, true, diagBytes*int64(pl.tb), rd))
				var t0 sim.Time
				h.Call("diag", func() error { t0 = now(); return nil })
				fl, by := luDiagWork(nb, i, nbk)
				j.compute(r, "diag", fl, by, false, fac)
				what := "LU + inverses"
				if luFactorOnly(i, nbk) {
					what = "LU"
				}
				h.Call("diag", func() error {
					if j.trace != nil {
						j.trace.AddSpan(traces.ClusterSpan{Rank: r.id, Name: fmt.Sprintf("diag %d (%s)", i, what), Cat: luStageCat("diag"), From: t0, To: now()})
					}
					return nil
				})
			}
			if luFactorOnly(i, nbk) {
				// The last block's inverses would serve no TRSM: none
				// are computed, broadcast or moved to an NPU.
				break
			}
			owner0 := j.rankOf(i%j.P, i%j.Q)
			if inCol && j.P > 1 {
				key := fmt.Sprintf("mpi-bcast U⁻¹ %d", i)
				j.async(r, "mpi-bcast", key, j.meet(key, owner0, colRanks, j.bcastHosts(colRanks, owner0, diagBytes*2)))
			}
			if inRow && j.Q > 1 {
				key := fmt.Sprintf("mpi-bcast L⁻¹ %d", i)
				j.async(r, "mpi-bcast", key, j.meet(key, owner0, rowRanks, j.bcastHosts(rowRanks, owner0, diagBytes*2)))
			}
			if inCol || inRow {
				n := int64(0)
				if inCol {
					n++
				}
				if inRow {
					n++
				}
				var wr func() error
				if full {
					wr = j.writeInv(r, i, inCol, inRow)
				}
				j.async(r, "h2d", fmt.Sprintf("h2d inverses %d", i), j.pcie(r, false, n*diagBytes*2, wr))
			}
			var trsm *arch.Kernel
			if inCol || inRow {
				left, right := j.trsm(r, i)
				var gs []*luGEMM
				fl := 0.0
				for _, g := range []*luGEMM{left, right} {
					if g != nil && len(g.jobs) > 0 {
						gs = append(gs, g)
						fl += g.flops()
					}
				}
				if len(gs) > 0 {
					trsm = j.launch(r, fmt.Sprintf("trsm%d", i), pl.main, func(core int) isa.Stream {
						return pl.gemmStream(indexOf(pl.main, core), len(pl.main), gs...)
					}, j.trsmDesc(r, i))
					trsm.Flops = fl
					if full {
						recorded := trsm.OnFinish
						trsm.OnFinish = func() { recorded(); j.capture(r, i)() }
					}
					sync(trsm)
				}
			}
			// The panels travel along the process rows (L) and columns (U).
			j.panelBcast(r, true, i, inCol, trsm, rowRanks)
			j.panelBcast(r, false, i, inRow, trsm, colRanks)
			st.prevZ = luLaunchZones(pl, launchUpdate, wait, sync, i, k0, k1, k2, trsm, st.prevZ)
		}
		if k1 < nbk {
			h.Call("window", func() error { j.buildWindow(r, st, k1); return nil })
			return
		}
	}
	j.appendFinal(r)
}

// panelBcast appends rank r's part in iteration i's broadcast of the L
// panel along its process row (row) or of the U panel along its column
// (members); the root (root: it ran the TRSM) first waits for its TRSM.
func (j *luCluster) panelBcast(r *luRank, row bool, i int, root bool, trsm *arch.Kernel, members []int) {
	blocks, others, k, pos, rootRank, name := j.localColsAfter(r.pc, i), j.P, r.pc, i%j.P, j.rankOf(i%j.P, r.pc), "U"
	if row {
		blocks, others, k, pos, rootRank, name = j.localRowsAfter(r.pr, i), j.Q, r.pr, i%j.Q, j.rankOf(r.pr, i%j.Q), "L"
	}
	if others < 2 || blocks == 0 {
		return
	}
	var after []*arch.Kernel
	if root && trsm != nil {
		after = []*arch.Kernel{trsm}
	}
	groups := j.colGroups
	if row {
		groups = j.rowGroups
	}
	g := groups[k]
	var cp func() error
	if j.p.Numerics == NumericsFull {
		cp = j.copyPanel(row, k, i)
	}
	nb := int64(j.p.NB)
	key := fmt.Sprintf("hccl-bcast %s %d group %d", name, i, k)
	// Enqueued in stream order (HCCL's broadcast on the rank's stream):
	// the root's after its TRSM, the host going on; the rank's later
	// kernels wait for it (streamAfter).
	var op *arch.Kernel
	join := j.meetOn(luHCCLTrack, key, rootRank, members, j.bcastNPU(g, pos, int64(blocks)*nb*nb*2, cp))
	j.hostSpan(r, "launch", "launch "+key, func() {
		op = r.h.Enqueue(key, "hccl", func(done func()) error {
			if r.hcclOpen++; r.hcclOpen == 1 {
				r.hcclFrom = j.eng.Now()
			}
			return join(done)
		}, after...)
	})
	if j.collect == nil {
		op.OnFinish = func() {
			if r.hcclOpen--; r.hcclOpen == 0 {
				r.hcclBusy += op.Finished - r.hcclFrom
			}
			if j.trace != nil {
				j.trace.AddSpan(traces.ClusterSpan{Rank: r.id, Track: luHCCLTrack, Name: key, Cat: "collective", From: op.Started, To: op.Finished})
			}
		}
	}
	r.streamOps = append(r.streamOps, op)
}

// hcclBusy is the time the ranks had an HCCL broadcast in flight
// (luRank.hcclBusy), averaged over the ranks, in seconds.
func (j *luCluster) hcclBusy() float64 {
	sum := 0.0
	for _, r := range j.ranks {
		sum += r.hcclBusy.Seconds()
	}
	return sum / float64(len(j.ranks))
}

// luHCCLTrack is the cluster trace's track of a rank's HCCL collectives
// (traceRanks).
const luHCCLTrack = 3

// waitKernel appends rank r's host waiting for kernel k (nil: none),
// recorded on its host track when tracing.
func (j *luCluster) waitKernel(r *luRank, k *arch.Kernel) {
	if k != nil {
		j.hostSpan(r, "wait", "wait "+k.Name, func() { r.h.Wait("wait", k) })
	}
}

// timedApartLeavesOut says what kernels timed apart (fidelity isolated
// and sampled) leave out beside the other zones and the L2's contents.
const timedApartLeavesOut = "no memory traffic (no memory section), and network transfers take no HBM bandwidth from the kernels"

// appendFinal waits for the rank's kernels, copies its factors to its
// host, and runs the distributed refinement: per step each host computes
// its share of the matrix-vector product and the two triangular solves
// (FP64, A regenerated from the seed, the FP16 factors read), then the
// hosts all-reduce the n-vector (MPI).
func (j *luCluster) appendFinal(r *luRank) {
	h, p := r.h, j.p
	n := float64(j.p.N)
	share := n * n / float64(j.P*j.Q)
	all := make([]int, len(j.ranks))
	for i := range all {
		all[i] = i
	}
	h.Call("factorized", func() error {
		j.hostSpan(r, "wait", "wait (every kernel)", func() { h.WaitAll("wait") })
		h.Call("factorized", func() error {
			j.factAt = max(j.factAt, j.eng.Now())
			j.async(r, "d2h-factors", "d2h-factors", j.pcie(r, true, int64(j.mloc)*int64(j.nloc)*2, nil))
			j.async(r, "barrier", "barrier (factorized)", j.meet("factorized", -1, all, func(done func()) error {
				j.iterAt[j.pl.nbk] = j.factAt
				if p.Numerics == NumericsFull {
					f := assembleFactors(j.p.N, j.p.NB, j.capL, j.capU, j.diags, j.s)
					j.ref, j.refErr = refine(j.runCtx(), j.mat, f, p.Refinement.Method, p.Refinement.Restart, p.Refinement.Tolerance, p.Refinement.MaxIterations)
				}
				return j.hostAllReduce(all, 8)(done)
			}))
			h.Call("refine", func() error {
				// Per step (luTimedSteps; step 0: x0 and its residual) each
				// host solves with its share of the factors and multiplies
				// by its share of A (4 flops an entry, 2 bytes: lu.go's), and
				// the hosts all-reduce the vector.
				j.hostSpan(r, "refine", "refine 0", func() { j.compute(r, "refine", 4*share, int64(share)*2, true, nil) })
				j.async(r, "mpi-allreduce", "mpi-allreduce refine 0", j.meet("refine0", -1, all, j.hostAllReduce(all, int64(n)*8)))
				for it := range luTimedSteps(p.Refinement, j.ref) {
					j.hostSpan(r, "refine", fmt.Sprintf("refine %d", it+1), func() { j.compute(r, "refine", 4*share, int64(share)*2, true, nil) })
					key := fmt.Sprintf("mpi-allreduce refine %d", it+1)
					j.async(r, "mpi-allreduce", key, j.meet(key, -1, all, j.hostAllReduce(all, int64(n)*8)))
				}
				h.Call("done", func() error { r.done = j.eng.Now(); return nil })
				return nil
			})
			return nil
		})
		return nil
	})
}

// hostAllReduce all-reduces bytes among the distinct hosts of ranks.
func (j *luCluster) hostAllReduce(ranks []int, bytes int64) func(done func()) error {
	return func(done func()) error {
		var g []cluster.Endpoint
		seen := map[cluster.Endpoint]bool{}
		for _, id := range ranks {
			if e := j.ranks[id].host; !seen[e] {
				seen[e] = true
				g = append(g, e)
			}
		}
		if len(g) == 1 {
			j.eng.At(j.eng.Now(), 0, sim.HandlerFunc(func(sim.Time, int64) { done() }), 0)
			return nil
		}
		return j.net.Collective(cluster.AllReduce, g, 0, bytes, func(sim.Time) { done() })
	}
}

// writeLocal writes rank r's blocks of A to its GM in the trailing precision.
func (j *luCluster) writeLocal(r *luRank) error {
	gm := r.chip.GM()
	n, nb := j.p.N, j.p.NB
	row := make([]float64, n)
	tb := int64(j.pl.tb)
	r32 := make([]float32, j.nloc)
	r16 := make([]uint16, j.nloc)
	for jl := 0; jl < j.mloc/nb; jl++ {
		for rr := 0; rr < nb; rr++ {
			g := (jl*j.P+r.pr)*nb + rr
			j.mat.Row(g, row)
			for ll := 0; ll < j.nloc/nb; ll++ {
				c0 := (ll*j.Q + r.pc) * nb
				for c := 0; c < nb; c++ {
					r32[ll*nb+c] = float32(row[c0+c])
				}
			}
			if err := writeTrailingRow(gm, j.a+int64(jl*nb+rr)*int64(j.nloc)*tb, r32, r16, j.pl.tb); err != nil {
				return err
			}
		}
	}
	return nil
}

// readDiag reads block (i, i) from its owner r's GM.
func (j *luCluster) readDiag(r *luRank, i int) func() error {
	return func() error {
		nb := j.p.NB
		r.blk = make([]float32, nb*nb)
		gm := r.chip.GM()
		il, ic := i/j.P, i/j.Q
		h := make([]uint16, nb)
		for rr := 0; rr < nb; rr++ {
			addr := j.a + (int64(il*nb+rr)*int64(j.nloc)+int64(ic*nb))*int64(j.pl.tb)
			if j.pl.tb == 4 {
				if err := gm.ReadFloat32s(addr, r.blk[rr*nb:(rr+1)*nb]); err != nil {
					return err
				}
				continue
			}
			if err := gm.ReadUint16s(addr, h); err != nil {
				return err
			}
			for k, v := range h {
				r.blk[rr*nb+k] = fp.F16ToF32(v)
			}
		}
		return nil
	}
}

// factor factors the block readDiag read (the scale s is fixed at i = 0
// and known to every rank with the first inverses).
func (j *luCluster) factor(r *luRank, i int) func() error {
	return func() error {
		d, err := luHostDiag(r.blk, j.p.NB, i, j.pl.nbk, &j.s)
		if err != nil {
			return fmt.Errorf("iteration %d: %w", i, err)
		}
		j.diags[i] = d
		return nil
	}
}

// writeInv writes the inverses rank r needs to its GM.
func (j *luCluster) writeInv(r *luRank, i int, u, l bool) func() error {
	return func() error {
		gm := r.chip.GM()
		d := j.diags[i]
		if d == nil {
			return fmt.Errorf("iteration %d: the inverses reached rank %d before the owner factored the block", i, r.id)
		}
		if u {
			if err := gm.WriteUint16s(j.uinv[i%2], d.uinv); err != nil {
				return err
			}
		}
		if l {
			return gm.WriteUint16s(j.linv[i%2], d.linv)
		}
		return nil
	}
}

// capture copies the panels rank r's TRSM of iteration i computed into the
// global factor arrays (functional bookkeeping, untimed).
func (j *luCluster) capture(r *luRank, i int) func() {
	return func() {
		if err := j.captureErr(r, i); err != nil {
			r.chip.Fail(err)
		}
	}
}

func (j *luCluster) captureErr(r *luRank, i int) error {
	gm := r.chip.GM()
	n, nb := j.p.N, j.p.NB
	slot := (i % j.ring) * nb
	buf := make([]uint16, nb)
	if r.pc == i%j.Q {
		for jl := 0; jl < j.mloc/nb; jl++ {
			jb := jl*j.P + r.pr
			if jb <= i {
				continue
			}
			for rr := 0; rr < nb; rr++ {
				if err := readResultUint16s(gm, j.lh+(int64(jl*nb+rr)*int64(j.W)+int64(slot))*2, buf); err != nil {
					return err
				}
				copy(j.capL[(jb*nb+rr)*n+i*nb:], buf)
			}
		}
	}
	if r.pr == i%j.P {
		for ll := 0; ll < j.nloc/nb; ll++ {
			l := ll*j.Q + r.pc
			if l <= i {
				continue
			}
			for rr := 0; rr < nb; rr++ {
				if err := readResultUint16s(gm, j.uh+(int64(slot+rr)*int64(j.nloc)+int64(ll*nb))*2, buf); err != nil {
					return err
				}
				copy(j.capU[(i*nb+rr)*n+l*nb:], buf)
			}
		}
	}
	return nil
}

// copyPanel returns the copy of iteration i's L panel along process row
// k (row) or its U panel along process column k: from the owner's GM to
// the same addresses on the group's other ranks (the ranks of a process
// row hold the same rows, those of a column the same columns).
func (j *luCluster) copyPanel(row bool, k, i int) func() error {
	return func() error {
		nb, nbk := j.p.NB, j.pl.nbk
		slot := int64((i % j.ring) * nb)
		var at []int64
		var root int
		var dst []int
		if row {
			lo, hi := localRange(i+1, nbk, k, j.P)
			for jl := lo; jl < hi; jl++ {
				for rr := 0; rr < nb; rr++ {
					at = append(at, j.lh+(int64(jl*nb+rr)*int64(j.W)+slot)*2)
				}
			}
			root = j.rankOf(k, i%j.Q)
			for pc := 0; pc < j.Q; pc++ {
				dst = append(dst, j.rankOf(k, pc))
			}
		} else {
			lo, hi := localRange(i+1, nbk, k, j.Q)
			for ll := lo; ll < hi; ll++ {
				for rr := 0; rr < nb; rr++ {
					at = append(at, j.uh+((slot+int64(rr))*int64(j.nloc)+int64(ll*nb))*2)
				}
			}
			root = j.rankOf(i%j.P, k)
			for pr := 0; pr < j.P; pr++ {
				dst = append(dst, j.rankOf(pr, k))
			}
		}
		dst = slices.DeleteFunc(dst, func(r int) bool { return r == root })
		return j.copyRows(root, dst, at)
	}
}

// copyRows copies nb FP16 values at each address of at from rank src's GM
// to the same addresses on every rank of dst (a broadcast's bytes).
func (j *luCluster) copyRows(src int, dst []int, at []int64) error {
	buf := make([]uint16, j.p.NB)
	from := j.ranks[src].chip.GM()
	for _, a := range at {
		if err := from.ReadUint16s(a, buf); err != nil {
			return err
		}
		for _, d := range dst {
			if err := j.ranks[d].chip.GM().WriteUint16s(a, buf); err != nil {
				return err
			}
		}
	}
	return nil
}

// traceRanks names the trace's ranks and tracks (kernels were added as
// they finished, by kernelFinished).
func (j *luCluster) traceRanks() {
	j.trace.Machine, j.trace.Program = j.topo.Name, "lu-fused"
	j.trace.Tracks = []string{"host (work, transfers, MPI collectives)", "NPU main cores", "NPU fusion cores", "HCCL collectives (NPU stream)"}
	j.trace.TrackCats = []string{"host", "kernel", "kernel", "collective"}
	for _, r := range j.ranks {
		j.trace.Ranks = append(j.trace.Ranks, fmt.Sprintf("rank %d (%d,%d) %s %s", r.id, r.pr, r.pc, r.npu, r.host))
	}
}

// kernelFinished records kernel k of rank r when it finishes (the hosts
// forget their kernels): its zone, and with a trace its span — track 1
// the main cores (TRSM, priority zones), 2 the fusion cores when the
// fusion zone has its own.
func (j *luCluster) kernelFinished(r *luRank, k *arch.Kernel) {
	j.zones.add(k, float64(k.Traffic.GM()))
	j.kernelsFinished++
	if j.trace == nil {
		return
	}
	track := 1
	if k.Zone == "fusion" && len(j.pl.fu) > 0 && j.pl.fu[0] != j.pl.main[0] {
		track = 2
	}
	j.trace.AddSpan(traces.ClusterSpan{Rank: r.id, Track: track, Name: k.Name, From: k.Started, To: k.Finished})
}

// isolated reports whether kernels are timed apart (fidelity isolated or
// sampled).
func (j *luCluster) isolated() bool { return j.p.Fidelity != "full" }

// launch appends a kernel of rank r (its zone is its key's): its streams
// run on the rank's chip (fidelity full), or it holds its cores for the
// time the timer gives it (isolated, sampled); while the sample is being
// built it is only collected.
func (j *luCluster) launch(r *luRank, name string, cores []int, stream func(core int) isa.Stream, d luKernelDesc, after ...*arch.Kernel) *arch.Kernel {
	var k *arch.Kernel
	after = r.streamAfter(after)
	if j.collect != nil {
		*j.collect = append(*j.collect, luPending{d: d, cores: cores, stream: stream})
		return r.h.Launch(name, d.key.zone, cores, stream, after...)
	}
	j.hostSpan(r, "launch", "launch "+name, func() {
		if !j.isolated() {
			k = r.h.Launch(name, d.key.zone, cores, stream, after...)
			return
		}
		p := luPending{d: d, cores: cores, stream: stream}
		id := j.timer.queue(p)
		k = r.h.LaunchTimed(name, d.key.zone, cores, func() (sim.Time, error) {
			j.timer.started(id)
			return j.timer.duration(r, p)
		}, after...)
	})
	k.OnFinish = func() { j.kernelFinished(r, k) }
	return k
}

// finish fills the report of the run; of a run that deadlocked (dl not
// nil), the report up to the deadlock, with dl in its Failure.
func (j *luCluster) finish(stats []*arch.Stats, wall float64, dl *sim.DeadlockError) (*Result, error) {
	p := j.p
	n := float64(p.N)
	total := sim.Time(0)
	for _, r := range j.ranks {
		total = max(total, r.done, r.h.Finish())
	}
	if dl != nil {
		total = dl.Time
	}
	if j.trace != nil {
		j.trace.End = total // (the trace's window is cut to the run, as a chip trace's)
	}
	fact := j.factAt.Seconds()
	flops := float64(2.0/3*n*n*n) + float64(1.5*n*n)
	peak1, _ := j.npu.Peak("FP16")
	peak := peak1 * float64(len(j.ranks))
	rep := &report.Report{Machine: j.topo.Name, Overrides: []string{}, MachineConfig: map[string]any{"cluster": j.topo.Name, "npu": j.npu.Name, "nodes": j.topo.Nodes, "npus_per_node": j.topo.Node.NPUs,
		// (Not an override when the node file leaves it out: derived from the PCIe generation.)
		"inter_group_bandwidth": j.topo.Node.InterGroup.Bandwidth.String()}}
	rep.Program = map[string]any{"kind": "lu-fused", "n": p.N, "nb": p.NB, "n_fused": p.NFused, "n_fusion": p.NFusion,
		"look_ahead": *p.LookAhead, "trailing": p.Trailing, "refinement": p.Refinement, "seed": p.Seed, "numerics": p.Numerics,
		"tiling": p.Tiling, "grid": map[string]int{"p": j.P, "q": j.Q}}
	secs := total.Seconds()
	rep.Time = report.TimeReport{Seconds: secs}
	if clk, err := sim.NewClock(float64(j.npu.Clock())); err == nil {
		rep.Time.Cycles = clk.CeilCycles(total)
	}
	solve := &report.FlopsReport{Total: flops, PeakTFLOPS: peak / 1e12, Convention: "HPL-MxP 2/3·n³ + 3/2·n² over the whole solve; peak = FP16 cube peak × NPUs"}
	if secs > 0 {
		solve.TFLOPS = flops / secs / 1e12
		solve.PeakFraction = flops / secs / peak
	}
	if dl == nil { // (the solve's flops: a deadlocked run did not make them)
		rep.Flops = solve
	}
	var events uint64
	var mm, gmRead float64
	if !j.isolated() { // (kernels timed apart move no memory traffic: no section)
		rep.Memory = &report.MemoryReport{}
	}
	for _, st := range stats {
		if m := rep.Memory; m != nil {
			m.GMReadBytes += st.GMReadBytes
			m.GMWriteBytes += st.GMWriteBytes
			m.HBMReadBytes += st.Traffic.HBMRead
			m.HBMWriteBytes += st.Traffic.HBMWrite
			m.L2ReadHitBytes += st.Traffic.L2Read
			m.L2HitBytes += st.L2HitBytes
			m.L2MissBytes += st.L2MissBytes
			// Means over the NPUs (each chip's own channel and L2).
			m.GMBandwidthUse += st.GMUtilisation / float64(len(stats))
			m.L2BandwidthUse += st.L2Utilisation / float64(len(stats))
		}
		gmRead += float64(st.Traffic.GMRead)
		mm += st.MMADFlops
	}
	if !j.isolated() {
		// Lanes and buffers over every core of every NPU (report.SetLanes).
		all := arch.ConcatStats(stats)
		used := make([]int, len(all.Cores))
		for i := range used {
			used[i] = i
		}
		if all.Geometry != nil {
			rep.SetLanes(all, float64(j.npu.Clock()), used)
		}
	}
	if m := rep.Memory; m != nil {
		if gmRead > 0 {
			m.L2HitRate = float64(m.L2ReadHitBytes) / gmRead
		}
		if rb := float64(m.GMReadBytes + m.GMWriteBytes); rb > 0 {
			m.OperationalIntensity = mm / rb
		}
		if hb := float64(m.HBMReadBytes + m.HBMWriteBytes); hb > 0 {
			m.OperationalIntensityHBM = mm / hb
		}
	}
	events = j.eng.Events()
	mode := "functional"
	if modeFor(p.Numerics) == arch.Timing {
		mode = "timing"
	}
	rep.Sim = report.SimReport{Events: events, WallSeconds: wall, Mode: mode}
	if j.timer != nil {
		rep.Sim.KernelWallSeconds = j.timer.simWall.Seconds()
	}
	if wall > 0 {
		rep.Sim.EventsPerSecond = float64(events) / wall
	}
	sec := &report.HPLMxP{N: p.N, NB: p.NB, NFused: p.NFused, NFusion: p.NFusion, LookAhead: *p.LookAhead,
		TrailingPrecision: p.Trailing, FactorizationSeconds: fact, TotalSeconds: secs,
		Flops: flops, TFLOPS: solve.TFLOPS, PeakFraction: solve.PeakFraction}
	if fact > 0 {
		sec.FactorizationTFLOPS = luFactorFlops(n) / fact / 1e12
	}
	sec.Iterations, sec.Windows = luSamples(j.iterAt, j.pl.nbk, j.pl.F, n, float64(p.NB), peak)
	sec.Zones = j.zones.finish()
	sec.HostStagesSeconds = map[string]float64{}
	cl := &report.Cluster{Name: j.topo.Name, Nodes: j.topo.Nodes, NPUs: len(j.ranks), GridP: j.P, GridQ: j.Q, Fidelity: p.Fidelity,
		Transfers: j.net.Transfers(), LinkBytes: map[string]float64{}, HCCLRingBroadcasts: j.hcclRing,
		HCCLBroadcastSeconds: j.hcclBusy()}
	for _, r := range j.ranks {
		rr := report.ClusterRank{Rank: r.id, Row: r.pr, Col: r.pc, NPU: r.npu.String(), Host: r.host.String(),
			FinishSeconds: r.h.Finish().Seconds(), HostStagesSeconds: map[string]float64{}}
		for k, v := range r.h.StageTimes() {
			rr.HostStagesSeconds[k] = v.Seconds()
			sec.HostStagesSeconds[k] += v.Seconds() / float64(len(j.ranks))
		}
		cl.Ranks = append(cl.Ranks, rr)
	}
	for id, l := range j.net.Links() {
		b := j.net.LinkBytes(cluster.LinkID(id))
		if b == 0 {
			continue
		}
		class := l.Name
		if parts := strings.Split(l.Name, "."); len(parts) > 1 {
			class = parts[1]
		}
		cl.LinkBytes[class] += b
	}
	if j.timer != nil {
		cl.KernelsLaunched, cl.KernelSimulations = j.timer.launches, len(j.timer.exact)
	}
	if j.timer != nil && j.timer.predict {
		cl.Sampling = j.timer.report(len(j.ranks), total, j.factAt)
	}
	// Energy: every NPU's (the paper's npu-smi figure: NPU chips only),
	// each part summed over the NPUs and the total the sum of the parts,
	// as on one chip (report.SetEnergy). Timed apart (isolated, sampled),
	// each kernel's dynamic energy by part comes from its simulation alone
	// (predicted like its time), the static power runs over the whole run
	// on every NPU.
	e := &report.EnergyReport{MaxWatts: j.npu.Power.MaxW * float64(len(j.ranks))}
	switch {
	case !j.npu.Power.Given():
	case j.timer != nil:
		e.StaticJoules = float64(j.npu.Power.StaticW * secs * float64(len(j.ranks)))
		d := j.timer.dynamic
		e.MatrixJoules, e.VectorJoules, e.PathJoules, e.L2Joules, e.HBMJoules = d[0], d[1], d[2], d[3], d[4]
	case !j.isolated():
		for _, st := range stats {
			tmp := &report.Report{}
			tmp.SetEnergy(st, &j.npu.Power)
			if r := tmp.Energy; r != nil {
				e.StaticJoules += r.StaticJoules
				e.MatrixJoules += r.MatrixJoules
				e.VectorJoules += r.VectorJoules
				e.PathJoules += r.PathJoules
				e.L2Joules += r.L2Joules
				e.HBMJoules += r.HBMJoules
			}
		}
	}
	e.Joules = e.StaticJoules + e.MatrixJoules + e.VectorJoules + e.PathJoules + e.L2Joules + e.HBMJoules
	if e.Joules > 0 {
		rep.Energy = e
		if secs > 0 {
			e.AverageWatts = e.Joules / secs
		}
		e.OverMax = e.AverageWatts > e.MaxWatts
		if dl != nil {
			flops = mm // (as report.SetEnergy without the program's flops: the matrix flops executed)
		}
		e.GFLOPSPerWatt = flops / e.Joules / 1e9
	}
	var failure error
	if dl == nil { // (the solve's results, its refinement and check: a deadlocked run has none)
		failure = setRefinement(sec, p, j.ref, j.refErr)
		if p.Numerics == NumericsFull && p.Check {
			j.golden.alone.Store(true) // (every CPU from now on)
			showGoldenWait(j.hooks, j.golden, p.N, j.eng)
			if err := j.golden.wait(); err != nil {
				return nil, err
			}
			mism := factorMismatches(p.N, p.NB, j.capL, j.capU, j.diags, j.golden.golden)
			sec.GoldenMismatches = ptr(mism)
			if mism > 0 && failure == nil {
				failure = fmt.Errorf("%w: %d factor values differ from the golden model", ErrCheckFailed, mism)
			}
			if mism == 0 {
				rep.Notes = append(rep.Notes, luFactorsChecked)
			}
		}
		rep.HPLMxP = sec
	}
	rep.Cluster = cl
	npus := fmt.Sprintf("%d NPUs", len(j.ranks))
	if len(j.ranks) == 1 {
		npus = "1 NPU"
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("lu-fused on %s: %d × %d grid over %s, fidelity %s; trailing matrix %s", j.topo.Name, j.P, j.Q, npus, fidelityNote(p.Fidelity), p.Trailing))
	if n := fp16DiagonalNote(p.Trailing, p.N); n != "" {
		rep.Notes = append(rep.Notes, n)
	}
	rep.Notes = append(rep.Notes, p.notes()...)
	rep.Program["check"] = p.Check
	if p.Check && p.Numerics != NumericsFull { // (as on one chip: numerics off, or a fidelity that implies it)
		rep.Notes = append(rep.Notes, checkNotMade)
	}
	if j.windowsUnused != 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("sampling.windows (%d) applies to fidelity sampled: not used at fidelity %s", j.windowsUnused, p.Fidelity))
	}
	if j.timer != nil && !j.timer.predict {
		rep.Notes = append(rep.Notes, fmt.Sprintf("fidelity isolated: %d kernels, %d distinct ones simulated alone on a fresh chip (cold L2, no other zone beside them); %s; energy: each kernel's dynamic energy from its simulation, the static power over the run", j.timer.launches, len(j.timer.exact), timedApartLeavesOut))
	}
	if s := cl.Sampling; s != nil {
		total := fmt.Sprintf("total %.6g s, 99.7 %% interval [%.6g, %.6g] s", secs, s.TotalLowSeconds, s.TotalHighSeconds)
		if dl != nil {
			total = fmt.Sprintf("no total: the run deadlocked at %.6g s", secs)
		}
		errs := fmt.Sprintf("%d leave-one-out %s", s.Residuals, plural(s.Residuals, "residual", "residuals"))
		switch {
		case s.LaunchesPredicted == 0:
			errs += "; nothing predicted: no sampling error"
		case dl != nil:
		case s.ResidualSD == nil:
			errs += fmt.Sprintf(": no error estimate, the interval is ± all of rank %d's predicted kernel time", s.Rank)
		default:
			errs += fmt.Sprintf(": mean %+.2f %%, sd %.2f %%; interval from rank %d's predictions, the widest, at %.2f sd (Student's t, %d %s of freedom)",
				100**s.ResidualMean, 100**s.ResidualSD, s.Rank, s.Quantile, s.Residuals-1, plural(s.Residuals-1, "degree", "degrees"))
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("fidelity sampled: %d of %d fusion windows simulated; %d kernels: %d timed by simulation (%d distinct ones simulated alone, the rest their repeats), %d predicted (%d classes; %s); %s; %s; energy: each kernel's dynamic energy from its simulation or predicted like its time, the static power over the run",
			s.WindowsSampled, s.Windows, s.KernelsLaunched, s.LaunchesExact, s.KernelSimulations, s.LaunchesPredicted, s.Classes, errs, total, timedApartLeavesOut))
	}
	if j.trace != nil && j.trace.Dropped > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("trace: %d spans and messages beyond the first %d left out (narrow it with --trace-window or --trace-ranks)", j.trace.Dropped, len(j.trace.Spans)+len(j.trace.Messages)))
	}
	if j.hcclRing > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d panel broadcasts ran as rings of point-to-point sends: HCCL forms no 2- or 4-NPU communicator across a 910A node's HCCS meshes (CLUSTER-FACTS §1.2)", j.hcclRing))
	}
	if j.notHCCL > 0 {
		// (A what-if the user asked for: honoured, but not what HCCL would run.)
		algo := j.topo.Node.Collectives.IntraServer
		where, _, _ := strings.Cut(j.topo.Origin("node.collectives.intra_server"), ": key ")
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d panel broadcasts ran as HCCL %s over 2- or 4-NPU groups per node spanning a 910A node's HCCS meshes, as collectives.intra_server: %s asks (%s); HCCL itself forms no such communicator (CLUSTER-FACTS §1.2, S3), and with intra_server auto they run as rings of point-to-point sends",
			j.notHCCL, algo, algo, where))
	}
	if dl != nil {
		// The report of the run up to the deadlock (time reached, memory
		// traffic, every NPU's lanes and buffers, energy, transfers, the
		// ranks' host stages), without what the solve computes after its
		// run (the flops, the HPL-MxP section), as on one chip. A rank
		// whose host had not finished has finish_seconds 0.
		var notMeaningful []string
		for i, r := range j.ranks {
			if r.h.Finish() == 0 {
				notMeaningful = append(notMeaningful, fmt.Sprintf("cluster.ranks.%d.finish_seconds", i))
			}
		}
		if j.isolated() && rep.Energy != nil {
			// Kernels timed apart leave no matrix flops in the ranks'
			// statistics: no flops to divide the energy by.
			notMeaningful = append(notMeaningful, "energy.gflops_per_watt")
		}
		if cl.Sampling != nil { // the interval of a total the run did not reach
			notMeaningful = append(notMeaningful, "cluster.sampling.total_low_seconds", "cluster.sampling.total_high_seconds",
				"cluster.sampling.factorization_low_seconds", "cluster.sampling.factorization_high_seconds")
		}
		markDeadlocked(rep, "lu-fused", dl, rep.Time.Cycles, notMeaningful)
		return &Result{Report: rep, Failure: dl}, nil
	}
	rep.Notes = append(rep.Notes, luSummary(fact, sec.FactorizationTFLOPS, secs, solve.TFLOPS, p.Refinement.Method, j.ref))
	return &Result{Report: rep, Failure: failure}, nil
}

// fidelityNote says what a fidelity simulates.
func fidelityNote(f string) string {
	if f == "sampled" {
		return "sampled (a systematic sample of fusion windows' kernels simulated alone, the rest predicted from them; the hosts, transfers and collectives on one engine)"
	}
	if f == "isolated" {
		return "isolated (each distinct kernel timed alone; the hosts, transfers and collectives on one engine)"
	}
	return "full (every NPU cycle-level, one engine with the links)"
}

// factorMismatches counts factor values (Lh, Uh off the diagonal blocks,
// the diagonal blocks) that differ from golden run g.
func factorMismatches(n, nb int, lh, uh []uint16, diags []*luDiag, g *luGolden) int {
	mism := 0
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			switch {
			case c/nb < r/nb:
				if lh[r*n+c] != g.lh[r*n+c] {
					mism++
				}
			case c/nb > r/nb:
				if uh[r*n+c] != g.uh[r*n+c] {
					mism++
				}
			}
		}
	}
	for i, d := range diags {
		gd := g.diags[i]
		if d == nil || gd == nil {
			mism += 2 * nb * nb
			continue
		}
		for k := range d.u {
			if math.Float32bits(d.u[k]) != math.Float32bits(gd.u[k]) || math.Float32bits(d.l[k]) != math.Float32bits(gd.l[k]) {
				mism++
			}
		}
	}
	return mism
}
