package probeopts

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/pullpath/pullpath/internal/pull"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// identityFlags are probe's flags for the kubelet's own pull identity:
// its credential provider plugins (the kubelet's flag names) and pull
// secrets.
type identityFlags struct {
	providerConfig string
	providerBinDir string
	kubeletCreds   string // "" | auto
	hostRoot       string
	pullSecrets    []string

	id    *runtimecfg.KubeletIdentity
	ident report.ProbeIdentity
}

func (f *identityFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.providerConfig, "image-credential-provider-config", "", "the kubelet's CredentialProviderConfig file or directory: run its plugins for the image as the kubelet does")
	fs.StringVar(&f.providerBinDir, "image-credential-provider-bin-dir", "", "the directory of the credential provider plugin binaries (the kubelet's flag)")
	fs.StringVar(&f.kubeletCreds, "kubelet-credentials", "", "auto: find the kubelet's credential provider flags on this node (its process, its systemd unit, the EKS and AKS paths) and pull as the kubelet does")
	fs.StringVar(&f.hostRoot, "host-root", "/", "where the node's filesystem is (a Pod mounting the host read-only at /host: --host-root /host), for --kubelet-credentials auto and the runtime's proxy settings")
	fs.StringArrayVar(&f.pullSecrets, "pull-secret", nil, "a kubernetes.io/dockerconfigjson Secret (YAML or JSON), a bare .dockerconfigjson, or a Secret mounted as a volume (a directory), tried in the kubelet's order; repeatable, in the Pod's imagePullSecrets order")
}

func (f *identityFlags) used() bool {
	return f.providerConfig != "" || f.providerBinDir != "" || f.kubeletCreds != "" || len(f.pullSecrets) > 0
}

// complete reads the identity's inputs; every error is one line naming
// the file or flag.
func (f *identityFlags) complete(o *Options) error {
	if !f.used() {
		return nil
	}
	switch {
	case f.kubeletCreds != "" && f.kubeletCreds != "auto":
		return fmt.Errorf("--kubelet-credentials %q: want auto", f.kubeletCreds)
	case f.kubeletCreds == "auto" && f.providerConfig != "":
		return errors.New("--kubelet-credentials auto finds --image-credential-provider-config itself: give one or the other")
	case f.providerBinDir != "" && f.providerConfig == "":
		return errors.New("--image-credential-provider-bin-dir needs --image-credential-provider-config")
	case o.Pull.Username != "" || o.passwordStdin || o.Pull.DockerConfig != "":
		return errors.New("the kubelet's identity (--pull-secret, --image-credential-provider-config, --kubelet-credentials) replaces --username/--password-stdin and --docker-config: give one or the other")
	}
	f.id = &runtimecfg.KubeletIdentity{}
	for _, p := range f.pullSecrets {
		ps, err := runtimecfg.LoadPullSecret(p)
		if err != nil {
			return err
		}
		if ps.Skipped != "" {
			f.ident.Notes = append(f.ident.Notes, ps.Skipped)
		}
		f.id.PullSecrets = append(f.id.PullSecrets, ps)
	}
	cfg, bin, from := f.providerConfig, f.providerBinDir, "--image-credential-provider-config"
	if f.kubeletCreds == "auto" {
		flags, ok := runtimecfg.DetectKubeletProvider(f.hostRoot)
		if ok {
			cfg, bin, from = flags.Config, flags.BinDir, flags.From
		} else {
			f.ident.Notes = append(f.ident.Notes, "no credential provider config found on this node (no kubelet flag in /proc or its systemd unit, nothing at the EKS or AKS paths): the kubelet pulls with pull secrets or anonymously")
		}
	}
	if cfg != "" {
		c, err := runtimecfg.LoadCredentialProviderConfig(cfg)
		if err != nil {
			return err
		}
		timeout := runtimecfg.DefaultPluginTimeout
		if o.Timeout < timeout {
			timeout = o.Timeout
		}
		f.id.Plugins = &runtimecfg.PluginRunner{Config: c, BinDir: bin, Timeout: timeout}
		f.ident.ProviderConfig, f.ident.ProviderBinDir, f.ident.From = cfg, bin, from
	}
	return nil
}

// probe walks with the kubelet's identity when it was asked for.
func (f *identityFlags) probe(ctx context.Context, opts pull.Options) (*report.ProbeReport, error) {
	if f.id == nil {
		return pull.Probe(ctx, opts)
	}
	return pull.ProbeAsKubelet(ctx, opts, f.id, f.ident)
}

// PullSecrets are the pull secrets the walk pulls with, as Complete read
// them, in the kubelet's order (none without --pull-secret).
func (o *Options) PullSecrets() []*runtimecfg.PullSecret {
	if o.identity.id == nil {
		return nil
	}
	return o.identity.id.PullSecrets
}
