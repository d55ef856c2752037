package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

func init() { subcommands = append(subcommands, newMachinesCmd) }

func newMachinesCmd() *cobra.Command {
	var (
		file     string
		sets     []string
		resolved bool
	)
	cmd := &cobra.Command{
		Use:   "machines [NAME]",
		Short: "List the embedded machines, print one as YAML, or show a machine's effective configuration",
		Long: `Without arguments, list the embedded machines (name, kind, cores, clock,
description), then the embedded cluster and node descriptions (name, nodes,
NPUs, description), which run -m takes as well.

With an embedded NAME (a machine, or a cluster or node description), print
its file as shipped, with the comments that give the source of every number.

With --set, -m FILE or --resolved, print the effective configuration instead:
the machine after loading, overriding and validation, every value with its
unit, keys changed by --set marked "# --set", and a header with derived
figures (peak TFLOP/s per cube input type, GM bytes per cycle). The output is
itself a valid machine file (use it with -m to pin a variant).

On a cluster or node description (cloudbrain2, cloudbrain2-node, or -m FILE
of one), --set node.KEY=V / cluster.KEY=V, -m or --resolved print its
effective view the same way: every key in its unit, keys changed by --set
marked "# --set", the bridge's bandwidth when derived (from the PCIe
generation) commented out with how, and a header of derived figures (NPUs,
PCIe and bridge bandwidths, network bandwidth per NPU and node, uplinks).
A cluster's view gives its node inline (node: holding the node's keys): one
file that run -m takes and that loads back to the same description.
machine.* keys set each NPU's chip, which the view does not print: they are
refused there, pointing to davinci-sim machines NPU --set KEY=V.

--set takes the same paths as "davinci-sim run": machine.core.buffers.L1=512KiB
(the "machine." prefix may be left out on a chip's machine). Keys are case-insensitive; sizes
take B/KiB/MiB/GiB (KB/MB/GB are powers of ten), clocks Hz/MHz/GHz, bandwidths
B/s … TB/s. Bad files, keys or values exit with code 2 and one line each
naming the file (or --set), key and violated constraint.`,
		Example: `  davinci-sim machines
  davinci-sim machines ascend-910a
  davinci-sim machines ascend-910a --set core.buffers.L1=512KiB --set machine.cores=16
  davinci-sim machines -m my-machine.yaml
  davinci-sim machines cloudbrain2 --set node.hccs.link_bandwidth=30GB/s --set cluster.nodes=4
  davinci-sim machines cloudbrain2-node --resolved`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return badInput(fmt.Errorf("machines: at most one machine NAME, got %d arguments", len(args)))
			}
			if len(args) == 1 && strings.TrimSpace(args[0]) == "" {
				return badInput(errors.New("'': an empty NAME (give one, or none to list the machines)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			target := file
			if len(args) == 1 {
				if file != "" {
					return badInput(errors.New("machines: give either a NAME or -m FILE, not both"))
				}
				target = args[0]
			}
			if target != "" && cluster.IsDescription(target) { // a cluster or node description
				return describeCluster(out, target, file != "", sets, resolved)
			}
			ovs, err := machineOverrides(sets)
			if err != nil {
				return badInput(err)
			}
			if target == "" {
				if len(ovs) > 0 || resolved {
					return badInput(errors.New("machines: --set and --resolved need a machine NAME or -m FILE"))
				}
				return listMachines(out)
			}
			embedded := slices.Contains(machines.Names(), target)
			if embedded && len(ovs) == 0 && !resolved && file == "" { // (-m NAME: resolved, as the help says)
				src, err := machines.Source(target)
				if err != nil {
					return badInput(err)
				}
				_, err = out.Write(src)
				return err
			}
			m, err := machines.Load(target, ovs)
			if err != nil {
				what := "machines " + target
				if file != "" {
					what = "machines -m " + target
				}
				if perr := programAsMachine(what, target); perr != nil {
					return perr
				}
				if _, cerr := cluster.LoadSystem(target, nil); cerr == nil { // a cluster or node description's file
					return badInput(fmt.Errorf("machines -m %s: a cluster or node description, not a chip's machine file; run programs on it with davinci-sim run -m %s", target, target))
				}
				return badInput(cluster.NameDescriptions(err))
			}
			writeEffective(out, m, target, embedded, ovs)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "machine", "m", "", "machine, cluster or node description `FILE` (or embedded name) to resolve and print")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a machine value, `PATH=VALUE` (repeatable), e.g. core.buffers.L1=512KiB")
	cmd.Flags().BoolVar(&resolved, "resolved", false, "print the effective configuration even without --set")
	return cmd
}

// describeCluster prints the cluster or node description target (an
// embedded name, or a file when fromFile): as shipped, for an embedded
// name without --set, -m or --resolved; else its effective view — the
// description loaded with the node.* and cluster.* overrides and
// validated, a header of derived figures, then the description as a file
// (a cluster's with its node inline) that loads back to it.
func describeCluster(out io.Writer, target string, fromFile bool, sets []string, resolved bool) error {
	embedded := slices.Contains(cluster.Names(), target)
	ovs, err := descriptionOverrides(sets)
	if err != nil {
		return badInput(err)
	}
	if embedded && len(ovs) == 0 && !resolved && !fromFile {
		src, err := cluster.Source(target)
		if err != nil {
			return badInput(err)
		}
		_, err = out.Write(src)
		return err
	}
	var descOvs []machines.Override
	for _, o := range ovs {
		if !strings.HasPrefix(strings.ToLower(o.Path), "machine.") {
			descOvs = append(descOvs, o)
		}
	}
	topo, err := cluster.LoadSystem(target, descOvs)
	if err != nil {
		return badInput(err)
	}
	for _, o := range ovs {
		if rest, ok := strings.CutPrefix(strings.ToLower(o.Path), "machine."); ok {
			// (Not part of the description: each NPU's machine, which a
			// view of its own shows.)
			return badInput(fmt.Errorf("--set %s: machine.* keys set each NPU's machine (%s), which this view of the description does not print: see davinci-sim machines %s --set %s",
				o, topo.Node.NPU, topo.Node.NPU, machines.Override{Path: o.Path[len(o.Path)-len(rest):], Value: o.Value}))
		}
	}
	kind := "cluster"
	if topo.NodeOnly() {
		kind = "node"
	}
	from := "file " + target
	if embedded {
		from = "embedded " + kind + " description " + target
	}
	fmt.Fprintf(out, "# effective configuration of %s\n", commentLine(from))
	for _, o := range ovs {
		fmt.Fprintf(out, "#   --set %s\n", commentLine(o.Full()))
	}
	for _, f := range topo.Figures() {
		fmt.Fprintf(out, "# derived: %s\n", commentLine(f))
	}
	_, err = out.Write(topo.YAML())
	return err
}

// descriptionOverrides parses --set values for a cluster or node
// description's view: paths start with cluster. or node. (machine.* ones
// are refused once the NPU is known); a path without one of them is
// refused, naming the key it may have meant.
func descriptionOverrides(sets []string) ([]machines.Override, error) {
	ovs, err := machines.ParseSetFlags(sets)
	if err != nil {
		return nil, err
	}
	for _, o := range ovs {
		lower := strings.ToLower(o.Path)
		switch {
		case strings.HasPrefix(lower, "cluster."), strings.HasPrefix(lower, "node."), strings.HasPrefix(lower, "machine."):
		case strings.HasPrefix(lower, "program."):
			return nil, fmt.Errorf("--set %s: program.* paths apply to `davinci-sim run`, not to machines", o)
		default:
			var meant []string
			for _, d := range []struct {
				prefix string
				keys   []machines.Key
			}{{"cluster.", cluster.ClusterKeys()}, {"node.", cluster.NodeKeys()}} {
				if slices.ContainsFunc(d.keys, func(k machines.Key) bool { return strings.EqualFold(k.Path, o.Path) }) {
					meant = append(meant, d.prefix+o.Path)
				}
			}
			hint := ""
			if len(meant) > 0 {
				hint = " (did you mean " + strings.Join(meant, " or ") + "?)"
			}
			return nil, fmt.Errorf("--set %s: on a cluster or node description a path starts with cluster. (the cluster's keys) or node. (the node's)%s", o, hint)
		}
	}
	return ovs, nil
}

// commentLine keeps s on one YAML comment line, whatever it holds: a line
// break there would start a key of the printed file.
func commentLine(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// programAsMachine refuses ref, a machine named by -m (or machines'
// NAME), when it is a program file: loaded as a machine it was refused for
// its kind alone ("key "kind": unknown machine kind "hgemm""), which did
// not say that the file was the wrong one. what names the argument
// ("-m FILE"); nil where ref is no program file (an embedded name, a
// machine or a file the machine's load refuses for itself).
func programAsMachine(what, ref string) error {
	if err := programs.ProgramAsMachine(ref); err != nil {
		return badInput(fmt.Errorf("%s: %w", what, err))
	}
	return nil
}

// machineOverrides parses --set values, adding the "machine." prefix where
// it is left out and refusing program.* paths, which have no meaning here.
func machineOverrides(sets []string) ([]machines.Override, error) {
	ovs, err := machines.ParseSetFlags(sets)
	if err != nil {
		return nil, err
	}
	for i, o := range ovs {
		lower := strings.ToLower(o.Path)
		switch {
		case strings.HasPrefix(lower, "machine."):
		case strings.HasPrefix(lower, "program."):
			return nil, fmt.Errorf("--set %s: program.* paths apply to `davinci-sim run`, not to machines", o)
		case strings.HasPrefix(lower, "node."), strings.HasPrefix(lower, "cluster."):
			// (Not a machine's key "node": a cluster or node description's
			// section, which this machine is not.)
			return nil, fmt.Errorf("--set %s: %s.* paths apply to a cluster or node description (davinci-sim machines cloudbrain2), not to a machine", o, lower[:strings.Index(lower, ".")])
		default:
			ovs[i].Path = "machine." + o.Path
		}
	}
	return ovs, nil
}

func listMachines(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tCORES\tCLOCK\tDESCRIPTION")
	for _, name := range machines.Names() {
		m, err := machines.Load(name, nil)
		if err != nil {
			return failure(fmt.Errorf("embedded machine %s: %w", name, err))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%s\n", name, m.Kind, m.Cores, m.Clock(), m.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nCluster and node descriptions (lu-fused on many NPUs: davinci-sim run -m NAME):")
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tNODES\tNPUS\tDESCRIPTION")
	for _, name := range cluster.Names() {
		t, err := cluster.LoadSystem(name, nil)
		if err != nil {
			return failure(fmt.Errorf("embedded description %s: %w", name, err))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", name, t.Nodes, t.NPUs(), t.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nPrint one with `davinci-sim machines NAME`; try a variant with --set, e.g. --set cores=16 (or core.buffers.L1=512KiB on a davinci machine, core.smem_per_cta=96KiB on an nvidia-sm one).")
	return nil
}

// writeEffective prints the resolved machine with a header of derived
// figures; every header line is a YAML comment.
func writeEffective(out io.Writer, m *machines.Machine, target string, embedded bool, ovs []machines.Override) {
	from := "file " + target
	if embedded {
		from = "embedded machine " + target
	}
	fmt.Fprintf(out, "# effective configuration of %s\n", commentLine(from))
	for _, o := range ovs {
		fmt.Fprintf(out, "#   --set %s\n", commentLine(o.Full()))
	}
	var peaks []string
	for _, p := range m.Peaks() {
		peaks = append(peaks, fmt.Sprintf("%s %.4g", p.Input, p.OpsPerSecond/1e12))
	}
	fmt.Fprintf(out, "# derived: matrix-unit peak T(FL)OP/s: %s\n", strings.Join(peaks, ", "))
	perCycle := m.GM.Bandwidth.BytesPerCycle(m.Clock())
	fmt.Fprintf(out, "# derived: GM %v = %.4g B/cycle for the chip, %.4g B/cycle per core with all %d cores streaming\n",
		m.GM.Bandwidth, perCycle, perCycle/float64(m.Cores), m.Cores)
	out.Write(m.YAML(ovs))
}
