package cli

import (
	"errors"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/monitor/fleet"
)

const monitorLong = `Keep walking the pull path of a few images from this node, on a schedule,
and export the verdicts as Prometheus metrics: catch a broken path on a node
before a scale-up lands a replica there ("a cached image is a plausible lie").

Every --interval (default 5m, spread by --jitter so a fleet does not hit the
registry in the same second) each image gets the probe's quick walk: every
endpoint (registry, token service, blob and redirect hosts), the first bytes
of each blob. Every --full-interval (default 24h) one image, in turn, gets a
full verified pull. One walk at a time; a walk is never retried inside its
interval: the failure is what the metrics must show.

In a DaemonSet (deploy/monitor/) it runs as the small pullpath-agent binary
with the same flags, hostNetwork, dnsPolicy Default and the node's /etc
mounted read-only, so it resolves and trusts exactly as the runtime does.

Served on --listen (default :9090):
  /metrics   pullpath_probe_success, pullpath_probe_verdict_code, ...
             (docs/monitor.md lists every series and its cardinality)
  /status    this node's latest verdicts as JSON (kind MonitorStatus)
  /healthz   ok while the agent runs
When the node's verdict changes (ok -> fail and back) the agent posts an
Event on its Node; "pullpath monitor status" reads them back.`

const monitorExample = `  # Two images, every 5 minutes, metrics on :9090
  pullpath monitor --image registry.example.com/shop/api:1.4 --image nginx:1.27

  # The node's files as a DaemonSet Pod mounts them, credentials from a Secret
  pullpath monitor --config /etc/pullpath/monitor.yaml \
    --hosts-file /host/etc/hosts --resolv-conf /host/etc/resolv.conf \
    --certs-dir /host/etc/containerd/certs.d --docker-config /secrets/config.json

  # One round, metrics printed to stdout (try it before deploying)
  pullpath monitor --once --image myacr.azurecr.io/team/app:2.0

  # The fleet view: every node's latest verdict by pool, zone and subnet
  pullpath monitor status`

func newMonitorCommand(s Streams) *cobra.Command {
	var o monitor.Options
	gfs := flag.NewFlagSet("monitor", flag.ContinueOnError)
	o.RegisterFlags(gfs)
	cmd := &cobra.Command{
		Use:     "monitor --image IMAGE [--image IMAGE...] | monitor status | monitor events",
		Short:   "Walk the pull path from this node on a schedule; Prometheus metrics and Node Events",
		Long:    monitorLong,
		Example: monitorExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected argument %q: images go in --image, the fleet view is `pullpath monitor status`", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			set := map[string]bool{}
			cmd.Flags().Visit(func(f *pflag.Flag) { set[f.Name] = true })
			a, err := monitor.Start(o, set, s.ErrOut)
			if err != nil {
				return err
			}
			if err := monitor.RunAgent(cmd.Context(), a, s.Out); err != nil {
				return err
			}
			return nil
		},
	}
	cmd.Flags().AddGoFlagSet(gfs)
	cmd.AddCommand(newMonitorStatusCommand(s))
	cmd.AddCommand(newMonitorEventsCommand(s))
	return cmd
}

const monitorStatusExample = `  # Which nodes' pull path is broken, by pool, zone and subnet
  pullpath monitor status

  # With each node's Event message; JSON for scripts
  pullpath monitor status -o wide
  pullpath monitor status -o json | jq '.groups[] | select(.failing > 0)'`

type monitorStatusOptions struct {
	out       output
	eventNS   string
	page      int64
	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
}

func newMonitorStatusCommand(s Streams) *cobra.Command {
	o := &monitorStatusOptions{loading: clientcmd.NewDefaultClientConfigLoadingRules(), overrides: &clientcmd.ConfigOverrides{}}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Every node's latest monitor verdict, grouped by pool, zone and subnet",
		Long: `Read the node agents' latest verdicts from the Events they post on their
Nodes and print the fleet view, grouped by pool, zone and subnet the way
explain groups nodes (pool and zone labels; subnet from a pullpath.io/subnet
label or the InternalIP /24). Nodes without a monitor Event (agent not
running, or the Event past the API server's --event-ttl) are "unknown".

Exit codes: ` + fmt.Sprint(exitOK) + ` when no node fails, else the probe's code of the most common
failing condition (` + fmt.Sprint(exitOther) + ` other):
` + exitHelp(conditionRows()...),
		Example: monitorStatusExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.out.validate(); err != nil {
				return err
			}
			if o.page <= 0 {
				return fmt.Errorf("--page-size %d: want a positive number", o.page)
			}
			client, _, _, err := kubeClient(o.loading, o.overrides)
			if err != nil {
				return err
			}
			r, err := fleet.Status(cmd.Context(), client, fleet.Options{EventNamespace: o.eventNS, PageSize: o.page})
			if err != nil {
				return errors.New(oneLineErr(err))
			}
			return o.out.finish(s.Out, r)
		},
	}
	o.out.addFlag(cmd)
	cmd.Flags().StringVar(&o.eventNS, "event-namespace", "default", "namespace the agents post their Node Events in")
	cmd.Flags().Int64Var(&o.page, "page-size", 500, "objects per List call against the API server")
	cmd.Flags().StringVar(&o.loading.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	clientcmd.BindOverrideFlags(o.overrides, cmd.Flags(), clientcmd.RecommendedConfigOverrideFlags(""))
	return cmd
}
