package runtimecfg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The kubelet's pull identity: which credentials the kubelet hands the
// runtime for an image, in the order it tries them
// (pkg/kubelet/images/image_manager.go getPullCredentials,
// pkg/credentialprovider/secrets MakeDockerKeyring): every pull secret in
// one keyring (the most specific key first, secrets in the Pod's order
// within a key), then the credential provider plugins' answers in one
// keyring. No credential at all means one anonymous pull.

// KubeletIdentity is what a probe knows of the kubelet's credential
// sources.
type KubeletIdentity struct {
	PullSecrets []*PullSecret // in the Pod's imagePullSecrets order
	Plugins     *PluginRunner // nil without a credential provider config
	ConfigFrom  string        // how the credential provider config was found ("flag", "kubelet process 123 (/proc/123/cmdline)", ...)
}

// IdentityEvidence is what the lookup did, for the report (no secret).
type IdentityEvidence struct {
	Plugins     []PluginResult
	PluginErrs  []*PluginError
	Credentials []Credentials // in the kubelet's order
}

// Credentials returns the credentials the kubelet would try for image, in
// order, and what was run. A failing plugin is in PluginErrs, not an error:
// the kubelet goes on without it. The error is for a bad image name only.
func (k *KubeletIdentity) Credentials(ctx context.Context, image string) (*IdentityEvidence, error) {
	repo, err := KubeletImage(image)
	if err != nil {
		return nil, err
	}
	ev := &IdentityEvidence{}
	var secrets Keyring
	for _, ps := range k.PullSecrets {
		for _, e := range ps.Entries {
			secrets.Add(e.Key, e.Creds)
		}
	}
	ev.Credentials = append(ev.Credentials, secrets.Lookup(repo)...)
	if k.Plugins != nil {
		results, errs := k.Plugins.Provide(ctx, repo)
		var plugins Keyring
		for _, r := range results {
			for _, e := range r.Entries {
				plugins.Add(e.Key, e.Creds)
			}
		}
		ev.Plugins = results
		for _, e := range errs {
			var pe *PluginError
			if errors.As(e, &pe) {
				ev.PluginErrs = append(ev.PluginErrs, pe)
			}
		}
		ev.Credentials = append(ev.Credentials, plugins.Lookup(repo)...)
	}
	return ev, nil
}

// Conventional places of the kubelet's credential provider configuration.
var (
	eksProviderConfig = "/etc/eks/image-credential-provider/config.json"
	eksProviderBinDir = "/etc/eks/image-credential-provider"
	aksProviderConfig = "/var/lib/kubelet/credential-provider-config.yaml"
	aksProviderBinDir = "/var/lib/kubelet/credential-provider"
	// Files that hold the kubelet's flags: systemd units and drop-ins,
	// and the environment files they read (AKS /etc/default/kubelet, EKS
	// AL2 /etc/eks, RHEL /etc/sysconfig/kubelet).
	kubeletFlagFiles = []string{
		"/etc/systemd/system/kubelet.service",
		"/etc/systemd/system/kubelet.service.d/*.conf",
		"/usr/lib/systemd/system/kubelet.service",
		"/usr/lib/systemd/system/kubelet.service.d/*.conf",
		"/lib/systemd/system/kubelet.service",
		"/etc/default/kubelet",
		"/etc/sysconfig/kubelet",
		"/etc/eks/kubelet/environment",
	}
	reProviderConfig = regexp.MustCompile(`--image-credential-provider-config(?:=|\s+)["']?([^\s"']+)`)
	reProviderBinDir = regexp.MustCompile(`--image-credential-provider-bin-dir(?:=|\s+)["']?([^\s"']+)`)
)

// KubeletProviderFlags are the kubelet's two flags, and where they were
// found.
type KubeletProviderFlags struct {
	Config, BinDir string // host paths, prefixed with the root given
	From           string
}

// DetectKubeletProvider finds the kubelet's credential provider flags on
// the node whose filesystem is at root ("/" on the node itself, "/host" in
// a Pod with the host mounted read-only): the running kubelet's
// /proc/PID/cmdline first, then its systemd unit and environment files,
// then the EKS and AKS conventional paths. ok is false when none names a
// config that exists.
func DetectKubeletProvider(root string) (KubeletProviderFlags, bool) {
	if root == "" {
		root = "/"
	}
	at := func(p string) string { return filepath.Join(root, p) }
	exists := func(p string) bool { _, err := os.Stat(at(p)); return err == nil }
	found := func(cfg, bin, from string) (KubeletProviderFlags, bool) {
		return KubeletProviderFlags{Config: at(cfg), BinDir: at(bin), From: from}, true
	}
	// 1. The running kubelet.
	procs, _ := filepath.Glob(at("/proc/[0-9]*/cmdline"))
	sort.Strings(procs)
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(args[0]) != "kubelet" {
			continue
		}
		line := strings.Join(args, " ")
		if cfg, bin := flagValue(reProviderConfig, line), flagValue(reProviderBinDir, line); cfg != "" {
			return found(cfg, bin, fmt.Sprintf("the running kubelet's flags (%s)", strings.TrimPrefix(p, strings.TrimSuffix(root, "/"))))
		}
	}
	// 2. The kubelet's unit and environment files.
	for _, pat := range kubeletFlagFiles {
		files, _ := filepath.Glob(at(pat))
		sort.Strings(files)
		for _, f := range files {
			b, err := readBounded(f, 1<<20)
			if err != nil {
				continue
			}
			if cfg, bin := flagValue(reProviderConfig, string(b)), flagValue(reProviderBinDir, string(b)); cfg != "" {
				return found(cfg, bin, "the kubelet's flags in "+strings.TrimPrefix(f, strings.TrimSuffix(root, "/")))
			}
		}
	}
	// 3. Where EKS and AKS put them.
	switch {
	case exists(eksProviderConfig):
		return found(eksProviderConfig, eksProviderBinDir, "the EKS convention ("+eksProviderConfig+")")
	case exists(aksProviderConfig):
		return found(aksProviderConfig, aksProviderBinDir, "the AKS convention ("+aksProviderConfig+")")
	}
	return KubeletProviderFlags{}, false
}

func flagValue(re *regexp.Regexp, s string) string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return m[1]
}
