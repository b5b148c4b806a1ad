// Package probeopts is the probe's command line without a CLI framework:
// its flags (pflag, kubectl's style), the checks of what they say, and the
// walk they ask for (with the kubelet's pull identity when asked). Both
// `pullpath probe` and the node-side `pullpath-agent probe` (what sweep's
// and diagnose's Pods run) take their flags from here, so the two accept
// exactly the same arguments; each prints the report its own way.
//
// It is node-side code: no cobra, no printers, no client-go (the
// dependency guard, internal/depguard, says so).
package probeopts

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pullpath/pullpath/internal/probesummary"
	"github.com/pullpath/pullpath/internal/pull"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Options are the probe's flags and what Complete makes of them.
type Options struct {
	Pull pull.Options
	// Timeout is the budget of the whole probe.
	Timeout time.Duration
	// NoProgress turns the progress bar off (the CLI draws one on a TTY).
	NoProgress bool
	// VerdictFile also gets the compact verdict (a Pod's
	// /dev/termination-log, which sweep reads).
	VerdictFile string

	nameservers   []string
	passwordStdin bool
	identity      identityFlags // the kubelet's pull identity (identity.go)
	proxy         proxyFlags    // the runtime's proxy (proxy.go)
	runtime       runtimeFlags  // the runtime and its config (runtime.go)
}

// AddFlags registers every probe flag but -o, whose formats are the
// printer's.
func (o *Options) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Pull.Platform, "platform", "", "platform to select from an image index, os/arch[/variant] (default: this node's)")
	f.StringVar(&o.Pull.Node, "node", "", "node name to put in the report (default: the hostname)")
	f.StringVar(&o.Pull.Net.ResolvConf, "resolv-conf", "/etc/resolv.conf", "the node's resolv.conf")
	f.StringVar(&o.Pull.Net.HostsFile, "hosts-file", "/etc/hosts", "the node's hosts file")
	f.StringArrayVar(&o.nameservers, "nameserver", nil, "query this nameserver (HOST or HOST:PORT) instead of resolv.conf's; repeatable")
	f.StringVar(&o.Pull.CertsDir, "certs-dir", "/etc/containerd/certs.d", "read this folder as containerd's registry config_path (HOST/hosts.toml, CAs) instead of the runtime's own registry configuration (default: the runtime's, found on the node)")
	f.StringVar(&o.Pull.ContainerdConfig, "containerd-config", "/etc/containerd/config.toml", "containerd's config file to read, instead of finding it (as --runtime-config with --runtime containerd)")
	f.BoolVar(&o.Pull.CheckUpstream, "check-upstream", false, "when a hosts.toml mirror or cache served, also walk the upstream registry: a cache hiding a broken upstream is a warning")
	f.StringVar(&o.Pull.DockerCertsDir, "docker-certs-dir", "/etc/docker/certs.d", "docker certs.d (HOST/ca.crt, client certs), read with --certs-dir")
	f.StringArrayVar(&o.Pull.ExtraCAs, "registry-ca", nil, "extra CA file to trust for every host of the pull; repeatable")
	f.StringVar(&o.Pull.DockerConfig, "docker-config", "", "docker config.json with auths/credHelpers (default: none, anonymous)")
	f.StringVar(&o.Pull.Username, "username", "", "registry user name (with --password-stdin)")
	f.BoolVar(&o.passwordStdin, "password-stdin", false, "read the registry password or token from standard input")
	f.BoolVar(&o.Pull.ExpectPrivate, "expect-private", false, "every host must resolve to a private address (private endpoints / private link)")
	f.BoolVar(&o.Pull.Quick, "quick", false, "fetch only the first bytes of each blob (no digest verification)")
	f.DurationVar(&o.Pull.Net.DNSTimeout, "dns-timeout", pull.Defaults.DNS, "budget of each DNS query")
	f.DurationVar(&o.Pull.Net.ConnectTimeout, "connect-timeout", pull.Defaults.Connect, "budget of each TCP connect, per address")
	f.DurationVar(&o.Pull.Net.TLSTimeout, "tls-timeout", pull.Defaults.TLS, "budget of each TLS handshake")
	f.DurationVar(&o.Pull.HTTPTimeout, "http-timeout", pull.Defaults.HTTP, "budget for a server to start answering a request")
	f.DurationVar(&o.Pull.StallTimeout, "stall-timeout", pull.Defaults.Stall, "a blob download that sends no byte for this long is stalled")
	f.IntVar(&o.Pull.Concurrency, "concurrency", pull.Defaults.Concurrency, "blobs downloaded at once")
	f.DurationVar(&o.Pull.PullBudget, "pull-budget", pull.Defaults.PullBudget, "how long the whole pull may take on this node: a full walk whose time, projected from the rate measured per blob host, is longer warns (PULL_SLOW)")
	f.BoolVar(&o.Pull.Trace, "trace", false, "when the walk fails by a timeout, trace the failing address: TCP SYNs with a rising TTL name the last router that answered and the first that did not (no privilege needed; a few seconds)")
	f.DurationVar(&o.Pull.MTUBudget, "mtu-budget", pull.Defaults.MTU, "budget of the path MTU test run when a TLS handshake or a body stalls after TCP connected (clamped-MSS connections); 0 turns it off")
	f.DurationVar(&o.Timeout, "timeout", pull.Defaults.Probe, "budget of the whole probe")
	f.BoolVar(&o.NoProgress, "no-progress", false, "no progress bar on stderr")
	o.identity.add(f)
	o.proxy.add(f)
	o.runtime.add(f)
	f.StringVar(&o.VerdictFile, "verdict-file", "", "also write the compact verdict JSON (under 4 KiB) to FILE, e.g. a Pod's /dev/termination-log (sweep reads it)")
}

