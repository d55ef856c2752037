package programs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/version"
)

// ClusterJob is a program built for a cluster or node description: it
// owns its run (many chips and their network on one engine) and returns
// the result with the report filled; a run that deadlocks returns a
// *sim.DeadlockError with the result of the run up to it (as Execute).
type ClusterJob interface {
	Run(hooks RunHooks) (*Result, error)
}

// ClusterMachine returns the cluster or node description a run of f uses
// ("" when the run is on one chip): -m, else a --set program.machine, else
// the file's machine: key, when it names one (cluster.IsDescription).
func ClusterMachine(f *File, opts Options) string {
	if name := machineRef(f, opts); cluster.IsDescription(name) {
		return name
	}
	return ""
}

// ClusterNPU returns the NPU machine of the cluster or node description
// name with the run's machine.* overrides (the chip a per-core trace of
// one rank shows).
func ClusterNPU(name string, opts Options) (*machines.Machine, error) {
	topo, err := cluster.LoadSystem(name, opts.Overrides)
	if err != nil {
		return nil, err
	}
	return loadClusterNPU(topo, opts.Overrides)
}

// loadClusterNPU loads topo's NPU machine with the run's machine.*
// overrides (each NPU's). A key the NPU does not have says where a node's
// and a cluster's keys go (machine.nodes was taken for the NPU's, with a
// "did you mean cores?").
func loadClusterNPU(topo *cluster.Topology, ovs []machines.Override) (*machines.Machine, error) {
	var mo []machines.Override
	for _, ov := range ovs {
		if strings.HasPrefix(strings.ToLower(ov.Path), "machine.") {
			mo = append(mo, ov)
		}
	}
	m, err := machines.Load(topo.Node.NPU, mo)
	var unknown *machines.UnknownOverrideError
	if errors.As(err, &unknown) {
		return nil, fmt.Errorf("%w; on a cluster or node description machine.* sets each NPU (%s), node.* the node (%s), cluster.* the cluster (davinci-sim machines NAME shows their keys)", err, topo.Node.NPU, topo.Node.Name)
	}
	return m, err
}

// executeCluster runs f on the cluster or node description name.
func executeCluster(f *File, name string, opts Options, hooks RunHooks) (res *Result, err error) {
	if opts.FastForward != nil {
		// Nothing to skip (fastForwardNone): simulated in full, as
		// without it, and the note says so.
		opts.FastForward = nil
		defer func() {
			if res != nil && res.Report != nil {
				res.Report.Notes = append(res.Report.Notes, noSkipsOnClusters)
			}
		}()
	}
	if opts.KBatch > 1 {
		return nil, badInput(fmt.Errorf("--k-batch %d: applies to GPU GEMM kernels, not to cluster runs", opts.KBatch))
	}
	if f.Kind.BuildCluster == nil {
		return nil, badInput(fmt.Errorf("%s: program kind %s runs on one chip; %s is a cluster or node description (kinds that run on clusters: lu-fused)", f.Path, f.Kind.Name, name))
	}
	topo, err := cluster.LoadSystem(name, opts.Overrides)
	if err != nil {
		return nil, err
	}
	return runClusterJob(f, topo, opts, hooks)
}

// OneNPUNode is the node description a one-chip lu-fused run with fidelity
// isolated or sampled runs on: one NPU, its host share and link taken
// from the chip's machine file (executeOneNPU).
const OneNPUNode = "cloudbrain2-node"

// executeOneNPU runs lu-fused on one DaVinci chip (machine m, named ref)
// with a timed-apart fidelity: as a node of that one NPU whose host is
// the machine file's host and whose PCIe link is its host link — the
// configuration in which the cluster run reproduces the one-chip run to
// the picosecond (TestLUClusterOneNPUEqualsSingle).
func executeOneNPU(f *File, ref string, m *machines.Machine, opts Options, hooks RunHooks) (res *Result, err error) {
	// (Fast-forward: Execute has dropped it, noting why: a DaVinci chip
	// runs no kernel grids.)
	hm := &m.Host
	ovs := append(opts.Overrides[:len(opts.Overrides):len(opts.Overrides)],
		machines.Override{Path: "node.npus", Value: "1"},
		machines.Override{Path: "node.pcie.generation", Value: "4"},
		machines.Override{Path: "node.pcie.gen4_bandwidth", Value: fmt.Sprint(float64(hm.Link.Bandwidth))},
		machines.Override{Path: "node.pcie.latency_ns", Value: fmt.Sprint(hm.Link.LatencyNS)},
		machines.Override{Path: "node.hosts.cores", Value: fmt.Sprint(hm.Cores)},
		machines.Override{Path: "node.hosts.clock", Value: fmt.Sprint(float64(hm.Clock))},
		machines.Override{Path: "node.hosts.memory_bandwidth", Value: fmt.Sprint(float64(hm.MemoryBandwidth))})
	topo, err := cluster.LoadSystem(OneNPUNode, ovs)
	if err != nil {
		return nil, err
	}
	topo.Node.NPU, topo.Name = ref, m.Name+" (one NPU with its host)"
	origin := machineKeyOrigin(ref, opts.Overrides) // messages name the chip's key, not the node's
	for node, key := range map[string]string{"pcie.gen4_bandwidth": "host.link.bandwidth", "pcie.latency_ns": "host.link.latency_ns"} {
		topo.SetOrigin("node."+node, origin(key))
	}
	for key, node := range nodeHostKeys {
		topo.SetOrigin(node, origin(key))
	}
	return runClusterJob(f, topo, opts, hooks)
}

// runClusterJob builds and runs f on topology topo.
func runClusterJob(f *File, topo *cluster.Topology, opts Options, hooks RunHooks) (*Result, error) {
	job, err := f.Kind.BuildCluster(f, topo, opts)
	if err != nil {
		return nil, badInput(err)
	}
	giveContext(job, hooks.Context)
	res, err := job.Run(hooks)
	if err != nil {
		if errors.Is(err, sim.ErrTimeOverflow) {
			return nil, badInput(err)
		}
		if res == nil {
			return nil, err
		}
		// A deadlock: the report of the run up to it, returned with it
		// as on one chip (Execute).
	} else if err := stopped(hooks.Context, "after the simulation, computing its numerics"); err != nil {
		return nil, err // a result cut short (a refinement, the golden model)
	}
	res.Report.Version = version.String()
	for _, o := range opts.Overrides {
		res.Report.Overrides = append(res.Report.Overrides, o.Full())
	}
	return res, err
}
