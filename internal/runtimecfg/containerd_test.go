package runtimecfg

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// testdata reads a file of testdata/containerd (each names its source).
func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "containerd", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dpkgStatus is a dpkg status file with one installed package.
func dpkgStatus(pkg, version string) string {
	return fmt.Sprintf("Package: %s\nStatus: install ok installed\nVersion: %s\n\nPackage: other\nStatus: install ok installed\nVersion: 1\n", pkg, version)
}

// hostList renders hosts as "scheme://host/path[mirror|server]" in order.
func hostList(hs []RegistryHost) string {
	var out []string
	for _, h := range hs {
		s := h.URL()
		switch {
		case h.Server:
			s += "[server]"
		case h.Mirror:
			s += "[mirror]"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func mustHosts(t *testing.T, rc *RuntimeConfig, image string) HostSet {
	t.Helper()
	ref, err := ParseReference(image)
	if err != nil {
		t.Fatal(err)
	}
	set, err := rc.Registry.Hosts(ref)
	if err != nil {
		t.Fatalf("Hosts(%s): %v", image, err)
	}
	return set
}

func warningOf(rc *RuntimeConfig, code verdict.Code) *ConfigWarning {
	for i := range rc.Warnings {
		if rc.Warnings[i].Code == code {
			return &rc.Warnings[i]
		}
	}
	return nil
}

// everything is every string of the discovery a report shows.
func everything(rc *RuntimeConfig) string {
	return fmt.Sprintf("%s %s %+v %+v %+v %q %q", rc.HowFound, rc.Override, rc.Candidates, rc.Sources, rc.Warnings, rc.Notes, rc.Files)
}

func TestContainerdDebian16IgnoresCertsD(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"/etc/containerd/config.toml":                    testdata(t, "debian-1.6.toml"),
		"/etc/containerd/certs.d/reg.example/hosts.toml": "[host.\"https://mirror.example\"]\n",
		"/var/lib/dpkg/status":                           dpkgStatus("containerd", "1.6.20~ds1-1+deb12u3"),
	})
	rc := discoverRuntime(t, root, RuntimeOptions{})
	if rc.Version != "1.6.20~ds1-1+deb12u3" || !strings.HasPrefix(rc.Rules, "containerd 1.6/1.7") {
		t.Fatalf("version %q rules %q, want Debian's 1.6 and its rules", rc.Version, rc.Rules)
	}
	set := mustHosts(t, rc, "reg.example/app:1")
	if got := hostList(set.Hosts); got != "https://reg.example/v2[server]" {
		t.Errorf("hosts = %s, want the registry alone: 1.6 without config_path reads no certs.d", got)
	}
	w := warningOf(rc, verdict.RuntimeConfigIgnored)
	if w == nil || w.Ignored != "/etc/containerd/certs.d/reg.example/hosts.toml" || !strings.Contains(w.Read, "sets no config_path") {
		t.Fatalf("warnings = %+v, want the certs.d hosts.toml named as ignored", rc.Warnings)
	}
}

func TestContainerdTalosImportsAndCredentials(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"/etc/cri/containerd.toml":                   testdata(t, "talos-containerd.toml"),
		"/etc/cri/conf.d/cri.toml":                   testdata(t, "talos-cri.toml"),
		"/etc/cri/conf.d/hosts/docker.io/hosts.toml": "[host.\"https://mirror.talos.example\"]\n  capabilities = [\"pull\", \"resolve\"]\n",
	})
	rc := discoverRuntime(t, root, RuntimeOptions{})
	if rc.Layout != "talos" || strings.Join(rc.Files, ",") != "/etc/cri/containerd.toml,/etc/cri/conf.d/cri.toml" {
		t.Fatalf("layout %q files %v, want talos reading its import", rc.Layout, rc.Files)
	}
	set := mustHosts(t, rc, "nginx:1.27")
	if got := hostList(set.Hosts); got != "https://mirror.talos.example/v2[mirror] https://registry-1.docker.io/v2[server]" {
		t.Errorf("hosts = %s, want the hosts.toml mirror under config_path, then Docker Hub", got)
	}
	a := set.Hosts[1].Auth
	if a == nil || a.Username != "root" || a.Password != "topsecret" {
		t.Fatalf("registry-1.docker.io auth = %v, want registry.configs' root (with its password, for the walk)", a)
	}
	if !strings.Contains(a.Source, "/etc/cri/conf.d/cri.toml:") {
		t.Errorf("auth source = %q, want the file and line", a.Source)
	}
	// some.host:123 has username, password, auth and identitytoken: the CRI's
	// ParseAuth takes the username and password first.
	if a := rc.Registry.(CertsDirs).Auth("some.host:123"); a == nil || a.Username != "root" || a.Password != "secret" || a.IdentityToken != "" {
		t.Errorf("some.host:123 auth = %v, want root with its password (ParseAuth's order)", a)
	}
	all := everything(rc)
	for _, secret := range []string{"topsecret", "secret\"", "token"} {
		if strings.Contains(all, secret) {
			t.Errorf("a secret (%s) shows in the discovery: %s", secret, all)
		}
	}
	var authSrc []string
	for _, s := range rc.Sources {
		if s.Kind == "configs.auth" {
			authSrc = append(authSrc, fmt.Sprintf("%s:%d %s %s", s.Path, s.Line, s.Registry, s.Detail))
		}
	}
	if want := "/etc/cri/conf.d/cri.toml:10 registry-1.docker.io user root from containerd config /etc/cri/conf.d/cri.toml:10"; len(authSrc) != 2 || authSrc[0] != want {
		t.Errorf("auth sources = %q, want first %q", authSrc, want)
	}
}

