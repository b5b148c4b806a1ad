package runtimecfg

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var allCaps = []string{"pull", "resolve", "push"}

func mustRef(t *testing.T, s string) Ref {
	t.Helper()
	r, err := ParseReference(s)
	if err != nil {
		t.Fatalf("ParseReference(%q): %v", s, err)
	}
	return r
}

func testdataDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestHosts(t *testing.T) {
	td := testdataDir(t)
	tests := []struct {
		name      string
		certsDir  string // relative to testdata; "" none
		dockerDir string
		image     string
		want      []RegistryHost
		wantNotes []string // substrings, one per note, in order
	}{
		{
			name: "no certs dir: docker.io default", image: "nginx",
			want: []RegistryHost{{Scheme: "https", Server: true, Host: "registry-1.docker.io", Path: "/v2", Capabilities: allCaps}},
		},
		{
			name: "missing certs dir is not an error", certsDir: "does-not-exist", dockerDir: "does-not-exist-either", image: "reg.lab.test/app",
			want: []RegistryHost{{Scheme: "https", Server: true, Host: "reg.lab.test", Path: "/v2", Capabilities: allCaps}},
		},
		{
			name: "private registry with port, no folder", certsDir: "valid-mirrors", image: "reg.lab.test:5443/app",
			want: []RegistryHost{{Scheme: "https", Server: true, Host: "reg.lab.test:5443", Path: "/v2", Capabilities: allCaps}},
		},
		{
			name: "loopback registry: https without verification, then http", image: "127.0.0.1:5000/app",
			want: []RegistryHost{{Scheme: "https", Server: true, Host: "127.0.0.1:5000", Path: "/v2", Capabilities: allCaps, SkipVerify: true, HTTPFallback: true}},
		},
		{
			name: "localhost on port 80: plain http", image: "localhost:80/app",
			want: []RegistryHost{{Scheme: "http", Server: true, Host: "localhost:80", Path: "/v2", Capabilities: allCaps}},
		},
		{
			name: "localhost without port: https, no verification", image: "localhost/app",
			want: []RegistryHost{{Scheme: "https", Server: true, Host: "localhost", Path: "/v2", Capabilities: allCaps, SkipVerify: true}},
		},
		{
			name: "two mirrors then the server", certsDir: "valid-mirrors", image: "nginx:1.25",
			want: []RegistryHost{
				{Scheme: "https", Host: "mirror-a.lab.test", Path: "/v2", Capabilities: []string{"pull", "resolve"}, Mirror: true, Source: td + "/valid-mirrors/docker.io/hosts.toml"},
				{Scheme: "http", Host: "mirror-b.lab.test:5000", Path: "/v2", Capabilities: []string{"pull"}, Mirror: true, Source: td + "/valid-mirrors/docker.io/hosts.toml",
					Header: http.Header{"X-Mirror": {"b"}, "X-Multi": {"one", "two"}}},
				{Scheme: "https", Server: true, Host: "registry-1.docker.io", Path: "/v2", Capabilities: allCaps, Source: td + "/valid-mirrors/docker.io/hosts.toml"},
			},
		},
		{
			name: "_default applies to a registry without a folder", certsDir: "valid-default", image: "reg.lab.test/team/app:1",
			want: []RegistryHost{
				{Scheme: "https", Host: "cache.lab.test", Path: "/v2", Capabilities: []string{"pull", "resolve"}, Mirror: true, DialTimeout: 3 * time.Second, Source: td + "/valid-default/_default/hosts.toml"},
				{Scheme: "https", Server: true, Host: "reg.lab.test", Path: "/v2", Capabilities: allCaps, Source: td + "/valid-default/_default/hosts.toml"},
			},
		},
		{
			name: "_default for docker.io: default host is registry-1", certsDir: "valid-default", image: "busybox",
			want: []RegistryHost{
				{Scheme: "https", Host: "cache.lab.test", Path: "/v2", Capabilities: []string{"pull", "resolve"}, Mirror: true, DialTimeout: 3 * time.Second, Source: td + "/valid-default/_default/hosts.toml"},
				{Scheme: "https", Server: true, Host: "registry-1.docker.io", Path: "/v2", Capabilities: allCaps, Source: td + "/valid-default/_default/hosts.toml"},
			},
		},
		{
			name: "host_port_ folder, relative ca, client list", certsDir: "valid-relative-ca", image: "reg.lab.test:5443/team/app:1.0",
			want: []RegistryHost{{
				Scheme: "https", Server: true, Host: "reg.lab.test:5443", Path: "/v2", Capabilities: allCaps,
				CAFiles:     []string{td + "/valid-relative-ca/reg.lab.test_5443_/ca.crt"},
				ClientPairs: [][2]string{{td + "/valid-relative-ca/reg.lab.test_5443_/client.cert", td + "/valid-relative-ca/reg.lab.test_5443_/client.key"}, {"/etc/pki/combined.pem", ""}},
				Source:      td + "/valid-relative-ca/reg.lab.test_5443_/hosts.toml",
			}},
			wantNotes: []string{"containerd 1.6 ignores this file"},
		},
		{
			name: "skip_verify, ca list, client string", certsDir: "valid-skip-verify", image: "reg.lab.test/app",
			want: []RegistryHost{{
				Scheme: "https", Server: true, Host: "reg.lab.test", Path: "/v2", Capabilities: allCaps, SkipVerify: true,
				CAFiles:     []string{td + "/valid-skip-verify/reg.lab.test/extra/a.crt", "/etc/ssl/b.crt"},
				ClientPairs: [][2]string{{td + "/valid-skip-verify/reg.lab.test/combined.pem", ""}},
				Source:      td + "/valid-skip-verify/reg.lab.test/hosts.toml",
			}},
			wantNotes: []string{"containerd 1.6 ignores this file"},
		},
		{
			name: "http server only", certsDir: "valid-http-server", image: "reg.lab.test/app",
			want:      []RegistryHost{{Scheme: "http", Server: true, Host: "reg.lab.test:5000", Path: "/v2", Capabilities: allCaps, Source: td + "/valid-http-server/reg.lab.test/hosts.toml"}},
			wantNotes: []string{"containerd 1.6 ignores this file"},
		},
		{
			name: "http with TLS settings: https first, except port 80", certsDir: "valid-http-with-tls", image: "reg.lab.test/app",
			want: []RegistryHost{
				{Scheme: "https", Host: "mirror.lab.test:5000", Path: "/v2", Capabilities: allCaps, SkipVerify: true, HTTPFallback: true, Mirror: true, Source: td + "/valid-http-with-tls/reg.lab.test/hosts.toml"},
				{Scheme: "http", Host: "plain.lab.test:80", Path: "/v2", Capabilities: allCaps, SkipVerify: true, Mirror: true, Source: td + "/valid-http-with-tls/reg.lab.test/hosts.toml"},
				{Scheme: "http", Server: true, Host: "reg.lab.test", Path: "/v2", Capabilities: allCaps, Source: td + "/valid-http-with-tls/reg.lab.test/hosts.toml"},
			},
			wantNotes: []string{"http://mirror.lab.test:5000 has TLS settings"},
		},
		{
			name: "paths: server path gains /v2, override_path keeps it, bare host gets https", certsDir: "valid-server-path", image: "reg.lab.test/app",
			want: []RegistryHost{
				{Scheme: "https", Host: "mirror.lab.test", Path: "/api/registry", Capabilities: allCaps, Mirror: true, OverridePath: true, Source: td + "/valid-server-path/reg.lab.test/hosts.toml"},
				{Scheme: "https", Host: "mirror2.lab.test", Path: "/cache/v2", Capabilities: allCaps, Mirror: true, Source: td + "/valid-server-path/reg.lab.test/hosts.toml"},
				{Scheme: "https", Server: true, Host: "proxy.lab.test", Path: "/v2/proxy/v2", Capabilities: allCaps, Mirror: true, Source: td + "/valid-server-path/reg.lab.test/hosts.toml"},
			},
		},
		{
			name: "certs.d layout only, plus docker certs dir; folder wins over _default", certsDir: "valid-certsd/certs.d", dockerDir: "valid-certsd/docker-certs", image: "reg.lab.test/app",
			want: []RegistryHost{{
				Scheme: "https", Server: true, Host: "reg.lab.test", Path: "/v2", Capabilities: allCaps,
				CAFiles: []string{td + "/valid-certsd/certs.d/reg.lab.test/ca.crt", td + "/valid-certsd/docker-certs/reg.lab.test/docker.crt"},
				ClientPairs: [][2]string{
					{td + "/valid-certsd/certs.d/reg.lab.test/client.cert", td + "/valid-certsd/certs.d/reg.lab.test/client.key"},
					{td + "/valid-certsd/certs.d/reg.lab.test/combined.cert", ""},
				},
				Source: td + "/valid-certsd/certs.d/reg.lab.test, " + td + "/valid-certsd/docker-certs/reg.lab.test",
			}},
		},
		{
			name: "docker certs dir alone", dockerDir: "valid-certsd/docker-certs", image: "reg.lab.test/app",
			want: []RegistryHost{{
				Scheme: "https", Server: true, Host: "reg.lab.test", Path: "/v2", Capabilities: allCaps,
				CAFiles: []string{td + "/valid-certsd/docker-certs/reg.lab.test/docker.crt"},
				Source:  td + "/valid-certsd/docker-certs/reg.lab.test",
			}},
		},
		{
			name: "empty hosts.toml falls back to the certs.d layout", certsDir: "valid-empty-toml", image: "reg.lab.test/app",
			want: []RegistryHost{{
				Scheme: "https", Server: true, Host: "reg.lab.test", Path: "/v2", Capabilities: allCaps,
				CAFiles: []string{td + "/valid-empty-toml/reg.lab.test/ca.crt"},
				Source:  td + "/valid-empty-toml/reg.lab.test",
			}},
		},
		{
			name: "notes: unknown keys, dotted host, server twice", certsDir: "valid-notes", image: "reg.lab.test/app",
			want: []RegistryHost{
				{Scheme: "https", Host: "reg.lab.test", Path: "/v2", Capabilities: []string{"pull", "resolve"}, Source: td + "/valid-notes/reg.lab.test/hosts.toml"},
				{Scheme: "https", Server: true, Host: "reg.lab.test", Path: "/v2", Capabilities: allCaps, Source: td + "/valid-notes/reg.lab.test/hosts.toml"},
			},
			wantNotes: []string{`unknown key "mirrors"`, `unknown key "host.https://reg.lab.test.colour"`, `host "https://dotted.lab.test" is not declared`, "tries it twice"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			certs, docker := "", ""
			if tt.certsDir != "" {
				certs = filepath.Join(td, tt.certsDir)
			}
			if tt.dockerDir != "" {
				docker = filepath.Join(td, tt.dockerDir)
			}
			ref := mustRef(t, tt.image)
			set, err := HostsConfig(certs, docker, ref)
			if err != nil {
				t.Fatalf("HostsConfig(%q, %q, %q) error = %v", tt.certsDir, tt.dockerDir, tt.image, err)
			}
			if diff := cmp.Diff(tt.want, set.Hosts, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("HostsConfig(%q, %q, %q) hosts mismatch (-want +got):\n%s", tt.certsDir, tt.dockerDir, tt.image, diff)
			}
			if len(set.Notes) != len(tt.wantNotes) {
				t.Fatalf("HostsConfig(%q, %q, %q) notes = %q, want %d notes like %q", tt.certsDir, tt.dockerDir, tt.image, set.Notes, len(tt.wantNotes), tt.wantNotes)
			}
			for i, n := range tt.wantNotes {
				if !strings.Contains(set.Notes[i], n) {
					t.Errorf("HostsConfig(...) note[%d] = %q, want it to contain %q", i, set.Notes[i], n)
				}
			}
			hosts, err := Hosts(certs, docker, ref)
			if err != nil || !cmp.Equal(hosts, set.Hosts) {
				t.Errorf("Hosts(...) = %v, %v; want the same as HostsConfig", hosts, err)
			}
		})
	}
}

