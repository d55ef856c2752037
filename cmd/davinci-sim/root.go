package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"

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
		Short: "Cycle-level simulator of Ascend DaVinci AI cores running real programs bit-accurately",
		Long: `davinci-sim simulates Ascend DaVinci AI cores (cube, vector and scalar units,
MTE/FixPipe data movers, L1/L0A/L0B/L0C/UB buffers) and the memory paths between
them, executing real programs with bit-accurate FP16/FP32 arithmetic and
reporting time, stalls by cause, buffer occupancy and numerical error.`,
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
	}
}
