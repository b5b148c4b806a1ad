package runtimecfg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writePlugin writes an executable shell script plugin into dir: real
// processes speaking the kubelet's protocol on stdin and stdout.
func writePlugin(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path, s string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const goodPlugin = `req=$(cat)
echo "$req" >> "$PLUGIN_LOG"
[ "$1" = "get-credentials" ] || { echo "want get-credentials, got $1" >&2; exit 2; }
[ "$LAB_TOKEN" = "s3cr3t-env-value" ] || { echo "env LAB_TOKEN missing" >&2; exit 3; }
cat <<JSON
{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse","cacheKeyType":"${CACHE_KEY:-Registry}","cacheDuration":"${CACHE_DURATION:-1h}","auth":{"*.registry.lab.test":{"username":"lab-user","password":"lab-password-123"},"other.example.com":{"username":"x","password":"y-password"}}}
JSON`

func providerConfig(t *testing.T, dir, plugin string) *CredentialProviderConfig {
	t.Helper()
	cfg := writeFile(t, filepath.Join(dir, "config.yaml"), fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: %s
    matchImages:
      - "*.registry.lab.test"
      - "*.registry.lab.test:5443"
    defaultCacheDuration: "12h"
    apiVersion: credentialprovider.kubelet.k8s.io/v1
    args:
      - get-credentials
    env:
      - name: LAB_TOKEN
        value: s3cr3t-env-value
`, plugin))
	c, err := LoadCredentialProviderConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPluginRunsAsTheKubeletRunsIt(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "requests.log")
	writePlugin(t, dir, "lab-provider", goodPlugin)
	t.Setenv("PLUGIN_LOG", log)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var told []string
	r := &PluginRunner{Config: providerConfig(t, dir, "lab-provider"), BinDir: dir, Now: func() time.Time { return now }, Secrets: func(v ...string) { told = append(told, v...) }}
	k := &KubeletIdentity{Plugins: r}

	ev, err := k.Credentials(context.Background(), "eu.registry.lab.test/team/app:1")
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.PluginErrs) != 0 {
		t.Fatalf("plugin errors: %v (%s)", ev.PluginErrs[0], ev.PluginErrs[0].Stderr)
	}
	if len(ev.Credentials) != 1 || ev.Credentials[0].Username != "lab-user" || ev.Credentials[0].Password != "lab-password-123" {
		t.Fatalf("credentials %v, want lab-user for *.registry.lab.test", ev.Credentials)
	}
	b, _ := os.ReadFile(log)
	if want := `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest","image":"eu.registry.lab.test/team/app"}`; strings.TrimSpace(string(b)) != want {
		t.Errorf("request on stdin %q, want %q", b, want)
	}
	if !slices.Contains(told, "s3cr3t-env-value") || !slices.Contains(told, "lab-password-123") {
		t.Errorf("secrets told %q: want the env value and the password", told)
	}
	if got := ev.Plugins[0]; got.TTL != time.Hour || got.CacheKey != "eu.registry.lab.test" || got.Cached {
		t.Errorf("cache %v %q cached=%v, want 1h under the registry", got.TTL, got.CacheKey, got.Cached)
	}

	// cacheKeyType Registry: another image of the registry is served from
	// the cache; after cacheDuration the plugin runs again.
	ev, _ = k.Credentials(context.Background(), "eu.registry.lab.test/other/thing@sha256:"+strings.Repeat("a", 64))
	if !ev.Plugins[0].Cached {
		t.Errorf("second image of the registry not served from the cache")
	}
	now = now.Add(61 * time.Minute)
	ev, _ = k.Credentials(context.Background(), "eu.registry.lab.test/team/app:1")
	if ev.Plugins[0].Cached {
		t.Errorf("served from the cache after cacheDuration")
	}
	b, _ = os.ReadFile(log)
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("plugin ran %d times, want 2", n)
	}

	// An image no matchImages pattern covers runs nothing (port and label
	// count must match exactly).
	for _, img := range []string{"registry.lab.test/x:1", "a.b.registry.lab.test/x:1", "eu.registry.lab.test:5000/x:1", "docker.io/library/nginx"} {
		ev, _ = k.Credentials(context.Background(), img)
		if len(ev.Plugins) != 0 || len(ev.Credentials) != 0 {
			t.Errorf("%s: plugin ran or gave credentials: %+v", img, ev)
		}
	}
	ev, _ = k.Credentials(context.Background(), "eu.registry.lab.test:5443/x:1")
	if len(ev.Plugins) != 1 {
		t.Errorf("eu.registry.lab.test:5443 matches *.registry.lab.test:5443, plugin did not run")
	}
}

