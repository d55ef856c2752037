package main

import (
	"github.com/spf13/cobra"

	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// registerCompletions adds shell completion of flag values and arguments to
// the commands under root (cobra's `davinci-sim completion bash|zsh|fish|
// powershell` prints the script): machine names (or YAML files) for -m,
// the numerics modes, trace and file extensions (also view's argument),
// directories for -o.
func registerCompletions(root *cobra.Command) {
	// The embedded machines and cluster or node descriptions (run -m
	// cloudbrain2), as "davinci-sim machines" lists them.
	allMachines := func() []cobra.Completion { return append(machines.Names(), cluster.Names()...) }
	machineNames := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return allMachines(), cobra.ShellCompDirectiveDefault // names, or fall back to files
	}
	traceFiles := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"json", "json.gz", "pftrace", "perfetto-trace"}, cobra.ShellCompDirectiveFilterFileExt
	}
	yamlFiles := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	}
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	dirs := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	byFlag := map[string]cobra.CompletionFunc{
		"machine":  machineNames,
		"numerics": fixed(programs.NumericsFull, programs.NumericsSampled, programs.NumericsOff),
		"fidelity": fixed("full", "isolated", "sampled"),
		"set": func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			// The paths' heads, to go on typing after (no file names):
			// machines takes machine.* alone for a chip's machine, node.*
			// and cluster.* for a cluster description, node.* for a node
			// description (their views);
			// program.* is run's.
			heads := []cobra.Completion{"program.", "machine.", "node.", "cluster."}
			if c.Name() == "machines" {
				heads = []cobra.Completion{"machine."}
				named := ""
				if len(args) > 0 {
					named = args[0]
				} else if f := c.Flags().Lookup("machine"); f != nil {
					named = f.Value.String()
				}
				if named != "" && cluster.IsDescription(named) {
					heads = []cobra.Completion{"node.", "cluster."}
					if t, err := cluster.LoadSystem(named, nil); err == nil && t.NodeOnly() {
						heads = []cobra.Completion{"node."} // (a node alone has no cluster.* keys)
					}
				}
			}
			return heads, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
		},
		"trace":   traceFiles,
		"out":     dirs,
		"vectors": dirs,
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, fn := range byFlag {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fn) // only fails for an unknown or already registered flag
			}
		}
		switch c.Name() {
		case "run", "sweep":
			if c.ValidArgsFunction == nil {
				c.ValidArgsFunction = yamlFiles
			}
		case "view": // the trace files run --trace writes
			if c.ValidArgsFunction == nil {
				c.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
					if len(args) > 0 {
						return nil, cobra.ShellCompDirectiveNoFileComp
					}
					return traceFiles(nil, args, toComplete)
				}
			}
		case "machines":
			if c.ValidArgsFunction == nil {
				c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
					if len(args) > 0 {
						return nil, cobra.ShellCompDirectiveNoFileComp
					}
					return allMachines(), cobra.ShellCompDirectiveNoFileComp
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