// A folder named host:port (what operators write on Linux) is found too.
// The colon stays out of testdata: module zips refuse it.
func TestHostsColonFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "reg.lab.test:5443")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte("[host.\"https://mirror.lab.test\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts, err := Hosts(root, "", mustRef(t, "reg.lab.test:5443/app"))
	if err != nil {
		t.Fatalf("Hosts: %v", err)
	}
	var got []string
	for _, h := range hosts {
		got = append(got, h.URL())
	}
	want := []string{"https://mirror.lab.test/v2", "https://reg.lab.test:5443/v2"}
	if !cmp.Equal(got, want) {
		t.Errorf("Hosts(%q) = %q, want %q", root, got, want)
	}
}

func TestHostsInvalid(t *testing.T) {
	td := testdataDir(t)
	tests := []struct {
		dir, want string
	}{
		{"invalid-syntax", "line 3"},
		{"invalid-capability", `unknown capability "fetch"`},
		{"invalid-ca-type", `"ca" must be a string or a list of strings`},
		{"invalid-client-pair", `"client" pair must be [cert, key]`},
		{"invalid-scheme", `scheme "ftp"`},
		{"invalid-dial-timeout", `dial_timeout "soon"`},
		{"invalid-header-type", `header "X-Count"`},
		{"invalid-type-mismatch", "line 1"},
		{"invalid-port", `port "99999"`},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			got, err := Hosts(filepath.Join(td, tt.dir), "", mustRef(t, "reg.lab.test/app"))
			if err == nil {
				t.Fatalf("Hosts(%q) = %+v, want error containing %q", tt.dir, got, tt.want)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("Hosts(%q) error %T, want *ConfigError", tt.dir, err)
			}
			msg := err.Error()
			file := filepath.Join(td, tt.dir, "reg.lab.test", "hosts.toml")
			if !strings.HasPrefix(msg, file+": ") || !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("Hosts(%q) error = %q, want one line `%s: ...%s...`", tt.dir, msg, file, tt.want)
			}
		})
	}
}

