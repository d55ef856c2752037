package cluster

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/davinci-sim/davinci-sim/machines"
)

// withoutLocations returns t without its location bookkeeping (where each
// key was given, --set origins), which differ between a description and
// its view by design: the view is another file.
func withoutLocations(t *Topology) Topology {
	c := *t
	c.nodeAt, c.clusterAt, c.origin = nil, nil, nil
	return c
}

// reload writes topo's view to a file and loads it back as its kind of
// description: a cluster file with Load, a node file with LoadSystem (and
// LoadNode, which must agree).
func reload(t *testing.T, topo *Topology) *Topology {
	t.Helper()
	p := filepath.Join(t.TempDir(), "view.yaml")
	if err := os.WriteFile(p, topo.YAML(), 0o644); err != nil {
		t.Fatal(err)
	}
	if topo.NodeOnly() {
		n, err := LoadNode(p, nil)
		if err != nil {
			t.Fatalf("the node view does not load back: %v\n%s", err, topo.YAML())
		}
		if !reflect.DeepEqual(*n, topo.Node) {
			t.Errorf("LoadNode of the view:\n%+v\nwant\n%+v", *n, topo.Node)
		}
		back, err := LoadSystem(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	back, err := Load(p, nil)
	if err != nil {
		t.Fatalf("the cluster view does not load back: %v\n%s", err, topo.YAML())
	}
	return back
}

// The view of each embedded description, with and without overrides,
// loads back equal to the effective description; a value derived stays
// derived (from the values in effect), and the view of the view is the
// view without its --set marks.
func TestViewRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		sets []string
	}{
		{"cloudbrain2", nil},
		{"cloudbrain2", []string{"node.hccs.link_bandwidth=30GB/s", "cluster.nodes=4"}},
		{"cloudbrain2", []string{"node.pcie.generation=4", "cluster.fabric.supernodes=2", "cluster.nodes=6", "node.npus=4",
			"node.hosts.count=2", "cluster.name=my cluster: #1", "node.description=\"quoted\" \\ and\ttab", "node.name=yes"}},
		{"cloudbrain2", []string{"node.inter_group.bandwidth=10GB/s", "cluster.fabric.oversubscription=1.5", "node.hosts.memory=1.5GiB"}},
		{"cloudbrain2", []string{"cluster.node=cloudbrain2-node"}},
		{"cloudbrain2-node", nil},
		{"cloudbrain2-node", []string{"node.pcie.generation=4", "node.hccs.latency_ns=0.25", "node.collectives.inter_server=ring"}},
	}
	for _, c := range cases {
		ovs, err := machines.ParseOverrides(c.sets)
		if err != nil {
			t.Fatal(err)
		}
		topo, err := LoadSystem(c.name, ovs)
		if err != nil {
			t.Fatalf("%s %v: %v", c.name, c.sets, err)
		}
		back := reload(t, topo)
		if got, want := withoutLocations(back), withoutLocations(topo); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %v: the view loads back as\n%+v\nwant\n%+v\nview:\n%s", c.name, c.sets, got, want, topo.YAML())
		}
		if !reflect.DeepEqual(back.nodeAt.derived, topo.nodeAt.derived) {
			t.Errorf("%s %v: derived %v, want %v", c.name, c.sets, back.nodeAt.derived, topo.nodeAt.derived)
		}
		if got, want := string(back.YAML()), strings.ReplaceAll(string(topo.YAML()), "  # --set", ""); got != want {
			t.Errorf("%s %v: the view of the view:\n%s\nwant\n%s", c.name, c.sets, got, want)
		}
	}
}

// Keys set by --set are marked on the cluster (cluster.*) and on the
// inline node (node.*); the bridge left out is written commented out with
// the rule it was derived by, and given by --set it is a key.
func TestViewMarks(t *testing.T) {
	topo := mustLoad(t, "node.hccs.link_bandwidth=25GB/s", "CLUSTER.Nodes=4", "node.pcie.generation=4")
	view := string(topo.YAML())
	for _, want := range []string{
		"\nnode:\n  name: cloudbrain2-node\n",
		"\n  hccs:\n    group_size: 4\n    link_bandwidth: 25GB/s  # --set\n",
		"\n  pcie:\n    generation: 4  # --set\n",
		"\nnodes: 4  # --set\n",
		"\n    # bandwidth: 126GB/s  (derived: not given, so 4 × pcie.gen4_bandwidth = 126GB/s",
		"\n  port_bandwidth: 12.5GB/s\n",
	} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	if n := strings.Count(view, "# --set"); n != 3 {
		t.Errorf("%d keys marked # --set, want 3:\n%s", n, view)
	}
	if view := string(mustLoad(t, "cluster.node=cloudbrain2-node").YAML()); !strings.Contains(view, "\nnode:  # --set\n  name: cloudbrain2-node\n") {
		t.Errorf("a node named by --set is marked on node: —\n%s", view)
	}
	view = string(mustLoad(t, "node.inter_group.bandwidth=70GB/s").YAML())
	if !strings.Contains(view, "\n  inter_group:\n    bandwidth: 70GB/s  # --set\n") || strings.Contains(view, "derived") {
		t.Errorf("a bridge given by --set:\n%s", view)
	}
	node, err := LoadSystem("cloudbrain2-node", []machines.Override{{Path: "node.npus", Value: "4"}})
	if err != nil {
		t.Fatal(err)
	}
	view = string(node.YAML())
	if !strings.HasPrefix(view, "name: cloudbrain2-node\n") || !strings.Contains(view, "\nnpus: 4  # --set\n") || strings.Contains(view, "\nnode:") || strings.Contains(view, "fabric") {
		t.Errorf("node view:\n%s", view)
	}
}

