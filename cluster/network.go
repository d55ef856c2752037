package cluster

import (
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/sim"
)

// Kind is the kind of an endpoint.
type Kind uint8

// Endpoint kinds.
const (
	// KindNPU is an NPU.
	KindNPU Kind = iota
	// KindHost is a host CPU (socket).
	KindHost
)

// Endpoint is an NPU or a host of one node.
type Endpoint struct {
	// Kind is KindNPU or KindHost.
	Kind Kind
	// Node is the node index, 0 ≤ Node < Topology.Nodes.
	Node int
	// Index is the NPU index within the node (0 ≤ Index < Node.NPUs) or the host index
	// (0 ≤ Index < Hosts.Count).
	Index int
}

// NPU returns the endpoint of NPU i of node k.
func NPU(k, i int) Endpoint { return Endpoint{KindNPU, k, i} }

// Host returns the endpoint of host h of node k.
func Host(k, h int) Endpoint { return Endpoint{KindHost, k, h} }

// String formats e as "n3.npu5" or "n0.host2".
func (e Endpoint) String() string {
	if e.Kind == KindHost {
		return fmt.Sprintf("n%d.host%d", e.Node, e.Index)
	}
	return fmt.Sprintf("n%d.npu%d", e.Node, e.Index)
}

// LinkID identifies a directed link of a Network.
type LinkID int32

// LinkInfo describes one directed link of a Network.
type LinkInfo struct {
	// Name is e.g. "n0.hccs.1>2", "n3.roce.5.up", "sn1.spine.down".
	Name string
	// Bandwidth is bytes per second.
	Bandwidth float64
	// Latency is added once to every transfer crossing the link.
	Latency sim.Time
	// Key is the key of the node or cluster description that sets the
	// bandwidth, e.g. "node.roce.bandwidth" or
	// "cluster.fabric.oversubscription" (Topology.Origin says where it
	// was given).
	Key string
}

// NetPriority is the engine priority of the network's rate updates: after the ordinary events of
// the same instant (priority 0), so that transfers started together are shared out together.
const NetPriority = 1 << 16

// Network is the link-level event model of a Topology on a sim.Engine. Transfers follow fixed
// routes of directed links and share every link max-min fairly (fluid model): at any instant each
// transfer gets the largest rate such that no link is over its bandwidth and no transfer could get
// more without taking from one with less. Rates change only when a transfer starts or ends. A
// transfer's last byte leaves when its bytes are drained at those rates; it is delivered the sum of
// its route's latencies later. A Network is deterministic: the same calls in the same order give the
// same times and the same event sequence.
type Network struct {
	eng  *sim.Engine
	topo *Topology

	links []LinkInfo
	perPS []float64 // bandwidth in bytes per picosecond
	moved []float64 // bytes that started over each link

	pcieUp, pcieDown []LinkID // by global NPU
	roceUp, roceDown []LinkID // by global NPU
	hostUp, hostDown []LinkID // by global host
	hccs             []LinkID // by node, i, j (-1: no link)
	bridge           []LinkID // by node, group a, group b
	smp              []LinkID // by node, host a, host b
	nodeUp, nodeDown []LinkID // by node (only with more than one node)
	spUp, spDown     []LinkID // by supernode (only with more than one supernode)

	routes map[[2]int32][]LinkID

	active   []*flow
	arrivals []*flow
	free     []*flow // delivered flows, for newFlow to reuse
	runs     []*run  // finished collectives' runs, for newRun to reuse
	last     sim.Time
	waker    *sim.Waker

	// lflows holds, by link, the active flows over it in the order they
	// arrived (the order of active); dirty the links whose flows changed
	// since the last share.
	lflows [][]*flow
	dirty  []LinkID

	// scratch of the rate computation: by link, the capacity left and
	// the unfrozen flows; the epoch of the share that last visited each
	// link; the flows and links of the share under way.
	cap       []float64
	cnt       []int32
	linkEpoch []uint64
	epoch     uint64
	compFlows []*flow
	compLinks []LinkID
	heap      shareHeap

	// reshareAll makes every share recompute every active flow's rate,
	// not only those connected to a change (the reference the tests
	// compare the component-local share with).
	reshareAll bool

	transfers uint64

	plan planScratch // Plan's

	// onLoad, when set, is told each NPU's HBM load from NPU↔NPU flows
	// when it changes (OnNPULoad); load and loadSeen are its scratch.
	onLoad   func(npu int, bytesPerSecond float64)
	load     []float64 // bytes per ps, by global NPU
	loadSeen []float64
}

