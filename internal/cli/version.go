package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print pullpath's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			_, err := fmt.Fprintf(s.Out, "pullpath %s\n", v)
			return err
		},
	}
}
