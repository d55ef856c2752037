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
// the result with the report filled.
type ClusterJob interface {
	Run(hooks RunHooks) (*Result, error)
}

// ClusterMachine returns the cluster or node description a run of f uses
// ("" when the run is on one chip): -m, else a --set program.machine, else
// the file's machine: key, when it names one (cluster.IsDescription).
func ClusterMachine(f *File, opts Options) string {
	name := opts.Machine
	if name == "" {
		name = f.Machine
		if isMachinePath(name) {
			name = f.Resolve(name)
		}
		for _, o := range opts.Overrides {
			if strings.EqualFold(o.Path, "program.machine") {
				name = o.Value
			}
		}
	}
	if name != "" && cluster.IsDescription(name) {
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
	var mo []machines.Override
	for _, ov := range opts.Overrides {
		if strings.HasPrefix(strings.ToLower(ov.Path), "machine.") {
			mo = append(mo, ov)
		}
	}
	return machines.Load(topo.Node.NPU, mo)
}

// executeCluster runs f on the cluster or node description name.
func executeCluster(f *File, name string, opts Options, hooks RunHooks) (*Result, error) {
	if opts.FastForward != nil {
		return nil, badInput(errors.New("--fast-forward: not for cluster runs (ranks wait on each other by time)"))
	}
	if f.Kind.BuildCluster == nil {
		return nil, badInput(fmt.Errorf("%s: program kind %s runs on one chip; %s is a cluster or node description (kinds that run on clusters: lu-fused)", f.Path, f.Kind.Name, name))
	}
	topo, err := cluster.LoadSystem(name, opts.Overrides)
	if err != nil {
		return nil, err
	}
	job, err := f.Kind.BuildCluster(f, topo, opts)
	if err != nil {
		return nil, badInput(err)
	}
	res, err := job.Run(hooks)
	if err != nil {
		if errors.Is(err, sim.ErrTimeOverflow) {
			return nil, badInput(err)
		}
		return nil, err
	}
	res.Report.Version = version.String()
	for _, o := range opts.Overrides {
		res.Report.Overrides = append(res.Report.Overrides, o.String())
	}
	return res, nil
}