type flow struct {
	src, dst int32 // global NPU indices of NPU↔NPU flows, else -1
	hops     [maxHops]LinkID
	nhops    uint8   // the route's links: hops[:nhops] (route)
	bytes    int64   // the transfer's size
	rem      float64 // bytes not yet drained
	rate     float64 // bytes per picosecond
	fin      sim.Time
	lat      sim.Time
	h        sim.Handler // called with arg at the delivery
	arg      int64
	frozen   bool
	epoch    uint64 // the share that last visited the flow
}

// route returns the links the flow crosses.
func (f *flow) route() []LinkID { return f.hops[:f.nhops] }

// maxHops is the most links a route crosses: NPU to NPU across
// supernodes (RoCE up, node up, supernode up and down, node down, RoCE
// down).
const maxHops = 6

// delivery calls a transfer's done function as an engine event.
type delivery func(sim.Time)

func (d delivery) Handle(now sim.Time, _ int64) { d(now) }

// NewNetwork builds the links of topo and returns a network scheduling on eng.
func NewNetwork(eng *sim.Engine, topo *Topology) *Network {
	n := &Network{eng: eng, topo: topo, routes: map[[2]int32][]LinkID{}}
	n.waker = sim.NewWaker(eng, NetPriority, sim.HandlerFunc(n.process))
	nd := topo.Node
	ps := func(ns float64) sim.Time { return sim.CeilPS(ns * 1e3) }
	add := func(name, key string, bw float64, lat sim.Time) LinkID {
		n.links = append(n.links, LinkInfo{Name: name, Bandwidth: bw, Latency: lat, Key: key})
		return LinkID(len(n.links) - 1)
	}
	N, P, H := topo.Nodes, nd.NPUs, nd.Hosts.Count
	G := (P + topo.groupSize() - 1) / topo.groupSize()
	nic, nicKey := float64(nd.RoCE.Bandwidth), "node.roce.bandwidth"
	if port := float64(topo.Fabric.PortBandwidth); port < nic {
		nic = port
		if port > 0 { // (a node alone has no fabric: 0, its RoCE links unused)
			nicKey = "cluster.fabric.port_bandwidth"
		}
	}
	pcie, pcieKey := float64(nd.PCIe.Bandwidth()), "node.pcie.gen3_bandwidth"
	if nd.PCIe.Generation == 4 {
		pcieKey = "node.pcie.gen4_bandwidth"
	}
	n.hccs = make([]LinkID, N*P*P)
	n.bridge = make([]LinkID, N*G*G)
	n.smp = make([]LinkID, N*H*H)
	for k := range N {
		for i := range P {
			n.pcieUp = append(n.pcieUp, add(fmt.Sprintf("n%d.pcie.%d.up", k, i), pcieKey, pcie, ps(nd.PCIe.LatencyNS)))
			n.pcieDown = append(n.pcieDown, add(fmt.Sprintf("n%d.pcie.%d.down", k, i), pcieKey, pcie, ps(nd.PCIe.LatencyNS)))
		}
		for i := range P {
			for j := range P {
				id := LinkID(-1)
				if i != j && topo.Group(i) == topo.Group(j) {
					id = add(fmt.Sprintf("n%d.hccs.%d>%d", k, i, j), "node.hccs.link_bandwidth", float64(nd.HCCS.LinkBandwidth), ps(nd.HCCS.LatencyNS))
				}
				n.hccs[(k*P+i)*P+j] = id
			}
		}
		for a := range G {
			for b := range G {
				id := LinkID(-1)
				if a != b {
					id = add(fmt.Sprintf("n%d.bridge.%d>%d", k, a, b), "node.inter_group.bandwidth", float64(nd.InterGroup.Bandwidth), ps(nd.InterGroup.LatencyNS))
				}
				n.bridge[(k*G+a)*G+b] = id
			}
		}
		for a := range H {
			for b := range H {
				id := LinkID(-1)
				if a != b {
					id = add(fmt.Sprintf("n%d.smp.%d>%d", k, a, b), "node.hosts.smp.bandwidth", float64(nd.Hosts.SMP.Bandwidth), ps(nd.Hosts.SMP.LatencyNS))
				}
				n.smp[(k*H+a)*H+b] = id
			}
		}
		for i := range P {
			n.roceUp = append(n.roceUp, add(fmt.Sprintf("n%d.roce.%d.up", k, i), nicKey, nic, ps(nd.RoCE.LatencyNS)))
			n.roceDown = append(n.roceDown, add(fmt.Sprintf("n%d.roce.%d.down", k, i), nicKey, nic, 0))
		}
		for h := range H {
			n.hostUp = append(n.hostUp, add(fmt.Sprintf("n%d.hostnet.%d.up", k, h), "node.host_network.bandwidth", float64(nd.HostNetwork.Bandwidth), ps(nd.HostNetwork.LatencyNS)))
			n.hostDown = append(n.hostDown, add(fmt.Sprintf("n%d.hostnet.%d.down", k, h), "node.host_network.bandwidth", float64(nd.HostNetwork.Bandwidth), 0))
		}
	}
	f := topo.Fabric
	if N > 1 {
		up := float64(P) * nic / f.Oversubscription
		for k := range N {
			n.nodeUp = append(n.nodeUp, add(fmt.Sprintf("n%d.leaf.up", k), "cluster.fabric.oversubscription", up, ps(f.LatencyNS)))
			n.nodeDown = append(n.nodeDown, add(fmt.Sprintf("n%d.leaf.down", k), "cluster.fabric.oversubscription", up, 0))
		}
	}
	if f.Supernodes > 1 {
		members := make([]int, f.Supernodes)
		for k := range N {
			members[topo.Supernode(k)]++
		}
		for s := range f.Supernodes {
			bw := float64(members[s]*P) * nic / f.SpineOversubscription
			n.spUp = append(n.spUp, add(fmt.Sprintf("sn%d.spine.up", s), "cluster.fabric.spine_oversubscription", bw, ps(f.SpineLatencyNS)))
			n.spDown = append(n.spDown, add(fmt.Sprintf("sn%d.spine.down", s), "cluster.fabric.spine_oversubscription", bw, 0))
		}
	}
	L := len(n.links)
	n.perPS = make([]float64, L)
	for i, l := range n.links {
		n.perPS[i] = l.Bandwidth * 1e-12
	}
	n.moved = make([]float64, L)
	n.cap = make([]float64, L)
	n.cnt = make([]int32, L)
	n.lflows = make([][]*flow, L)
	n.linkEpoch = make([]uint64, L)
	return n
}

