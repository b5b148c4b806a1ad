package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
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
				return err
			}
			defer f.Close()
			if ready != "" {
				if err := os.WriteFile(ready, []byte(f.Addr+"\n"), 0o644); err != nil {
					return err
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

// printLabCluster tells how to reach a cluster left up by lab up.
func printLabCluster(out io.Writer, t *scenario.Scenario, kept *lab.KeptRun, r *report.LabRun) {
	fmt.Fprintf(out, "\nCluster: %d nodes Ready (%s)\n", len(kept.Nodes), strings.Join(kept.Nodes, ", "))
	fmt.Fprintf(out, "Step into a kubelet node (its own network, mount and UTS namespaces):\n  sudo nsenter --target $(cat %s/nodes/HOST/containerd.pid) --net --mount --uts bash\n", kept.RunDir)
	fmt.Fprintf(out, "Kubeconfig (admin, through a loopback forwarder into the control plane's namespace):\n  export KUBECONFIG=%s\n  kubectl get nodes -L pullpath.io/subnet\n", kept.Kubeconfig)
	if w := t.Cluster.Workload; w != nil {
		ns, name := w.Namespace, w.Name
		if ns == "" {
			ns = "default"
		}
		if name == "" {
			name = "app"
		}
		fmt.Fprintf(out, "  pullpath explain deployment/%s -n %s --kubeconfig %s\n", name, ns, kept.Kubeconfig)
	}
	for _, c := range r.Checks {
		if c.Name == "cluster" {
			fmt.Fprintf(out, "Workload: %s\n", c.Detail)
		}
	}
	fmt.Fprintln(out)
}

// clusterExpectShort is what `lab list` adds for a cluster scenario: the
// nodes that must fail and explain's pattern and code.
func clusterExpectShort(t *scenario.Scenario) string {
	if t.Cluster == nil || t.Cluster.Expect == nil {
		return ""
	}
	e := t.Cluster.Expect
	fail := "none fail"
	if len(e.FailingNodes) > 0 {
		fail = strings.Join(e.FailingNodes, ",") + " fail"
	}
	out := "; cluster: " + fail
	if x := e.Explain; x != nil {
		for _, p := range []string{x.Pattern, x.Code} {
			if p != "" {
				out += " " + p
			}
		}
	}
	return out
}
