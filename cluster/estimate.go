package cluster

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/davinci-sim/davinci-sim/sim"
)

// Cost is the Hockney α-β-γ model HCCL documents (CLUSTER-FACTS §1.4, S1): one step of n bytes costs
// α + n·β, plus n·γ when the receiver reduces the bytes.
type Cost struct {
	// Alpha is the fixed latency of one step.
	Alpha sim.Time
	// Beta is the transfer time per byte, in picoseconds.
	Beta float64
	// Gamma is the reduction time per byte, in picoseconds.
	Gamma float64
}

// Estimate returns HCCL's closed-form time (CLUSTER-FACTS §1.4) of op with the flat algorithm algo
// (Ring, HD or Mesh) on p ranks and n bytes (the byte count convention of Op), with every step
// costing c. It is the fast estimator; Network.CollectiveWith simulates the same schedule on the
// link model, and the two agree to a few picoseconds when nothing else uses the links.
func Estimate(op Op, algo Algo, p int, n int64, c Cost) (sim.Time, error) {
	if p < 1 {
		return 0, fmt.Errorf("cluster: estimate on %d ranks", p)
	}
	if n < 0 {
		return 0, fmt.Errorf("cluster: estimate of %d bytes", n)
	}
	if err := flatOK(op, algo, p); err != nil {
		return 0, err
	}
	if p == 1 {
		return 0, nil
	}
	P, N := float64(p), float64(n)
	frac := (P - 1) / P
	lg := bits.Len(uint(p - 1)) // ⌈log2 p⌉
	var steps int64
	var t float64 // β and γ terms, in ps
	switch algo {
	case Ring:
		switch op {
		case ReduceScatter:
			steps, t = int64(p-1), frac*N*(c.Beta+c.Gamma)
		case AllGather, Scatter:
			steps, t = int64(p-1), frac*N*c.Beta
		case AllReduce:
			steps, t = int64(2*(p-1)), float64(2*frac*N*c.Beta)+float64(frac*N*c.Gamma)
		case Broadcast:
			steps, t = int64(p-1), (P-1)*N*c.Beta
		}
	case HD:
		switch op {
		case ReduceScatter:
			steps, t = int64(lg), frac*N*(c.Beta+c.Gamma)
		case AllGather, Scatter:
			steps, t = int64(lg), frac*N*c.Beta
		case AllReduce:
			if isPow2(p) {
				steps, t = int64(2*lg), float64(2*frac*N*c.Beta)+float64(frac*N*c.Gamma)
			} else {
				k := bits.Len(uint(p)) - 1
				pp := float64(int(1) << k)
				f2 := (pp - 1) / pp
				steps, t = int64(2*k+2), float64((float64(2*f2)+2)*N*c.Beta)+float64((f2+1)*N*c.Gamma)
			}
		case Broadcast:
			steps, t = int64(lg), float64(lg)*N*c.Beta
		}
	case Mesh:
		switch op {
		case AllGather, Scatter:
			steps, t = 1, N/P*c.Beta
		case ReduceScatter:
			steps, t = 1, float64(N/P*c.Beta)+float64(frac*N*c.Gamma)
		case AllReduce:
			steps, t = 2, float64(2*N/P*c.Beta)+float64(frac*N*c.Gamma)
		case Broadcast:
			steps, t = 2, 2*N/P*c.Beta
		}
	}
	alpha := sim.MaxTime
	if steps == 0 || c.Alpha <= sim.MaxTime/sim.Time(steps) {
		alpha = sim.Time(steps) * c.Alpha
	}
	return sim.Add(alpha, sim.CeilPS(t)), nil
}