// Engine returns the engine the network schedules on.
func (n *Network) Engine() *sim.Engine { return n.eng }

// Topology returns the network's topology.
func (n *Network) Topology() *Topology { return n.topo }

// Links returns every link of the network, indexed by LinkID. The slice must not be modified.
func (n *Network) Links() []LinkInfo { return n.links }

// LinkBytes returns the bytes of all transfers started over link l so far.
func (n *Network) LinkBytes(l LinkID) float64 { return n.moved[l] }

// Transfers returns the number of transfers started so far.
func (n *Network) Transfers() uint64 { return n.transfers }

// Active returns the number of transfers in flight (started, not yet drained).
func (n *Network) Active() int { return len(n.active) + len(n.arrivals) }

func (n *Network) check(e Endpoint) error {
	t := n.topo
	lim := t.Node.NPUs
	if e.Kind == KindHost {
		lim = t.Node.Hosts.Count
	} else if e.Kind != KindNPU {
		return fmt.Errorf("cluster: endpoint %v: unknown kind %d", e, e.Kind)
	}
	if e.Node < 0 || e.Node >= t.Nodes || e.Index < 0 || e.Index >= lim {
		return fmt.Errorf("cluster: endpoint %v is not in %s (%d nodes, %d NPUs and %d hosts each)",
			e, t.Name, t.Nodes, t.Node.NPUs, t.Node.Hosts.Count)
	}
	return nil
}