func TestContainerdBottlerocketInlineMirrors(t *testing.T) {
	root := nodeFS(t, map[string]string{"/etc/containerd/config.toml": testdata(t, "bottlerocket.toml")})
	rc := discoverRuntime(t, root, RuntimeOptions{})
	if _, ok := rc.Registry.(*inlineRegistry); !ok {
		t.Fatalf("registry = %T, want the inline mirrors", rc.Registry)
	}
	set := mustHosts(t, rc, "docker.io/library/busybox:1.36")
	if got, want := hostList(set.Hosts), "https://mirror.lab.example/v2[mirror] https://mirror2.lab.example:5000/v2[mirror] https://registry-1.docker.io/v2[server]"; got != want {
		t.Errorf("docker.io hosts = %s, want %s", got, want)
	}
	if got := set.Hosts[0].Source; got != "/etc/containerd/config.toml:43" {
		t.Errorf("mirror source = %q, want the endpoint's file and line", got)
	}
	if a := set.Hosts[0].Auth; a == nil || a.Username != "mirror-user" || a.Password != "mirror-s3cret-PASSWORD" {
		t.Errorf("mirror.lab.example auth = %v, want auth = base64 decoded", a)
	}
	if a := set.Hosts[2].Auth; a == nil || a.Username != "br-user" {
		t.Errorf("registry-1.docker.io auth = %v, want br-user", a)
	}
	set = mustHosts(t, rc, "quay.io/team/app:2")
	if got, want := hostList(set.Hosts), "https://catchall.lab.example/v2[mirror] https://quay.io/v2[server]"; got != want {
		t.Errorf("quay.io hosts = %s, want %s (the \"*\" mirror, then the registry)", got, want)
	}
	if all := everything(rc); strings.Contains(all, "PASSWORD") || strings.Contains(all, "bWlycm9y") {
		t.Errorf("a secret shows in the discovery: %s", all)
	}
}

