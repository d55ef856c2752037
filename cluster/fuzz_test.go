package cluster

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/machines/clusters"
	"github.com/davinci-sim/davinci-sim/sim"
)

// heapAllocated is the bytes allocated on the heap so far (cumulative).
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// FuzzLoadSystem feeds arbitrary cluster and node description text (the
// cluster file's node: names the node file beside it) and --set lines to
// LoadSystem, as -m FILE does, then builds the network of what loads: it
// must never panic or hang, its errors are bad input with a line a
// violation, each naming a file or the --set, loading and building
// allocate at most 1 GiB (the largest cluster the limits allow, 512 nodes
// of 64 sockets, builds 2M SMP links: 0.7 GB), and every NPU reaches the
// first NPU, its host and the last NPU at a finite cost; and the round
// trip: its view (Topology.YAML) loads back equal, and the view of that is
// the view but for its --set marks. Seeds: the embedded descriptions,
// overrides of their keys, a node described alone, a node given inline.
func FuzzLoadSystem(f *testing.F) {
	cl, err := clusters.FS.ReadFile("cloudbrain2.yaml")
	if err != nil {
		f.Fatal(err)
	}
	node, err := clusters.FS.ReadFile("cloudbrain2-node.yaml")
	if err != nil {
		f.Fatal(err)
	}
	cl = []byte(strings.Replace(string(cl), "node: cloudbrain2-node", "node: node.yaml", 1))
	f.Add(cl, node, "")
	f.Add(cl, node, "cluster.nodes=512\ncluster.fabric.supernodes=512\nnode.npus=8\nnode.hosts.count=64")
	f.Add(cl, node, "cluster.nodes=0\nnode.hccs.group_size=3\nnode.pcie.generation=5")
	f.Add(cl, node, "node.npu=a100\nmachine.cores=2")
	f.Add(cl, node, "cluster.fabric.port_bandwidth=0\nnode.collectives.intra_server=ring")
	f.Add([]byte("node: cloudbrain2-node\nnodes: 2\nfabric: {port_bandwidth: 12.5GB/s, latency_ns: 500, oversubscription: 1, supernodes: 2, spine_oversubscription: 2, spine_latency_ns: 1000}\n"), node, "")
	f.Add([]byte("node: node.yaml\nnodes: 2\n"), []byte("npu: ascend-910a\nnpus: 3\n"), "")
	f.Add([]byte("node: node.yaml\n"), []byte("node: node.yaml\n"), "")
	f.Add(node, node, "")
	f.Add(node, node, "cluster.nodes=2")
	f.Add(node, node, "node.hosts.count=2\nnode.npus=4")
	f.Add([]byte("npu: [\n"), []byte(""), "")
	inline := "name: inline\nnodes: 2\nfabric: {port_bandwidth: 12.5GB/s, latency_ns: 500, oversubscription: 1, supernodes: 1, spine_oversubscription: 2, spine_latency_ns: 1000}\nnode:\n  " +
		strings.ReplaceAll(strings.TrimSpace(string(node)), "\n", "\n  ") + "\n"
	f.Add([]byte(inline), []byte(""), "")
	f.Add([]byte(inline), []byte(""), "node.npus=4\ncluster.nodes=3\nnode.name=x y\nnode.inter_group.bandwidth=1e9")
	f.Add([]byte(inline), []byte(""), "cluster.node=node.yaml")
	f.Add([]byte(strings.Replace(strings.Replace(inline, "\nnode:", "\nNode:", 1), "  npus: 8", "  NPUs: 2", 1)), []byte(""), "node.HCCS.group_size=1")
	f.Add(cl, node, "node.description=\"a\\tb\u2028c\"\ncluster.name=yes\nnode.hosts.memory=1.5GiB\nnode.pcie.generation=4")
	f.Add(cl, node, "cluster.nodes=2\x1e4\nnode.npus=|\x1e  4") // (\x1e: a newline in the value)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, clusterText, nodeText []byte, sets string) {
		var ovs []machines.Override
		if sets != "" {
			for _, s := range strings.Split(sets, "\n") {
				o, err := machines.ParseOverride(strings.ReplaceAll(s, "\x1e", "\n")) // (\x1e in a line: a newline in the value)
				if err != nil {
					return
				}
				ovs = append(ovs, o)
			}
		}
		cpath, npath := filepath.Join(dir, "cluster.yaml"), filepath.Join(dir, "node.yaml")
		if err := os.WriteFile(cpath, clusterText, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(npath, nodeText, 0o644); err != nil {
			t.Fatal(err)
		}
		before := heapAllocated()
		defer func() {
			if n := heapAllocated() - before; n > 1<<30 {
				t.Fatalf("allocated %d MiB", n>>20)
			}
		}()
		topo, err := LoadSystem(cpath, ovs)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("error %q is not bad input", err)
			}
			for _, l := range strings.Split(err.Error(), "\n") {
				if !strings.Contains(l, dir) && !strings.Contains(l, "--set") && !strings.Contains(l, ".yaml") {
					t.Fatalf("error line %q names neither a file nor a --set (in %q)", l, err)
				}
			}
			return
		}
		if topo.Nodes < 1 || topo.Nodes > MaxNodes || topo.NPUs() < 1 {
			t.Fatalf("loaded %d nodes of %d NPUs", topo.Nodes, topo.Node.NPUs)
		}
		// The round trip: the view of what loads is a description that
		// loads back equal (but for where its keys were given), with the
		// same values derived, and its own view is the same text but for
		// the --set marks.
		view := topo.YAML()
		vpath := filepath.Join(dir, "view.yaml")
		if err := os.WriteFile(vpath, view, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := LoadSystem(vpath, nil)
		if err != nil {
			t.Fatalf("the view does not load back: %v\n%s", err, view)
		}
		if got, want := withoutLocations(back), withoutLocations(topo); !reflect.DeepEqual(got, want) {
			t.Fatalf("the view loads back as\n%+v\nwant\n%+v\nview:\n%s", got, want, view)
		}
		if !reflect.DeepEqual(back.nodeAt.derived, topo.nodeAt.derived) {
			t.Fatalf("derived %v, want %v; view:\n%s", back.nodeAt.derived, topo.nodeAt.derived, view)
		}
		if got, want := string(back.YAML()), strings.ReplaceAll(string(view), "  # --set", ""); got != want {
			t.Fatalf("the view of the view:\n%s\nwant\n%s", got, want)
		}
		// Every NPU (of the first few) reaches the first NPU and its
		// host, and a transfer's cost is finite and not negative.
		net := NewNetwork(sim.NewEngine(), topo)
		for i := range min(topo.NPUs(), 64) {
			src := NPU(i/topo.Node.NPUs, i%topo.Node.NPUs)
			for _, dst := range []Endpoint{NPU(0, 0), Host(0, 0), NPU(topo.Nodes-1, topo.Node.NPUs-1)} {
				if _, err := net.Route(src, dst); err != nil {
					t.Fatalf("route %v → %v: %v", src, dst, err)
				}
				alpha, beta, err := net.PathCost(src, dst)
				if err != nil || alpha < 0 || !(beta >= 0) || math.IsInf(beta, 0) {
					t.Fatalf("path cost %v → %v: %v %v %v", src, dst, alpha, beta, err)
				}
			}
		}
	})
}