func (n *Network) id(e Endpoint) int32 {
	if e.Kind == KindHost {
		return int32(n.topo.NPUs() + e.Node*n.topo.Node.Hosts.Count + e.Index)
	}
	return int32(e.Node*n.topo.Node.NPUs + e.Index)
}

// Route returns the directed links a transfer from src to dst crosses, in order:
//   - NPU→NPU in one HCCS group: the HCCS link;
//   - NPU→NPU in two groups of a node: src's PCIe up, the bridge between the groups, dst's PCIe down;
//   - NPU→NPU on two nodes: src's RoCE up, src node's leaf up, (between supernodes: src's
//     supernode spine up, dst's spine down), dst node's leaf down, dst's RoCE down;
//   - host↔NPU in a node: the host's SMP link to the NPU's own host if it is another, and the NPU's
//     PCIe link; across nodes, through the NPU's own host and the host network;
//   - host→host: the SMP link in a node, else src's host-network port up and dst's down.
//
// src == dst crosses nothing. The slice is shared: do not modify it.
func (n *Network) Route(src, dst Endpoint) ([]LinkID, error) {
	if err := n.check(src); err != nil {
		return nil, err
	}
	if err := n.check(dst); err != nil {
		return nil, err
	}
	key := [2]int32{n.id(src), n.id(dst)}
	if r, ok := n.routes[key]; ok {
		return r, nil
	}
	r := n.route(src, dst, nil)
	n.routes[key] = r
	return r, nil
}

func (n *Network) route(src, dst Endpoint, r []LinkID) []LinkID {
	t := n.topo
	P, H := t.Node.NPUs, t.Node.Hosts.Count
	G := (P + t.groupSize() - 1) / t.groupSize()
	if src == dst {
		return r
	}
	switch {
	case src.Kind == KindNPU && dst.Kind == KindNPU:
		a, b := src.Node*P+src.Index, dst.Node*P+dst.Index
		if src.Node == dst.Node {
			if ga, gb := t.Group(src.Index), t.Group(dst.Index); ga == gb {
				return append(r, n.hccs[(src.Node*P+src.Index)*P+dst.Index])
			} else {
				return append(r, n.pcieUp[a], n.bridge[(src.Node*G+ga)*G+gb], n.pcieDown[b])
			}
		}
		r = append(r, n.roceUp[a], n.nodeUp[src.Node])
		if sa, sb := t.Supernode(src.Node), t.Supernode(dst.Node); sa != sb {
			r = append(r, n.spUp[sa], n.spDown[sb])
		}
		return append(r, n.nodeDown[dst.Node], n.roceDown[b])
	case src.Kind == KindNPU: // → host
		own := Host(src.Node, t.HostOf(src.Index))
		r = append(r, n.pcieUp[src.Node*P+src.Index])
		return n.route(own, dst, r)
	case dst.Kind == KindNPU: // host →
		own := Host(dst.Node, t.HostOf(dst.Index))
		r = n.route(src, own, r)
		return append(r, n.pcieDown[dst.Node*P+dst.Index])
	default: // host → host
		if src.Node == dst.Node {
			return append(r, n.smp[(src.Node*H+src.Index)*H+dst.Index])
		}
		return append(r, n.hostUp[src.Node*H+src.Index], n.hostDown[dst.Node*H+dst.Index])
	}
}

// RouteNames returns the names of the links of Route(src, dst).
func (n *Network) RouteNames(src, dst Endpoint) ([]string, error) {
	r, err := n.Route(src, dst)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(r))
	for i, l := range r {
		out[i] = n.links[l].Name
	}
	return out, nil
}

// PathCost returns the Hockney parameters of the route from src to dst when nothing else uses it:
// α = the sum of its latencies and β = 1 / its smallest bandwidth (ps per byte).
func (n *Network) PathCost(src, dst Endpoint) (alpha sim.Time, beta float64, err error) {
	r, err := n.Route(src, dst)
	if err != nil {
		return 0, 0, err
	}
	minBW := math.Inf(1)
	for _, l := range r {
		alpha = sim.Add(alpha, n.links[l].Latency)
		minBW = math.Min(minBW, n.perPS[l])
	}
	if len(r) == 0 {
		return 0, 0, nil
	}
	return alpha, 1 / minBW, nil
}