// Complete takes the IMAGE argument and reads what the flags (fs, the set
// AddFlags filled) point at: the password on stdin, the runtime's proxy
// settings, the kubelet's identity. Every error is one line naming the
// flag or file.
func (o *Options) Complete(fs *pflag.FlagSet, image string, stdin io.Reader) error {
	o.Pull.Image = image
	o.Pull.Net.Nameservers = o.nameservers
	if o.passwordStdin {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("--password-stdin: reading standard input: %v", err)
		}
		o.Pull.Password = strings.TrimRight(line, "\r\n")
		if o.Pull.Password == "" {
			return errors.New("--password-stdin: standard input is empty, want the password or token")
		}
	}
	// step 0 first: the runtime decides whose process and unit carry
	// the proxy
	if err := o.runtime.complete(fs, o, o.identity.hostRoot); err != nil {
		return err
	}
	if err := o.proxy.complete(fs, o, o.identity.hostRoot); err != nil {
		return err
	}
	return o.identity.complete(o)
}

// Validate checks the flags that Complete does not read.
func (o *Options) Validate() error {
	if o.Pull.Username != "" && !o.passwordStdin {
		return errors.New("--username needs --password-stdin (a password on the command line would show in ps and shell history)")
	}
	if o.passwordStdin && o.Pull.Username == "" {
		return errors.New("--password-stdin needs --username (for ECR: --username AWS)")
	}
	for name, d := range map[string]time.Duration{"--dns-timeout": o.Pull.Net.DNSTimeout, "--connect-timeout": o.Pull.Net.ConnectTimeout, "--tls-timeout": o.Pull.Net.TLSTimeout, "--http-timeout": o.Pull.HTTPTimeout, "--stall-timeout": o.Pull.StallTimeout, "--timeout": o.Timeout} {
		if d <= 0 {
			return fmt.Errorf("%s %s: want a positive duration like 5s", name, d)
		}
	}
	if o.Pull.PullBudget <= 0 {
		return fmt.Errorf("--pull-budget %s: want a positive duration like 5m", o.Pull.PullBudget)
	}
	if o.Pull.MTUBudget < 0 {
		return fmt.Errorf("--mtu-budget %s: want a duration like 10s, or 0 to turn the MTU test off", o.Pull.MTUBudget)
	}
	o.Pull.NoMTUTest = o.Pull.MTUBudget == 0
	if o.Pull.Concurrency < 1 || o.Pull.Concurrency > 32 {
		return fmt.Errorf("--concurrency %d: want 1 to 32", o.Pull.Concurrency)
	}
	return nil
}

// Walk runs the probe within --timeout (as the kubelet would pull, when
// its identity was asked for) and writes the compact verdict to
// --verdict-file: the walk's, or a probe error's when it could not walk.
func (o *Options) Walk(ctx context.Context) (*report.ProbeReport, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	rep, err := o.identity.probe(ctx, o.Pull)
	if err != nil {
		o.writeVerdict(probesummary.Summary{V: probesummary.Version, Node: o.Pull.Node, Image: o.Pull.Image,
			Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "probe error: " + err.Error()})
		return nil, err
	}
	if err := o.writeVerdict(probesummary.Of(rep)); err != nil {
		return nil, err
	}
	return rep, nil
}

// writeVerdict writes the compact verdict to --verdict-file, if set.
func (o *Options) writeVerdict(s probesummary.Summary) error {
	if o.VerdictFile == "" {
		return nil
	}
	if err := os.WriteFile(o.VerdictFile, s.Marshal(), 0o644); err != nil {
		return fmt.Errorf("--verdict-file: %v", err)
	}
	return nil
}
