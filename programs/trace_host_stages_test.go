package programs

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// tracedNodeRun runs lu-cluster-small's node (2 × 4, n = 1024, timing)
// with a cluster trace.
func tracedNodeRun(t *testing.T) (*Result, *traces.ClusterTrace) {
	t.Helper()
	f, err := Parse("lu.yaml", ".", []byte(luClusterSmall+"numerics: off\ngrid: {p: 2, q: 4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ct := &traces.ClusterTrace{}
	res, err := Execute(f, Options{}, RunHooks{ClusterTrace: ct})
	if err != nil {
		t.Fatal(err)
	}
	return res, ct
}

// A traced cluster run's host track accounts for the host time the report
// counts by stage: per rank, the spans of the host track summed by stage
// (the first word of their names) equal report.json's
// cluster.ranks[].host_stages_seconds — launches, refinement steps and
// the waits for kernels included (the waits had no spans before session
// 50: lu.go's luLaunchZones appended them untraced); each span carries its
// stage's category (luStageCats: waits "wait", which view reads as
// stalls).
func TestTraceHostStagesMatchReport(t *testing.T) {
	res, ct := tracedNodeRun(t)
	got := map[int]map[string]sim.Time{}
	for _, s := range ct.Spans {
		if s.Track != 0 {
			continue
		}
		if got[s.Rank] == nil {
			got[s.Rank] = map[string]sim.Time{}
		}
		stage, _, _ := strings.Cut(s.Name, " ")
		got[s.Rank][stage] += s.To - s.From
		// Its category is its stage's, given where it is recorded (the
		// reader takes "wait" as a stall).
		if want, ok := luStageCats[stage]; !ok || s.Cat != want {
			t.Errorf("host span %q: category %q, want its stage's (%q, listed %v)", s.Name, s.Cat, want, ok)
		}
	}
	cl := res.Report.Cluster
	if cl == nil || len(cl.Ranks) != 8 {
		t.Fatalf("report has no 8 ranks")
	}
	for _, rr := range cl.Ranks {
		for stage, secs := range rr.HostStagesSeconds {
			traced := got[rr.Rank][stage].Seconds()
			if math.Abs(traced-secs) > 1e-12 {
				t.Errorf("rank %d stage %s: host spans %.6g s, report %.6g s", rr.Rank, stage, traced, secs)
			}
			delete(got[rr.Rank], stage)
		}
		for stage, d := range got[rr.Rank] {
			t.Errorf("rank %d: host spans of stage %q (%v) the report does not count", rr.Rank, stage, d)
		}
	}
	if rr := cl.Ranks[0]; rr.HostStagesSeconds["launch"] == 0 || rr.HostStagesSeconds["refine"] == 0 || rr.HostStagesSeconds["wait"] == 0 {
		t.Errorf("rank 0 reports no launch, refine or wait time: %v", rr.HostStagesSeconds)
	}
}

// HCCL's panel broadcasts run in stream order on the NPUs, not on the
// hosts: no host waits in one (no hccl-bcast host stage), each rank's
// broadcasts are spans of its HCCL track (every rank takes part in some),
// and a root's broadcast begins no earlier than its TRSM ends — while its
// host has gone on (launched later work before the broadcast ended).
func TestLUClusterHCCLInStreamOrder(t *testing.T) {
	res, ct := tracedNodeRun(t)
	for _, rr := range res.Report.Cluster.Ranks {
		if _, ok := rr.HostStagesSeconds["hccl-bcast"]; ok {
			t.Errorf("rank %d: its host waited in an HCCL broadcast (%v)", rr.Rank, rr.HostStagesSeconds)
		}
	}
	if ct.Tracks[luHCCLTrack] != "HCCL collectives (NPU stream)" {
		t.Fatalf("tracks %q", ct.Tracks)
	}
	bcasts := map[int]int{}
	ahead := 0 // broadcasts a rank's host launched work past before they ended
	for _, s := range ct.Spans {
		if s.Track != luHCCLTrack {
			continue
		}
		if !strings.HasPrefix(s.Name, "hccl-bcast ") || s.To <= s.From {
			t.Fatalf("HCCL span %+v", s)
		}
		bcasts[s.Rank]++
		for _, h := range ct.Spans {
			if h.Rank == s.Rank && h.Track == 0 && strings.HasPrefix(h.Name, "launch ") && h.From > s.From && h.To < s.To {
				ahead++
				break
			}
		}
	}
	// The report's HCCL time is the union of each rank's HCCL spans,
	// averaged over the ranks.
	union := 0.0
	for rank := range 8 {
		var spans []traces.ClusterSpan
		for _, s := range ct.Spans {
			if s.Rank == rank && s.Track == luHCCLTrack {
				spans = append(spans, s)
			}
		}
		slices.SortFunc(spans, func(a, b traces.ClusterSpan) int { return cmp.Compare(a.From, b.From) })
		var end sim.Time
		for _, s := range spans {
			from := max(s.From, end)
			if s.To > from {
				union += (s.To - from).Seconds()
			}
			end = max(end, s.To)
		}
	}
	union /= 8
	if h := res.Report.Cluster.HCCLBroadcastSeconds; !(h > 0) || h >= res.Report.HPLMxP.TotalSeconds || math.Abs(h-union) > 1e-12 {
		t.Errorf("hccl_broadcast_seconds %v of a %v s run, want the spans' union %v", h, res.Report.HPLMxP.TotalSeconds, union)
	}
	// Each broadcast's arrows go from the root's span to each receiver's,
	// on the HCCL track, where a viewer binds them.
	hccl := 0
	for _, m := range ct.Messages {
		if !strings.HasPrefix(m.Name, "hccl-bcast ") {
			continue
		}
		hccl++
		in := func(rank int, t sim.Time) bool {
			for _, s := range ct.Spans {
				if s.Rank == rank && s.Track == luHCCLTrack && s.Name == m.Name && s.From <= t && t <= s.To {
					return true
				}
			}
			return false
		}
		if m.Track != luHCCLTrack || !in(m.From, m.Sent) || !in(m.To, m.Arrived) {
			t.Fatalf("HCCL message %+v: not from span to span on the HCCL track", m)
		}
	}
	if hccl == 0 {
		t.Error("no HCCL message")
	}
	if len(bcasts) != 8 {
		t.Errorf("HCCL broadcasts by rank %v: want all 8 ranks", bcasts)
	}
	if ahead == 0 {
		t.Error("no host launched anything while an HCCL broadcast of its rank ran: the hosts waited for them")
	}
}