// Transfer moves bytes from src to dst starting now, sharing every link of the route max-min
// fairly with the other transfers in flight, and calls done with the delivery time (as an engine
// event, never from inside Transfer). It returns an error for an endpoint outside the topology or
// negative bytes; nothing is scheduled then.
func (n *Network) Transfer(src, dst Endpoint, bytes int64, done func(sim.Time)) error {
	if done == nil {
		done = func(sim.Time) {}
	}
	return n.send(src, dst, bytes, delivery(done), 0)
}

// send is Transfer calling h.Handle(delivery time, arg) at the delivery:
// a collective's transfers name their run and index, not a closure each.
func (n *Network) send(src, dst Endpoint, bytes int64, h sim.Handler, arg int64) error {
	if bytes < 0 {
		return fmt.Errorf("cluster: transfer %v→%v of %d bytes: must be ≥ 0", src, dst, bytes)
	}
	if err := n.check(src); err != nil {
		return err
	}
	if err := n.check(dst); err != nil {
		return err
	}
	// The route goes into the flow's own array, computed afresh: a few
	// index operations, where Route's cache was a map lookup missing the
	// host's caches (4 % of a 4096-NPU run's CPU).
	f := n.newFlow()
	*f = flow{src: -1, dst: -1, bytes: bytes, rem: float64(bytes), h: h, arg: arg}
	r := n.route(src, dst, f.hops[:0])
	if len(r) > maxHops { // (TestRoutes holds every route within it)
		n.free = append(n.free, f)
		return fmt.Errorf("cluster: transfer %v→%v crosses %d links, more than a flow holds (%d)", src, dst, len(r), maxHops)
	}
	f.nhops = uint8(len(r))
	n.transfers++
	var lat sim.Time
	for _, l := range r {
		lat = sim.Add(lat, n.links[l].Latency)
		n.moved[l] += float64(bytes)
	}
	f.lat = lat
	now := n.eng.Now()
	if bytes == 0 || len(r) == 0 {
		n.free = append(n.free, f)
		n.eng.At(sim.Add(now, lat), 0, h, arg)
		return nil
	}
	if src.Kind == KindNPU && dst.Kind == KindNPU {
		f.src, f.dst = n.id(src), n.id(dst)
	}
	n.arrivals = append(n.arrivals, f)
	n.waker.Wake(now)
	return nil
}

// newFlow returns a delivered flow to reuse, or a new one: a cluster run
// moves a billion transfers, each a flow allocated afresh before.
func (n *Network) newFlow() *flow {
	if k := len(n.free); k > 0 {
		f := n.free[k-1]
		n.free = n.free[:k-1]
		return f
	}
	return &flow{}
}

// process advances the fluid model to now: drains bytes at the current rates, delivers the flows
// that are drained, admits new ones and shares the links out again.
func (n *Network) process(now sim.Time, _ int64) {
	if dt := float64(now - n.last); dt > 0 {
		for _, f := range n.active {
			f.rem -= float64(f.rate * dt)
		}
	}
	n.last = now
	changed := len(n.arrivals) > 0
	k := 0
	for _, f := range n.active {
		if f.fin <= now {
			n.eng.At(sim.Add(now, f.lat), 0, f.h, f.arg)
			n.leave(f)
			n.free = append(n.free, f) // (nothing holds it now: scratch lists are refilled before use)
			changed = true
			continue
		}
		n.active[k] = f
		k++
	}
	clear(n.active[k:])
	for _, f := range n.arrivals {
		n.join(f)
	}
	n.active = append(n.active[:k], n.arrivals...)
	clear(n.arrivals)
	n.arrivals = n.arrivals[:0]
	if !changed {
		return
	}
	if len(n.active) == 0 {
		n.dirty = n.dirty[:0]
		n.reportLoad()
		return
	}
	n.share()
	n.reportLoad()
	next := sim.MaxTime
	for _, f := range n.active {
		f.fin = sim.Add(now, sim.CeilPS(f.rem/f.rate))
		next = min(next, f.fin)
	}
	if next == sim.MaxTime { // no flow ends within the time range: say which link is to blame
		n.eng.Stop(n.tooSlow(n.active[0]))
		return
	}
	n.waker.Wake(next)
}

