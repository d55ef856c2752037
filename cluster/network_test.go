package cluster

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
)

func TestRoutes(t *testing.T) {
	n := newNet(t, "cluster.nodes=4", "cluster.fabric.supernodes=2")
	for _, c := range []struct {
		src, dst Endpoint
		want     []string
	}{
		{NPU(0, 1), NPU(0, 2), []string{"n0.hccs.1>2"}},
		{NPU(1, 6), NPU(1, 4), []string{"n1.hccs.6>4"}},
		{NPU(0, 3), NPU(0, 4), []string{"n0.pcie.3.up", "n0.bridge.0>1", "n0.pcie.4.down"}},
		{NPU(0, 2), NPU(1, 2), []string{"n0.roce.2.up", "n0.leaf.up", "n1.leaf.down", "n1.roce.2.down"}},
		{NPU(1, 0), NPU(2, 5), []string{"n1.roce.0.up", "n1.leaf.up", "sn0.spine.up", "sn1.spine.down", "n2.leaf.down", "n2.roce.5.down"}},
		{Host(0, 1), NPU(0, 3), []string{"n0.pcie.3.down"}},
		{Host(0, 0), NPU(0, 7), []string{"n0.smp.0>3", "n0.pcie.7.down"}},
		{NPU(0, 5), Host(0, 2), []string{"n0.pcie.5.up"}},
		{Host(0, 0), Host(0, 1), []string{"n0.smp.0>1"}},
		{Host(0, 0), Host(3, 2), []string{"n0.hostnet.0.up", "n3.hostnet.2.down"}},
		{NPU(0, 0), Host(1, 0), []string{"n0.pcie.0.up", "n0.hostnet.0.up", "n1.hostnet.0.down"}},
		{NPU(2, 2), NPU(2, 2), []string{}},
	} {
		got, err := n.RouteNames(c.src, c.dst)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("route %v→%v = %v, want %v", c.src, c.dst, got, c.want)
		}
	}
	// Every route fits a flow's own array (maxHops): a transfer
	// allocates no route.
	var all []Endpoint
	for node := range 4 {
		for i := range n.topo.Node.NPUs {
			all = append(all, NPU(node, i))
		}
		for i := range n.topo.Node.Hosts.Count {
			all = append(all, Host(node, i))
		}
	}
	longest := 0
	for _, a := range all {
		for _, b := range all {
			r, err := n.Route(a, b)
			if err != nil {
				t.Fatal(err)
			}
			longest = max(longest, len(r))
		}
	}
	if longest != maxHops {
		t.Errorf("the longest route has %d links; maxHops is %d", longest, maxHops)
	}
	if _, err := n.Route(NPU(4, 0), NPU(0, 0)); err == nil {
		t.Error("route from a node outside the cluster: no error")
	}
	if _, err := n.Route(NPU(0, 0), Host(0, 4)); err == nil {
		t.Error("route to host 4 of 4: no error")
	}
}

