package cluster

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/davinci-sim/davinci-sim/sim"
)

// Op is a collective operation. Its byte count n follows HCCL's cost formulas (CLUSTER-FACTS
// §1.4): the whole buffer — the data broadcast or scattered by the root, the gathered result of an
// all-gather, each rank's input of a reduce-scatter or all-reduce.
type Op int

// Collective operations.
const (
	// Broadcast copies the root's n bytes to every rank.
	Broadcast Op = iota
	// AllGather: each rank contributes n/p bytes, every rank ends with all n.
	AllGather
	// ReduceScatter: each rank has n bytes, rank i ends with the reduced i-th n/p.
	ReduceScatter
	// AllReduce: each rank has n bytes, every rank ends with their reduction.
	AllReduce
	// Scatter: the root sends the i-th n/p bytes to rank i.
	Scatter
)

var opNames = [...]string{"broadcast", "allgather", "reduce-scatter", "allreduce", "scatter"}

// String returns the operation's name.
func (o Op) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Algo is a collective algorithm.
type Algo int

// Collective algorithms.
const (
	// Auto chooses as HCCL does on 910A (see Network.Plan).
	Auto Algo = iota
	// Ring passes chunks around the group in order (Broadcast: a chain, unpipelined, as HCCL's
	// formula assumes).
	Ring
	// HD is recursive halving-doubling (HCCL's H-D_R): recursive halving for reduce-scatter,
	// recursive doubling for all-gather, a binomial tree for broadcast; all-reduce on a rank count
	// that is not a power of two folds the extra ranks in first and out last.
	HD
	// Mesh sends to every other rank at once over a full mesh (the 4-NPU HCCS group).
	Mesh
	// Hierarchical is intra-server, then inter-server (among the ranks with the same local index),
	// then intra-server again.
	Hierarchical
)

var algoNames = [...]string{"auto", "ring", "hd", "mesh", "hierarchical"}

// String returns the algorithm's name as files spell it.
func (a Algo) String() string {
	if a >= 0 && int(a) < len(algoNames) {
		return algoNames[a]
	}
	return fmt.Sprintf("Algo(%d)", int(a))
}

// ParseAlgo parses an algorithm name: auto, ring, hd (also h-d_r, rhd), mesh, hierarchical, or
// binomial (the HD broadcast tree).
func ParseAlgo(s string) (Algo, error) {
	switch s {
	case "h-d_r", "rhd", "binomial":
		return HD, nil
	}
	for i, n := range algoNames {
		if n == s {
			return Algo(i), nil
		}
	}
	return 0, fmt.Errorf("unknown collective algorithm %q (want one of auto, ring, hd, mesh, hierarchical, binomial)", s)
}

// xfer is one transfer of a schedule: group positions src → dst, and whether dst reduces what it
// receives (γ).
type xfer struct {
	src, dst int32
	bytes    int64
	reduce   bool
}

// schedule is a collective as steps of transfers over group positions. A rank reaches step s when
// all its transfers of earlier steps (sent or received) are delivered and it has reduced what it
// received in them; a transfer of step s starts when both its sender and its receiver have reached
// step s (HCCL hand-shakes before each step's copy); steps in which a rank takes no part cost it
// nothing.
type schedule [][]xfer

// then appends b's steps after a's.
func (a schedule) then(b schedule) schedule { return append(a, b...) }

