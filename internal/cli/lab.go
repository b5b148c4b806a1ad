package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// placeholder until the lab issue lands; replaced by the real command.
func newLabCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "lab",
		Short: "(in progress)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("lab is not built yet")
		},
	}
}
