package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newProbeCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "probe IMAGE",
		Short: "(in progress)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("probe is not built yet")
		},
	}
}
