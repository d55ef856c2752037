package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
)

func TestLoadEmbedded(t *testing.T) {
	topo := mustLoad(t)
	if topo.Nodes != 32 || topo.NPUs() != 256 || topo.Node.NPUs != 8 || topo.Node.NPU != "ascend-910a" {
		t.Fatalf("cloudbrain2: %d nodes, %d NPUs, npu %q", topo.Nodes, topo.NPUs(), topo.Node.NPU)
	}
	if got := float64(topo.Node.PCIe.Bandwidth()); got != 15.75e9 {
		t.Errorf("default PCIe bandwidth %v, want Gen3 15.75 GB/s (CLUSTER-FACTS §0, S13)", got)
	}
	topo = mustLoad(t, "cluster.nodes=4", "node.pcie.generation=4", "cluster.fabric.supernodes=2")
	if topo.Nodes != 4 || float64(topo.Node.PCIe.Bandwidth()) != 31.5e9 || topo.Supernode(1) != 0 || topo.Supernode(2) != 1 {
		t.Errorf("overrides not applied: %d nodes, %v, supernodes %d", topo.Nodes, topo.Node.PCIe.Bandwidth(), topo.Fabric.Supernodes)
	}
	if _, err := LoadNode("cloudbrain2-node", nil); err != nil {
		t.Fatal(err)
	}
}

// cloudbrain2-node.yaml leaves inter_group.bandwidth out: the bridge then carries what one HCCS
// group's PCIe links send at once in the generation in effect (CLUSTER-FACTS §1.2); given, in the
// file or by --set, it is used as given.
func TestBridgeBandwidth(t *testing.T) {
	for _, c := range []struct {
		sets   []string
		want   float64
		origin string
	}{
		{nil, 63e9, "cloudbrain2-node.yaml (not given, so 4 × pcie.gen3_bandwidth = 63GB/s, what one HCCS group's PCIe links carry at once)"},
		{[]string{"node.pcie.generation=4"}, 126e9, "not given, so 4 × pcie.gen4_bandwidth = 126GB/s"},
		{[]string{"node.pcie.generation=4", "node.pcie.gen4_bandwidth=32GB/s"}, 128e9, "= 128GB/s"},
		{[]string{"node.hccs.group_size=2"}, 31.5e9, "not given, so 2 × pcie.gen3_bandwidth"},
		{[]string{"node.pcie.generation=4", "node.inter_group.bandwidth=63GB/s"}, 63e9, "--set node.inter_group.bandwidth=63GB/s"},
	} {
		topo := mustLoad(t, c.sets...)
		if got := float64(topo.Node.InterGroup.Bandwidth); got != c.want {
			t.Errorf("%v: bridge %v B/s, want %v", c.sets, got, c.want)
		}
		if o := topo.Origin("node.inter_group.bandwidth"); !strings.Contains(o, c.origin) {
			t.Errorf("%v: origin %q lacks %q", c.sets, o, c.origin)
		}
	}
	// A node file that gives the bandwidth keeps it, at Gen4 too.
	src, err := Source("cloudbrain2-node")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "node.yaml")
	text := strings.Replace(string(src), "inter_group:\n", "inter_group:\n  bandwidth: 50GB/s\n", 1)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ov, _ := machines.ParseOverrides([]string{"node.pcie.generation=4"})
	n, err := LoadNode(p, ov)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(n.InterGroup.Bandwidth); got != 50e9 {
		t.Errorf("bridge given as 50GB/s in the file: %v B/s", got)
	}
}

