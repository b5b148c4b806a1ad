package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/buildinfo"
)

type versionOptions struct{ streams Streams }

func newVersionCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print pullpath's version, commit, Go version and platform",
		Args:  cobra.NoArgs,
		RunE:  runE(&versionOptions{streams: s}),
	}
}

func (o *versionOptions) Complete(*cobra.Command, []string) error { return nil }
func (o *versionOptions) Validate() error                         { return nil }

func (o *versionOptions) Run(context.Context) error {
	_, err := fmt.Fprintln(o.streams.Out, buildinfo.Read().Line("pullpath"))
	return err
}
