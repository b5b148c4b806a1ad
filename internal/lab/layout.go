package lab

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// A lab containerd node laid out as a distribution does it
// (node.containerd): its config and registry folders lie under the node's
// own root (runDir/node/root) at their node paths. The probe reads them
// with --host-root and no --certs-dir (step 0 finds the layout on disk);
// the real containerd runs on the same files in a mount namespace where
// they lie at those paths (crirun.Options.ConfigFile, NodeRoot).

// nodeCA is where a layout node keeps the lab CA (a node path).
const nodeCA = "/etc/lab/ca.crt"

// layoutFiles is where each layout keeps containerd's config and the
// registry folder it names.
var layoutFiles = map[string]struct{ config, hostsDir string }{
	scenario.LayoutDebian:       {"/etc/containerd/config.toml", "/etc/containerd/certs.d"},
	scenario.LayoutK3s:          {"/var/lib/rancher/k3s/agent/etc/containerd/config.toml", "/var/lib/rancher/k3s/agent/etc/containerd/certs.d"},
	scenario.LayoutTalos:        {"/etc/cri/containerd.toml", "/etc/cri/conf.d/hosts"},
	scenario.LayoutBottlerocket: {"/etc/containerd/config.toml", ""},
	scenario.LayoutContainerd2:  {"/etc/containerd/config.toml", "/etc/containerd/certs.d:/etc/docker/certs.d"},
}

// prepareLayout writes a layout node's files and points env at them.
func prepareLayout(t *scenario.Scenario, runDir string, env *Env) error {
	c := t.Node.Containerd
	if c == nil {
		return nil
	}
	root := filepath.Join(runDir, "node", "root")
	write := func(p, content string) error {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		return os.WriteFile(full, []byte(content), 0o644)
	}
	ca := ""
	if env.CAFile != "" {
		b, err := os.ReadFile(env.CAFile)
		if err != nil {
			return err
		}
		if err := write(nodeCA, string(b)); err != nil {
			return err
		}
		ca = nodeCA
	}
	lf := layoutFiles[c.Layout]
	configPath := lf.hostsDir
	if c.ConfigPath != "" {
		configPath = c.ConfigPath
	}
	inline := c.Mirrors == "inline" || c.Layout == scenario.LayoutBottlerocket
	files := map[string]string{}
	reg := layoutRegistry(t, c, inline, configPath, ca)
	switch c.Layout {
	case scenario.LayoutTalos:
		files[lf.config] = talosContainerdToml(t)
		files["/etc/cri/conf.d/cri.toml"] = fmt.Sprintf("# written by pullpath lab for scenario %s (Talos renders it from the machine config's registries)\n[plugins]\n  [plugins.'io.containerd.cri.v1.images']\n%s", t.Name, reg)
	default:
		files[lf.config] = layoutConfig(t, c, reg)
	}
	if !inline {
		dir := strings.Split(configPath, ":")[0]
		host := t.RegistryKey()
		if c.DefaultHost {
			host = "_default"
		}
		hd := path.Join(dir, hostDirName(host))
		if t.Mirrors != nil {
			files[path.Join(hd, "hosts.toml")] = MirrorsHostsToml(t, t.Mirrors.Hosts, ca)
		} else if ca != "" && t.Registry.TLS != "none" {
			files[path.Join(hd, "ca.crt")] = readString(env.CAFile)
		}
	}
	if c.Decoy {
		files[path.Join("/etc/containerd/certs.d", hostDirName(t.RegistryKey()), "hosts.toml")] = fmt.Sprintf(
			"# written by pullpath lab for scenario %s: what an operator wrote; this layout's containerd never reads it\n[host.\"https://decoy-mirror.invalid\"]\n  capabilities = [\"pull\", \"resolve\"]\n", t.Name)
	}
	for p, content := range files {
		if err := write(p, content); err != nil {
			return err
		}
	}
	if c.Auth {
		// the credentials are the runtime's own (registry.configs), not
		// the kubelet's: its docker config holds none
		if err := os.WriteFile(env.DockerConfig, []byte("{\"auths\":{}}\n"), 0o600); err != nil {
			return err
		}
	}
	env.NodeRoot = root
	env.ContainerdConfig = lf.config
	env.Containerd = c.ContainerdBinary()
	env.CertsDir = "" // the layout's files, not the mirrors' certs.d
	return nil
}

// hostDirName is containerd's folder name for a registry: HOST_PORT_ for a
// host with a port (hostDirectory), which 1.6 through 2.x read first.
func hostDirName(host string) string {
	if i := strings.LastIndex(host, ":"); i > 0 && host != "_default" {
		return host[:i] + "_" + host[i+1:] + "_"
	}
	return host
}

