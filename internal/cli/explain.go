package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/report"
)

var explainLong = `Read what the kubelet and the container runtime say about failed pulls, and
compare the nodes where an image fails with the nodes where it runs.

Each pull-failure message (kubelet event or runtime log line) is read into a
stage, cause, code and repair direction (route, dns, endpoint-set,
tls-identity, image, registry), with the endpoint that failed: the registry,
its token service, or the blob storage it redirects layers to. Messages that
cannot tell two causes apart (pull access denied: missing or unauthorized)
say so.

In a cluster, failing and healthy nodes are compared by subnet, zone, pool
and creation time. A healthy replica on a node that already had the image
proves nothing: its node served the image from cache.

Exit codes: 0 no pull failure found; otherwise the code of the dominant
condition: ` + exitConditions() + `,
2 failures outside these directions (for example only back-off events);
1 usage or input error.`

const explainExample = `  # every pod with a pull failure in a namespace
  pullpath explain -n shop

  # one pod, one deployment (and its pods), every namespace
  pullpath explain pod web-7c9f-abcde -n shop
  pullpath explain deployment web -n shop
  pullpath explain -A -o json

  # offline: a support bundle's events, a describe output, or log lines
  kubectl get events -A -o json > events.json && pullpath explain --from events.json
  kubectl describe pod web-7c9f-abcde | pullpath explain --from -
  pullpath explain --from containerd.log -o yaml`

type explainOptions struct {
	out  output
	from string
	// kubectl's connection flags (--kubeconfig, --context, -n, --token,
	// ...) from client-go's clientcmd rather than cli-runtime's
	// genericclioptions: the latter links kustomize and Go's plugin
	// package, which doubles the binary and the RSS of every command,
	// probe included (BENCHMARKS.md, memory).
	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
	all       bool
	page      int64
	kind      string
	name      string
	stdin     io.Reader
	stdout    io.Writer
}

func newExplainCommand(s Streams) *cobra.Command {
	o := &explainOptions{
		loading:   clientcmd.NewDefaultClientConfigLoadingRules(),
		overrides: &clientcmd.ConfigOverrides{},
		stdin:     s.In,
		stdout:    s.Out,
	}
	cmd := &cobra.Command{
		Use:     "explain [pod|deployment|statefulset|daemonset|replicaset|job NAME]",
		Short:   "Read pull-failure messages and correlate failing and healthy nodes",
		Long:    explainLong,
		Example: explainExample,
		Args:    cobra.MaximumNArgs(2),
		RunE:    runE(o),
	}
	o.out.addFlag(cmd)
	cmd.Flags().StringVar(&o.from, "from", "", "read messages offline from FILE ('-' for stdin): kubectl get events -o json, kubectl describe pod output, or one message per line")
	cmd.Flags().BoolVarP(&o.all, "all-namespaces", "A", false, "explain pull failures in every namespace")
	cmd.Flags().Int64Var(&o.page, "page-size", 500, "objects per List call against the API server")
	cmd.Flags().StringVar(&o.loading.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	clientcmd.BindOverrideFlags(o.overrides, cmd.Flags(), clientcmd.RecommendedConfigOverrideFlags(""))
	return cmd
}

func (o *explainOptions) Complete(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		if _, ok := cluster.Kinds[strings.ToLower(args[0])]; ok {
			return fmt.Errorf("%s: a name is needed: explain %s NAME", args[0], args[0])
		}
		// kubectl style: explain pod/NAME
		if k, n, ok := strings.Cut(args[0], "/"); ok {
			o.kind, o.name = k, n
		} else {
			return fmt.Errorf("%q: want KIND NAME (pod, deployment, statefulset, daemonset, replicaset, job) or no argument", args[0])
		}
	case 2:
		o.kind, o.name = args[0], args[1]
	}
	if o.kind != "" {
		if _, ok := cluster.Kinds[strings.ToLower(o.kind)]; !ok {
			return fmt.Errorf("unknown kind %q: want pod, deployment, statefulset, daemonset, replicaset or job", o.kind)
		}
	}
	return nil
}

func (o *explainOptions) Validate() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	if o.from != "" && (o.kind != "" || o.all) {
		return errors.New("--from reads offline input: it takes no KIND NAME and no -A")
	}
	if o.all && o.kind != "" {
		return errors.New("-A lists every namespace: it takes no KIND NAME")
	}
	if o.page <= 0 {
		return fmt.Errorf("--page-size %d: want a positive number", o.page)
	}
	return nil
}

func (o *explainOptions) Run(ctx context.Context) error {
	var (
		r   *report.ExplainReport
		err error
	)
	if o.from != "" {
		r, err = o.offline()
	} else {
		r, err = o.cluster(ctx)
	}
	if err != nil {
		return err
	}
	return o.out.finish(o.stdout, r)
}

func (o *explainOptions) offline() (*report.ExplainReport, error) {
	return readOffline(o.from, o.stdin)
}

func (o *explainOptions) cluster(ctx context.Context) (*report.ExplainReport, error) {
	client, ns, _, err := kubeClient(o.loading, o.overrides)
	if err != nil {
		return nil, err
	}
	t := cluster.Target{Kind: o.kind, Name: o.name, Namespace: ns, AllNamespaces: o.all}
	return cluster.Explain(ctx, client, t, cluster.Options{PageSize: o.page})
}
