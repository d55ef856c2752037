package programs

import (
	"testing"
)

// A run's chip counts its caches' where indexes for the span of GM the
// program's tensors occupy (simulate gives NewChip gmSpanOf), as the
// sweep's gate does (HostBytes): an MI300X HGEMM 1024³ fits 600 MiB —
// about 400 MiB with the span — where the whole memory's nine 128 MiB
// indexes (about 1.5 GiB) refused it.
func TestRunChipCountedForSpan(t *testing.T) {
	f, err := ReadFile("examples/a100-hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Machine: "mi300x", Numerics: NumericsOff, MaxHostBytes: 600 << 20,
		Overrides: mustSets(t, "program.m=1024", "program.n=1024", "program.k=1024")}
	r, err := Execute(f, o, RunHooks{})
	if err != nil {
		t.Fatalf("MI300X HGEMM 1024³ within 600 MiB: %v", err)
	}
	if r.Report == nil || r.Report.Time.Seconds <= 0 {
		t.Fatalf("no report: %+v", r)
	}
}