func TestContainerdInlineRules(t *testing.T) {
	cfg := `version = 2
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."registry.lab.example:5000"]
  endpoint = ["http://localhost:5001", "https://registry.lab.example:5000/custom"]
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = ["https://registry-1.docker.io"]
[plugins."io.containerd.grpc.v1.cri".registry.configs."registry.lab.example:5000".tls]
  ca_file = "/etc/lab/ca.crt"
  insecure_skip_verify = true
`
	root := nodeFS(t, map[string]string{"/etc/containerd/config.toml": cfg})
	rc := discoverRuntime(t, root, RuntimeOptions{})
	set := mustHosts(t, rc, "registry.lab.example:5000/app:1")
	// the registry itself is an endpoint: nothing appended; a path is kept as written
	if got, want := hostList(set.Hosts), "http://localhost:5001/v2[mirror] https://registry.lab.example:5000/custom"; got != want {
		t.Errorf("hosts = %s, want %s", got, want)
	}
	if h := set.Hosts[1]; len(h.CAFiles) != 1 || h.CAFiles[0] != filepath.Join(root, "/etc/lab/ca.crt") || !h.SkipVerify {
		t.Errorf("registry TLS = %v skip %v, want configs' ca_file under the node's root and insecure_skip_verify", h.CAFiles, h.SkipVerify)
	}
	set = mustHosts(t, rc, "busybox")
	if got, want := hostList(set.Hosts), "https://registry-1.docker.io/v2 https://registry-1.docker.io/v2[server]"; got != want {
		t.Errorf("docker.io hosts = %s, want %s: registry-1.docker.io is not \"docker.io\", so containerd appends it again", got, want)
	}

	// containerd 2.x: no TLS from registry.configs, and it says so
	root = nodeFS(t, map[string]string{"/etc/containerd/config.toml": cfg, "/var/lib/dpkg/status": dpkgStatus("containerd.io", "2.0.5-1")})
	rc = discoverRuntime(t, root, RuntimeOptions{})
	set = mustHosts(t, rc, "registry.lab.example:5000/app:1")
	if h := set.Hosts[1]; len(h.CAFiles) != 0 || h.SkipVerify {
		t.Errorf("2.x: registry TLS = %v skip %v, want none", h.CAFiles, h.SkipVerify)
	}
	if w := warningOf(rc, verdict.RuntimeConfigIgnored); w == nil || w.Ignored != "/etc/containerd/config.toml:6" {
		t.Errorf("2.x warnings = %+v, want configs.tls at line 6 named as ignored", rc.Warnings)
	}
}

func TestContainerdMirrorsBesideConfigPath(t *testing.T) {
	cfg := `version = 2
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = ["https://mirror.example"]
`
	root := nodeFS(t, map[string]string{"/etc/containerd/config.toml": cfg})
	rc := discoverRuntime(t, root, RuntimeOptions{})
	w := warningOf(rc, verdict.RuntimeConfigRefused)
	if w == nil || w.Ignored != "/etc/containerd/config.toml:4" || w.Read != "/etc/containerd/config.toml:3" || !strings.Contains(w.Message, "refuses to load") {
		t.Fatalf("warnings = %+v, want the CRI's refusal naming the mirrors (line 4) and config_path (line 3)", rc.Warnings)
	}
	if _, ok := rc.Registry.(CertsDirs); !ok {
		t.Errorf("registry = %T, want config_path followed", rc.Registry)
	}
}