// The header's figures follow the description in effect.
func TestFigures(t *testing.T) {
	got := strings.Join(mustLoad(t, "cluster.nodes=4", "cluster.fabric.supernodes=2", "cluster.fabric.port_bandwidth=10GB/s").Figures(), "\n")
	for _, want := range []string{"4 nodes × 8 NPUs = 32 × ascend-910a NPUs; 16 hosts", "Gen3, 15.75GB/s per NPU",
		"bridge between groups 63GB/s (4 × pcie.gen3_bandwidth)", "2 groups of 4 NPUs", "10GB/s per NPU", "80GB/s per node; node uplink 80GB/s (÷ oversubscription 1)",
		"supernodes: 2 of up to 2 nodes; spine uplink of a full one 80GB/s (÷ spine oversubscription 2)"} {
		if !strings.Contains(got, want) {
			t.Errorf("figures lack %q:\n%s", want, got)
		}
	}
	if got := strings.Join(mustLoad(t, "cluster.nodes=1").Figures(), "\n"); !strings.Contains(got, "no node uplink crossed (one node)") {
		t.Errorf("one node's figures:\n%s", got)
	}
	node, err := LoadSystem("cloudbrain2-node", []machines.Override{{Path: "node.npus", Value: "4"}})
	if err != nil {
		t.Fatal(err)
	}
	got = strings.Join(node.Figures(), "\n")
	for _, want := range []string{"one node of 4 × ascend-910a NPUs", "HCCS: 1 group of 4 NPUs", "no bridge crossed (one group)", "50GB/s per node (no fabric"} {
		if !strings.Contains(got, want) {
			t.Errorf("node figures lack %q:\n%s", want, got)
		}
	}
}

