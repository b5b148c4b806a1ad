package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pullpath/pullpath/internal/audit"
	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	"github.com/pullpath/pullpath/internal/audit/clouds"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/diagnose"
	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/sweep"
)

var diagnoseLong = `One command from "my Pods are in ImagePullBackOff" to the broken link, the
object to change, and the proof. It runs the diagnosis method in order:

  1. read    the kubelet's events for the target (pullpath explain): which
             nodes fail, which only look healthy because of their cache;
             and the failing Pods' pull identity as the kubelet builds it
             (their imagePullSecrets, which their ServiceAccount fills,
             then the nodes' credential providers), by name only
  2. walk    the failing image from every failing group's node and one node
             of every other pool x zone x subnet group, as Pods (pullpath
             sweep), with the real kubelet beside it with --canary; with
             --use-pull-secrets also as the failing Pods' own identity, in
             their namespace
  3. audit   the cloud the nodes' spec.providerID names, focused on the
             failing subnets and host: from a folder that pullpath
             aws|azure|gcp collect wrote (--from-aws, --from-azure,
             --from-gcp), else live with the cloud's default credential
             chain (AWS: environment, shared config and SSO, instance
             metadata; --profile, --region; Azure: DefaultAzureCredential,
             the AKS cluster found from the nodes' node resource group;
             GCP: Application Default Credentials, the cluster from the
             nodes' instances; --gcp-project, --gcp-location,
             --gcp-cluster), saying which identity it read as; --no-cloud
             skips it
  4. answer  first on screen: the broken link (host, role, address, step,
             code), the repair direction, the objects to change, and the
             command that proves the fix on every pool

Every step that cannot run is listed with its reason and the command that
does it by hand: without the right to create Pods the answer rests on the
events and the audit, and names the probe to run on a failing node; without
credentials, or a call the identity may not make, it names the collect
command to run by hand and the permission it needs. The whole diagnosis is
bounded by --budget; progress goes to stderr on a terminal.

Exit codes: the answer's repair direction, as probe and explain give them;
` + fmt.Sprint(exitOK) + ` nothing broken, ` + fmt.Sprint(exitOther) + ` a failure outside these directions, ` + fmt.Sprint(exitError) + ` usage or input error:
` + exitHelp(conditionRows()...)

const diagnoseExample = `  # the Pods of one deployment sit in ImagePullBackOff
  pullpath diagnose deployment web -n shop

  # every pull failure of the cluster, with the kubelet's own pull beside the probe
  pullpath diagnose -A --canary

  # name the AWS object to change, live with the default credential chain
  AWS_PROFILE=readonly pullpath diagnose deployment web -n shop

  # or from a folder collected once, elsewhere
  pullpath aws collect --cluster prod --region eu-west-1 --out ./aws
  pullpath diagnose deployment web -n shop --from-aws ./aws

  # GKE: the same from a gcloud folder
  pullpath gcp collect us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2 \
    --project shop-prod --location us-central1 --cluster prod --out ./gcp
  pullpath diagnose deployment web -n shop --from-gcp ./gcp

  # one workload fails on every node: walk with its own imagePullSecrets too
  pullpath diagnose deployment checkout -n shop --use-pull-secrets

  # nothing fails yet: prove an image's path from every group before a scale-up
  pullpath diagnose -n shop --image 123456789012.dkr.ecr.eu-west-1.amazonaws.com/shop/web:2.0

  # as a kubectl plugin, for scripts
  kubectl pullpath diagnose pod web-7c9f-abcde -n shop -o json | jq .answer`

type diagnoseOptions struct {
	out       output
	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
	all       bool
	kind      string
	name      string
	image     string
	budget    time.Duration
	canary    bool
	noWalk    bool
	sweepNS   string
	from      map[nodeplace.Cloud]*string // --from-CLOUD, each provider's
	noCloud   bool
	trace     bool
	page      int64
	streams   Streams
	o         diagnose.Options
	liveAWS   awsaudit.LiveOptions
	liveGCP   gcpaudit.LiveOptions
}