// Every number in the embedded files cites CLUSTER-FACTS or says "assumption:".
func TestEmbeddedFilesCite(t *testing.T) {
	for _, name := range Names() {
		src, err := Source(name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		for i, l := range lines {
			k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
			if !ok || strings.HasPrefix(k, "#") || v == "" || !strings.ContainsAny(v, "0123456789") || k == "description" || k == "name" || k == "node" || k == "npu" {
				continue
			}
			cited := false
			for j := i - 1; j >= 0 && strings.HasPrefix(strings.TrimSpace(lines[j]), "#"); j-- {
				c := lines[j]
				if strings.Contains(c, "CF §") || strings.Contains(c, "assumption:") {
					cited = true
					break
				}
			}
			if !cited {
				t.Errorf("%s.yaml:%d: %q has no CF § citation or assumption: comment above it", name, i+1, strings.TrimSpace(l))
			}
		}
	}
}

// Each bad input gives one line naming file (or --set), key and constraint, marked bad input.
func TestBadInput(t *testing.T) {
	node, err := Source("cloudbrain2-node")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := Source("cloudbrain2")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nodeWith := func(old, new string) string {
		if !strings.Contains(string(node), old) {
			t.Fatalf("node file has no %q", old)
		}
		return strings.Replace(string(node), old, new, 1)
	}
	for _, c := range []struct {
		name, node string   // node file text ("" = embedded)
		sets       []string // overrides
		want       []string // substrings of the one line ("!s": s is not in it)
	}{
		{"zero link speed", nodeWith("link_bandwidth: 30GB/s", "link_bandwidth: 0GB/s"), nil,
			[]string{"node.yaml:", `key "hccs.link_bandwidth"`, "must be > 0"}},
		{"negative latency", nodeWith("latency_ns: 1500", "latency_ns: -1"), nil,
			[]string{"node.yaml:", `key "roce.latency_ns"`, "must be in 0..1e+09 ns"}},
		{"NPU count", nodeWith("npus: 8", "npus: 6"), nil,
			[]string{"node.yaml:", `key "npus"`, "1, 2, 4 or 8", "S3"}},
		{"unknown intra algorithm", nodeWith("intra_server: auto", "intra_server: doublering"), nil,
			[]string{"node.yaml:", `key "collectives.intra_server"`, `unknown collective algorithm "doublering"`}},
		{"unknown inter algorithm by --set", "", []string{"node.collectives.inter_server=nhr"},
			[]string{"--set node.collectives.inter_server=nhr", `unknown collective algorithm "nhr"`}},
		{"zero speed by --set", "", []string{"cluster.fabric.port_bandwidth=0"},
			[]string{"--set cluster.fabric.port_bandwidth=0", `key "fabric.port_bandwidth"`, "must be > 0"}},
		{"zero bridge speed", nodeWith("inter_group:\n", "inter_group:\n  bandwidth: 0GB/s\n"), nil,
			[]string{"node.yaml:", `key "inter_group.bandwidth"`, "must be > 0"}},
		// The bridge derived from a zero PCIe speed is not refused apart.
		{"zero PCIe speed by --set", "", []string{"node.pcie.gen3_bandwidth=0"},
			[]string{"--set node.pcie.gen3_bandwidth=0", `key "pcie.gen3_bandwidth"`, "must be > 0"}},
		{"PCIe generation", "", []string{"node.pcie.generation=5"},
			[]string{"--set node.pcie.generation=5", "must be 3 or 4"}},
		{"NPU count by --set", "", []string{"node.npus=3"},
			[]string{"--set node.npus=3", "1, 2, 4 or 8"}},
		// Not also the bridge derived from it (the line went on with
		// "-1 × pcie.gen3_bandwidth = -1.575e+10 …: must be > 0").
		{"negative NPU count", nodeWith("npus: 8", "npus: -1"), nil,
			[]string{"node.yaml:", `key "npus"`, "(got -1)", "!inter_group"}},
		{"zero group size", "", []string{"node.hccs.group_size=0"},
			[]string{"--set node.hccs.group_size=0", "must be 1, 2, 4 or 8 (got 0)", "!inter_group"}},
		{"supernodes", "", []string{"cluster.nodes=2", "cluster.fabric.supernodes=3"},
			[]string{"--set cluster.fabric.supernodes=3", "must be in 1..nodes = 2"}},
		{"unknown key", nodeWith("hccs:", "hccs:\n  lnks: 3"), nil,
			[]string{"node.yaml:", "unknown key", "lnks"}},
		{"missing key", nodeWith("  latency_ns: 1500\n", "\n"), nil,
			[]string{"node.yaml", "missing key", "roce.latency_ns", "a node description gives every value; see davinci-sim machines cloudbrain2-node"}},
		// A section left empty is YAML's null: no value (it decoded as the
		// zero value, not as missing keys).
		{"empty section", nodeWith("  latency_ns: 500\n", "\n"), nil,
			[]string{"node.yaml:", `key "inter_group" has no value (nothing after the colon, YAML's null)`}},
		{"unknown NPU machine", nodeWith("npu: ascend-910a", "npu: ascend-999"), nil,
			[]string{"node.yaml:", `key "npu"`, "ascend-999", "(a node's NPU is one of ascend-910a)"}},
		// The NPU must be a DaVinci chip with a host (it failed later, naming
		// the node's name: neither its file nor the key).
		{"a GPU as the NPU", nodeWith("npu: ascend-910a", "npu: a100"), nil,
			[]string{"node.yaml:15:", `key "npu"`, "a100 is a GPU", "DaVinci machine with a host section (embedded: ascend-910a)"}},
		{"an NPU without a host by --set", "", []string{"node.npu=ascend-910b3"},
			[]string{"--set node.npu=ascend-910b3", `key "npu"`, "ascend-910b3 has no host section"}},
		// The node file a cluster names, at its node key (the messages named
		// neither the --set nor the key; a cluster file given as the node
		// gave one unknown-key line per key).
		{"missing node file by --set", "", []string{"cluster.node=no/such.yaml"},
			[]string{"--set cluster.node=no/such.yaml", `key "node"`, "no such file"}},
		{"unknown node name by --set", "", []string{"cluster.node=cloudbrain3-node"},
			[]string{"--set cluster.node=cloudbrain3-node", `key "node"`, `unknown node file "cloudbrain3-node"`}},
		{"a machine name as the node", "", []string{"cluster.node=ascend-910a"},
			[]string{"--set cluster.node=ascend-910a", `key "node"`, "ascend-910a is a chip's machine, which a node description names with npu:"}},
		{"a cluster as the node", "", []string{"cluster.node=cloudbrain2"},
			[]string{"--set cluster.node=cloudbrain2", `key "node"`, "cloudbrain2 is a cluster description"}},
		// A node file that is not YAML of keys: at the node key that named
		// it (the line named the file alone).
		{"a node file not a mapping", "- npu: ascend-910a\n", nil,
			[]string{"cluster.yaml:", `key "node"`, "node.yaml:1:", "the top level must be a mapping of keys"}},
		{"a machine file as the node", "", []string{"cluster.node=../machines/a100.yaml"},
			[]string{"--set cluster.node=../machines/a100.yaml", `key "node"`, "is a chip's machine file, not a node description"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := "cloudbrain2"
			if c.node != "" {
				write("node.yaml", c.node)
				path = write("cluster.yaml", strings.Replace(string(cl), "node: cloudbrain2-node", "node: node.yaml", 1))
			}
			ov, err := machines.ParseOverrides(c.sets)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Load(path, ov)
			if err == nil {
				t.Fatal("no error")
			}
			if !badinput.Is(err) {
				t.Errorf("not bad input: %v", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("more than one line:\n%s", msg)
			}
			for _, w := range c.want {
				if not, ok := strings.CutPrefix(w, "!"); ok {
					if strings.Contains(msg, not) {
						t.Errorf("%q has %q", msg, not)
					}
				} else if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestParseAlgo(t *testing.T) {
	for s, want := range map[string]Algo{"ring": Ring, "hd": HD, "h-d_r": HD, "binomial": HD, "mesh": Mesh, "auto": Auto, "hierarchical": Hierarchical} {
		if got, err := ParseAlgo(s); err != nil || got != want {
			t.Errorf("ParseAlgo(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseAlgo("nhr"); err == nil {
		t.Error("ParseAlgo(nhr): no error")
	}
}

// A cluster file without one of its values names the missing key and the
// embedded cluster description to copy it from (it named a Go function,
// cluster.Source, and the node description).
func TestClusterMissingKey(t *testing.T) {
	cl, err := Source("cloudbrain2")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(cl), "  port_bandwidth: 12.5GB/s\n", "", 1)
	if text == string(cl) {
		t.Fatal("cloudbrain2 has no port_bandwidth line")
	}
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path, nil)
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), `missing key "fabric.port_bandwidth" (a cluster description gives every value; see davinci-sim machines cloudbrain2)`) {
		t.Errorf("cluster file without fabric.port_bandwidth: %v", err)
	}
}
