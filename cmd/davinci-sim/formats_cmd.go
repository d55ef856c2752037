package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/davinci-sim/davinci-sim/programs"
)

func init() { subcommands = append(subcommands, newFormatsCmd) }

func newFormatsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "formats",
		Short: "Print every key of program, machine, node and cluster files, by kind (Markdown)",
		Long: `Print the key reference of the file formats in Markdown, generated from the
types the files decode into: each program kind's keys (and the machine kinds it
runs on), each machine kind's keys and those of the node and cluster
descriptions, with the kind of value each takes.
docs/formats.md explains the formats and holds this reference.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), programs.FormatsReference())
			return err
		},
	}
}