// tooSlow is the error of a flow that would end beyond the simulated time
// range: it names the slowest link of its route (the first of equals) and
// the description key setting that link's bandwidth. It wraps
// sim.ErrTimeOverflow.
func (n *Network) tooSlow(f *flow) error {
	slow := f.route()[0]
	for _, l := range f.route()[1:] {
		if n.perPS[l] < n.perPS[slow] {
			slow = l
		}
	}
	li := &n.links[slow]
	return fmt.Errorf("%s: too slow: a transfer of %d bytes over link %s (%.3g B/s) would end beyond the time a run can reach: %w",
		n.topo.Origin(li.Key), f.bytes, li.Name, li.Bandwidth, sim.ErrTimeOverflow)
}

// OnNPULoad sets fn to be told, whenever it changes, the bandwidth that
// the flows between NPUs draw from each NPU's memory (global NPU index,
// bytes/s): a flow reads its source's HBM and writes its destination's
// at its rate. Host↔NPU transfers are not counted (see docs/cluster.md).
func (n *Network) OnNPULoad(fn func(npu int, bytesPerSecond float64)) {
	n.onLoad = fn
	n.load = make([]float64, n.topo.NPUs())
	n.loadSeen = make([]float64, n.topo.NPUs())
}

// reportLoad sums the active NPU↔NPU flows' rates per NPU and tells
// onLoad the NPUs whose load changed, in NPU order.
func (n *Network) reportLoad() {
	if n.onLoad == nil {
		return
	}
	clear(n.load)
	for _, f := range n.active {
		if f.src >= 0 {
			n.load[f.src] += f.rate
			n.load[f.dst] += f.rate
		}
	}
	for i, l := range n.load {
		if l != n.loadSeen[i] {
			n.loadSeen[i] = l
			n.onLoad(i, l*1e12)
		}
	}
}

// join adds arriving flow f to its links' flows (after every flow
// already there, as in active) and marks those links changed.
func (n *Network) join(f *flow) {
	for _, l := range f.route() {
		n.lflows[l] = append(n.lflows[l], f)
	}
	n.dirty = append(n.dirty, f.route()...)
}

// leave takes drained flow f out of its links' flows, keeping the order of
// the others, and marks those links changed.
func (n *Network) leave(f *flow) {
	for _, l := range f.route() {
		fs := n.lflows[l]
		for i, g := range fs {
			if g == f {
				copy(fs[i:], fs[i+1:])
				fs[len(fs)-1] = nil
				n.lflows[l] = fs[:len(fs)-1]
				break
			}
		}
	}
	n.dirty = append(n.dirty, f.route()...)
}

