package cli

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pullpath/pullpath/internal/sweep"
)

var sweepLong = `Walk the pull of IMAGE from every pool, zone and subnet of the cluster, as
Kubernetes Pods, with the real kubelet beside it.

One Pod per chosen node runs 'pullpath probe' in the node's network
namespace (nodeName, hostNetwork, dnsPolicy Default, every taint tolerated),
reading the node's own /etc/hosts, /etc/resolv.conf, /run/systemd/resolve
(where the OS runs systemd-resolved), /etc/containerd/certs.d,
/etc/docker/certs.d and /etc/ssl/certs through read-only mounts: what
containerd reads and trusts, not the copies the kubelet writes for Pods.
Its compact verdict comes back in the termination message, the whole report
in its log.

By default one Ready node per pool x zone x subnet group walks (grouped as
explain groups nodes); --all walks from every node, --per picks one node per
node, pool, zone or subnet, --nodes narrows with a label selector. Nodes
that cannot run the walk are listed with the reason (NotReady, Windows,
virtual-kubelet, Fargate; cordoned ones are walked unless --skip-cordoned),
and pools known to have no node (--expect-pool, the cluster-autoscaler's
status) are named: they fail when they scale up.

--canary also runs, on each node, a Pod with IMAGE itself and
imagePullPolicy Always: the real kubelet and runtime pull it with the
kubelet's identity, and its Events are read with explain's classifier. Where
node.status.images already holds the image, the canary proves only the
manifest path (use --canary-image with a freshly pushed tag). Probe and
canary are reconciled on each node.

The probe Pods run pullpath's small node-side image (pullpath-agent: the
walk, no Kubernetes or cloud clients, a few MB), which each node must pull
first. When a node cannot pull it, its Events are that node's verdict.
--image-for-probe points at a copy in a registry the nodes reach (see
'crane copy' in the README); the full pullpath image works there too.

Every object belongs to one per-run owner (a Job that runs no Pod and ends
at the run's deadline, then the garbage collector removes the rest), carries
the run's labels and activeDeadlineSeconds, and is deleted with grace 0 on
success, failure, Ctrl-C and SIGTERM. 'pullpath sweep --cleanup' removes
leftovers by label.

The working namespace (-n, default pullpath-sweep) needs the Pod Security
label pod-security.kubernetes.io/enforce: privileged (hostNetwork and
hostPath); deploy/sweep/ holds it with least-privilege RBAC.

Exit codes: 0 every chosen node pulls; otherwise the dominant condition of
the failing nodes; 2 when the only failures are nodes without an answer:
` + exitHelp(conditionRows()...) + `
  1  usage, input or RBAC error (the missing verb named), nothing to walk from`

const sweepExample = `  # one node of every pool x zone x subnet: which groups cannot pull?
  pullpath sweep 123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/api:1.4.2

  # see the plan first: which nodes, which are skipped and why
  pullpath sweep myacr.azurecr.io/team/app:2.0 --dry-run

  # with the real kubelet's pull beside it, on a freshly pushed tag
  pullpath sweep myacr.azurecr.io/team/app:2.0 --canary --canary-image myacr.azurecr.io/team/app:canary-$(date +%s)

  # every node of one pool, and a pool that is scaled to zero right now
  pullpath sweep registry.example.com/app:1 --all --nodes eks.amazonaws.com/nodegroup=batch --expect-pool gpu

  # nodes that cannot reach the public image: a mirrored probe image
  crane copy ghcr.io/pullpath/pullpath-agent:v0.1.0 registry.internal/tools/pullpath-agent:v0.1.0
  pullpath sweep registry.internal/app:1 --image-for-probe registry.internal/tools/pullpath-agent:v0.1.0

  # remove anything a killed run left
  pullpath sweep --cleanup -n pullpath-sweep`

// DefaultSweepNamespace is the working namespace deploy/sweep/ creates.
const DefaultSweepNamespace = "pullpath-sweep"

// PublishedImage is where pullpath's own image (the CLI, for kubectl debug)
// is published.
const PublishedImage = "ghcr.io/pullpath/pullpath"

// NodeImage is where the node-side image is published: pullpath-agent
// (probe, version, the monitor agent), what the walk's Pods run.
const NodeImage = "ghcr.io/pullpath/pullpath-agent"

