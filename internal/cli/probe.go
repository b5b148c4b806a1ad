package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/pull"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

var probeLong = `Walk the whole pull of IMAGE from this node's network namespace, the way the
container runtime does, and name the first broken link.

Run it ON THE NODE (or in a hostNetwork Pod with dnsPolicy: Default and the
node's /etc mounted): a Pod's own network and DNS prove nothing about the
runtime's pull.

In order: parse the reference; read the runtime's registry config (containerd
hosts.toml mirrors and CAs) and its proxy settings (the running containerd's
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
	streams       Streams
	opts          pull.Options
	nameservers   []string
	passwordStdin bool
	timeout       time.Duration
	noProgress    bool
	verdictFile   string
	identity      identityFlags // the kubelet's pull identity (probe_identity.go)
	proxy         proxyFlags    // the runtime's proxy (probe_proxy.go)
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
	f := cmd.Flags()
	o.addFlag(cmd)
	f.StringVar(&o.opts.Platform, "platform", "", "platform to select from an image index, os/arch[/variant] (default: this node's)")
	f.StringVar(&o.opts.Node, "node", "", "node name to put in the report (default: the hostname)")
	f.StringVar(&o.opts.Net.ResolvConf, "resolv-conf", "/etc/resolv.conf", "the node's resolv.conf")
	f.StringVar(&o.opts.Net.HostsFile, "hosts-file", "/etc/hosts", "the node's hosts file")
	f.StringArrayVar(&o.nameservers, "nameserver", nil, "query this nameserver (HOST or HOST:PORT) instead of resolv.conf's; repeatable")
	f.StringVar(&o.opts.CertsDir, "certs-dir", "/etc/containerd/certs.d", "containerd registry config_path (HOST/hosts.toml, CAs)")
	f.StringVar(&o.opts.ContainerdConfig, "containerd-config", "/etc/containerd/config.toml", "containerd's config, read for image_pull_progress_timeout, the limit a hosts.toml mirror chain is held against (unreadable: said unknown)")
	f.BoolVar(&o.opts.CheckUpstream, "check-upstream", false, "when a hosts.toml mirror or cache served, also walk the upstream registry: a cache hiding a broken upstream is a warning")
	f.StringVar(&o.opts.DockerCertsDir, "docker-certs-dir", "/etc/docker/certs.d", "docker certs.d (HOST/ca.crt, client certs)")
	f.StringArrayVar(&o.opts.ExtraCAs, "registry-ca", nil, "extra CA file to trust for every host of the pull; repeatable")
	f.StringVar(&o.opts.DockerConfig, "docker-config", "", "docker config.json with auths/credHelpers (default: none, anonymous)")
	f.StringVar(&o.opts.Username, "username", "", "registry user name (with --password-stdin)")
	f.BoolVar(&o.passwordStdin, "password-stdin", false, "read the registry password or token from standard input")
	f.BoolVar(&o.opts.ExpectPrivate, "expect-private", false, "every host must resolve to a private address (private endpoints / private link)")
	f.BoolVar(&o.opts.Quick, "quick", false, "fetch only the first bytes of each blob (no digest verification)")
	f.DurationVar(&o.opts.Net.DNSTimeout, "dns-timeout", pull.Defaults.DNS, "budget of each DNS query")
	f.DurationVar(&o.opts.Net.ConnectTimeout, "connect-timeout", pull.Defaults.Connect, "budget of each TCP connect, per address")
	f.DurationVar(&o.opts.Net.TLSTimeout, "tls-timeout", pull.Defaults.TLS, "budget of each TLS handshake")
	f.DurationVar(&o.opts.HTTPTimeout, "http-timeout", pull.Defaults.HTTP, "budget for a server to start answering a request")
	f.DurationVar(&o.opts.StallTimeout, "stall-timeout", pull.Defaults.Stall, "a blob download that sends no byte for this long is stalled")
	f.IntVar(&o.opts.Concurrency, "concurrency", pull.Defaults.Concurrency, "blobs downloaded at once")
	f.DurationVar(&o.timeout, "timeout", pull.Defaults.Probe, "budget of the whole probe")
	f.BoolVar(&o.noProgress, "no-progress", false, "no progress bar on stderr")
	o.identity.add(f)
	o.proxy.add(f)
	f.StringVar(&o.verdictFile, "verdict-file", "", "also write the compact verdict JSON (under 4 KiB) to FILE, e.g. a Pod's /dev/termination-log (sweep reads it)")
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
	o.opts.Image = args[0]
	o.opts.Net.Nameservers = o.nameservers
	if o.passwordStdin {
		line, err := bufio.NewReader(o.streams.In).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("--password-stdin: reading standard input: %v", err)
		}
		o.opts.Password = strings.TrimRight(line, "\r\n")
		if o.opts.Password == "" {
			return errors.New("--password-stdin: standard input is empty, want the password or token")
		}
	}
	if err := o.proxy.complete(cmd, o, o.identity.hostRoot); err != nil {
		return err
	}
	return o.identity.complete(o)
}

func (o *probeOptions) Validate() error {
	if err := o.output.validate(); err != nil {
		return err
	}
	if o.opts.Username != "" && !o.passwordStdin {
		return errors.New("--username needs --password-stdin (a password on the command line would show in ps and shell history)")
	}
	if o.passwordStdin && o.opts.Username == "" {
		return errors.New("--password-stdin needs --username (for ECR: --username AWS)")
	}
	for name, d := range map[string]time.Duration{"--dns-timeout": o.opts.Net.DNSTimeout, "--connect-timeout": o.opts.Net.ConnectTimeout, "--tls-timeout": o.opts.Net.TLSTimeout, "--http-timeout": o.opts.HTTPTimeout, "--stall-timeout": o.opts.StallTimeout, "--timeout": o.timeout} {
		if d <= 0 {
			return fmt.Errorf("%s %s: want a positive duration like 5s", name, d)
		}
	}
	if o.opts.Concurrency < 1 || o.opts.Concurrency > 32 {
		return fmt.Errorf("--concurrency %d: want 1 to 32", o.opts.Concurrency)
	}
	return nil
}

func (o *probeOptions) Run(ctx context.Context) error {
	s := o.streams
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	var bar *progressBar
	if !o.noProgress && isTerminal(s.ErrOut) {
		bar = &progressBar{w: s.ErrOut}
		o.opts.Progress = bar.update
	}
	rep, err := o.identity.probe(ctx, o.opts)
	bar.clear()
	if err != nil {
		o.writeVerdict(report.ProbeSummary{V: report.ProbeSummaryVersion, Node: o.opts.Node, Image: o.opts.Image,
			Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "probe error: " + err.Error()})
		return err
	}
	if err := o.writeVerdict(report.SummarizeProbe(rep)); err != nil {
		return err
	}
	return o.finish(s.Out, rep)
}

// writeVerdict writes the compact verdict to --verdict-file, if set.
func (o *probeOptions) writeVerdict(s report.ProbeSummary) error {
	if o.verdictFile == "" {
		return nil
	}
	if err := os.WriteFile(o.verdictFile, s.Marshal(), 0o644); err != nil {
		return fmt.Errorf("--verdict-file: %v", err)
	}
	return nil
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