// merge runs schedules side by side (on disjoint ranks): step s of the result is the union of
// their steps s.
func merge(ss ...schedule) schedule {
	var out schedule
	for _, s := range ss {
		for i, st := range s {
			if i == len(out) {
				out = append(out, nil)
			}
			out[i] = append(out[i], st...)
		}
	}
	return out
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func isPow2(p int) bool { return p > 0 && p&(p-1) == 0 }

// ringSteps builds Ring on the positions idx (in ring order).
func ringSteps(op Op, idx []int32, root int, n int64) schedule {
	p := len(idx)
	var s schedule
	if p < 2 {
		return s
	}
	chunk := ceilDiv(n, int64(p))
	around := func(reduce bool) {
		for range p - 1 {
			st := make([]xfer, p)
			for i := range p {
				st[i] = xfer{idx[i], idx[(i+1)%p], chunk, reduce}
			}
			s = append(s, st)
		}
	}
	rel := func(v int) int32 { return idx[(root+v)%p] }
	switch op {
	case AllGather:
		around(false)
	case ReduceScatter:
		around(true)
	case AllReduce:
		around(true)
		around(false)
	case Broadcast:
		for v := range p - 1 {
			s = append(s, []xfer{{rel(v), rel(v + 1), n, false}})
		}
	case Scatter: // pipelined chain: at step k ranks 0..k forward one chunk each
		for k := range p - 1 {
			st := make([]xfer, 0, k+1)
			for v := 0; v <= k; v++ {
				st = append(st, xfer{rel(v), rel(v + 1), chunk, false})
			}
			s = append(s, st)
		}
	}
	return s
}

// hdSteps builds HD on the positions idx.
func hdSteps(op Op, idx []int32, root int, n int64) (schedule, error) {
	p := len(idx)
	var s schedule
	if p < 2 {
		return s, nil
	}
	if !isPow2(p) && (op == AllGather || op == ReduceScatter || op == Scatter) {
		return nil, fmt.Errorf("cluster: hd %v needs a power-of-two rank count (got %d); use ring", op, p)
	}
	k := bits.Len(uint(p)) - 1
	halving := func() {
		for j := range k {
			mask := p >> (j + 1)
			b := ceilDiv(n, int64(1)<<(j+1))
			st := make([]xfer, p)
			for i := range p {
				st[i] = xfer{idx[i], idx[i^mask], b, true}
			}
			s = append(s, st)
		}
	}
	doubling := func() {
		chunk := ceilDiv(n, int64(p))
		for j := range k {
			mask := 1 << j
			st := make([]xfer, p)
			for i := range p {
				st[i] = xfer{idx[i], idx[i^mask], chunk << j, false}
			}
			s = append(s, st)
		}
	}
	switch op {
	case AllGather:
		doubling()
	case ReduceScatter:
		halving()
	case AllReduce:
		if isPow2(p) {
			halving()
			doubling()
			break
		}
		// Fold: of the first 2·extra ranks, the odd ones hand their data to the even ones, which
		// join the power-of-two core; at the end the even ones hand the result back.
		extra := p - 1<<k
		var pre, post []xfer
		core := make([]int32, 0, 1<<k)
		for i := range p {
			switch {
			case i < 2*extra && i%2 == 1:
				pre = append(pre, xfer{idx[i], idx[i-1], n, true})
				post = append(post, xfer{idx[i-1], idx[i], n, false})
			default:
				core = append(core, idx[i])
			}
		}
		inner, _ := hdSteps(AllReduce, core, 0, n)
		s = append(schedule{pre}, inner...)
		s = append(s, post)
	case Scatter: // binomial: each holder hands half of what it holds to its partner
		rel := func(v int) int32 { return idx[(root+v)%p] }
		chunk := ceilDiv(n, int64(p))
		for mask := p >> 1; mask >= 1; mask >>= 1 {
			var st []xfer
			for v := 0; v < p; v += 2 * mask {
				st = append(st, xfer{rel(v), rel(v + mask), chunk * int64(mask), false})
			}
			s = append(s, st)
		}
	case Broadcast:
		rel := func(v int) int32 { return idx[(root+v)%p] }
		for mask := 1; mask < p; mask <<= 1 {
			var st []xfer
			for v := 0; v < mask && v+mask < p; v++ {
				st = append(st, xfer{rel(v), rel(v + mask), n, false})
			}
			s = append(s, st)
		}
	}
	return s, nil
}

// meshSteps builds Mesh on the positions idx.
func meshSteps(op Op, idx []int32, root int, n int64) schedule {
	p := len(idx)
	if p < 2 {
		return nil
	}
	chunk := ceilDiv(n, int64(p))
	all := func(reduce bool) []xfer {
		st := make([]xfer, 0, p*(p-1))
		for i := range p {
			for j := range p {
				if i != j {
					st = append(st, xfer{idx[i], idx[j], chunk, reduce})
				}
			}
		}
		return st
	}
	scatter := func() []xfer {
		st := make([]xfer, 0, p-1)
		for j := range p {
			if j != root {
				st = append(st, xfer{idx[root], idx[j], chunk, false})
			}
		}
		return st
	}
	switch op {
	case AllGather:
		return schedule{all(false)}
	case ReduceScatter:
		return schedule{all(true)}
	case AllReduce:
		return schedule{all(true), all(false)}
	case Broadcast:
		return schedule{scatter(), all(false)}
	case Scatter:
		return schedule{scatter()}
	}
	return nil
}

// level is one stage of a plan: an algorithm run on some sub-groups at once.
type level struct {
	op    Op
	algo  Algo
	p     int   // ranks per sub-group
	bytes int64 // n of each sub-group
	sched schedule
}

// Plan is the algorithm a collective uses on a group.
type Plan struct {
	// Algo is the algorithm (never Auto).
	Algo Algo
	// Intra and Inter are the algorithms inside a server and between servers when Algo is
	// Hierarchical.
	Intra, Inter Algo
	// Servers is the number of nodes the group spans; Local the ranks per node.
	Servers, Local int
	// NotHCCL is set when the intra-server algorithm is the node's explicit
	// collectives.intra_server (mesh or ring) on a 2- or 4-NPU group per node spanning both HCCS
	// groups: HCCL on 910A forms no such communicator (CLUSTER-FACTS §1.2, S3), and auto refuses
	// it. The explicit choice is honoured as a what-if; a run says so.
	NotHCCL bool
	levels  []level
}

// steps returns the whole schedule of the plan.
func (pl *Plan) steps() schedule {
	var s schedule
	for _, l := range pl.levels {
		s = s.then(l.sched)
	}
	return s
}

func (n *Network) flat(op Op, algo Algo, idx []int32, root int, bytes int64) (level, error) {
	l := level{op: op, algo: algo, p: len(idx), bytes: bytes}
	switch algo {
	case Ring:
		l.sched = ringSteps(op, idx, root, bytes)
	case HD:
		s, err := hdSteps(op, idx, root, bytes)
		if err != nil {
			return l, err
		}
		l.sched = s
	case Mesh:
		l.sched = meshSteps(op, idx, root, bytes)
	default:
		return l, fmt.Errorf("cluster: algorithm %v is not a flat algorithm", algo)
	}
	return l, nil
}

// Plan returns how a collective op over group (root: a position in group, used by Broadcast and
// Scatter) runs with algorithm algo. Auto chooses as HCCL does on 910A (CLUSTER-FACTS §1.4):
//   - NPUs on one node: the node's collectives.intra_server choice; auto is Mesh inside one HCCS
//     group and Ring over NPUs of both groups. A 2- or 4-NPU group may not span the two HCCS
//     groups (CLUSTER-FACTS §1.2, S3).
//   - NPUs on several nodes, the same number (1, 2, 4 or 8) on each: Hierarchical, with the
//     inter-server collectives.inter_server choice; auto is Ring when the number of servers is
//     not a power of two, else HD (S2).
//   - hosts (MPI): Broadcast uses collectives.host_bcast (binomial = HD); the others HD on a
//     power-of-two count, else Ring.
//
// It marks the group in the network's scratch: not safe beside another call on the same Network
// (as the network's other methods; the engine's goroutine makes them all).
func (n *Network) Plan(op Op, algo Algo, group []Endpoint, root int) (Plan, error) {
	if op < Broadcast || op > Scatter {
		return Plan{}, fmt.Errorf("cluster: unknown collective op %d", int(op))
	}
	if len(group) == 0 {
		return Plan{}, fmt.Errorf("cluster: %v over an empty group", op)
	}
	if root < 0 || root >= len(group) {
		return Plan{}, fmt.Errorf("cluster: %v root %d is not a position in the group of %d", op, root, len(group))
	}
	// (a plan is made for every collective a run starts: the endpoints
	// seen and the servers are marked in the network's scratch, not maps —
	// maps were 60 % of the bytes a 4096-NPU run allocated)
	sc := &n.plan
	sc.next(n.topo.NPUs()+n.topo.Nodes*n.topo.Node.Hosts.Count, n.topo.Nodes)
	hosts := 0
	for _, e := range group {
		if err := n.check(e); err != nil {
			return Plan{}, err
		}
		if !sc.see(n.id(e)) {
			return Plan{}, fmt.Errorf("cluster: %v group lists %v twice", op, e)
		}
		if e.Kind == KindHost {
			hosts++
		}
	}
	// servers in order of first appearance, with their ranks' positions
	// (one backing array, each server's positions together)
	for _, e := range group {
		s := sc.server(e.Node) // (may append to counts: before the index)
		sc.counts[s]++
	}
	servers := make([][]int32, len(sc.counts))
	pos := make([]int32, len(group))
	for s, c := range sc.counts {
		servers[s], pos = pos[:0:c], pos[c:]
	}
	for i, e := range group {
		s := sc.node[e.Node].server
		servers[s] = append(servers[s], int32(i))
	}
	all := make([]int32, len(group))
	for i := range all {
		all[i] = int32(i)
	}
	cfg := n.topo.Node.Collectives
	pl := Plan{Servers: len(servers), Local: len(servers[0])}
	if algo == Auto {
		switch {
		case hosts == len(group):
			algo = Ring
			if op == Broadcast && cfg.HostBcast == "binomial" || op != Broadcast && isPow2(len(group)) {
				algo = HD
			}
		case hosts > 0:
			return Plan{}, fmt.Errorf("cluster: %v group mixes hosts and NPUs; HCCL and MPI groups are separate", op)
		case len(servers) == 1:
			a, notHCCL, err := n.intraAlgo(group, all)
			if err != nil {
				return Plan{}, err
			}
			algo, pl.NotHCCL = a, notHCCL
		default:
			algo = Hierarchical
		}
	}
	if algo != Hierarchical {
		if err := flatOK(op, algo, len(group)); err != nil {
			return Plan{}, err
		}
		pl.Algo = algo
		return pl, nil
	}
	local := len(servers[0])
	for _, s := range servers {
		if len(s) != local {
			return Plan{}, fmt.Errorf("cluster: hierarchical %v needs the same number of ranks on every node (node %d has %d, node %d has %d)",
				op, group[s[0]].Node, len(s), group[servers[0][0]].Node, local)
		}
	}
	if hosts > 0 {
		return Plan{}, fmt.Errorf("cluster: hierarchical %v is for NPU groups", op)
	}
	intra, notHCCL, err := n.intraAlgo(group, servers[0])
	if err != nil {
		return Plan{}, err
	}
	pl.NotHCCL = notHCCL
	inter := Ring
	switch cfg.InterServer {
	case "hd":
		inter = HD
	case "auto":
		if isPow2(len(servers)) {
			inter = HD
		}
	}
	pl.Algo, pl.Intra, pl.Inter = Hierarchical, intra, inter
	return pl, nil
}

// flatOK reports whether the flat algorithm algo can run op on p ranks.
func flatOK(op Op, algo Algo, p int) error {
	switch algo {
	case Ring, Mesh:
		return nil
	case HD:
		if !isPow2(p) && (op == AllGather || op == ReduceScatter || op == Scatter) {
			return fmt.Errorf("cluster: hd %v needs a power-of-two rank count (got %d); use ring", op, p)
		}
		return nil
	}
	return fmt.Errorf("cluster: unknown algorithm %v", algo)
}

// intraAlgo is the intra-server algorithm for the positions idx of group (all on one node).
// notHCCL says the node's explicit collectives.intra_server choice was taken for a 2- or 4-NPU
// group spanning both HCCS groups, which HCCL on 910A does not form (and auto refuses).
func (n *Network) intraAlgo(group []Endpoint, idx []int32) (a Algo, notHCCL bool, err error) {
	g0 := n.topo.Group(group[idx[0]].Index)
	one := true
	for _, i := range idx {
		one = one && n.topo.Group(group[i].Index) == g0
	}
	spans := !one && (len(idx) == 2 || len(idx) == 4)
	switch n.topo.Node.Collectives.IntraServer {
	case "mesh":
		return Mesh, spans, nil
	case "ring":
		return Ring, spans, nil
	}
	switch {
	case one:
		return Mesh, false, nil
	case spans:
		return 0, false, fmt.Errorf("cluster: a %d-NPU communicator on node %d spans both HCCS groups, which HCCL on 910A does not allow (CLUSTER-FACTS §1.2, S3)",
			len(idx), group[idx[0]].Node)
	}
	return Ring, false, nil
}

// build returns the levels of plan pl for op on group with n bytes.
func (n *Network) build(pl *Plan, op Op, group []Endpoint, root int, bytes int64) error {
	all := make([]int32, len(group))
	for i := range all {
		all[i] = int32(i)
	}
	if pl.Algo != Hierarchical {
		l, err := n.flat(op, pl.Algo, all, root, bytes)
		if err != nil {
			return err
		}
		pl.levels = []level{l}
		return nil
	}
	var servers [][]int32
	where := map[int]int{}
	for i, e := range group {
		s, ok := where[e.Node]
		if !ok {
			s = len(servers)
			where[e.Node] = s
			servers = append(servers, nil)
		}
		servers[s] = append(servers[s], int32(i))
	}
	S, L := len(servers), len(servers[0])
	rs, rl := where[group[root].Node], slices.Index(servers[where[group[root].Node]], int32(root))
	column := func(i int) []int32 {
		c := make([]int32, S)
		for s := range S {
			c[s] = servers[s][i]
		}
		return c
	}
	perRank := ceilDiv(bytes, int64(L))
	intra := func(o Op, which []int, b int64, rootLocal int) (level, error) {
		var ss []schedule
		for _, s := range which {
			l, err := n.flat(o, pl.Intra, servers[s], rootLocal, b)
			if err != nil {
				return level{}, err
			}
			ss = append(ss, l.sched)
		}
		return level{op: o, algo: pl.Intra, p: L, bytes: b, sched: merge(ss...)}, nil
	}
	inter := func(o Op, b int64, rootServer int) (level, error) {
		var ss []schedule
		for i := range L {
			l, err := n.flat(o, pl.Inter, column(i), rootServer, b)
			if err != nil {
				return level{}, err
			}
			ss = append(ss, l.sched)
		}
		return level{op: o, algo: pl.Inter, p: S, bytes: b, sched: merge(ss...)}, nil
	}
	every := make([]int, S)
	for s := range every {
		every[s] = s
	}
	pl.levels = pl.levels[:0]
	for _, st := range hierStages(op) {
		var l level
		var err error
		b := bytes
		if st.perRank {
			b = perRank
		}
		which := every
		if st.rootOnly {
			which = []int{rs}
		}
		switch {
		case st.intra && L > 1:
			l, err = intra(st.op, which, b, rl)
		case !st.intra && S > 1:
			l, err = inter(st.op, b, rs)
		default:
			continue
		}
		if err != nil {
			return err
		}
		pl.levels = append(pl.levels, l)
	}
	return nil
}

// Collective runs op over group with the algorithm HCCL (or MPI, for hosts) would choose (see
// Plan) and calls done with the time the last rank finishes. root is a position in group.
func (n *Network) Collective(op Op, group []Endpoint, root int, bytes int64, done func(sim.Time)) error {
	return n.CollectiveWith(op, Auto, group, root, bytes, done)
}

// CollectiveWith runs op over group with algorithm algo: every step is a set of transfers on the
// link model (so it contends with all other traffic), reductions cost γ·bytes on the receiving rank
// (γ = 1 / collectives.npu_reduce_bandwidth or host_reduce_bandwidth). done is called with the time
// the last rank finishes, as an engine event.
func (n *Network) CollectiveWith(op Op, algo Algo, group []Endpoint, root int, bytes int64, done func(sim.Time)) error {
	if bytes < 0 {
		return fmt.Errorf("cluster: %v of %d bytes: must be ≥ 0", op, bytes)
	}
	pl, err := n.Plan(op, algo, group, root)
	if err != nil {
		return err
	}
	if err := n.build(&pl, op, group, root, bytes); err != nil {
		return err
	}
	r := newRun(n, group, pl.steps(), done)
	r.start()
	return nil
}

// reduceTooSlow is the error of a reduction of bytes on e that would end
// beyond the simulated time range, naming the key of its bandwidth. It
// wraps sim.ErrTimeOverflow.
func (n *Network) reduceTooSlow(e Endpoint, bytes int64) error {
	key, bw := "node.collectives.npu_reduce_bandwidth", n.topo.Node.Collectives.NPUReduceBandwidth
	if e.Kind == KindHost {
		key, bw = "node.collectives.host_reduce_bandwidth", n.topo.Node.Collectives.HostReduceBandwidth
	}
	return fmt.Errorf("%s: too slow: reducing %d bytes on %v (%.3g B/s) would end beyond the time a run can reach: %w",
		n.topo.Origin(key), bytes, e, float64(bw), sim.ErrTimeOverflow)
}

// gamma returns the reduction cost in ps per byte on endpoint e.
func (n *Network) gamma(e Endpoint) float64 {
	c := n.topo.Node.Collectives
	bw := float64(c.NPUReduceBandwidth)
	if e.Kind == KindHost {
		bw = float64(c.HostReduceBandwidth)
	}
	return 1e12 / bw
}

// entry is one step a rank takes part in.
type entry struct {
	step    int32
	rem     int32 // transfers of the step involving the rank not yet delivered
	red     int64 // bytes the rank reduces at the end of the step
	out0    int32 // the rank's sends of the step: xs[out0:out1]
	out1    int32
	in0     int32 // the rank's receives of the step: xs[byDst[in0:in1]]
	in1     int32
	started bool
}

// run executes a schedule.
type run struct {
	n     *Network
	group []Endpoint
	xs    []xfer
	at    [][2]int32 // per transfer: entry index of src and of dst in their ranks' lists
	byDst []int32    // transfer indices, step by step, sorted by receiver
	ready []uint8    // per transfer: how many of its two ranks have reached its step
	ent   [][]entry  // per rank
	pos   []int32    // per rank: current entry
	left  int        // ranks not through their entries; −1: finished (finish called or scheduled)
	done  func(sim.Time)
	// starting: start is entering the ranks (a run with nothing to move
	// finishes as an event, not inside the Collective call)
	starting bool
	// the storage of entries, of the sorting and of the counts, kept with
	// the run's slices for the next run to reuse (Network.runs)
	all         []entry
	sorted      []xfer
	order       []int32
	count, seen []int32
}

// newRun returns the run of schedule s over group, calling done when it
// finishes; its storage is a finished run's where the network has one
// (Network.runs: a run at 4096 NPUs allocated 0.93 GB in its collectives'
// runs, each a few KiB to MiB, 18 % of its allocations).
func newRun(n *Network, group []Endpoint, s schedule, done func(sim.Time)) *run {
	p := len(group)
	var r *run
	if k := len(n.runs); k > 0 {
		r, n.runs = n.runs[k-1], n.runs[:k-1]
	} else {
		r = &run{}
	}
	r.n, r.group, r.left, r.done = n, group, p, done
	r.ent = reuse(r.ent, p)
	r.pos = reuse(r.pos, p)
	total := 0
	for _, st := range s {
		total += len(st)
	}
	r.xs = slices.Grow(r.xs[:0], total)
	r.at = slices.Grow(r.at[:0], total)
	r.byDst = r.byDst[:0]
	// Each rank's entries (one per step it takes part in) are counted
	// first and cut from one array: appended rank by rank, step by step,
	// they had taken a run at 4096 NPUs 1 GB of allocations.
	r.count, r.seen = reuse(r.count, p), reuse(r.seen, p)
	count, seen := r.count, r.seen
	widest, entries := 0, 0
	for si, st := range s {
		widest = max(widest, len(st))
		for _, x := range st {
			for _, rank := range [2]int32{x.src, x.dst} {
				if seen[rank] != int32(si)+1 {
					seen[rank] = int32(si) + 1
					count[rank]++
					entries++
				}
			}
		}
	}
	r.all = reuse(r.all, entries)
	all := r.all
	for rank, c := range count {
		r.ent[rank], all = all[:0:c], all[c:]
	}
	get := func(rank int32, step int) int32 {
		e := r.ent[rank]
		if len(e) == 0 || e[len(e)-1].step != int32(step) {
			r.ent[rank] = append(e, entry{step: int32(step), out0: -1, in0: -1})
		}
		return int32(len(r.ent[rank]) - 1)
	}
	r.sorted, r.order = slices.Grow(r.sorted[:0], widest), slices.Grow(r.order[:0], widest)
	sorted, order := r.sorted, r.order
	for si, st := range s {
		st = append(sorted[:0], st...)
		slices.SortStableFunc(st, func(a, b xfer) int { return int(a.src) - int(b.src) })
		for _, x := range st {
			i := int32(len(r.xs))
			a, b := get(x.src, si), get(x.dst, si)
			es, ed := &r.ent[x.src][a], &r.ent[x.dst][b]
			if es.out0 < 0 {
				es.out0 = i
			}
			es.out1 = i + 1
			es.rem++
			ed.rem++
			if x.reduce {
				ed.red += x.bytes
			}
			r.xs = append(r.xs, x)
			r.at = append(r.at, [2]int32{a, b})
		}
		first := int32(len(r.xs) - len(st))
		order := order[:len(st)]
		for i := range order {
			order[i] = first + int32(i)
		}
		slices.SortStableFunc(order, func(a, b int32) int { return int(r.xs[a].dst) - int(r.xs[b].dst) })
		for _, xi := range order {
			ed := &r.ent[r.xs[xi].dst][r.at[xi][1]]
			k := int32(len(r.byDst))
			if ed.in0 < 0 {
				ed.in0 = k
			}
			ed.in1 = k + 1
			r.byDst = append(r.byDst, xi)
		}
	}
	r.ready = reuse(r.ready, len(r.xs))
	return r
}

// reuse returns x with n zero elements, in its own storage where that holds them.
func reuse[T any](x []T, n int) []T {
	if cap(x) < n {
		return make([]T, n)
	}
	x = x[:n]
	clear(x)
	return x
}

func (r *run) start() {
	e := r.n.eng
	r.starting = true
	for rank := range r.group {
		r.enter(int32(rank))
	}
	r.starting = false
	if len(r.group) > 0 && r.left == 0 {
		// nothing to move (one rank, or no steps): finish as an event, not
		// inside the call (enter left it to this; it had also finished the
		// run at once, calling done twice)
		r.left = -1
		e.At(e.Now(), 0, delivery(func(t sim.Time) { r.finish(t); r.release() }), 0)
	}
}

func (r *run) finish(t sim.Time) {
	if r.done != nil {
		r.done(t)
	}
}

// release gives a finished run's storage to the network for the next run
// (newRun), once the handler that finished it has returned: nothing holds
// the run then (every transfer was delivered, every reduction done; the
// delivered flows that name it are not called again before they are
// reused), while during the handler the run's lists are still being read.
func (r *run) release() {
	r.n.runs = append(r.n.runs, r)
	r.group, r.done = nil, nil
}

// enter moves rank along its entries as far as delivered transfers allow.
func (r *run) enter(rank int32) {
	for {
		k := r.pos[rank]
		ents := r.ent[rank]
		if int(k) == len(ents) {
			r.left--
			if r.left == 0 && !r.starting {
				r.left = -1
				r.finish(r.n.eng.Now())
			}
			return
		}
		e := &ents[k]
		if !e.started {
			e.started = true
			for i := e.out0; e.out0 >= 0 && i < e.out1; i++ {
				r.arrive(i)
			}
			for i := e.in0; e.in0 >= 0 && i < e.in1; i++ {
				r.arrive(r.byDst[i])
			}
		}
		if e.rem > 0 {
			return
		}
		if e.red > 0 {
			d := sim.CeilPS(float64(e.red) * r.n.gamma(r.group[rank]))
			eng := r.n.eng
			at := sim.Add(eng.Now(), d)
			if at == sim.MaxTime { // beyond the time range: name the reduction's bandwidth
				eng.Stop(r.n.reduceTooSlow(r.group[rank], e.red))
				return
			}
			e.red = 0 // reduced once
			eng.At(at, 0, delivery(func(sim.Time) {
				r.pos[rank]++
				if r.enter(rank); r.left < 0 {
					r.release()
				}
			}), 0)
			return
		}
		r.pos[rank]++
	}
}

// arrive notes that one side of transfer xi reached its step; the second side starts it.
func (r *run) arrive(xi int32) {
	if r.ready[xi]++; r.ready[xi] < 2 {
		return
	}
	x := r.xs[xi]
	// endpoints were checked by Plan, so Transfer cannot fail
	_ = r.n.send(r.group[x.src], r.group[x.dst], x.bytes, r, int64(xi))
}

// Handle implements sim.Handler: transfer xi was delivered.
func (r *run) Handle(_ sim.Time, xi int64) {
	if r.delivered(int32(xi)); r.left < 0 {
		r.release()
	}
}

func (r *run) delivered(xi int32) {
	x := r.xs[xi]
	at := r.at[xi]
	for side, rank := range [2]int32{x.src, x.dst} {
		e := &r.ent[rank][at[side]]
		e.rem--
		if e.rem == 0 && r.pos[rank] == at[side] && e.started {
			r.enter(rank)
		}
	}
}

// planScratch is Plan's scratch: marks by endpoint id and by node, valid
// when their epoch is the plan's, so that a plan clears nothing.
type planScratch struct {
	epoch    uint64
	endpoint []uint64   // by Network.id: the epoch of the plan that saw it
	node     []nodeMark // by node
	counts   []int32    // ranks per server, in order of first appearance
}

// nodeMark is a node's server position in the plan of epoch.
type nodeMark struct {
	epoch  uint64
	server int32
}

// next starts a plan on a network of endpoints endpoint ids and nodes nodes.
func (sc *planScratch) next(endpoints, nodes int) {
	if len(sc.endpoint) < endpoints {
		sc.endpoint = make([]uint64, endpoints)
	}
	if len(sc.node) < nodes {
		sc.node = make([]nodeMark, nodes)
	}
	sc.epoch++
	sc.counts = sc.counts[:0]
}

// see marks endpoint id and reports whether this plan had not seen it.
func (sc *planScratch) see(id int32) bool {
	if sc.endpoint[id] == sc.epoch {
		return false
	}
	sc.endpoint[id] = sc.epoch
	return true
}

// server returns node's server position in the plan, the next one (and a
// count of its own) the first time the plan meets the node.
func (sc *planScratch) server(node int) int32 {
	m := &sc.node[node]
	if m.epoch != sc.epoch {
		*m = nodeMark{sc.epoch, int32(len(sc.counts))}
		sc.counts = append(sc.counts, 0)
	}
	return m.server
}
