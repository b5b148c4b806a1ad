//go:build !fuzzonly

package runtimecfg

import (
	"strings"
	"testing"
)

// CRI-O's proxy comes from the same places as containerd's, with its own
// unit: OpenShift's Machine Config Operator writes the cluster proxy into
// /etc/systemd/system/crio.service.d/10-mco-default-env.conf. A
// containerd.service drop-in on the same node is not CRI-O's.
func TestDiscoverCRIOProxy(t *testing.T) {
	files := map[string]string{
		"usr/lib/systemd/system/crio.service": "[Service]\nEnvironmentFile=-/etc/sysconfig/crio\nExecStart=/usr/bin/crio $CRIO_CONFIG_OPTIONS\n",
		"etc/systemd/system/crio.service.d/10-mco-default-env.conf": "[Service]\n" +
			"Environment=HTTP_PROXY=http://proxy.corp:3128\nEnvironment=HTTPS_PROXY=http://proxy.corp:3128\n" +
			"Environment=NO_PROXY=.cluster.local,.svc,10.128.0.0/14,api-int.ocp.corp\n",
		"etc/systemd/system/containerd.service.d/http-proxy.conf": "[Service]\nEnvironment=HTTPS_PROXY=http://not-crio:1\n",
	}
	t.Run("from crio.service's drop-ins", func(t *testing.T) {
		d := discover(t, ProxyDiscoveryOptions{Root: nodeFS(t, files), Runtime: RuntimeCRIO})
		if d.Running != nil || d.Unit != "crio.service" {
			t.Fatalf("Running %+v, Unit %q: want crio.service's files", d.Running, d.Unit)
		}
		if s := d.Settings; s.HTTPS.Value != "http://proxy.corp:3128" || !strings.Contains(s.HTTPS.From, "10-mco-default-env.conf:3") || !strings.Contains(s.NoProxy.Value, "api-int.ocp.corp") {
			t.Errorf("Settings = %+v, want the MCO drop-in's proxy", s)
		}
	})
	t.Run("from the running crio, not a containerd beside it", func(t *testing.T) {
		root := nodeFS(t, files)
		fakeProc(t, root, "700", "containerd", "net:[4026531840]", "0::/system.slice/containerd.service", "HTTPS_PROXY=http://not-crio:1")
		fakeProc(t, root, "812", "crio", "net:[4026531840]", "0::/system.slice/crio.service", "HTTPS_PROXY=http://proxy.corp:3128", "NO_PROXY=.svc")
		d := discover(t, ProxyDiscoveryOptions{Root: root, Runtime: RuntimeCRIO})
		if d.Running == nil || d.Running.PID != 812 || d.Running.Comm != "crio" || d.Running.Unit != "crio.service" {
			t.Fatalf("Running = %+v, want crio pid 812 of crio.service", d.Running)
		}
		if s := d.Settings; s.HTTPS.Value != "http://proxy.corp:3128" || s.HTTPS.From != "/proc/812/environ" {
			t.Errorf("Settings = %+v, want crio's own environment", s)
		}
	})
}
