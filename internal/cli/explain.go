package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// placeholder until the explain issue lands; replaced by the real command.
func newExplainCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "explain",
		Short: "(in progress)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("explain is not built yet")
		},
	}
}