func TestPluginFailures(t *testing.T) {
	secret := "s3cr3t-env-value"
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		timeout    time.Duration
		want       string
	}{
		{"missing", "", 0, 0, "the binary is missing"},
		{"not executable", `echo {}`, 0o644, 0, "is not executable"},
		{"exits non-zero, stderr redacted", `echo "token exchange failed for LAB_TOKEN=$LAB_TOKEN: AccessDenied" >&2; exit 1`, 0o755, 0, "exited with exit status 1"},
		{"times out", `sleep 5`, 0o755, 300 * time.Millisecond, "timed out after 300ms"},
		{"garbage", `echo 'password=hunter2 not json'`, 0o755, 0, "not a JSON CredentialProviderResponse"},
		{"empty", `true`, 0o755, 0, "answered nothing"},
		{"wrong apiVersion", `echo '{"apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1","kind":"CredentialProviderResponse","cacheKeyType":"Image"}'`, 0o755, 0, `apiVersion "credentialprovider.kubelet.k8s.io/v1beta1", want "credentialprovider.kubelet.k8s.io/v1"`},
		{"bad cacheKeyType", `echo '{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse","cacheKeyType":"Pod"}'`, 0o755, 0, `cacheKeyType "Pod"`},
		{"over 1 MiB", `head -c 1100000 /dev/zero | tr '\0' 'a'`, 0o755, 0, "more than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.mode != 0 {
				p := writePlugin(t, dir, "p", tc.body)
				os.Chmod(p, tc.mode)
			}
			r := &PluginRunner{Config: providerConfig(t, dir, "p"), BinDir: dir, Timeout: tc.timeout}
			start := time.Now()
			res, errs := r.Provide(context.Background(), "eu.registry.lab.test/team/app")
			if len(res) != 0 || len(errs) != 1 {
				t.Fatalf("results %v errs %v, want one error", res, errs)
			}
			var pe *PluginError
			if !errors.As(errs[0], &pe) {
				t.Fatalf("%T, want *PluginError", errs[0])
			}
			msg := pe.Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || !strings.Contains(msg, "credential provider plugin p") {
				t.Errorf("error %q, want one line naming the plugin with %q", msg, tc.want)
			}
			if strings.Contains(msg+pe.Stderr, secret) || strings.Contains(msg+pe.Stderr, "hunter2") {
				t.Errorf("a secret leaked: %q / %q", msg, pe.Stderr)
			}
			if tc.name == "exits non-zero, stderr redacted" && !strings.Contains(pe.Stderr, "AccessDenied") {
				t.Errorf("stderr evidence %q lost", pe.Stderr)
			}
			if time.Since(start) > 4*time.Second {
				t.Errorf("took %s: the timeout did not stop the plugin", time.Since(start))
			}
		})
	}
	// Ctrl-C: a cancelled context stops the plugin.
	dir := t.TempDir()
	writePlugin(t, dir, "p", "sleep 5")
	r := &PluginRunner{Config: providerConfig(t, dir, "p"), BinDir: dir}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, errs := r.Provide(ctx, "eu.registry.lab.test/team/app")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "cancelled") || time.Since(start) > 4*time.Second {
		t.Errorf("cancel: %v after %s", errs, time.Since(start))
	}
}

