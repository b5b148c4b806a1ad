package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
)

// TestProbeNamesRuntimeAndFile: `pullpath probe` on a k3s, rke2,
// Talos-style, Bottlerocket-style and CRI-O node (the files as each lays
// them out, under --host-root; no --certs-dir) names the runtime and the
// file it read in its text and its JSON. The registry's CA is only in the
// layout's own registry configuration (k3s's certs.d beside its render,
// Talos's config_path from an import, Bottlerocket's inline
// registry.configs tls, CRI-O's /etc/containers/certs.d), so a pull that
// works proves the walk read that file, not another.
func TestProbeNamesRuntimeAndFile(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{Auth: labsvc.AuthNone})
	caPEM, err := os.ReadFile(st.Files.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	ca, host := string(caPEM), st.RegistryHost
	rancher := func(dist string) map[string]string {
		dir := "/var/lib/rancher/" + dist + "/agent/etc/containerd"
		return map[string]string{
			// k3s's and rke2's v2 template: config_path the certs.d beside it
			dir + "/config.toml":                     "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"" + dir + "/certs.d\"\n",
			dir + "/certs.d/" + host + "/hosts.toml": fmt.Sprintf("server = \"https://%s\"\n[host.\"https://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = \"%s/certs.d/%s/ca.crt\"\n", host, host, dir, host),
			dir + "/certs.d/" + host + "/ca.crt":     ca,
			// what k3s ignores
			"/etc/containerd/certs.d/" + host + "/hosts.toml": "server = \"https://decoy.lab.example\"\n",
		}
	}
	tests := []struct {
		name          string
		files         map[string]string
		runtime, file string // JSON runtimeConfig.runtime, .configFile
		text          string // the text's runtime line
	}{
		{"k3s", rancher("k3s"), "containerd", "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
			"runtime: containerd (k3s)  /var/lib/rancher/k3s/agent/etc/containerd/config.toml"},
		{"rke2", rancher("rke2"), "containerd", "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
			"runtime: containerd (rke2)  /var/lib/rancher/rke2/agent/etc/containerd/config.toml"},
		{"talos", map[string]string{
			"/etc/cri/containerd.toml":                    "version = 3\nimports = [\"/etc/cri/conf.d/cri.toml\"]\n",
			"/etc/cri/conf.d/cri.toml":                    "[plugins.'io.containerd.cri.v1.images'.registry]\n  config_path = '/etc/cri/conf.d/hosts'\n",
			"/etc/cri/conf.d/hosts/" + host + "/ca.crt":   ca,
			"/etc/containerd/certs.d/" + host + "/ca.crt": "not read on Talos\n",
		}, "containerd", "/etc/cri/containerd.toml", "runtime: containerd (talos)  /etc/cri/containerd.toml"},
		{"bottlerocket", map[string]string{
			"/etc/containerd/config.toml": fmt.Sprintf("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.%q]\nendpoint = [\"https://%s\"]\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.%q.tls]\nca_file = \"/etc/pki/lab/ca.crt\"\n", host, host, host),
			"/etc/pki/lab/ca.crt":         ca,
		}, "containerd", "/etc/containerd/config.toml", "runtime: containerd  /etc/containerd/config.toml"},
		{"cri-o", map[string]string{
			// CRI-O packages since 1.29 ship crio.conf.d and no crio.conf
			"/etc/crio/crio.conf.d/10-crio.conf":          "[crio.image]\nsignature_policy = \"/etc/crio/policy.json\"\n",
			"/etc/crio/policy.json":                       `{"default": [{"type": "insecureAcceptAnything"}]}`,
			"/etc/containers/registries.conf":             fmt.Sprintf("[[registry]]\nprefix = %q\nlocation = %q\n", host, host),
			"/etc/containers/certs.d/" + host + "/ca.crt": ca,
		}, "cri-o", "/etc/crio/crio.conf", "runtime: cri-o  /etc/crio/crio.conf\n    found: no running runtime seen; the cri-o layout on disk (/etc/crio/crio.conf.d, no crio.conf)"},
	}
	for _, tt := range tests {
		root := testenv.NodeFS(t, tt.files)
		for _, format := range []string{"text", "json"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				code, out, errOut := runCLI(t, "", "probe", st.Ref(), "--host-root", root, "--nameserver", st.Nameserver(), "--hosts-file", st.Files.Hosts,
					"--platform", "linux/amd64", "--no-progress", "--connect-timeout", "2s", "-o", format)
				if code != 0 {
					t.Fatalf("exit %d, want 0: the layout's CA trusts the registry\n%s\n%s", code, out, errOut)
				}
				if format == "text" {
					if !strings.Contains(out, tt.text) {
						t.Errorf("text has no %q:\n%s", tt.text, out)
					}
					return
				}
				var rep report.ProbeReport
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatal(err)
				}
				rc := rep.RuntimeConfig
				if rc == nil || rc.Runtime != tt.runtime || rc.ConfigFile != tt.file || rc.HowFound == "" {
					t.Fatalf("runtimeConfig = %+v, want runtime %s, file %s, how found", rc, tt.runtime, tt.file)
				}
				if tt.runtime == "containerd" && rc.Layout != tt.name && tt.name != "bottlerocket" {
					t.Errorf("layout %q, want %q", rc.Layout, tt.name)
				}
			})
		}
	}
}