func newDiagnoseCommand(s Streams) *cobra.Command {
	o := &diagnoseOptions{
		loading:   clientcmd.NewDefaultClientConfigLoadingRules(),
		overrides: &clientcmd.ConfigOverrides{},
		streams:   s,
	}
	cmd := &cobra.Command{
		Use:     "diagnose [pod|deployment|statefulset|daemonset|replicaset|job NAME]",
		Short:   "From ImagePullBackOff to the broken link, the object to change and the proof, in one command",
		Long:    diagnoseLong,
		Example: diagnoseExample,
		Args:    cobra.MaximumNArgs(2),
		RunE:    runE(o),
	}
	f := cmd.Flags()
	o.out.addFlag(cmd)
	f.BoolVarP(&o.all, "all-namespaces", "A", false, "diagnose pull failures in every namespace")
	f.StringVar(&o.image, "image", "", "the image to diagnose when several fail, or to walk when nothing fails")
	f.DurationVar(&o.budget, "budget", diagnose.DefaultBudget, "bound of the whole diagnosis; the walk gets what reading left")
	f.BoolVar(&o.canary, "canary", false, "the walk also pulls the image with the real kubelet on each node")
	f.BoolVar(&o.noWalk, "no-walk", false, "create no Pods: answer from the events and the audit")
	f.BoolVar(&o.trace, "trace", false, "the walk's probes trace where the packets stop (sweep --trace): the answer names the hop where a failing node's path parts from a healthy one's")
	f.StringVar(&o.sweepNS, "sweep-namespace", DefaultSweepNamespace, "where the walk's Pods run (deploy/sweep/ creates it, with the Pod Security label hostNetwork needs)")
	f.StringVar(&o.o.Sweep.ProbeImage, "image-for-probe", "", "pullpath's node-side image the probe Pods run (default: "+NodeImage+":VERSION); a registry the nodes reach")
	f.StringVar(&o.o.Sweep.CertsDir, "node-certs-dir", "", "a registry folder on the nodes (hosts.toml, CAs) to walk with instead of the runtime's own configuration, mounted into the walk's Pods (default: each node's runtime config, found under its /etc and /var/lib)")
	f.StringVar(&o.o.Sweep.DockerCerts, "node-docker-certs-dir", "", "a docker certs.d on the nodes, read with --node-certs-dir (default: none beyond the runtime's own configuration)")
	f.BoolVar(&o.o.Sweep.CheckUpstream, "check-upstream", true, "when a node's hosts.toml mirror or cache served, the walk also tries the upstream registry: a cache hiding a broken upstream is named")
	f.StringArrayVar(&o.o.Sweep.PullSecrets, "pull-secret", nil, "imagePullSecret in --sweep-namespace: the canary's and the probe Pod's, and the probe's credentials; repeatable")
	f.BoolVar(&o.o.UsePullSecrets, "use-pull-secrets", false, "also walk with the failing Pods' own pull identity: Pods in their namespace with their imagePullSecrets and ServiceAccount (no Secret leaves its namespace; needs deploy/sweep/workload-identity.yaml's verbs there)")
	o.from = map[nodeplace.Cloud]*string{}
	for _, p := range clouds.All {
		o.from[p.Cloud] = f.String(strings.TrimPrefix(p.Cloud.FromFlag(), "--"), "",
			fmt.Sprintf("the `DIR` pullpath %s collect wrote (or the %s it reads): name the %s objects to change", p.Cloud, p.Outputs, p.Objects))
	}
	f.BoolVar(&o.noCloud, "no-cloud", false, "no live cloud audit: without a --from-* folder, the answer names the collect command instead")
	f.StringVar(&o.liveAWS.Profile, "profile", "", "AWS shared config profile of the live audit (default: $AWS_PROFILE, then default)")
	f.StringVar(&o.liveAWS.Region, "region", "", "AWS region of the live audit (default: the nodes' zone's region)")
	f.StringVar(&o.liveAWS.Cluster, "aws-cluster", "", "the EKS cluster of the live audit (default: the eks:cluster-name tag of the nodes' instances)")
	f.StringVar(&o.liveGCP.Project, "gcp-project", "", "the GKE cluster's project of the live audit (default: the project of the nodes' gce:// providerIDs)")
	f.StringVar(&o.liveGCP.Location, "gcp-location", "", "the GKE cluster's region or zone of the live audit (default: the goog-k8s-cluster-location label of the nodes' instances)")
	f.StringVar(&o.liveGCP.Cluster, "gcp-cluster", "", "the GKE cluster of the live audit (default: the goog-k8s-cluster-name label of the nodes' instances)")
	f.Int64Var(&o.page, "page-size", 500, "objects per List call against the API server")
	f.StringVar(&o.loading.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	clientcmd.BindOverrideFlags(o.overrides, f, clientcmd.RecommendedConfigOverrideFlags(""))
	return cmd
}

func (o *diagnoseOptions) Complete(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		if _, ok := cluster.Kinds[strings.ToLower(args[0])]; ok {
			return fmt.Errorf("%s: a name is needed: diagnose %s NAME", args[0], args[0])
		}
		k, n, ok := strings.Cut(args[0], "/")
		if !ok {
			return fmt.Errorf("%q: want KIND NAME (pod, deployment, statefulset, daemonset, replicaset, job) or no argument", args[0])
		}
		o.kind, o.name = k, n
	case 2:
		o.kind, o.name = args[0], args[1]
	}
	if o.o.Sweep.ProbeImage == "" {
		o.o.Sweep.ProbeImage = NodeImage + ":" + imageTag()
	}
	if o.trace {
		o.o.Sweep.ProbeArgs = append(o.o.Sweep.ProbeArgs, "--trace")
	}
	return nil
}