func TestHas(t *testing.T) {
	h := RegistryHost{Capabilities: []string{"pull", "resolve"}}
	for _, tt := range []struct {
		c    string
		want bool
	}{{"pull", true}, {"resolve", true}, {"push", false}, {"", false}} {
		if got := h.Has(tt.c); got != tt.want {
			t.Errorf("Has(%q) = %v, want %v", tt.c, got, tt.want)
		}
	}
}

func FuzzHostsTOML(f *testing.F) {
	_ = filepath.Walk("testdata", func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Name() == "hosts.toml" {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
		return nil
	})
	f.Add([]byte(`[host."https://a"]` + "\n" + `client = [["a", "b"], "c"]` + "\nca = [\"x\"]\nheader = {A = [\"1\"]}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, _, err := parseHostsFile("/etc/containerd/certs.d/reg/hosts.toml", "", b)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n") {
				t.Fatalf("parseHostsFile error spans lines: %q", err)
			}
			return
		}
		if len(entries) == 0 {
			t.Fatalf("parseHostsFile(%q) gave no entries and no error", b)
		}
		for _, e := range entries[:len(entries)-1] {
			if e.host == "" || (e.scheme != "http" && e.scheme != "https") {
				t.Fatalf("parseHostsFile(%q): entry %+v has no host or a bad scheme", b, e)
			}
		}
	})
}
