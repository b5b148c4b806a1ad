package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/lab"
)

// newLabForwardCommand is the loopback forwarder `lab up` leaves running
// for a cluster scenario: it listens on 127.0.0.1 in the root namespace and
// connects each client to the apiserver inside the control plane's
// namespace (the root namespace gets no interface, route or rule).
func newLabForwardCommand(s Streams) *cobra.Command {
	var ns, to, listen, ready string
	cmd := &cobra.Command{
		Use:    "forward --netns NS --to ADDR:PORT",
		Short:  "Forward a loopback port into a lab namespace (started by lab up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := lab.Forward(ns, listen, to)
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			defer f.Close()
			if ready != "" {
				if err := os.WriteFile(ready, []byte(f.Addr+"\n"), 0o644); err != nil {
					return &ExitError{Code: 1, Err: err}
				}
			}
			fmt.Fprintf(s.ErrOut, "forwarding %s to %s in %s\n", f.Addr, to, ns)
			ctx, cancel := labContext(cmd.Context())
			defer cancel()
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&ns, "netns", "", "the lab namespace to connect in")
	cmd.Flags().StringVar(&to, "to", "", "ADDR:PORT to connect to inside the namespace")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "loopback address to listen on")
	cmd.Flags().StringVar(&ready, "ready", "", "file to write the listening address to")
	_ = cmd.MarkFlagRequired("netns")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}