func TestContainerdImportsMergeByVersion(t *testing.T) {
	files := map[string]string{
		"/etc/containerd/config.toml": `version = 2
imports = ["conf.d/*.toml", "/etc/containerd/loop.toml"]
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
`,
		// no version: a drop-in that only sets CNI
		"/etc/containerd/conf.d/20-cni.toml": "[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = \"/opt/cni/bin\"\n",
		"/etc/containerd/conf.d/10-a.toml":   "imports = [\"../config.toml\"]\n",
		"/etc/containerd/loop.toml":          "imports = [\"missing.toml\"]\n",
	}
	root := nodeFS(t, files)
	rc := discoverRuntime(t, root, RuntimeOptions{})
	// breadth first; globs sorted; the circular import skipped
	if got, want := strings.Join(rc.Files, " "), "/etc/containerd/config.toml /etc/containerd/conf.d/10-a.toml /etc/containerd/conf.d/20-cni.toml /etc/containerd/loop.toml"; got != want {
		t.Errorf("files = %s, want %s", got, want)
	}
	if w := warningOf(rc, verdict.RuntimeConfigRefused); w == nil || w.Ignored != "/etc/containerd/missing.toml" {
		t.Errorf("warnings = %+v, want the missing import named", rc.Warnings)
	}
	// 1.6/1.7: the drop-in's [plugins."io.containerd.grpc.v1.cri"] replaces
	// the whole section: config_path is gone
	if len(rc.Sources) != 0 || !strings.Contains(strings.Join(rc.Notes, " "), "no config_path and no registry.mirrors") {
		t.Errorf("1.x: sources %+v notes %q, want config_path dropped by the drop-in", rc.Sources, rc.Notes)
	}
	// 2.x merges key by key: config_path stays
	files["/var/lib/dpkg/status"] = dpkgStatus("containerd", "2.1.4-1")
	rc = discoverRuntime(t, nodeFS(t, files), RuntimeOptions{})
	if len(rc.Sources) != 1 || rc.Sources[0].Path != "/etc/containerd/certs.d" || rc.Sources[0].Detail != "/etc/containerd/config.toml:4" {
		t.Errorf("2.x: sources %+v, want config_path from config.toml line 4", rc.Sources)
	}
}

func TestContainerdConfigVersions(t *testing.T) {
	for _, tt := range []struct {
		name, file, version string
		want                string // config_path sources, joined
		missing             bool
		transfer            bool // the transfer service reads the list as one folder
	}{
		// discard_unpacked_layers = true: the CRI's local pull, which splits the list
		{"eks v3", "eks-al2023-v3.toml", "", "/etc/containerd/certs.d:/etc/docker/certs.d", false, false},
		{"eks v2 on 1.7", "eks-al2023-v2.toml", "1.7.27-1", "/etc/containerd/certs.d:/etc/docker/certs.d", false, false},
		// the version 2 file says discard_unpacked_layers = false: 2.1 pulls
		// through the transfer service (containerd issue 12415)
		{"eks v2 on 2.1 (migrated)", "eks-al2023-v2.toml", "2.1.4-1", "/etc/containerd/certs.d:/etc/docker/certs.d", false, true},
		{"eks v2 on 2.0 (no transfer pull)", "eks-al2023-v2.toml", "2.0.5-1", "/etc/containerd/certs.d:/etc/docker/certs.d", false, false},
		// containerd config default's own values: the transfer service, and
		// its default list read as one folder (containerd issue 12808)
		{"containerd 2 default", "containerd2-default.toml", "", "/etc/containerd/certs.d:/etc/docker/certs.d", true, true},
		{"k3s v1 (plugins.cri)", "k3s-v1.toml", "", "", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"/etc/containerd/config.toml": testdata(t, tt.file), "/etc/docker/certs.d/reg.example:5000/ca.crt": "x"}
			if tt.version != "" {
				files["/var/lib/dpkg/status"] = dpkgStatus("containerd", tt.version)
			}
			rc := discoverRuntime(t, nodeFS(t, files), RuntimeOptions{})
			var got []string
			for _, s := range rc.Sources {
				if s.Kind == "config_path" {
					got = append(got, s.Path)
				}
			}
			if strings.Join(got, ":") != tt.want { // one source of the whole list in transfer mode
				t.Fatalf("config_path = %v, want %s (rules %s)", got, tt.want, rc.Rules)
			}
			if tt.want == "" {
				return
			}
			if tt.missing && !strings.Contains(rc.Sources[0].Detail, "default") {
				t.Errorf("source %+v, want it said to be containerd 2.x's default", rc.Sources[0])
			}
			set := mustHosts(t, rc, "reg.example:5000/app:1")
			if tt.transfer {
				w := warningOf(rc, verdict.RuntimeConfigIgnored)
				if w == nil || w.Ignored != tt.want || !strings.Contains(w.Message, "transfer service") || len(set.Hosts[0].CAFiles) != 0 {
					t.Errorf("warnings %+v hosts %+v: want the list named as read by no pull, and no CA", rc.Warnings, set.Hosts)
				}
				return
			}
			if len(set.Hosts) != 1 || len(set.Hosts[0].CAFiles) != 1 {
				t.Errorf("hosts %+v, want /etc/docker/certs.d's CA through the second config_path folder", set.Hosts)
			}
		})
	}
}