func TestLoadCredentialProviderConfig(t *testing.T) {
	dir := t.TempDir()
	// EKS (JSON, v1) and AKS (YAML, v1beta1) shapes, merged from a directory.
	writeFile(t, filepath.Join(dir, "d", "10-eks.json"), `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"ecr-credential-provider","matchImages":["*.dkr.ecr.*.amazonaws.com","*.dkr.ecr.*.amazonaws.com.cn","*.dkr-ecr.*.on.aws"],"defaultCacheDuration":"12h","apiVersion":"credentialprovider.kubelet.k8s.io/v1"}]}`)
	writeFile(t, filepath.Join(dir, "d", "20-aks.yaml"), `apiVersion: kubelet.config.k8s.io/v1beta1
kind: CredentialProviderConfig
providers:
- name: acr-credential-provider
  matchImages:
  - "*.azurecr.io"
  - "*.azurecr.cn"
  - "mcr.microsoft.com"
  defaultCacheDuration: "10m"
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  args:
  - /etc/kubernetes/azure.json
`)
	writeFile(t, filepath.Join(dir, "d", "README"), "not read")
	c, err := LoadCredentialProviderConfig(filepath.Join(dir, "d"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Providers) != 2 || c.Providers[0].Name != "ecr-credential-provider" || c.Providers[1].DefaultCache() != 10*time.Minute || len(c.Files) != 2 {
		t.Fatalf("%+v", c)
	}
	if !c.Providers[0].Matches("123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app") || c.Providers[0].Matches("123456789012.dkr.ecr.eu-west-1.amazonaws.com.evil.io/x") {
		t.Errorf("ECR matchImages wrong")
	}
	if !c.Providers[1].Matches("mcr.microsoft.com/oss/nginx") || !c.Providers[1].Matches("myacr.azurecr.io/x") || c.Providers[1].Matches("a.myacr.azurecr.io/x") {
		t.Errorf("ACR matchImages wrong")
	}

	for _, tc := range []struct{ name, body, want string }{
		{"not yaml", "providers: [\n", "not YAML"},
		{"not json", `{"providers": [}`, "syntax error at byte"},
		{"empty", "", "the file is empty"},
		{"unknown apiVersion", "apiVersion: kubelet.config.k8s.io/v2\nkind: CredentialProviderConfig\nproviders: []\n", `apiVersion "kubelet.config.k8s.io/v2", want one of kubelet.config.k8s.io/v1`},
		{"wrong kind", "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n", `kind "KubeletConfiguration", want CredentialProviderConfig`},
		{"no providers", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: []\n", "no providers"},
		{"bad glob", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: p\n  matchImages: [\"[a-\"]\n  defaultCacheDuration: 1h\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n", `matchImages "[a-" is not a valid pattern`},
		{"bad url", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: p\n  matchImages: [\"a b%zz\"]\n  defaultCacheDuration: 1h\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n", `matchImages "a b%zz" is not a valid pattern`},
		{"no cache duration", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: p\n  matchImages: [\"*.io\"]\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n", "defaultCacheDuration is missing"},
		{"bad provider apiVersion", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: p\n  matchImages: [\"*.io\"]\n  defaultCacheDuration: 1h\n  apiVersion: credentialprovider.kubelet.k8s.io/v9\n", `apiVersion "credentialprovider.kubelet.k8s.io/v9"`},
		{"slash in name", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: ../p\n  matchImages: [\"*.io\"]\n  defaultCacheDuration: 1h\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n", "cannot contain '/'"},
	} {
		f := writeFile(t, filepath.Join(dir, tc.name+".yaml"), tc.body)
		_, err := LoadCredentialProviderConfig(f)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), f) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line naming %s with %q", tc.name, err, f, tc.want)
		}
	}
	dup := filepath.Join(dir, "dup")
	writeFile(t, filepath.Join(dup, "a.json"), `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"p","matchImages":["*.io"],"defaultCacheDuration":"1h","apiVersion":"credentialprovider.kubelet.k8s.io/v1"}]}`)
	writeFile(t, filepath.Join(dup, "b.json"), `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"p","matchImages":["*.io"],"defaultCacheDuration":"1h","apiVersion":"credentialprovider.kubelet.k8s.io/v1"}]}`)
	if _, err := LoadCredentialProviderConfig(dup); err == nil || !strings.Contains(err.Error(), `provider "p" is also defined in`) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := LoadCredentialProviderConfig(filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing: %v", err)
	}
}

// The kubelet's URL glob matcher (pkg/credentialprovider keyring_test.go
// TestURLsMatch cases).
func TestURLsMatch(t *testing.T) {
	for _, tc := range []struct {
		glob, target string
		want         bool
	}{
		{"*.kubernetes.io", "prefix.kubernetes.io", true},
		{"prefix.*.io", "prefix.kubernetes.io", true},
		{"prefix.kubernetes.*", "prefix.kubernetes.io", true},
		{"*-good.kubernetes.io", "prefix-good.kubernetes.io", true},
		{"*.kubernetes.io", "kubernetes.io", false},
		{"*.*.kubernetes.io", "prefix.kubernetes.io", false},
		{"prefix.kubernetes.io", "kubernetes.io/prefix", false},
		{"*.kubernetes.io", "prefix.kubernetes.io:8080", false},
		{"*.kubernetes.io:8080", "prefix.kubernetes.io:8080", true},
		{"prefix.kubernetes.io:443", "prefix.kubernetes.io", false},
		{"gcr.io/project", "gcr.io/project/image", true},
		{"gcr.io/project", "gcr.io/other/image", false},
		{"*.kubernetes.io/path", "prefix.kubernetes.io/path/image", true},
		{"*.kubernetes.io/path", "prefix.kubernetes.io/other", false},
	} {
		got, err := URLsMatchStr(tc.glob, tc.target)
		if err != nil || got != tc.want {
			t.Errorf("URLsMatchStr(%q, %q) = %v, %v; want %v", tc.glob, tc.target, got, err, tc.want)
		}
	}
}

// TestECRDualStackGaps reads two real provider configs: the EKS AMI's
// before it learnt the dual-stack pattern, and Bottlerocket's, which
// shipped the wrong one (*.dkr.ecr.*.on.aws, fixed to *.dkr-ecr.*.on.aws in
// bottlerocket-os/bottlerocket#4518), beside the fixed one.
func TestECRDualStackGaps(t *testing.T) {
	dir := t.TempDir()
	cfg := func(name string, patterns ...string) *CredentialProviderConfig {
		t.Helper()
		b, _ := json.Marshal(patterns)
		f := filepath.Join(dir, name+".json")
		writeFile(t, f, `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"ecr-credential-provider","matchImages":`+string(b)+`,"defaultCacheDuration":"12h","apiVersion":"credentialprovider.kubelet.k8s.io/v1"}]}`)
		c, err := LoadCredentialProviderConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old := cfg("old", "*.dkr.ecr.*.amazonaws.com", "*.dkr.ecr.*.amazonaws.com.cn")
	wrong := cfg("wrong", "*.dkr.ecr.*.amazonaws.com", "*.dkr.ecr.*.on.aws")
	fixed := cfg("fixed", "*.dkr.ecr.*.amazonaws.com", "*.dkr-ecr.*.on.aws")
	const dual = "111122223333.dkr-ecr.us-east-1.on.aws/shop/api"
	const v4 = "111122223333.dkr.ecr.us-east-1.amazonaws.com/shop/api"
	for _, tc := range []struct {
		name  string
		c     *CredentialProviderConfig
		image string
		want  []string
	}{
		{"old config, dual-stack image", old, dual, []string{"ecr-credential-provider"}},
		{"wrong pattern, dual-stack image", wrong, dual, []string{"ecr-credential-provider"}},
		{"fixed pattern, dual-stack image", fixed, dual, nil},
		{"old config, IPv4 image", old, v4, nil},
		{"no config", nil, dual, nil},
	} {
		if got := tc.c.ECRDualStackGaps(tc.image); !slices.Equal(got, tc.want) {
			t.Errorf("%s: ECRDualStackGaps(%s) = %v, want %v", tc.name, tc.image, got, tc.want)
		}
	}
}
