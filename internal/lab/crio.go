package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// prepareCRIO writes a CRI-O node's files under its own root
// (runDir/node/root), as a node at / keeps them: the registry's
// [[registry]] with the scenario's mirrors in
// /etc/containers/registries.conf.d/50-lab.conf, and the lab CA as
// /etc/containers/certs.d/HOST:PORT/ca.crt of the registry and of each
// mirror (when the node trusts it), and /etc/crio/crio.conf. The probe
// finds and reads them with --host-root, containers/image (cimagepull)
// with its root.
func prepareCRIO(t *scenario.Scenario, runDir string, env *Env) error {
	if !t.Node.IsCRIO() {
		return nil
	}
	root := filepath.Join(runDir, "node", "root")
	conf := filepath.Join(root, "etc", "containers", "registries.conf.d", "50-lab.conf")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(conf, []byte(RegistriesConf(t)), 0o644); err != nil {
		return err
	}
	// containers/image's signature policy, as a node's package ships it:
	// without one CRI-O pulls nothing.
	policy := filepath.Join(root, "etc", "containers", "policy.json")
	if err := os.WriteFile(policy, []byte(`{"default": [{"type": "insecureAcceptAnything"}]}`+"\n"), 0o644); err != nil {
		return err
	}
	// CRI-O's own config, where its package puts it: the probe finds the
	// node's runtime by it, as on a node where crio is not seen running.
	crioConf := filepath.Join(root, "etc", "crio", "crio.conf")
	if err := os.MkdirAll(filepath.Dir(crioConf), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(crioConf, []byte("# written by pullpath lab for scenario "+t.Name+"\n[crio.image]\npause_image = \"registry.k8s.io/pause:3.10\"\n"), 0o644); err != nil {
		return err
	}
	if env.CAFile != "" {
		ca, err := os.ReadFile(env.CAFile)
		if err != nil {
			return err
		}
		hosts := []string{t.RegistryKey()}
		if t.Mirrors != nil {
			for _, m := range t.Mirrors.Hosts {
				hosts = append(hosts, m.HostPort())
			}
		}
		for _, h := range hosts {
			d := filepath.Join(root, "etc", "containers", "certs.d", h)
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(d, "ca.crt"), ca, 0o644); err != nil {
				return err
			}
		}
	}
	env.NodeRoot = root
	return nil
}

// RegistriesConf is a CRI-O node's registries.conf.d file: the registry
// as a [[registry]] (blocked when node.crio says so), each mirror of the
// scenario a [[registry.mirror]] in order (with node.crio's
// pull-from-mirror); a plain-HTTP service is insecure = true, the only
// way containers/image speaks HTTP.
func RegistriesConf(t *scenario.Scenario) string {
	var b strings.Builder
	c := t.Node.CRIO
	if c == nil {
		c = &scenario.NodeCRIO{}
	}
	fmt.Fprintf(&b, "# written by pullpath lab for scenario %s\n[[registry]]\nlocation = %q\n", t.Name, t.RegistryKey())
	if c.Blocked {
		b.WriteString("blocked = true\n")
	}
	if t.Registry.TLS == "none" {
		b.WriteString("insecure = true\n")
	}
	if t.Mirrors != nil {
		for _, m := range t.Mirrors.Hosts {
			fmt.Fprintf(&b, "\n[[registry.mirror]]\nlocation = %q\n", m.HostPort())
			if c.PullFromMirror != "" {
				fmt.Fprintf(&b, "pull-from-mirror = %q\n", c.PullFromMirror)
			}
			if m.TLS == "none" {
				b.WriteString("insecure = true\n")
			}
		}
	}
	return b.String()
}

// crioProbeArgs makes the probe a CRI-O node's: step 0 finds CRI-O from
// the node's files (--host-root ROOT; no --runtime) and reads them as
// CRI-O does, and neither containerd's folders nor an extra CA stand in
// for them.
func crioProbeArgs(argv []string, env *Env) []string {
	for _, f := range []string{"--certs-dir", "--docker-certs-dir", "--registry-ca"} {
		argv = withoutFlag(argv, f)
	}
	return append(argv, "--host-root", env.NodeRoot)
}