func (o *diagnoseOptions) Validate() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	if o.kind != "" {
		if _, ok := cluster.Kinds[strings.ToLower(o.kind)]; !ok {
			return fmt.Errorf("unknown kind %q: want pod, deployment, statefulset, daemonset, replicaset or job", o.kind)
		}
		if o.all {
			return errors.New("-A diagnoses every namespace: it takes no KIND NAME")
		}
	}
	if o.budget < 15*time.Second {
		return fmt.Errorf("--budget %s: want at least 15s (the walk needs Pods to start)", o.budget)
	}
	for flag, img := range map[string]string{"--image": o.image, "--image-for-probe": o.o.Sweep.ProbeImage} {
		if img == "" {
			continue
		}
		if _, err := reference.ParseNormalizedNamed(img); err != nil {
			return fmt.Errorf("%s %q: %v: want [HOST[:PORT]/]REPOSITORY[:TAG][@sha256:DIGEST]", flag, img, err)
		}
	}
	if o.page <= 0 {
		return fmt.Errorf("--page-size %d: want a positive number", o.page)
	}
	for _, c := range nodeplace.Clouds {
		dir := o.fromDir(c)
		if dir == "" {
			continue
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("%s %s: want a folder written by `pullpath %s collect` (or the CLI outputs it reads)", c.FromFlag(), dir, c)
		}
	}
	return nil
}

func (o *diagnoseOptions) Run(ctx context.Context) error {
	client, ns, _, err := kubeClient(o.loading, o.overrides)
	if err != nil {
		return err
	}
	auditors := map[nodeplace.Cloud]diagnose.Auditor{}
	for _, p := range clouds.All {
		if dir := o.fromDir(p.Cloud); dir != "" {
			auditors[p.Cloud] = p.Folder(dir)
		}
	}
	d := o.o
	d.Client = client
	d.Target = cluster.Target{Kind: o.kind, Name: o.name, Namespace: ns, AllNamespaces: o.all}
	d.Image, d.Budget, d.Canary, d.NoWalk, d.PageSize = o.image, o.budget, o.canary, o.noWalk, o.page
	d.Auditors = auditors
	if !o.noCloud {
		d.Live = &diagnose.Live{Options: map[nodeplace.Cloud]audit.Live{nodeplace.AWS: o.liveAWS, nodeplace.GCP: o.liveGCP}}
	}
	d.Sweep.Namespace = o.sweepNS
	d.Sweep.RunID = sweep.NewRunID()
	if isTerminal(o.streams.ErrOut) {
		d.Progress = func(format string, args ...any) {
			fmt.Fprintf(o.streams.ErrOut, "\r\033[K"+format, args...)
		}
	}
	r, err := diagnose.Run(ctx, d)
	if d.Progress != nil {
		fmt.Fprint(o.streams.ErrOut, "\r\033[K")
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("diagnose interrupted; every Pod of its walk was deleted")
		}
		return err
	}
	return o.out.finish(o.streams.Out, r)
}

// fromDir is the --from-CLOUD folder given for c, or "".
func (o *diagnoseOptions) fromDir(c nodeplace.Cloud) string {
	if p := o.from[c]; p != nil {
		return *p
	}
	return ""
}
