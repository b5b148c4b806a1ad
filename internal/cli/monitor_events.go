package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pullpath/pullpath/internal/monitor/events"
)

const monitorEventsLong = `Count the cluster's image pull failures by cause and place, as Prometheus
metrics: one small exporter (a Deployment of one replica) that watches the
kubelets' Events, Pending Pods and Nodes, classifies every failed pull with
pullpath explain's classifier and exports

  pullpath_pull_failures_total{image_host,cause,condition,pool,zone}
  pullpath_pods_image_pull_backoff{image_host,cause,condition,pool,zone}
  pullpath_pull_failure_first_seen_timestamp_seconds{image_host,cause,pool,zone}
  pullpath_nodes{pool,zone}

Labels are bounded: the image's registry host (at most --max-hosts, then
"other"), the cause and condition of docs/verdicts.md, and the pool and zone
of the node from its labels (as explain reads them). No Pod, node, image or
message is a label.

It needs only get, list and watch on events, pods and nodes, and posts
nothing back. A resumed watch never counts an Event twice (the kubelet's
repeats are counted by the Event's count); failures from before the start
set the first-seen times but are not counted. Run one replica: two would
count everything twice.

Served on --listen (default :9090): /metrics, /healthz, and /readyz (ok once
the first Lists are read). Inside a Pod the service account is used; outside,
kubectl's flags and kubeconfig.`

const monitorEventsExample = `  # In the cluster: deploy/monitor/events-deployment.yaml, or the Helm chart
  helm install pullpath deploy/helm/pullpath

  # From a workstation, against the current context
  pullpath monitor events --listen 127.0.0.1:9090
  curl -s localhost:9090/metrics | grep '^pullpath_pull'`

type monitorEventsOptions struct {
	listen    string
	maxHosts  int
	page      int64
	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
}

func newMonitorEventsCommand(s Streams) *cobra.Command {
	o := &monitorEventsOptions{loading: clientcmd.NewDefaultClientConfigLoadingRules(), overrides: &clientcmd.ConfigOverrides{}}
	cmd := &cobra.Command{
		Use:     "events",
		Short:   "Export the cluster's pull failures by registry host, cause, pool and zone (Prometheus)",
		Long:    monitorEventsLong,
		Example: monitorEventsExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.maxHosts < 1 || o.maxHosts > 1000 {
				return fmt.Errorf("--max-hosts %d: want 1 to 1000", o.maxHosts)
			}
			if o.page < 1 {
				return fmt.Errorf("--page-size %d: want a positive number", o.page)
			}
			_, cfg, err := kubeConfig(o.loading, o.overrides)
			if err != nil {
				return err
			}
			x, err := events.New(cfg, events.Options{Listen: o.listen, MaxHosts: o.maxHosts, PageSize: o.page, Log: s.ErrOut})
			if err != nil {
				return errors.New(oneLineErr(err))
			}
			return x.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&o.listen, "listen", ":9090", "address of /metrics, /healthz and /readyz")
	cmd.Flags().IntVar(&o.maxHosts, "max-hosts", 50, "registry hosts that get their own series; the rest are \"other\"")
	cmd.Flags().Int64Var(&o.page, "page-size", 500, "objects per List call against the API server")
	cmd.Flags().StringVar(&o.loading.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	clientcmd.BindOverrideFlags(o.overrides, cmd.Flags(), clientcmd.RecommendedConfigOverrideFlags(""))
	return cmd
}
