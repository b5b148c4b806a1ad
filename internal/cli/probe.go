package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/probeopts"
	"github.com/pullpath/pullpath/internal/pull"
)

var probeLong = `Walk the whole pull of IMAGE from this node's network namespace, the way the
container runtime does, and name the first broken link.

Run it ON THE NODE (or in a hostNetwork Pod with dnsPolicy: Default and the
node's /etc mounted): a Pod's own network and DNS prove nothing about the
runtime's pull.

In order: find the runtime and the config file it reads (the running containerd
or crio's --config, else the layouts on disk: k3s, rke2, Talos, the snaps,
/etc/containerd, CRI-O) and read its registry config by its own rules
(containerd's imports, config_path folders and hosts.toml, inline mirrors and
credentials; CRI-O's registries.conf) and its proxy settings (the running containerd's
HTTPS_PROXY/NO_PROXY from /proc, else its systemd unit, drop-ins and
environment files, k3s/rke2 CONTAINERD_*_PROXY); resolve every host like the
node (hosts file, then each nameserver of resolv.conf, queried directly), or
through the proxy when NO_PROXY does not match it (the node resolves and
connects to the proxy, CONNECT is its own step, TLS runs through the tunnel);
connect to every address; TLS with the runtime's trust; GET /v2/; the token service; the
manifest (an index selects the node's platform); the config and every layer,
following every redirect host, downloading every byte and verifying digests
(nothing is written to disk). The first failure is the verdict; later steps
are skipped.

Exit codes, the verdict's repair direction:
  0  ok            the whole pull works from this node
` + exitHelp(conditionRows()...) + `
  1  usage or internal error; 2 a failure outside these directions
Every verdict code is listed in docs/verdicts.md.`

const probeExample = `  # On a node: why can't this node pull the image?
  pullpath probe 123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/api:1.4.2

  # Pull with the kubelet's own identity: find its credential provider (EKS
  # ecr-credential-provider, AKS acr-credential-provider) and run it as the kubelet does
  pullpath probe --kubelet-credentials auto ACCOUNT.dkr.ecr.REGION.amazonaws.com/app:1.0

  # The same with the kubelet's flags given, plus the Pod's pull secrets in its order
  pullpath probe --image-credential-provider-config /etc/eks/image-credential-provider/config.json \
    --image-credential-provider-bin-dir /etc/eks/image-credential-provider \
    --pull-secret regcred.yaml ACCOUNT.dkr.ecr.REGION.amazonaws.com/app:1.0

  # ECR credentials by hand
  aws ecr get-login-password | pullpath probe --username AWS --password-stdin ACCOUNT.dkr.ecr.REGION.amazonaws.com/app:1.0

  # The registry must resolve privately (interface endpoint / private link)
  pullpath probe --expect-private myacr.azurecr.io/team/app:2.0

  # Behind a proxy: the walk follows the running containerd's HTTPS_PROXY and
  # NO_PROXY; try another NO_PROXY before changing the node
  pullpath probe --no-proxy '.corp.example,registry.internal' registry.internal/app:1.0

  # The same walk direct, to compare
  pullpath probe --no-node-proxy registry.internal/app:1.0

  # A quick check of every endpoint without downloading whole layers
  pullpath probe --quick registry.example.com/big/image:latest

  # Machine-readable report for scripts and Jobs
  pullpath probe -o json nginx:1.27 | jq .verdict

  # A registry with mirrors in hosts.toml: every host in containerd's order,
  # which one served, what falling through cost; is the upstream behind the
  # cache still alive?
  pullpath probe --check-upstream -o json registry.example.com/app:1.0 | jq .chain`

type probeOptions struct {
	output
	streams Streams
	probeopts.Options
}

func newProbeCommand(s Streams) *cobra.Command {
	o := &probeOptions{streams: s}
	cmd := &cobra.Command{
		Use:     "probe IMAGE",
		Short:   "Walk the whole pull of IMAGE from this node and name the first broken link",
		Long:    probeLong,
		Example: probeExample,
		Args:    exactArgs("IMAGE"),
		RunE:    runE(o),
	}
	o.addFlag(cmd)
	o.AddFlags(cmd.Flags())
	return cmd
}

// exactArgs is cobra.ExactArgs(1) with an error that names the argument.
func exactArgs(name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s takes exactly one %s argument, got %d (see %s --help)", cmd.CommandPath(), name, len(args), cmd.CommandPath())
		}
		return nil
	}
}

func (o *probeOptions) Complete(cmd *cobra.Command, args []string) error {
	return o.Options.Complete(cmd.Flags(), args[0], o.streams.In)
}

func (o *probeOptions) Validate() error {
	if err := o.output.validate(); err != nil {
		return err
	}
	return o.Options.Validate()
}

func (o *probeOptions) Run(ctx context.Context) error {
	s := o.streams
	var bar *progressBar
	if !o.NoProgress && isTerminal(s.ErrOut) {
		bar = &progressBar{w: s.ErrOut}
		o.Pull.Progress = bar.update
	}
	rep, err := o.Walk(ctx)
	bar.clear()
	if err != nil {
		return err
	}
	return o.finish(s.Out, rep)
}

// progressBar draws one line on a terminal's stderr, at most 10 times a second.
type progressBar struct {
	w    io.Writer
	mu   sync.Mutex
	last time.Time
	used bool
}

func (b *progressBar) update(p pull.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.last) < 100*time.Millisecond && p.BlobsDone < p.Blobs {
		return
	}
	b.last = time.Now()
	b.used = true
	pct := 0.0
	if p.Total > 0 {
		pct = 100 * float64(p.Done) / float64(p.Total)
	}
	fmt.Fprintf(b.w, "\r\033[Kdownloading blobs %d/%d  %5.1f%%  %d MiB", p.BlobsDone, p.Blobs, pct, p.Done>>20)
}

func (b *progressBar) clear() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