type sweepOptions struct {
	out       output
	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
	o         sweep.Options
	per       string
	resolved  string
	cleanup   bool
	probeArgs []string
	quick     bool
	trace     bool
	streams   Streams
}

func newSweepCommand(s Streams) *cobra.Command {
	o := &sweepOptions{
		loading:   clientcmd.NewDefaultClientConfigLoadingRules(),
		overrides: &clientcmd.ConfigOverrides{},
		streams:   s,
	}
	cmd := &cobra.Command{
		Use:     "sweep IMAGE",
		Short:   "Walk the pull from every pool, zone and subnet as Pods, with the kubelet's own pull beside it",
		Long:    sweepLong,
		Example: sweepExample,
		Args:    cobra.MaximumNArgs(1),
		RunE:    runE(o),
	}
	f := cmd.Flags()
	o.out.addFlag(cmd)
	f.BoolVar(&o.o.Plan.All, "all", false, "walk from every eligible node, not one per group")
	f.StringVar(&o.o.Selector, "nodes", "", "only nodes matching this label selector (kubectl syntax)")
	f.StringVar(&o.per, "per", "", "one node per node|pool|zone|subnet (default: per pool x zone x subnet)")
	f.BoolVar(&o.o.Plan.SkipCordoned, "skip-cordoned", false, "leave cordoned nodes out (default: walk them too, and say so)")
	f.StringArrayVar(&o.o.Plan.ExpectPools, "expect-pool", nil, "a pool that should exist: named when it has no node (scaled to zero); repeatable")
	f.IntVar(&o.o.Parallel, "parallel", 20, "Pods in flight at once")
	f.BoolVar(&o.o.Canary, "canary", false, "also pull IMAGE with the real kubelet on each node (imagePullPolicy Always)")
	f.StringVar(&o.o.CanaryImage, "canary-image", "", "the canary pulls this image instead of IMAGE (a freshly pushed tag no node has cached)")
	f.StringVar(&o.o.ProbeImage, "image-for-probe", "", "pullpath's node-side image the probe Pods run (default: "+NodeImage+":VERSION)")
	f.StringArrayVar(&o.o.PullSecrets, "pull-secret", nil, "a kubernetes.io/dockerconfigjson Secret in the working namespace: the canary's and the probe Pod's imagePullSecret, and (the first) the probe's credentials; repeatable")
	f.DurationVar(&o.o.Timeout, "timeout", 10*time.Minute, "budget of the whole run, and every Pod's activeDeadlineSeconds")
	f.DurationVar(&o.o.StartTimeout, "start-timeout", 3*time.Minute, "a Pod not started by then (its node not running it, or the probe image slow to pull) is no answer")
	f.StringVar(&o.o.CertsDir, "node-certs-dir", "", "a registry folder on the nodes (hosts.toml, CAs) to walk with instead of the runtime's own configuration, mounted into the walk's Pods (default: each node's runtime config, found under its /etc and /var/lib)")
	f.StringVar(&o.o.DockerCerts, "node-docker-certs-dir", "", "a docker certs.d on the nodes, read with --node-certs-dir (default: none beyond the runtime's own configuration)")
	f.StringVar(&o.resolved, "systemd-resolved", "auto", "mount the node's /run/systemd/resolve: auto (by the node's OS image), yes, no")
	f.BoolVar(&o.quick, "quick", false, "the probe fetches only the first bytes of each blob")
	f.BoolVar(&o.trace, "trace", false, "each node's probe traces the address it failed on by a timeout (and every endpoint when it works): a failing node's trace is put beside a healthy node's, naming the hop where they part")
	f.BoolVar(&o.o.CheckUpstream, "check-upstream", true, "when a node's hosts.toml mirror or cache served, its probe also walks the upstream registry: a cache hiding a broken upstream is named (--check-upstream=false: only the runtime's path)")
	f.StringArrayVar(&o.probeArgs, "probe-arg", nil, "extra flag for the probe in each Pod (e.g. --probe-arg=--expect-private); repeatable")
	f.BoolVar(&o.o.DryRun, "dry-run", false, "print the plan (which nodes, which are skipped and why) and create nothing")
	f.BoolVar(&o.cleanup, "cleanup", false, "delete every object any sweep left in the namespace (by label), and exit")
	f.StringVar(&o.loading.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	clientcmd.BindOverrideFlags(o.overrides, f, clientcmd.RecommendedConfigOverrideFlags(""))
	return cmd
}

func (o *sweepOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.o.Image = args[0]
	}
	if o.o.RunID == "" {
		o.o.RunID = sweep.NewRunID()
	}
	if o.o.ProbeImage == "" {
		o.o.ProbeImage = NodeImage + ":" + imageTag()
	}
	o.o.Plan.Per, o.o.Plan.Resolved = o.per, o.resolved
	o.o.ProbeArgs = append([]string(nil), o.probeArgs...)
	if o.quick {
		o.o.ProbeArgs = append(o.o.ProbeArgs, "--quick")
	}
	if o.trace {
		o.o.ProbeArgs = append(o.o.ProbeArgs, "--trace")
	}
	return nil
}

