package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

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
	// on one engine with the links) or isolated (each distinct kernel
	// simulated alone, once).
	Fidelity string `json:"fidelity"`
	// Transfers counts the network's point-to-point transfers (collective
	// steps included); LinkBytes sums the bytes that crossed each class of
	// link (hccs, pcie, bridge, smp, roce, leaf, spine, hostnet).
	Transfers uint64             `json:"transfers"`
	LinkBytes map[string]float64 `json:"link_bytes"`
	// HCCLRingBroadcasts counts panel broadcasts run as rings of
	// point-to-point sends because HCCL forms no communicator for the group.
	HCCLRingBroadcasts int `json:"hccl_ring_broadcasts"`
	// HCCLBroadcastSeconds is the time a rank had a panel broadcast of
	// HCCL in flight (from a broadcast's start on its NPU stream to its
	// end; the union of their spans, which overlap), averaged over the
	// ranks. They run in stream order beside the hosts' work: time on the
	// collective path, not time a host waited.
	HCCLBroadcastSeconds float64 `json:"hccl_broadcast_seconds"`
	// KernelsLaunched and KernelSimulations (fidelity isolated): the
	// kernels the ranks ran and the distinct ones simulated.
	KernelsLaunched   int `json:"kernels_launched,omitempty"`
	KernelSimulations int `json:"kernel_simulations,omitempty"`
	// Sampling is fidelity sampled's account: what was simulated, what
	// predicted, and the total time's 99.7 % interval.
	Sampling *ClusterSampling `json:"sampling,omitempty"`
	Ranks    []ClusterRank    `json:"ranks"`
}

// ClusterSampling is how a sampled cluster run timed its kernels and the
// sampling error of its total time.
type ClusterSampling struct {
	// Windows and WindowsSampled: the run's fusion windows and those whose
	// kernels were simulated.
	Windows        int `json:"windows"`
	WindowsSampled int `json:"windows_sampled"`
	// KernelsLaunched = LaunchesExact (their kernel simulated, or one with
	// the same work) + LaunchesPredicted.
	KernelsLaunched   int `json:"kernels_launched"`
	LaunchesExact     int `json:"launches_exact"`
	LaunchesPredicted int `json:"launches_predicted"`
	// KernelSimulations: distinct kernels simulated; SimulatedOnUse: of
	// those, outside the sampled windows (a class with fewer than two
	// points).
	KernelSimulations int `json:"kernel_simulations"`
	SimulatedOnUse    int `json:"simulated_on_use"`
	// Classes: kernel classes (kind, zone, cores, K, shape).
	Classes int `json:"classes"`
	// Residuals, ResidualMean, ResidualSD: the leave-one-out relative
	// residuals of the sampled points (simulated / predicted − 1); their
	// mean and standard deviation only from two or more.
	Residuals    int      `json:"residuals"`
	ResidualMean *float64 `json:"residual_mean,omitempty"`
	ResidualSD   *float64 `json:"residual_sd,omitempty"`
	// Quantile: the standard deviation's factor for 99.7 % (Student's t
	// with residuals − 1 degrees of freedom; 0 without an error estimate).
	Quantile float64 `json:"quantile"`
	// Rank: the rank whose half-width is the widest, the one reported;
	// PredictedKernelSeconds its predicted kernel time; HalfWidthSeconds
	// the 99.7 % half-width of the total time from it (all of its
	// predicted time without an error estimate); TotalLowSeconds,
	// TotalHighSeconds the interval, and FactorizationLowSeconds,
	// FactorizationHighSeconds the factorization time's (every predicted
	// kernel is in the factorization).
	Rank                     int     `json:"rank"`
	PredictedKernelSeconds   float64 `json:"predicted_kernel_seconds"`
	HalfWidthSeconds         float64 `json:"half_width_seconds"`
	TotalLowSeconds          float64 `json:"total_low_seconds"`
	TotalHighSeconds         float64 `json:"total_high_seconds"`
	FactorizationLowSeconds  float64 `json:"factorization_low_seconds"`
	FactorizationHighSeconds float64 `json:"factorization_high_seconds"`
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

// writeSummary prints the cluster part of the human summary: the system,
// the ranks' end times (of the ranks whose end is not a placeholder: a
// deadlocked run's host that had not finished) and the bytes per link
// class.
func (c *Cluster) writeSummary(w io.Writer, placeholder func(path string) bool) {
	fmt.Fprintf(w, "cluster   %s: %s, %s as a %d × %d grid, fidelity %s\n", c.Name, count(c.Nodes, "node"), count(c.NPUs, "NPU"), c.GridP, c.GridQ, c.Fidelity)
	var ends []float64
	for i, rk := range c.Ranks {
		if !placeholder(fmt.Sprintf("cluster.ranks.%d.finish_seconds", i)) {
			ends = append(ends, rk.FinishSeconds)
		}
	}
	switch {
	case len(ends) == len(c.Ranks) && len(ends) > 0:
		fmt.Fprintf(w, "ranks     host programs end between %.4g and %.4g s\n", slices.Min(ends), slices.Max(ends))
	case len(ends) > 0:
		fmt.Fprintf(w, "ranks     host programs of %d of %d ranks end between %.4g and %.4g s; the others had not ended\n", len(ends), len(c.Ranks), slices.Min(ends), slices.Max(ends))
	case len(c.Ranks) > 0:
		fmt.Fprintf(w, "ranks     no host program had ended (%d ranks)\n", len(c.Ranks))
	}
	classes := make([]string, 0, len(c.LinkBytes))
	for k := range c.LinkBytes {
		classes = append(classes, k)
	}
	sort.Strings(classes)
	parts := make([]string, len(classes))
	for i, k := range classes {
		parts[i] = fmt.Sprintf("%s %s", k, bytesStr(int64(c.LinkBytes[k])))
	}
	fmt.Fprintf(w, "network   %s; %s\n", count(c.Transfers, "transfer"), strings.Join(parts, ", "))
}

// count says n things in the singular or plural ("1 node", "8 NPUs").
func count[T int | int64 | uint64](n T, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
