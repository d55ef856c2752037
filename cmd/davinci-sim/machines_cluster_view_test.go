package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/machines"
)

// The effective view of a cluster and of a node description: header,
// marks, and a file that loads back (with run's loader, LoadSystem) as the
// description the overrides give.
func TestMachinesClusterView(t *testing.T) {
	sets := []string{"node.hccs.link_bandwidth=20GB/s", "cluster.nodes=4"}
	out, code, err := runCLI(t, "machines", "cloudbrain2", "--set", sets[0], "--set", sets[1])
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, want := range []string{
		"# effective configuration of embedded cluster description cloudbrain2\n",
		"#   --set node.hccs.link_bandwidth=20GB/s\n#   --set cluster.nodes=4\n",
		"# derived: 4 nodes × 8 NPUs = 32 × ascend-910a NPUs",
		"# derived: PCIe in effect: Gen3, 15.75GB/s",
		"bridge between groups 63GB/s",
		"\nnode:\n  name: cloudbrain2-node\n",
		"    link_bandwidth: 20GB/s  # --set\n",
		"\nnodes: 4  # --set\n",
		"    # bandwidth: 63GB/s  (derived: not given, so 4 × pcie.gen3_bandwidth",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("view lacks %q:\n%s", want, out)
		}
	}
	ovs, err := machines.ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cluster.LoadSystem("cloudbrain2", ovs)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "variant.yaml")
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := cluster.LoadSystem(p, nil)
	if err != nil {
		t.Fatalf("the view does not load: %v", err)
	}
	if back.Node != want.Node || back.Nodes != want.Nodes || back.Fabric != want.Fabric || back.Name != want.Name {
		t.Errorf("the view loads as %+v, want %+v", back, want)
	}
	// -m FILE views the file; its view is the same but for the header's
	// first line and the marks.
	again, code, err := runCLI(t, "machines", "-m", p)
	if code != 0 {
		t.Fatalf("-m view: exit %d: %v", code, err)
	}
	strip := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "# effective") && !strings.HasPrefix(l, "#   --set") {
				keep = append(keep, strings.TrimSuffix(l, "  # --set"))
			}
		}
		return strings.Join(keep, "\n")
	}
	if !strings.HasPrefix(again, "# effective configuration of file "+p+"\n") || strip(again) != strip(out) {
		t.Errorf("-m %s:\n%s\nwant the view of cloudbrain2 with the same values:\n%s", p, again, out)
	}
	// --resolved and -m NAME view an embedded description without --set.
	for _, args := range [][]string{{"machines", "cloudbrain2", "--resolved"}, {"machines", "-m", "cloudbrain2"}} {
		out, code, err := runCLI(t, args...)
		if code != 0 || !strings.HasPrefix(out, "# effective configuration of embedded cluster description cloudbrain2\n") || strings.Contains(out, "# --set") || !strings.Contains(out, "\nnodes: 32\n") {
			t.Errorf("%v: exit %d, %v:\n%s", args, code, err, out)
		}
	}
	// A node description's view is a node file.
	out, code, err = runCLI(t, "machines", "cloudbrain2-node", "--set", "node.pcie.generation=4")
	if code != 0 || !strings.HasPrefix(out, "# effective configuration of embedded node description cloudbrain2-node\n") ||
		!strings.Contains(out, "\nnpu: ascend-910a\n") || !strings.Contains(out, "\n  generation: 4  # --set\n") ||
		!strings.Contains(out, "# bandwidth: 126GB/s") || strings.Contains(out, "\nnode:") {
		t.Errorf("node view: exit %d, %v:\n%s", code, err, out)
	}
	p = filepath.Join(t.TempDir(), "node.yaml")
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := cluster.LoadNode(p, nil)
	wantNode, _ := cluster.LoadNode("cloudbrain2-node", []machines.Override{{Path: "node.pcie.generation", Value: "4"}})
	if err != nil || !reflect.DeepEqual(n, wantNode) {
		t.Errorf("the node view loads as %+v (%v), want %+v", n, err, wantNode)
	}
}

// Bad overrides of a description's view exit 2 with one line naming the
// --set (or file), the key and the constraint; machine.* ones point to
// the NPU's own view.
func TestMachinesClusterViewBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src, _ := cluster.Source("cloudbrain2-node")
	os.WriteFile(bad, []byte(strings.Replace(string(src), "  link_bandwidth: 30GB/s", "  link_bandwidth: -1GB/s", 1)), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"machines", "cloudbrain2", "--set", "machine.cores=16"}, "--set machine.cores=16: machine.* keys set each NPU's machine (ascend-910a), which this view of the description does not print: see davinci-sim machines ascend-910a --set cores=16"},
		{[]string{"machines", "cloudbrain2", "--set", "cores=16"}, "--set cores=16: on a cluster or node description a path starts with cluster. (the cluster's keys) or node. (the node's)"},
		{[]string{"machines", "cloudbrain2", "--set", "name=x"}, "did you mean cluster.name or node.name?"},
		{[]string{"machines", "cloudbrain2", "--set", "program.n=4"}, "program.* paths"},
		{[]string{"machines", "cloudbrain2", "--set", "node.hccs.bogus=1"}, `--set node.hccs.bogus=1: unknown key "node.hccs.bogus"`},
		{[]string{"machines", "cloudbrain2", "--set", "node.npus=3"}, `--set node.npus=3: key "npus": must be 1, 2, 4 or 8`},
		{[]string{"machines", "cloudbrain2", "--set", "cluster.nodes=0"}, `--set cluster.nodes=0: key "nodes": must be in 1..512`},
		{[]string{"machines", "cloudbrain2", "--set", "node.roce.bandwidth=fast"}, `--set node.roce.bandwidth=fast: key "roce.bandwidth": bad bandwidth`},
		{[]string{"machines", "cloudbrain2-node", "--set", "cluster.nodes=4"}, "is a node description, not a cluster"},
		{[]string{"machines", "cloudbrain2", "--set", "node.npus"}, "want path=value"},
		{[]string{"machines", "-m", bad}, bad + `:68: key "hccs.link_bandwidth": bad bandwidth`},
	}
	for _, c := range cases {
		_, code, err := runCLI(t, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: exit %d, error %v; want exit 2 and one line with %q", c.args, code, err, c.want)
		}
	}
}
