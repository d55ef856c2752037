package programs

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// TestAgainFromParsedDocument: a program's runs after the first (scheme
// auto's candidates, the estimates) read the file from its parsed
// document, without the overrides the first run wrote into it — not from
// the text, parsed again each time (a 64 MiB program file took 9.5 s and
// 746 MB to run, 2.8 s and 296 MB read once).
func TestAgainFromParsedDocument(t *testing.T) {
	f, err := Parse("p.yaml", ".", []byte("kind: hgemm\nmachine: a100\nm: 256\nn: 128\nk: 64\n"))
	if err != nil {
		t.Fatal(err)
	}
	ovs, err := machines.ParseOverrides([]string{"m=512"})
	if err != nil {
		t.Fatal(err)
	}
	var p GEMMParams
	if err := machines.ApplyOverrides(f.Config, &p, "", ovs); err != nil {
		t.Fatal(err)
	}
	f.data = []byte("kind: [") // (the text is not read again)
	g, err := f.Again()
	if err != nil {
		t.Fatalf("again: %v", err)
	}
	if g.Kind != f.Kind || g.Machine != "a100" || g.Path != "p.yaml" {
		t.Errorf("again: kind %v, machine %q, path %q", g.Kind.Name, g.Machine, g.Path)
	}
	if m := g.Config.Viper().GetInt("m"); m != 256 {
		t.Errorf("again: m = %d, want the file's 256 (the override dropped)", m)
	}
	if l := g.Config.Line("k"); l != 5 {
		t.Errorf("again: k on line %d, want 5", l)
	}
}
