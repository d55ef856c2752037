package cluster

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
)

// benchCollective runs one collective on the 32-node cluster (256 NPUs) per iteration and reports
// simulated time and engine events.
func benchCollective(b *testing.B, op Op, algo Algo, g []Endpoint, bytes int64) {
	topo := mustLoad(b)
	var events uint64
	var at sim.Time
	b.ReportAllocs()
	for b.Loop() {
		n := NewNetwork(sim.NewEngine(), topo)
		if err := n.CollectiveWith(op, algo, g, 0, bytes, func(t sim.Time) { at = t }); err != nil {
			b.Fatal(err)
		}
		if err := n.Engine().Run(); err != nil {
			b.Fatal(err)
		}
		events = n.Engine().Events()
	}
	b.ReportMetric(float64(events), "events/op")
	b.ReportMetric(at.Seconds()*1e3, "sim-ms")
}

// A flat 256-rank ring allreduce of 64 MiB (node-major ring: 224 HCCS/bridge hops, 32 RoCE hops).
func BenchmarkRingAllReduce256(b *testing.B) {
	benchCollective(b, AllReduce, Ring, wholeNodes(32), 64<<20)
}

// A flat 256-rank H-D_R (binomial) broadcast of 64 MiB.
func BenchmarkHDBroadcast256(b *testing.B) {
	benchCollective(b, Broadcast, HD, wholeNodes(32), 64<<20)
}

// What HCCL runs for the same calls: hierarchical (intra ring, inter H-D_R over 32 servers).
func BenchmarkAutoAllReduce256(b *testing.B) {
	benchCollective(b, AllReduce, Auto, wholeNodes(32), 64<<20)
}

// BenchmarkAutoBroadcast256 is the hierarchical broadcast HCCL would choose.
func BenchmarkAutoBroadcast256(b *testing.B) {
	benchCollective(b, Broadcast, Auto, wholeNodes(32), 64<<20)
}
