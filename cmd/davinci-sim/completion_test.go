package main

import (
	"strings"
	"testing"
)

// Flag values complete in the shell: machine names for -m, the numerics
// modes, machine names as the machines argument.
func TestCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "run", "p.yaml", "-m", ""}, []string{"ascend-910a", "a100", "cloudbrain2", ":0"}},
		{[]string{"__complete", "run", "p.yaml", "--trace", ""}, []string{"json", "json.gz", "pftrace", ":8"}},
		{[]string{"__complete", "run", "p.yaml", "--numerics", ""}, []string{"full", "sampled", "off", ":4"}},
		{[]string{"__complete", "machines", ""}, []string{"mi210", "cloudbrain2-node", ":4"}},
		{[]string{"__complete", "sweep", "s.yaml", "-o", ""}, []string{":16"}},
	} {
		out, code, err := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %v", c.args, code, err)
		}
		lines := strings.Split(out, "\n")
		for _, w := range c.want {
			found := false
			for _, l := range lines {
				found = found || l == w
			}
			if !found {
				t.Errorf("%v: no line %q in\n%s", c.args, w, out)
			}
		}
	}
}

// Completion offers only what the command takes: machines --set the
// machine.* paths alone for a chip's machine (it refuses program.*, node.*
// and cluster.*), node.* and cluster.* for a cluster description, node.*
// for a node description,
// view's argument the trace files run --trace writes (not any file).
func TestCompletionOffersOnlyAccepted(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // the candidates and the directive line
	}{
		{[]string{"__complete", "machines", "--set", ""}, "machine.\n:6"},
		{[]string{"__complete", "machines", "ascend-910a", "--set", ""}, "machine.\n:6"},
		{[]string{"__complete", "machines", "cloudbrain2", "--set", ""}, "node.\ncluster.\n:6"},
		{[]string{"__complete", "machines", "-m", "cloudbrain2", "--set", ""}, "node.\ncluster.\n:6"},
		{[]string{"__complete", "machines", "cloudbrain2-node", "--set", ""}, "node.\n:6"},
		{[]string{"__complete", "run", "p.yaml", "--set", ""}, "program.\nmachine.\nnode.\ncluster.\n:6"},
		{[]string{"__complete", "view", ""}, "json\njson.gz\npftrace\nperfetto-trace\n:8"},
		{[]string{"__complete", "view", "t.json", ""}, ":4"},
	} {
		out, code, err := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %v", c.args, code, err)
		}
		got, _, _ := strings.Cut(out, "\nCompletion ended")
		if got != c.want {
			t.Errorf("%v: offered\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
}
