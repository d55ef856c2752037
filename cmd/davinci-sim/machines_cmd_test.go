package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/machines"
)

// runCLI executes the root command with args and returns stdout and the
// exit code main would use.
func runCLI(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), exitCode(err), err
}

func TestMachinesList(t *testing.T) {
	out, code, err := runCLI(t, "machines")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, want := range []string{"NAME", "ascend-910a ", "ascend-910b3", "32", "1GHz", "1.8GHz", "Ascend 910A:"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
}

func TestMachinesPrintSource(t *testing.T) {
	out, code, err := runCLI(t, "machines", "ascend-910b3")
	src, _ := machines.Source("ascend-910b3")
	if code != 0 || out != string(src) {
		t.Errorf("exit %d (%v); output is not the embedded file", code, err)
	}
}

func TestMachinesEffective(t *testing.T) {
	out, code, err := runCLI(t, "machines", "ascend-910a", "--set", "core.buffers.l1=512KiB", "--set", "machine.cores=16")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, want := range []string{"# effective configuration of embedded machine ascend-910a",
		"--set machine.core.buffers.l1=512KiB", "L1: 512KiB  # --set", "cores: 16  # --set", "FP16 131.1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The effective configuration is a machine file: -m loads it back.
	p := filepath.Join(t.TempDir(), "variant.yaml")
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	out2, code, err := runCLI(t, "machines", "-m", p)
	if code != 0 || !strings.Contains(out2, "L1: 512KiB\n") || !strings.Contains(out2, "file "+p) {
		t.Errorf("-m FILE: exit %d (%v):\n%s", code, err, out2)
	}
	// -m with an embedded name resolves it, as the help says (it printed
	// the file as shipped, as machines NAME does).
	if out4, code, err := runCLI(t, "machines", "-m", "a100"); code != 0 || !strings.HasPrefix(out4, "# effective configuration of embedded machine a100") {
		t.Errorf("-m NAME: exit %d (%v):\n%.200s", code, err, out4)
	}
	out3, code, _ := runCLI(t, "machines", "ascend-910b3", "--resolved")
	if code != 0 || !strings.Contains(out3, "kstep_fp32: 4\n") || !strings.Contains(out3, "FP32 73.73") {
		t.Errorf("--resolved: exit %d:\n%s", code, out3)
	}
}

func TestMachinesBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src, _ := machines.Source("ascend-910a")
	os.WriteFile(bad, bytes.Replace(src, []byte("  buffers:"), []byte("  bufers:"), 1), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"machines", "ascend-910a", "--set", "core.bufers.L1=1MiB"}, `unknown key "machine.core.bufers.L1"`},
		{[]string{"machines", "ascend-910a", "--set", "core.buffers.L1=1MeB"}, "bad size"},
		{[]string{"machines", "ascend-910a", "--set", "core.buffers.L1"}, "want path=value"},
		{[]string{"machines", "ascend-910a", "--set", "program.tiling.bm=96"}, "program.* paths"},
		{[]string{"machines", "ascend-910a", "--set", "cores=0"}, "must be ≥ 1"},
		{[]string{"machines", "a100", "--set", "core.tensor.sustained_clock.int8=2GHz"}, `key "core.tensor.sustained_clock.int8": must be ≤ clock = 1.41GHz`},
		{[]string{"machines", "a100", "--set", "core.tensor.sustained_clock.int8=0"}, "must be ≥ 1MHz"},
		{[]string{"machines", "a100", "--set", "core.tensor.sustained_clock.int4=1GHz"}, `unknown input type "int4"`},
		{[]string{"machines", "ascend-910a", "--set", "core.cube.numerics=bogus"}, `--set machine.core.cube.numerics=bogus: key "core.cube.numerics": unknown numerics preset "bogus"`}, // (machines.Load refuses it, as run does)
		{[]string{"machines", "a100", "--set", "core.numerics=bogus"}, `key "core.numerics": unknown numerics preset "bogus"`},
		{[]string{"machines", "no-such-machine"}, "unknown machine"},
		{[]string{"machines", "-m", bad}, `unknown key "core.bufers.L1"`},
		{[]string{"machines", "ascend-910a", "-m", bad}, "not both"},
		{[]string{"machines", "a", "b"}, "at most one"},
		{[]string{"machines", "--set", "cores=1"}, "need a machine"},
		{[]string{"machines", "--bogus"}, "unknown flag"},
	}
	for _, c := range cases {
		_, code, err := runCLI(t, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, error %v; want exit 2 and %q", c.args, code, err, c.want)
		}
	}
}

// The cluster and node descriptions are listed beside the machines and
// print as shipped; a path without its cluster. or node. prefix is
// refused, naming the key meant (TestMachinesClusterView: their views).
func TestMachinesClusters(t *testing.T) {
	out, code, err := runCLI(t, "machines")
	if code != 0 || !strings.Contains(out, "cloudbrain2       32     256") || !strings.Contains(out, "cloudbrain2-node  1      8") {
		t.Errorf("list (exit %d, %v) lacks the cluster descriptions:\n%s", code, err, out)
	}
	out, code, err = runCLI(t, "machines", "cloudbrain2-node")
	src, _ := cluster.Source("cloudbrain2-node")
	if code != 0 || out != string(src) {
		t.Errorf("machines cloudbrain2-node: exit %d, %v; printed %d bytes, source %d", code, err, len(out), len(src))
	}
	if _, code, err := runCLI(t, "machines", "cloudbrain2", "--set", "nodes=2"); code != 2 || !strings.Contains(err.Error(), "did you mean cluster.nodes?") {
		t.Errorf("--set on a cluster: exit %d, %v", code, err)
	}
	file := filepath.Join(t.TempDir(), "node.yaml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code, err := runCLI(t, "machines", "-m", file); code != 0 || !strings.HasPrefix(out, "# effective configuration of file "+file) {
		t.Errorf("machines -m a node file: exit %d, %v:\n%s", code, err, out)
	}
}

// The effective configuration's header stays comments whatever an
// override's value holds: a line break there would start a key of the
// printed machine file.
func TestEffectiveHeaderOneLinePerOverride(t *testing.T) {
	m, err := machines.Load("a100", nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeEffective(&b, m, "a100", true, []machines.Override{{Path: "machine.x", Value: "a\nkind: davinci"}})
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if strings.HasPrefix(line, "kind: davinci") {
			t.Fatalf("an override's value forged a key:\n%s", b.String())
		}
	}
	if !strings.Contains(b.String(), `#   --set "machine.x=a\nkind: davinci"`) {
		t.Errorf("header:\n%s", b.String())
	}
}
