package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/lab"
)

// `pullpath lab credential-provider --config FILE` is the lab's kubelet
// credential provider plugin (internal/lab/credprovider.go): the kubelet, or
// the probe acting as the kubelet, runs it from the node's plugin directory
// with a CredentialProviderRequest on stdin.
type labCredProviderOptions struct {
	streams Streams
	config  string
}

func newLabCredentialProviderCommand(s Streams) *cobra.Command {
	o := &labCredProviderOptions{streams: s}
	cmd := &cobra.Command{
		Use:    "credential-provider --config FILE",
		Short:  "The lab's kubelet credential provider plugin (run by the kubelet or the probe, not by hand)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   runE(o),
	}
	cmd.Flags().StringVar(&o.config, "config", "", "the plugin's config (JSON) written by the lab")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func (o *labCredProviderOptions) Complete(*cobra.Command, []string) error { return nil }
func (o *labCredProviderOptions) Validate() error                         { return nil }

func (o *labCredProviderOptions) Run(context.Context) error {
	return lab.RunCredentialProvider(o.config, o.streams.In, o.streams.Out, o.streams.ErrOut)
}