// imageTag is the published image's tag for this build: its version, or
// latest for a development build.
func imageTag() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "latest"
}

func (o *sweepOptions) Validate() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	if o.cleanup {
		if o.o.Image != "" {
			return errors.New("--cleanup takes no IMAGE: it removes every sweep's leftovers in the namespace")
		}
		return nil
	}
	if o.o.Image == "" {
		return errors.New("sweep takes one IMAGE argument (see pullpath sweep --help)")
	}
	for flag, img := range map[string]string{"IMAGE": o.o.Image, "--image-for-probe": o.o.ProbeImage, "--canary-image": o.o.CanaryImage} {
		if img == "" {
			continue
		}
		if _, err := reference.ParseNormalizedNamed(img); err != nil {
			return fmt.Errorf("%s %q: %v: want [HOST[:PORT]/]REPOSITORY[:TAG][@sha256:DIGEST]", flag, img, err)
		}
	}
	if o.o.CanaryImage != "" && !o.o.Canary {
		return errors.New("--canary-image needs --canary")
	}
	if o.per != "" {
		ok := false
		for _, p := range sweep.PerValues {
			ok = ok || p == o.per
		}
		if !ok {
			return fmt.Errorf("--per %q: want one of %s", o.per, strings.Join(sweep.PerValues, ", "))
		}
		if o.o.Plan.All && o.per != sweep.PerNode {
			return fmt.Errorf("--all walks every node: it takes no --per %s", o.per)
		}
	}
	if o.o.Selector != "" {
		if _, err := labels.Parse(o.o.Selector); err != nil {
			return fmt.Errorf("--nodes %q: %v", o.o.Selector, err)
		}
	}
	switch o.resolved {
	case "auto", "yes", "no":
	default:
		return fmt.Errorf("--systemd-resolved %q: want auto, yes or no", o.resolved)
	}
	if o.o.Parallel < 1 || o.o.Parallel > 500 {
		return fmt.Errorf("--parallel %d: want 1 to 500", o.o.Parallel)
	}
	if o.o.Timeout < 10*time.Second {
		return fmt.Errorf("--timeout %s: want at least 10s", o.o.Timeout)
	}
	if o.o.StartTimeout <= 0 {
		return fmt.Errorf("--start-timeout %s: want a positive duration like 2m", o.o.StartTimeout)
	}
	return nil
}

func (o *sweepOptions) client() (kubernetes.Interface, string, error) {
	c, ns, explicit, err := kubeClient(o.loading, o.overrides)
	if err != nil {
		return nil, "", err
	}
	if !explicit && o.overrides.Context.Namespace == "" {
		ns = DefaultSweepNamespace
	}
	return c, ns, nil
}

func (o *sweepOptions) Run(ctx context.Context) error {
	c, ns, err := o.client()
	if err != nil {
		return err
	}
	s := o.streams
	if o.cleanup {
		n, err := sweep.Cleanup(ctx, c, ns)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(s.Out, "deleted %d Pod(s) and %d owner(s) left by sweeps in namespace %s\n", n.Pods, n.Owners, ns)
		return err
	}
	o.o.Namespace = ns
	if isTerminal(s.ErrOut) {
		o.o.Progress = func(done, total int) {
			fmt.Fprintf(s.ErrOut, "\r\033[K%d/%d node(s) answered", done, total)
			if done == total {
				fmt.Fprint(s.ErrOut, "\r\033[K")
			}
		}
	}
	r, err := sweep.Run(ctx, c, o.o)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("sweep interrupted; every object of run %s was deleted", o.o.RunID)
		}
		return err
	}
	return o.out.finish(s.Out, r)
}
