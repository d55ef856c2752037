package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/davinci-sim/davinci-sim/version"
)

// subcommands holds the constructors of the top-level commands other than
// version and validate; each command's file appends itself in an init func,
// so adding a command touches only its own file.
var subcommands []func() *cobra.Command

// validateSubcommands holds the constructors of `validate` subcommands.
var validateSubcommands []func() *cobra.Command

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "davinci-sim",
		Short: "Cycle-level simulator of AI-accelerator matrix engines (Ascend DaVinci, NVIDIA Tensor Cores, AMD Matrix Cores) running real programs bit-accurately",
		Long: `davinci-sim simulates AI-accelerator matrix engines and their memory paths:
Ascend DaVinci AI cores (cube, vector and scalar units, MTE/FixPipe data movers,
L1/L0A/L0B/L0C/UB buffers), NVIDIA SMs with Tensor Cores and AMD CDNA compute
units with Matrix Cores (CTA/workgroup grids, shared memory/LDS pipelines, L2
and HBM), and hosts and clusters of them. It executes real programs (emulated
FP32 GEMM schemes, FP64 GEMM from INT8 slices, fused blocked LU, hand-written
assembly, microbenchmarks) with bit-accurate arithmetic and reports time, stalls
by cause, buffer occupancy, energy and numerical error from the same run.

Start with "davinci-sim programs" (the program kinds and their examples) and
"davinci-sim machines" (the embedded machines).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.String(),
	}
	root.SetVersionTemplate("davinci-sim {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return badInput(err) })
	var cpuProfile, memProfile string
	var profFile, memFile *os.File
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the command to this file (go tool pprof)")
	root.PersistentFlags().StringVar(&memProfile, "memprofile", "", "write a heap profile (allocations, and what is live) at the end of the command to this file (go tool pprof)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := refuseEmptyFlags(cmd); err != nil {
			return err
		}
		if memProfile != "" && cpuProfile != "" && filepath.Clean(memProfile) == filepath.Clean(cpuProfile) {
			return badInput(fmt.Errorf("--cpuprofile and --memprofile: both write %s; give each its own file", cpuProfile))
		}
		if memProfile != "" {
			f, err := os.Create(memProfile)
			if err != nil {
				return badInput(fmt.Errorf("--memprofile: %w", err))
			}
			memFile = f
		}
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return badInput(fmt.Errorf("--cpuprofile: %w", err))
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return failure(fmt.Errorf("--cpuprofile: %w", err))
		}
		profFile = f
		return nil
	}
	cobra.OnFinalize(func() {
		if profFile != nil {
			pprof.StopCPUProfile()
			profFile.Close()
			profFile = nil
		}
		if memFile != nil {
			runtime.GC()
			if err := pprof.Lookup("allocs").WriteTo(memFile, 0); err != nil {
				fmt.Fprintln(os.Stderr, "davinci-sim: --memprofile:", err)
			}
			memFile.Close()
			memFile = nil
		}
	})
	root.AddCommand(newVersionCmd())
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	validate := newValidateCmd()
	for _, mk := range validateSubcommands {
		validate.AddCommand(mk())
	}
	root.AddCommand(validate)
	registerCompletions(root)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the davinci-sim version (also: --version)",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "davinci-sim", version.String())
		},
	}
}

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate",
		Short: "Validate models against recorded hardware data",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 { // a subcommand would have matched
				var names []string
				for _, c := range cmd.Commands() {
					if c.IsAvailableCommand() {
						names = append(names, c.Name())
					}
				}
				return badInput(fmt.Errorf("validate: unknown check %q (one of: %s)", args[0], strings.Join(names, ", ")))
			}
			return cmd.Help()
		},
	}
}

// refuseEmptyFlags refuses a string flag given an empty value (-o "",
// -m ""): each one's "" is its default, so the run would silently ignore it.
func refuseEmptyFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if err == nil && fl.Value.Type() == "string" && fl.Value.String() == "" {
			err = badInput(fmt.Errorf("--%s '': an empty value (give one, or leave the flag out for its default)", fl.Name))
		}
	})
	return err
}