func TestContainerdK3sLayout(t *testing.T) {
	const cfgDir = "/var/lib/rancher/k3s/agent/etc/containerd"
	root := nodeFS(t, map[string]string{
		cfgDir + "/config.toml":                                   testdata(t, "k3s-v3.toml"),
		cfgDir + "/certs.d/registry.lab.example/hosts.toml":       testdata(t, "k3s-hosts.toml"),
		"/etc/containerd/certs.d/registry.lab.example/hosts.toml": "[host.\"https://elsewhere.example\"]\n",
		"/etc/containerd/config.toml":                             "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n",
		"/etc/rancher/k3s/registries.yaml":                        "mirrors: {}\n",
	})
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, cfgDir, "config.toml"), old, old); err != nil {
		t.Fatal(err)
	}
	rc := discoverRuntime(t, root, RuntimeOptions{})
	if rc.Layout != "k3s" {
		t.Fatalf("layout %q, want k3s", rc.Layout)
	}
	set := mustHosts(t, rc, "registry.lab.example/app:1")
	if got, want := hostList(set.Hosts), "https://mirror.lab.example:5443/v2[mirror] https://registry.lab.example/v2[server]"; got != want {
		t.Errorf("hosts = %s, want %s", got, want)
	}
	var ignored, pending, other bool
	for _, w := range rc.Warnings {
		switch {
		case w.Code == verdict.RuntimeConfigIgnored && w.Ignored == "/etc/containerd/certs.d/registry.lab.example/hosts.toml":
			ignored = strings.Contains(w.Message, "k3s's containerd reads "+cfgDir+"/certs.d")
		case w.Code == verdict.RuntimeConfigIgnored && w.Ignored == "/etc/containerd/config.toml":
			other = w.Read == cfgDir+"/config.toml"
		case w.Code == verdict.RuntimeRestartPending:
			pending = w.Ignored == "/etc/rancher/k3s/registries.yaml"
		}
	}
	if !ignored || !pending || !other {
		t.Errorf("warnings %+v: want the ignored certs.d hosts.toml (%v), the ignored /etc/containerd/config.toml (%v) and registries.yaml pending a restart (%v)", rc.Warnings, ignored, other, pending)
	}

	// k3s's version 1 config: [plugins.cri] with inline mirrors, TLS and auth
	root = nodeFS(t, map[string]string{cfgDir + "/config.toml": testdata(t, "k3s-v1.toml")})
	rc = discoverRuntime(t, root, RuntimeOptions{})
	set = mustHosts(t, rc, "registry.lab.example/app:1")
	if got, want := hostList(set.Hosts), "https://mirror.lab.example:5443/v2[mirror] https://registry.lab.example/v2[server]"; got != want {
		t.Errorf("v1 hosts = %s, want %s", got, want)
	}
	if h := set.Hosts[0]; len(h.CAFiles) != 1 || h.CAFiles[0] != filepath.Join(root, "/etc/rancher/k3s/mirror-ca.crt") || h.Auth == nil || h.Auth.Username != "k3s-user" {
		t.Errorf("v1 mirror TLS %v auth %v, want configs' ca_file and k3s-user", h.CAFiles, h.Auth)
	}
}