// share sets the max-min fair share of every active flow connected to a
// change since the last share (progressive filling: the link with the
// smallest equal share is the bottleneck of all its unfrozen flows; freeze
// them at that share, take it from their other links, repeat; ties go to the
// lower link id).
//
// Max-min fair rates split over the connected components of the graph of
// flows and the links they share: a component's rates depend only on its own
// flows and links, and progressive filling over the whole network performs,
// for each component, the same operations in the same order as over that
// component alone (the heap orders links by share, then id, and other
// components' links never change a component's keys; the flows a bottleneck
// freezes all take the same share). So only the flows reachable from a
// changed link — over links, then the flows on them — are shared out again;
// the others keep their rates, bit for bit what a recomputation of every flow
// gives (TestComponentShareIsGlobalShare).
func (n *Network) share() {
	n.epoch++
	if n.reshareAll {
		for _, f := range n.active {
			n.dirty = append(n.dirty, f.route()...)
		}
	}
	links := n.compLinks[:0]
	for _, l := range n.dirty {
		if n.linkEpoch[l] != n.epoch {
			n.linkEpoch[l] = n.epoch
			links = append(links, l)
		}
	}
	n.dirty = n.dirty[:0]
	flows := n.compFlows[:0]
	for i := 0; i < len(links); i++ {
		for _, f := range n.lflows[links[i]] {
			if f.epoch == n.epoch {
				continue
			}
			f.epoch, f.frozen = n.epoch, false
			flows = append(flows, f)
			for _, l := range f.route() {
				if n.linkEpoch[l] != n.epoch {
					n.linkEpoch[l] = n.epoch
					links = append(links, l)
				}
			}
		}
	}
	h := &n.heap
	h.reset(len(n.links))
	for _, l := range links {
		n.cap[l] = n.perPS[l]
		n.cnt[l] = int32(len(n.lflows[l]))
		if n.cnt[l] > 0 {
			h.set(l, n.cap[l]/float64(n.cnt[l]))
		}
	}
	for h.len() > 0 {
		bl, s := h.pop()
		for _, f := range n.lflows[bl] {
			if f.frozen {
				continue
			}
			f.frozen, f.rate = true, s
			for _, l := range f.route() {
				n.cap[l] = math.Max(n.cap[l]-s, 0)
				n.cnt[l]--
				switch {
				case l == bl:
				case n.cnt[l] > 0:
					h.set(l, n.cap[l]/float64(n.cnt[l]))
				default:
					h.remove(l)
				}
			}
		}
	}
	for _, f := range flows {
		if !(f.rate > 0) { // rounding left nothing: never stall a flow
			f.rate = math.SmallestNonzeroFloat64
		}
	}
	clear(flows)
	n.compFlows, n.compLinks = flows[:0], links[:0]
}

// shareHeap is an indexed binary min-heap of links keyed by their equal
// share, ties to the lower link id: each link is in it at most once and
// its key is updated in place, so the heap stays as small as the links
// (a lazy heap holding every superseded share grew with flows × hops).
type shareHeap struct {
	ls  []LinkID  // heap order
	key []float64 // by link
	pos []int32   // by link: index in ls, or -1
}

// reset empties the heap for links 0 … n-1.
func (h *shareHeap) reset(n int) {
	for _, l := range h.ls {
		h.pos[l] = -1
	}
	h.ls = h.ls[:0]
	if len(h.pos) < n {
		h.pos = make([]int32, n)
		h.key = make([]float64, n)
		for i := range h.pos {
			h.pos[i] = -1
		}
	}
}

func (h *shareHeap) len() int { return len(h.ls) }

// less orders heap positions i and j.
func (h *shareHeap) less(i, j int) bool {
	a, b := h.ls[i], h.ls[j]
	return h.key[a] < h.key[b] || h.key[a] == h.key[b] && a < b
}

func (h *shareHeap) swap(i, j int) {
	h.ls[i], h.ls[j] = h.ls[j], h.ls[i]
	h.pos[h.ls[i]], h.pos[h.ls[j]] = int32(i), int32(j)
}

func (h *shareHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *shareHeap) down(i int) {
	n := len(h.ls)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			return
		}
		h.swap(i, c)
		i = c
	}
}

// set inserts link l with key k, or moves it to key k.
func (h *shareHeap) set(l LinkID, k float64) {
	h.key[l] = k
	if i := h.pos[l]; i >= 0 {
		h.up(int(i))
		h.down(int(h.pos[l]))
		return
	}
	h.ls = append(h.ls, l)
	h.pos[l] = int32(len(h.ls) - 1)
	h.up(len(h.ls) - 1)
}

// remove takes link l out of the heap (if it is in).
func (h *shareHeap) remove(l LinkID) {
	i := int(h.pos[l])
	if i < 0 {
		return
	}
	last := len(h.ls) - 1
	if i != last {
		h.swap(i, last)
	}
	h.ls = h.ls[:last]
	h.pos[l] = -1
	if i < last {
		moved := h.ls[i]
		h.up(i)
		h.down(int(h.pos[moved]))
	}
}

// pop removes and returns the link with the smallest share, and the share.
func (h *shareHeap) pop() (LinkID, float64) {
	l := h.ls[0]
	h.remove(l)
	return l, h.key[l]
}
