package arch_test

import (
	"strconv"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// The memory counters of GEMMs whose rows are not whole cache lines add
// up (the L2's misses are the lines it fetches, the LLC's counted in the
// same units), and HBM reads at least A and B once: a row straddling two
// lines pays for both, and a line fetched for one tile is no free hit for
// the next (MI210 1000³ read 2.68 MB from HBM, A and B are 4.0 MB).
func TestTrafficIdentitiesUnaligned(t *testing.T) {
	for _, c := range []struct {
		machine string
		m, n, k int64
	}{
		{"mi210", 1000, 1000, 1000},
		{"mi210", 1024, 1024, 1000},
		{"mi100", 1000, 520, 700},
		{"mi300x", 1000, 1000, 1000},
		{"mi300x", 3000, 2000, 1500},
		{"a100", 1000, 1000, 1000},
	} {
		f, err := programs.ReadFile("../programs/examples/mi210-hgemm.yaml")
		if err != nil {
			t.Fatal(err)
		}
		ovs, err := machines.ParseOverrides([]string{
			"program.m=" + strconv.FormatInt(c.m, 10), "program.n=" + strconv.FormatInt(c.n, 10), "program.k=" + strconv.FormatInt(c.k, 10)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := programs.Execute(f, programs.Options{Machine: c.machine, Numerics: programs.NumericsOff, Overrides: ovs}, programs.RunHooks{})
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		st := res.Stats
		tr := st.Traffic
		// The L2's hits are the bytes asked of lines present (the reads'
		// served by it, and writes'), its misses the lines it fetched
		// (served by the LLC or HBM) and the writes' other bytes.
		if got, want := st.L2HitBytes+st.L2MissBytes, tr.L2Read+tr.LLCRead+tr.HBMRead+tr.GMWrite; got != want {
			t.Errorf("%+v: L2 hit + miss %d, want its reads served + fetched + writes %d", c, got, want)
		}
		if tr.L2Read > tr.GMRead || tr.L2Read > st.L2HitBytes {
			t.Errorf("%+v: L2 served %d, more than the GM reads %d or its hits %d", c, tr.L2Read, tr.GMRead, st.L2HitBytes)
		}
		if st.LLCHitBytes+st.LLCMissBytes > 0 {
			// The LLC sees the lines the L2 fetches and every write (all
			// misses: write-through).
			if st.LLCHitBytes != tr.LLCRead || st.LLCMissBytes != tr.HBMRead+tr.GMWrite {
				t.Errorf("%+v: LLC hit %d, miss %d; want its reads served %d, HBM's reads + writes %d", c, st.LLCHitBytes, st.LLCMissBytes, tr.LLCRead, tr.HBMRead+tr.GMWrite)
			}
		}
		if rest := tr.GMRead - tr.L2Read - tr.LLCRead; tr.HBMRead < rest {
			t.Errorf("%+v: HBM read %d bytes, less than the %d no cache served", c, tr.HBMRead, rest)
		}
		if inputs := 2 * (c.m*c.k + c.k*c.n); tr.HBMRead < inputs {
			t.Errorf("%+v: HBM read %d bytes, less than A and B's %d", c, tr.HBMRead, inputs)
		}
		if tr.HBMWrite != tr.GMWrite {
			t.Errorf("%+v: HBM writes %d, want the GM writes %d", c, tr.HBMWrite, tr.GMWrite)
		}
	}
}
