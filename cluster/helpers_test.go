package cluster

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

func mustLoad(t testing.TB, sets ...string) *Topology {
	t.Helper()
	ov, err := machines.ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := Load("cloudbrain2", ov)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func newNet(t testing.TB, sets ...string) *Network {
	t.Helper()
	return NewNetwork(sim.NewEngine(), mustLoad(t, sets...))
}

// runCollective runs one collective alone from time 0 and returns its finishing time.
func runCollective(t testing.TB, n *Network, op Op, algo Algo, group []Endpoint, root int, bytes int64) sim.Time {
	t.Helper()
	got := sim.Time(-1)
	if err := n.CollectiveWith(op, algo, group, root, bytes, func(at sim.Time) { got = at }); err != nil {
		t.Fatal(err)
	}
	if err := n.Engine().Run(); err != nil {
		t.Fatal(err)
	}
	if got < 0 {
		t.Fatalf("%v %v on %d ranks never finished", op, algo, len(group))
	}
	return got
}

// onePerNode returns NPU 0 of nodes 0..p-1.
func onePerNode(p int) []Endpoint {
	g := make([]Endpoint, p)
	for k := range g {
		g[k] = NPU(k, 0)
	}
	return g
}

// wholeNodes returns all 8 NPUs of nodes 0..nodes-1, node-major.
func wholeNodes(nodes int) []Endpoint {
	var g []Endpoint
	for k := range nodes {
		for i := range 8 {
			g = append(g, NPU(k, i))
		}
	}
	return g
}