func readString(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// layoutConfig is the layout's main config: the distribution's own keys
// (the opt plugin under /var/lib as Debian and k3s put it; containerd
// takes --address, --root and --state as flags, as k3s passes them), the
// NRI plugin off on containerd 2 (its socket would be the machine's
// /var/run/nri), then the registry section.
func layoutConfig(t *scenario.Scenario, c *scenario.NodeContainerd, reg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# written by pullpath lab for scenario %s: the %s layout\n", t.Name, c.Layout)
	v3 := c.ContainerdBinary() == scenario.Containerd2
	switch {
	case v3:
		b.WriteString("version = 3\ndisabled_plugins = ['io.containerd.nri.v1.nri']\n\n")
		fmt.Fprintf(&b, "[plugins.'io.containerd.internal.v1.opt']\n  path = %q\n\n", layoutOpt(c))
		b.WriteString("[plugins.'io.containerd.cri.v1.images']\n")
		if c.DiscardUnpackedLayers {
			b.WriteString("  discard_unpacked_layers = true\n")
		}
		b.WriteString(reg)
	default:
		b.WriteString("version = 2\n\n")
		fmt.Fprintf(&b, "[plugins.\"io.containerd.internal.v1.opt\"]\n  path = %q\n\n", layoutOpt(c))
		b.WriteString("[plugins.\"io.containerd.grpc.v1.cri\"]\n" + reg)
	}
	return b.String()
}

func layoutOpt(c *scenario.NodeContainerd) string {
	if c.Layout == scenario.LayoutK3s {
		return "/var/lib/rancher/k3s/agent/containerd"
	}
	return "/var/lib/containerd/opt"
}

// talosContainerdToml is Talos's /etc/cri/containerd.toml (hack/cri-containerd.toml):
// version 3, importing /etc/cri/conf.d/cri.toml.
func talosContainerdToml(t *scenario.Scenario) string {
	return fmt.Sprintf(`# written by pullpath lab for scenario %s: Talos's /etc/cri/containerd.toml (hack/cri-containerd.toml)
version = 3

disabled_plugins = [
    "io.containerd.internal.v1.tracing",
    "io.containerd.nri.v1.nri",
    "io.containerd.tracing.processor.v1.otlp",
]

imports = [
    "/etc/cri/conf.d/cri.toml",
]

[plugins.'io.containerd.internal.v1.opt']
  path = "/var/lib/containerd/opt"
`, t.Name)
}

// layoutRegistry is the registry section's body (under the CRI's images
// section header already written): config_path, or inline mirrors with
// each TLS host's CA and the node's credentials for the registry.
func layoutRegistry(t *scenario.Scenario, c *scenario.NodeContainerd, inline bool, configPath, ca string) string {
	v3 := c.ContainerdBinary() == scenario.Containerd2
	sec := `[plugins."io.containerd.grpc.v1.cri".registry]`
	prefix := `plugins."io.containerd.grpc.v1.cri".registry`
	if v3 {
		sec = `[plugins.'io.containerd.cri.v1.images'.registry]`
		prefix = `plugins.'io.containerd.cri.v1.images'.registry`
	}
	var b strings.Builder
	if !inline {
		fmt.Fprintf(&b, "  %s\n    config_path = %q\n", sec, configPath)
	} else {
		var eps []string
		tlsHosts := map[string]bool{}
		if t.Mirrors != nil {
			for _, m := range t.Mirrors.Hosts {
				eps = append(eps, fmt.Sprintf("%q", m.BaseURL()))
				if m.TLS != "none" {
					tlsHosts[m.HostPort()] = true
				}
			}
		}
		if len(eps) > 0 {
			fmt.Fprintf(&b, "\n[%s.mirrors.%q]\n  endpoint = [%s]\n", prefix, t.RegistryKey(), strings.Join(eps, ", "))
		}
		if t.Registry.TLS != "none" {
			tlsHosts[t.RegistryKey()] = true
		}
		if ca != "" && !v3 {
			for _, h := range sortedHosts(tlsHosts) {
				fmt.Fprintf(&b, "\n[%s.configs.%q.tls]\n  ca_file = %q\n", prefix, h, ca)
			}
		}
	}
	if c.Auth {
		cr := t.Node.Credentials
		fmt.Fprintf(&b, "\n[%s.configs.%q.auth]\n  username = %q\n  password = %q\n", prefix, t.RegistryKey(), cr.Username, cr.Password)
	}
	return b.String()
}

func sortedHosts(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
