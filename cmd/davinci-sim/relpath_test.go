package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// A machine file named by a program file's machine: key resolves relative
// to the program file (not the current directory), as inputs.a/b and a
// study's program: do.
func TestProgramMachinePathRelative(t *testing.T) {
	src, err := machines.Source("ascend-910a")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sub")
	if err := os.MkdirAll(filepath.Join(dir, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	mach := strings.Replace(string(src), "name: ascend-910a", "name: rel-test", 1)
	prog := "kind: asm\nmachine: m/mine.yaml\nasm: |\n  scalar cycles=10\n"
	for name, text := range map[string]string{"m/mine.yaml": mach, "p.yaml": prog} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, code, err := runCLI(t, "run", filepath.Join(dir, "p.yaml"), "--json", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	var rep struct{ Machine string }
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Machine != "rel-test" {
		t.Fatalf("machine %q (%v), want rel-test", rep.Machine, err)
	}
	// A plain name stays an embedded-machine name with its own message.
	if err := os.WriteFile(filepath.Join(dir, "q.yaml"), []byte("kind: asm\nmachine: nosuch\nasm: nop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, code, err = runCLI(t, "run", filepath.Join(dir, "q.yaml"), "-q")
	if code != 2 || err == nil || !strings.Contains(err.Error(), `unknown machine "nosuch"`) {
		t.Errorf("exit %d, %v; want exit 2 naming the unknown machine", code, err)
	}
}