// A transfer alone takes α + n·β of its route; two over one link take twice the bandwidth time.
func TestContentionOnOneLink(t *testing.T) {
	const bytes = 30_000_000 // 1 ms at 30 GB/s
	for _, k := range []int{1, 2, 3} {
		n := newNet(t, "cluster.nodes=1")
		var got []sim.Time
		for range k {
			if err := n.Transfer(NPU(0, 0), NPU(0, 1), bytes, func(at sim.Time) { got = append(got, at) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Engine().Run(); err != nil {
			t.Fatal(err)
		}
		want := sim.Microsecond + sim.Time(k)*sim.Millisecond // HCCS: 1 µs latency, 30 GB/s
		for _, g := range got {
			if d := g - want; d < 0 || d > 2 {
				t.Errorf("%d transfers on one HCCS link: delivered at %v, want %v", k, g, want)
			}
		}
	}
}

// Max-min: a flow bottlenecked elsewhere leaves the rest of a shared link to the others.
func TestMaxMinFairShare(t *testing.T) {
	// Three flows out of NPU 3's PCIe link (15.75 GB/s): two to the other group over the bridge,
	// one to its host. Alone each would get 15.75 GB/s; together 5.25 each.
	n := newNet(t, "cluster.nodes=1")
	var got []sim.Time
	add := func(dst Endpoint) {
		if err := n.Transfer(NPU(0, 3), dst, 15_750_000, func(at sim.Time) { got = append(got, at) }); err != nil {
			t.Fatal(err)
		}
	}
	add(NPU(0, 4))
	add(NPU(0, 5))
	add(Host(0, 1))
	if err := n.Engine().Run(); err != nil {
		t.Fatal(err)
	}
	// 3 ms of shared drain; latencies: bridge route 2.5 µs, host route 1 µs.
	want := []sim.Time{3*sim.Millisecond + sim.Microsecond, 3*sim.Millisecond + 2500*sim.Nanosecond, 3*sim.Millisecond + 2500*sim.Nanosecond}
	slices.Sort(got)
	for i := range want {
		if d := got[i] - want[i]; d < 0 || d > 3 {
			t.Errorf("delivery %d at %v, want %v", i, got[i], want[i])
		}
	}
	// A late arrival: the first flow runs alone for 1 ms, then shares.
	n = newNet(t, "cluster.nodes=1")
	var a, b sim.Time
	_ = n.Transfer(NPU(0, 0), NPU(0, 1), 60_000_000, func(at sim.Time) { a = at }) // 2 ms alone
	n.Engine().At(sim.Millisecond, 0, sim.HandlerFunc(func(sim.Time, int64) {
		_ = n.Transfer(NPU(0, 0), NPU(0, 1), 15_000_000, func(at sim.Time) { b = at })
	}), 0)
	if err := n.Engine().Run(); err != nil {
		t.Fatal(err)
	}
	// 1 ms alone (30 MB), then both at 15 GB/s: the second's 15 MB take 1 ms, the first's
	// remaining 30 MB: 15 MB shared (1 ms) + 15 MB alone (0.5 ms), done at 2.5 ms.
	if wa, wb := 2500*sim.Microsecond+sim.Microsecond, 2*sim.Millisecond+sim.Microsecond; abs(a-wa) > 3 || abs(b-wb) > 3 {
		t.Errorf("late arrival: %v and %v, want %v and %v", a, b, wa, wb)
	}
}

func abs(t sim.Time) sim.Time {
	if t < 0 {
		return -t
	}
	return t
}

type recorder struct{ log []string }

func (r *recorder) OnEvent(now sim.Time, prio int, _ sim.Handler, arg int64) {
	r.log = append(r.log, fmt.Sprint(now, prio, arg))
}

// Same inputs, same times and the same event sequence.
func TestDeterminism(t *testing.T) {
	run := func() ([]sim.Time, []string) {
		n := newNet(t, "cluster.nodes=4", "cluster.fabric.supernodes=2")
		rec := &recorder{}
		n.Engine().AddHook(rec)
		var times []sim.Time
		note := func(at sim.Time) { times = append(times, at) }
		g := wholeNodes(4)
		if err := n.Collective(AllReduce, g, 0, 8<<20, note); err != nil {
			t.Fatal(err)
		}
		if err := n.Collective(Broadcast, onePerNode(4), 1, 3<<20, note); err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			_ = n.Transfer(NPU(i%4, i), NPU((i+1)%4, 7-i), int64(1+i)<<20, note)
		}
		if err := n.Engine().Run(); err != nil {
			t.Fatal(err)
		}
		return times, rec.log
	}
	t1, l1 := run()
	t2, l2 := run()
	if !slices.Equal(t1, t2) || !slices.Equal(l1, l2) {
		t.Fatalf("two runs differ: %v vs %v (%d vs %d events)", t1, t2, len(l1), len(l2))
	}
	if len(t1) != 10 {
		t.Fatalf("%d completions, want 10", len(t1))
	}
}

func TestTransferErrors(t *testing.T) {
	n := newNet(t, "cluster.nodes=1")
	if err := n.Transfer(NPU(0, 0), NPU(0, 1), -1, nil); err == nil {
		t.Error("negative bytes: no error")
	}
	if err := n.Transfer(NPU(0, 0), NPU(1, 0), 1, nil); err == nil {
		t.Error("node 1 of 1: no error")
	}
	// A zero-byte transfer costs the route's latency; a self-transfer nothing.
	var a, b sim.Time = -1, -1
	_ = n.Transfer(NPU(0, 0), NPU(0, 1), 0, func(at sim.Time) { a = at })
	_ = n.Transfer(NPU(0, 2), NPU(0, 2), 1<<20, func(at sim.Time) { b = at })
	if err := n.Engine().Run(); err != nil {
		t.Fatal(err)
	}
	if a != sim.Microsecond || b != 0 {
		t.Errorf("zero-byte transfer at %v (want 1µs), self-transfer at %v (want 0)", a, b)
	}
}

// OnNPULoad reports what NPU↔NPU flows draw from each NPU's memory while
// they drain (reads at the source, writes at the destination), and zero
// after; host↔NPU transfers do not count.
func TestNPULoad(t *testing.T) {
	n := newNet(t, "cluster.nodes=1")
	type rec struct {
		at  sim.Time
		npu int
		bps float64
	}
	var got []rec
	n.OnNPULoad(func(npu int, bps float64) { got = append(got, rec{n.Engine().Now(), npu, bps}) })
	for _, dst := range []int{1, 2} {
		if err := n.Transfer(NPU(0, 0), NPU(0, dst), 30_000_000, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Transfer(Host(0, 0), NPU(0, 3), 1_000_000, nil); err != nil {
		t.Fatal(err)
	}
	if err := n.Engine().Run(); err != nil {
		t.Fatal(err)
	}
	want := []rec{{0, 0, 60e9}, {0, 1, 30e9}, {0, 2, 30e9}, {sim.Millisecond, 0, 0}, {sim.Millisecond, 1, 0}, {sim.Millisecond, 2, 0}}
	if len(got) != len(want) {
		t.Fatalf("load reports %v, want %v", got, want)
	}
	for i := range want {
		if got[i].at != want[i].at || got[i].npu != want[i].npu || math.Abs(got[i].bps-want[i].bps) > 1 {
			t.Errorf("report %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A transfer or a reduction too slow for the simulated time range stops the
// run with an error naming the key that makes it so — where it was given,
// the link — rather than the engine's "a latency, cycle count or bandwidth
// is out of range", which named none.
func TestTooSlowNamesTheKey(t *testing.T) {
	for _, c := range []struct {
		sets     []string
		src, dst Endpoint
		op       bool // an all-reduce over NPUs 0 and 1 rather than a transfer
		want     []string
	}{
		{[]string{"node.hccs.link_bandwidth=1e-300"}, NPU(0, 0), NPU(0, 1), false,
			[]string{`--set node.hccs.link_bandwidth=1e-300: key "hccs.link_bandwidth": too slow: a transfer of 4096 bytes over link n0.hccs.0>1 (1e-300 B/s)`}},
		// The slowest link of the route: the port (below roce.bandwidth), then the leaf.
		{[]string{"cluster.nodes=2", "cluster.fabric.port_bandwidth=1e-9"}, NPU(0, 0), NPU(1, 0), false,
			[]string{`--set cluster.fabric.port_bandwidth=1e-9: key "fabric.port_bandwidth"`, "link n0.roce.0.up (1e-09 B/s)"}},
		{[]string{"cluster.nodes=2", "cluster.fabric.oversubscription=1e300"}, NPU(0, 0), NPU(1, 0), false,
			[]string{`--set cluster.fabric.oversubscription=1e300: key "fabric.oversubscription"`, "link n0.leaf.up"}},
		{[]string{"node.pcie.generation=4", "node.pcie.gen4_bandwidth=1e-300"}, Host(0, 0), NPU(0, 0), false,
			[]string{`--set node.pcie.gen4_bandwidth=1e-300: key "pcie.gen4_bandwidth"`, "link n0.pcie.0.down"}},
		{[]string{"node.collectives.npu_reduce_bandwidth=1e-300"}, NPU(0, 0), NPU(0, 1), true,
			[]string{`--set node.collectives.npu_reduce_bandwidth=1e-300: key "collectives.npu_reduce_bandwidth": too slow: reducing 2048 bytes on n0.npu`}},
	} {
		n := newNet(t, c.sets...)
		var err error
		if c.op {
			err = n.CollectiveWith(AllReduce, Ring, []Endpoint{c.src, c.dst}, 0, 4096, nil)
		} else {
			err = n.Transfer(c.src, c.dst, 4096, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		err = n.Engine().Run()
		if !errors.Is(err, sim.ErrTimeOverflow) {
			t.Fatalf("%v: %v, want a time overflow", c.sets, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q lacks %q", c.sets, err, w)
			}
		}
	}
	// A key from a file: its file and line.
	node, err := Source("cloudbrain2-node")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "node.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(string(node), "link_bandwidth: 30GB/s", "link_bandwidth: 1e-300", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	topo, err := LoadSystem(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := NewNetwork(sim.NewEngine(), topo)
	if err := n.Transfer(NPU(0, 0), NPU(0, 1), 4096, nil); err != nil {
		t.Fatal(err)
	}
	if err := n.Engine().Run(); err == nil || !strings.Contains(err.Error(), path+`:`) || !strings.Contains(err.Error(), `key "hccs.link_bandwidth": too slow`) {
		t.Errorf("from a file: %v", err)
	}
}

// The bridge between a node's HCCS groups carries what one group's PCIe links can send at once
// in the selected generation (cloudbrain2-node.yaml leaves inter_group.bandwidth out), so four
// transfers from one group to the other at once each run at their PCIe rate, Gen3 or Gen4; an
// explicit inter_group.bandwidth is used as given. (With the bridge fixed at Gen3's 63 GB/s, the
// four Gen4 transfers took 2.5 µs + 1 MB / 15.75 GB/s = 65.99 µs each.)
func TestBridgeFollowsPCIe(t *testing.T) {
	const bytes = 1_000_000
	for _, c := range []struct {
		sets []string
		pcie float64 // each transfer's rate, bytes/s
	}{
		{nil, 15.75e9},
		{[]string{"node.pcie.generation=4"}, 31.5e9},
		{[]string{"node.pcie.generation=4", "node.inter_group.bandwidth=63GB/s"}, 63e9 / 4},
		{[]string{"node.pcie.generation=4", "node.pcie.gen4_bandwidth=40GB/s"}, 40e9},
	} {
		n := newNet(t, append([]string{"cluster.nodes=1"}, c.sets...)...)
		var got []sim.Time
		for i := range 4 {
			if err := n.Transfer(NPU(0, i), NPU(0, 4+i), bytes, func(at sim.Time) { got = append(got, at) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Engine().Run(); err != nil {
			t.Fatal(err)
		}
		// PCIe up 1 µs + bridge 0.5 µs + PCIe down 1 µs, then the bytes at the bottleneck rate.
		want := 2500*sim.Nanosecond + sim.CeilPS(bytes/c.pcie*1e12)
		for _, g := range got {
			if d := g - want; d < -2 || d > 2 {
				t.Errorf("%v: four transfers group 0 → group 1 delivered at %v, want %v", c.sets, g, want)
			}
		}
	}
}

// The component-local share gives every transfer the delivery time, and every
// NPU the memory load, that recomputing every active flow's rate at each change
// gives, bit for bit: random transfers between NPUs and hosts of four nodes in
// two supernodes, many of them started together with equal sizes (ties in the
// progressive filling), others at random instants.
func TestComponentShareIsGlobalShare(t *testing.T) {
	run := func(all bool) ([]sim.Time, []string) {
		n := newNet(t, "cluster.nodes=4", "cluster.fabric.supernodes=2")
		n.reshareAll = all
		var loads []string
		n.OnNPULoad(func(npu int, bps float64) {
			loads = append(loads, fmt.Sprint(n.Engine().Now(), npu, math.Float64bits(bps)))
		})
		rng := rand.New(rand.NewPCG(14, 58))
		const count = 3000
		times := make([]sim.Time, count)
		end := func(k int) func(sim.Time) { return func(at sim.Time) { times[k] = at } }
		endpoint := func() Endpoint {
			if rng.IntN(6) == 0 {
				return Host(rng.IntN(4), rng.IntN(2))
			}
			return NPU(rng.IntN(4), rng.IntN(8))
		}
		for k := 0; k < count; {
			at := sim.Time(rng.Int64N(int64(20 * sim.Millisecond)))
			burst := 1 + rng.IntN(12)
			bytes := int64(1+rng.IntN(64)) << 16
			first := k
			n.Engine().At(at, 0, sim.HandlerFunc(func(sim.Time, int64) {
				for j := range burst {
					if first+j >= count {
						return
					}
					src, dst := endpoint(), endpoint()
					if err := n.Transfer(src, dst, bytes, end(first+j)); err != nil {
						t.Fatal(err)
					}
				}
			}), 0)
			k += burst
		}
		if err := n.Engine().Run(); err != nil {
			t.Fatal(err)
		}
		return times, loads
	}
	local, localLoads := run(false)
	global, globalLoads := run(true)
	for k := range local {
		if local[k] != global[k] {
			t.Fatalf("transfer %d delivered at %d ps, recomputing every flow: %d ps", k, local[k], global[k])
		}
	}
	if !slices.Equal(localLoads, globalLoads) {
		t.Fatalf("NPU loads differ: %d vs %d reports", len(localLoads), len(globalLoads))
	}
}
