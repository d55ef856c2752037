// Package cluster models the communication of a cluster of NPU nodes (issue 17): the topology of
// a Cloud Brain II node and cluster loaded from machines/clusters/*.yaml ([Load]), a link-level
// event model on the sim engine where transfers share directed links max-min fairly
// ([NewNetwork], [Network.Transfer]), HCCL's collectives (ring, H-D_R, mesh, hierarchical, with
// HCCL's 910A selection rule) and MPI_Bcast among hosts executed as schedules of transfers on those
// links ([Network.Collective]), and HCCL's Hockney α-β-γ closed forms as a fast estimator
// ([Estimate], [Network.Estimate]). See docs/cluster.md.
//
// A distributed driver uses it as
//
//	topo, err := cluster.Load("cloudbrain2", overrides)   // bad input → exit 2
//	net := cluster.NewNetwork(engine, topo)
//	net.Transfer(cluster.Host(0, 0), cluster.NPU(0, 1), bytes, func(at sim.Time) { … })
//	net.Collective(cluster.Broadcast, row, root, bytes, func(at sim.Time) { … })
package cluster
