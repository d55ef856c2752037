package report

// Cluster is the section of a run on a cluster or node description
// (lu-fused with a process grid): the system, the grid, each rank's time
// and host stages, and the network's traffic.
type Cluster struct {
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
	NPUs  int    `json:"npus"`
	GridP int    `json:"grid_p"`
	GridQ int    `json:"grid_q"`
	// Fidelity is how the NPUs were simulated: full (every NPU cycle-level
	// on one engine with the links).
	Fidelity string `json:"fidelity"`
	// Transfers counts the network's point-to-point transfers (collective
	// steps included); LinkBytes sums the bytes that crossed each class of
	// link (hccs, pcie, bridge, smp, roce, leaf, spine, hostnet).
	Transfers uint64             `json:"transfers"`
	LinkBytes map[string]float64 `json:"link_bytes"`
	// HCCLRingBroadcasts counts panel broadcasts run as rings of
	// point-to-point sends because HCCL forms no communicator for the group.
	HCCLRingBroadcasts int           `json:"hccl_ring_broadcasts"`
	Ranks              []ClusterRank `json:"ranks"`
}

// ClusterRank is one process of the grid: where it runs, when its host
// program ended and the host time per stage (waits under their labels).
type ClusterRank struct {
	Rank              int                `json:"rank"`
	Row               int                `json:"row"`
	Col               int                `json:"col"`
	NPU               string             `json:"npu"`
	Host              string             `json:"host"`
	FinishSeconds     float64            `json:"finish_seconds"`
	HostStagesSeconds map[string]float64 `json:"host_stages_seconds"`
}
