package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// --trace-cores naming only cores that did nothing warns on stderr (the
// run exits 0 as before), and view's refusal of such a trace names the
// cores its header says were idle. Before, a100-hgemm traced with
// --trace-cores 30-40 (SMs that ran no block) wrote an empty trace
// without a word, and view said only "the trace holds no core events".
func TestTraceCoresThatDidNothing(t *testing.T) {
	simScreen(t) // (view asks for a terminal before it reads a trace)
	dir := t.TempDir()
	gpu := filepath.Join(dir, "gpu.json")
	// (128×256 tiles: 24 CTAs on the A100's 108 SMs; the example's own,
	// smaller, tile gives most SMs one.)
	out, code, err := runCLI(t, "run", "-q", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--trace", gpu, "--trace-cores", "30-40",
		"--set", "program.tiling.bm=128", "--set", "program.tiling.bn=256", "--set", "program.tiling.bk=64", "--set", "program.tiling.warps=8")
	if code != 0 || !strings.Contains(out, "warning: --trace-cores 30-40: none of these cores did anything") {
		t.Errorf("a100-hgemm --trace-cores 30-40: exit %d (%v), want 0 and a warning:\n%s", code, err, out)
	}
	npu := filepath.Join(dir, "npu.json")
	out, code, err = runCLI(t, "run", "-q", examplePath("hgemm.yaml"), "--set", "program.m=256", "--set", "program.n=256", "--set", "program.k=256",
		"--numerics", "off", "--trace", npu, "--trace-cores", "20-23")
	if code != 0 || !strings.Contains(out, "20-23 only waited at barriers") {
		t.Errorf("hgemm 256³ --trace-cores 20-23: exit %d (%v), want 0 and a warning naming the idle cores:\n%s", code, err, out)
	}
	_, code, err = runCLI(t, "view", npu)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "its cores 20-23 did nothing in its window but wait at barriers") {
		t.Errorf("view of the idle cores' trace: exit %d (%v), want 2 naming cores 20-23", code, err)
	}
	// Cores that did something: no warning.
	out, code, err = runCLI(t, "run", "-q", examplePath("hgemm.yaml"), "--set", "program.m=256", "--set", "program.n=256", "--set", "program.k=256",
		"--numerics", "off", "--trace", npu, "--trace-cores", "0-1")
	if code != 0 || strings.Contains(out, "warning") {
		t.Errorf("hgemm 256³ --trace-cores 0-1: exit %d (%v), want 0 and no warning:\n%s", code, err, out)
	}
}