// inlineCluster is a cluster file with the embedded node inline, edit
// applied to the node's text.
func inlineCluster(t *testing.T, edit func(string) string) string {
	t.Helper()
	node, err := Source("cloudbrain2-node")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("name: inline\nnodes: 2\nnode:\n")
	for _, l := range strings.Split(strings.TrimRight(edit(string(node)), "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("fabric: {port_bandwidth: 12.5GB/s, latency_ns: 500, oversubscription: 1, supernodes: 1, spine_oversubscription: 2, spine_latency_ns: 1000}\n")
	p := filepath.Join(t.TempDir(), "inline.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lineOf is the 1-based line of the first line of file holding s.
func lineOf(t *testing.T, file, s string) int {
	t.Helper()
	data, _ := os.ReadFile(file)
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%s lacks %q", file, s)
	return 0
}

// A cluster file may give its node inline; it loads as the same cluster
// as naming the node file, and its node's bad keys and values are named
// by the cluster file, line and the key's path in it.
func TestInlineNode(t *testing.T) {
	p := inlineCluster(t, func(s string) string { return s })
	topo, err := Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	named := mustLoad(t, "cluster.nodes=2", "cluster.name=inline")
	named.Description = ""
	if got, want := withoutLocations(topo), withoutLocations(named); !reflect.DeepEqual(got, want) {
		t.Errorf("inline:\n%+v\nnamed:\n%+v", got, want)
	}
	if files := topo.Files(); !reflect.DeepEqual(files, []string{p}) {
		t.Errorf("Files() = %v, want the cluster file once", files)
	}
	if got, want := topo.Origin("node.hccs.link_bandwidth"), p+":"; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, `key "node.hccs.link_bandwidth"`) {
		t.Errorf("Origin = %q", got)
	}
	// An inline node without a name is named after its cluster.
	p2 := inlineCluster(t, func(s string) string { return strings.Replace(s, "name: cloudbrain2-node\n", "", 1) })
	if topo, err := Load(p2, nil); err != nil || topo.Node.Name != "inline-node" {
		t.Errorf("unnamed inline node: %v, %+v", err, topo)
	}

	// run -m takes it (LoadSystem, IsDescription).
	if sys, err := LoadSystem(p, nil); err != nil || !IsDescription(p) || sys.NodeOnly() || sys.Node.NPUs != 8 {
		t.Errorf("LoadSystem of an inline cluster: %v, IsDescription %v", err, IsDescription(p))
	}
	// An empty node: says both ways of giving one.
	p3 := filepath.Join(t.TempDir(), "empty-node.yaml")
	cl, _ := Source("cloudbrain2")
	os.WriteFile(p3, []byte(strings.Replace(string(cl), "node: cloudbrain2-node", `node: ""`, 1)), 0o644)
	if _, err := Load(p3, nil); err == nil || !strings.Contains(err.Error(), p3+":"+strconv.Itoa(lineOf(t, p3, `node: ""`))+`: key "node": must name a node description (e.g. cloudbrain2-node) or hold one inline`) {
		t.Errorf("node: null: %v", err)
	}

	cases := []struct {
		name, from, to, at string
		sets               []string
		want               string
	}{
		{"unknown key", "  link_bandwidth: 30GB/s", "  link_bandwdth: 30GB/s", "link_bandwdth", nil, `unknown key "node.hccs.link_bandwdth"`},
		{"bad value", "  link_bandwidth: 30GB/s", "  link_bandwidth: 30GeB/s", "link_bandwidth", nil, `"node.hccs.link_bandwidth"`},
		{"constraint", "  link_bandwidth: 30GB/s", "  link_bandwidth: 0", "link_bandwidth", nil, `key "node.hccs.link_bandwidth": must be > 0`},
		{"npus", "npus: 8", "npus: 3", "npus: 3", nil, `key "node.npus": must be 1, 2, 4 or 8`},
		{"missing", "  latency_ns: 1500\n", "", "", nil, `missing key "node.roce.latency_ns" (a cluster description gives every value`},
		{"a cluster inline", "npu: ascend-910a", "node: cloudbrain2-node", "", nil, `key "node": the inline node is a cluster description`},
		{"set", "", "", "", []string{"node.hccs.bogus=1"}, `--set node.hccs.bogus=1: unknown key "node.hccs.bogus"`},
		{"set value", "", "", "", []string{"node.hccs.link_bandwidth=0"}, `--set node.hccs.link_bandwidth=0: key "node.hccs.link_bandwidth": must be > 0`},
		{"set bad value", "", "", "", []string{"node.hccs.link_bandwidth=fast"}, `--set node.hccs.link_bandwidth=fast: key "node.hccs.link_bandwidth": bad bandwidth`},
		{"cluster.node", "", "", "", []string{"cluster.node=cloudbrain2-node"}, "gives its node inline"},
		{"cluster.node.npus", "", "", "", []string{"cluster.node.npus=4"}, "set them with --set node.KEY=VALUE"},
	}
	for _, c := range cases {
		p := inlineCluster(t, func(s string) string { return strings.Replace(s, c.from, c.to, 1) })
		ovs, err := machines.ParseOverrides(c.sets)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Load(p, ovs)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.name, err, c.want)
			continue
		}
		if c.at != "" {
			if want := p + ":" + itoa(lineOf(t, p, c.at)); !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s: %v; want it at %s", c.name, err, want)
			}
		} else if !strings.Contains(err.Error(), p) && !strings.Contains(err.Error(), "--set") {
			t.Errorf("%s: %v names neither the file nor the --set", c.name, err)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// A name or description reads back from the view as the same string,
// whatever it holds (YAML's special words, indicators, escapes, runes
// that are not printable).
func TestYAMLStringReadsBack(t *testing.T) {
	for _, s := range []string{"", "plain", "cloudbrain2-node", "yes", "No", "null", "Null", "~", "y", "0", "1e3", "0x10", ".inf",
		" lead", "trail ", "a: b", "#x", "x #y", "'q'", `"d"`, `back\slash`, "- item", "? k", "[x]", "{x}", "&a", "*a", "!t", "%p", "@", "`",
		"tab\there", "line\nbreak", "cr\r", "nul\x00", "del\x7f", "\u00a0nbsp", "\ufeffbom", "sep\u2028", "para\u2029", "\U0001F600 emoji", "\U000E0001 tag", "\ufffd",
		"π ≈ 3.14 — ünïcödé", "ascend-910a", "True", "ON", "n"} {
		var got struct{ V string }
		text := "v: " + machines.YAMLString(s) + "\n"
		if err := yaml.Unmarshal([]byte(text), &got); err != nil || got.V != s {
			t.Errorf("%q written %q reads back %q (%v)", s, text, got.V, err)
		}
	}
}