// EstimateHierarchical is the closed form of the hierarchical composition (CLUSTER-FACTS §1.4, S1):
// AllReduce = intra ReduceScatter + inter AllReduce on n/local + intra AllGather; Broadcast = intra
// Scatter + inter Broadcast on n/local + intra AllGather; AllGather = inter AllGather on n/local +
// intra AllGather; ReduceScatter = intra ReduceScatter + inter ReduceScatter on n/local; Scatter =
// intra Scatter + inter Scatter on n/local. servers × local ranks; intra and inter are the flat
// algorithms and costs of the two levels.
func EstimateHierarchical(op Op, intra, inter Algo, servers, local int, n int64, intraCost, interCost Cost) (sim.Time, error) {
	if servers < 1 || local < 1 {
		return 0, fmt.Errorf("cluster: hierarchical estimate on %d servers × %d ranks", servers, local)
	}
	var total sim.Time
	for _, st := range hierStages(op) {
		var t sim.Time
		var err error
		b := n
		if st.perRank {
			b = ceilDiv(n, int64(local))
		}
		if st.intra {
			t, err = Estimate(st.op, intra, local, b, intraCost)
		} else {
			t, err = Estimate(st.op, inter, servers, b, interCost)
		}
		if err != nil {
			return 0, err
		}
		total = sim.Add(total, t)
	}
	return total, nil
}

// hierStage is one stage of the hierarchical composition.
type hierStage struct {
	intra    bool // inside each server (else among the ranks with one local index)
	op       Op
	rootOnly bool // only in the root's server
	perRank  bool // on n / local bytes
}

func hierStages(op Op) []hierStage {
	switch op {
	case AllReduce:
		return []hierStage{{true, ReduceScatter, false, false}, {false, AllReduce, false, true}, {true, AllGather, false, false}}
	case ReduceScatter:
		return []hierStage{{true, ReduceScatter, false, false}, {false, ReduceScatter, false, true}}
	case AllGather:
		return []hierStage{{false, AllGather, false, true}, {true, AllGather, false, false}}
	case Broadcast:
		return []hierStage{{true, Scatter, true, false}, {false, Broadcast, false, true}, {true, AllGather, false, false}}
	case Scatter:
		return []hierStage{{true, Scatter, true, false}, {false, Scatter, false, true}}
	}
	return nil
}

// levelCost is the worst α, β and γ over the transfers of a level, charged to every step. That
// is exact when every step uses a route as slow as the worst (a level over like links, an
// all-gather or reduce-scatter ring over a node's 8 NPUs, whose every step has a hop over the
// bridge); else the level is faster than charged, e.g. a ring scatter or broadcast inside a node
// whose first steps stay in one HCCS group, or H-D_R steps inside one supernode.
func (n *Network) levelCost(group []Endpoint, l level) (Cost, error) {
	var c Cost
	for _, st := range l.sched {
		for _, x := range st {
			a, b, err := n.PathCost(group[x.src], group[x.dst])
			if err != nil {
				return c, err
			}
			c.Alpha = max(c.Alpha, a)
			c.Beta = math.Max(c.Beta, b)
			c.Gamma = math.Max(c.Gamma, n.gamma(group[x.dst]))
		}
	}
	return c, nil
}

// Estimate returns the closed-form time of the collective CollectiveWith(op, algo, group, root,
// bytes, …) would run, level by level with each level's Cost the worst of its routes when nothing
// else uses them, and the plan it chose. Run alone, the collective takes that time (to ps of
// rounding) when each step of each level uses a route as slow as its level's worst; otherwise the
// estimate is an upper bound (levelCost): a hierarchical broadcast over 2 × 8 NPUs from NPU 0
// is 10 % faster than it, from NPU 3 or 7 exactly it.
func (n *Network) Estimate(op Op, algo Algo, group []Endpoint, root int, bytes int64) (sim.Time, Plan, error) {
	if bytes < 0 {
		return 0, Plan{}, fmt.Errorf("cluster: %v of %d bytes: must be ≥ 0", op, bytes)
	}
	pl, err := n.Plan(op, algo, group, root)
	if err != nil {
		return 0, pl, err
	}
	if err := n.build(&pl, op, group, root, bytes); err != nil {
		return 0, pl, err
	}
	var total sim.Time
	for _, l := range pl.levels {
		c, err := n.levelCost(group, l)
		if err != nil {
			return 0, pl, err
		}
		t, err := Estimate(l.op, l.algo, l.p, l.bytes, c)
		if err != nil {
			return 0, pl, err
		}
		total = sim.Add(total, t)
	}
	return total, pl, nil
}
