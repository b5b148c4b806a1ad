package runtimecfg

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestLoadPullSecret(t *testing.T) {
	dir := t.TempDir()
	cfgJSON := `{"auths":{"registry.lab.test":{"auth":"` + b64("team:team-pass-1") + `"},"registry.lab.test/team":{"username":"robot","password":"robot-pass-2"}}}`
	yamlSecret := writeFile(t, filepath.Join(dir, "s.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: regcred\n  namespace: shop\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: "+b64(cfgJSON)+"\n")
	jsonSecret := writeFile(t, filepath.Join(dir, "s.json"), `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"other"},"type":"kubernetes.io/dockerconfigjson","stringData":{".dockerconfigjson":`+quoteJSON(cfgJSON)+`}}`)
	bare := writeFile(t, filepath.Join(dir, "config.json"), cfgJSON)
	legacy := writeFile(t, filepath.Join(dir, "legacy.yaml"), "kind: Secret\ntype: kubernetes.io/dockercfg\ndata:\n  .dockercfg: "+b64(`{"registry.lab.test":{"auth":"`+b64("old:old-pass-3")+`"}}`)+"\n")
	for _, f := range []string{yamlSecret, jsonSecret, bare} {
		ps, err := LoadPullSecret(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(ps.Entries) != 2 || ps.Entries[0].Creds.Username != "team" || ps.Entries[0].Creds.Password != "team-pass-1" || ps.Entries[1].Creds.Username != "robot" {
			t.Errorf("%s: %+v", f, ps.Entries)
		}
	}
	ps, err := LoadPullSecret(legacy)
	if err != nil || len(ps.Entries) != 1 || ps.Entries[0].Creds.Password != "old-pass-3" {
		t.Errorf("legacy dockercfg: %v %+v", err, ps)
	}

	for _, tc := range []struct{ name, body, want string }{
		{"opaque", "kind: Secret\ntype: Opaque\ndata:\n  x: eA==\n", `type "Opaque", want kubernetes.io/dockerconfigjson`},
		{"no key", "kind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata: {}\n", "no data[.dockerconfigjson]"},
		{"not base64", "kind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: '%%%'\n", "is not base64"},
		{"bad auth", `{"auths":{"r.io":{"auth":"` + b64("no-colon-secretvalue") + `"}}}`, "does not decode to user:password"},
		{"configmap", "kind: ConfigMap\n", `kind "ConfigMap", want Secret`},
		{"neither", `{"x":1}`, "neither a Secret nor a .dockerconfigjson"},
		{"garbage", "\x00\x01: [", "not YAML"},
	} {
		f := writeFile(t, filepath.Join(dir, tc.name), tc.body)
		_, err := LoadPullSecret(f)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), f) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "secretvalue") {
			t.Errorf("%s: %v, want one line naming the file with %q and no secret", tc.name, err, tc.want)
		}
	}
}

// A Secret mounted as a volume, as sweep mounts a Pod's imagePullSecrets:
// .dockerconfigjson, else .dockercfg, named after the directory; neither
// (the Secret is missing: an optional volume is empty) is skipped, as the
// kubelet skips it.
func TestLoadPullSecretVolume(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files map[string]string) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, body := range files {
			writeFile(t, filepath.Join(d, f), body)
		}
		return d
	}
	cur := mk("checkout-pull", map[string]string{".dockerconfigjson": `{"auths":{"registry.lab.test":{"auth":"` + b64("shop:shop-pass-4") + `"}}}`})
	old := mk("legacy-pull", map[string]string{".dockercfg": `{"registry.lab.test":{"username":"old","password":"old-pass-5"}}`})
	none := mk("gone", nil)
	ps, err := LoadPullSecret(cur)
	if err != nil || ps.Name != "checkout-pull" || len(ps.Entries) != 1 || ps.Entries[0].Creds.Password != "shop-pass-4" || ps.Skipped != "" {
		t.Errorf("dockerconfigjson volume = %+v, %v", ps, err)
	}
	if ps != nil && !strings.Contains(ps.Entries[0].Creds.Source, "pull secret checkout-pull") {
		t.Errorf("source %q, want the secret's name", ps.Entries[0].Creds.Source)
	}
	ps, err = LoadPullSecret(old)
	if err != nil || ps.Name != "legacy-pull" || len(ps.Entries) != 1 || ps.Entries[0].Creds.Username != "old" {
		t.Errorf("dockercfg volume = %+v, %v", ps, err)
	}
	ps, err = LoadPullSecret(filepath.Join(old, ".dockercfg"))
	if err != nil || len(ps.Entries) != 1 || ps.Entries[0].Creds.Password != "old-pass-5" {
		t.Errorf("bare .dockercfg = %+v, %v", ps, err)
	}
	ps, err = LoadPullSecret(none)
	if err != nil || ps.Name != "gone" || len(ps.Entries) != 0 || !strings.Contains(ps.Skipped, "the kubelet pulls without it") {
		t.Errorf("empty volume = %+v, %v: want skipped, no error", ps, err)
	}
	bad := mk("broken", map[string]string{".dockerconfigjson": `{"auths": "secretvalue-6"`})
	if _, err := LoadPullSecret(bad); err == nil || !strings.Contains(err.Error(), filepath.Join(bad, ".dockerconfigjson")) || strings.Contains(err.Error(), "secretvalue") {
		t.Errorf("broken volume: %v, want one line naming the file, no secret", err)
	}
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// The kubelet's order: pull secrets first (the most specific key first,
// secrets in the Pod's order within a key), then the plugins'.
func TestKubeletCredentialOrder(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, filepath.Join(dir, "a.json"), `{"auths":{"eu.registry.lab.test":{"username":"a-host","password":"pa"}}}`)
	b := writeFile(t, filepath.Join(dir, "b.json"), `{"auths":{"eu.registry.lab.test/team":{"username":"b-team","password":"pb"},"eu.registry.lab.test":{"username":"b-host","password":"pb2"},"elsewhere.io":{"username":"no","password":"pn"}}}`)
	var secrets []*PullSecret
	for _, f := range []string{a, b} {
		ps, err := LoadPullSecret(f)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, ps)
	}
	writePlugin(t, dir, "lab-provider", goodPlugin)
	t.Setenv("PLUGIN_LOG", filepath.Join(dir, "log"))
	k := &KubeletIdentity{PullSecrets: secrets, Plugins: &PluginRunner{Config: providerConfig(t, dir, "lab-provider"), BinDir: dir}}
	ev, err := k.Credentials(context.Background(), "eu.registry.lab.test/team/app:1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range ev.Credentials {
		got = append(got, c.Username)
	}
	if want := "b-team a-host b-host lab-user"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", strings.Join(got, " "), want)
	}
	ev, _ = k.Credentials(context.Background(), "eu.registry.lab.test/shop/app:1")
	if len(ev.Credentials) != 3 || ev.Credentials[0].Username != "a-host" {
		t.Errorf("other repository: %v", ev.Credentials)
	}
	// Docker Hub: the index.docker.io key serves docker.io images.
	var kr Keyring
	kr.Add("https://index.docker.io/v1/", Credentials{Username: "hub"})
	if c := kr.Lookup("docker.io/library/nginx"); len(c) != 1 || c[0].Username != "hub" {
		t.Errorf("docker hub lookup %v", c)
	}
}

func TestDetectKubeletProvider(t *testing.T) {
	// The running kubelet's flags win.
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc/77/cmdline"), "/usr/bin/containerd\x00")
	writeFile(t, filepath.Join(root, "proc/812/cmdline"), "/usr/bin/kubelet\x00--config=/etc/kubernetes/kubelet/config.json\x00--image-credential-provider-config=/etc/eks/image-credential-provider/config.json\x00--image-credential-provider-bin-dir=/etc/eks/image-credential-provider\x00")
	writeFile(t, filepath.Join(root, "etc/default/kubelet"), "KUBELET_FLAGS=--image-credential-provider-config=/nope.yaml\n")
	f, ok := DetectKubeletProvider(root)
	if !ok || f.Config != filepath.Join(root, "/etc/eks/image-credential-provider/config.json") || f.BinDir != filepath.Join(root, "/etc/eks/image-credential-provider") || !strings.Contains(f.From, "/proc/812/cmdline") {
		t.Errorf("proc: %+v %v", f, ok)
	}
	// AKS: the flags in /etc/default/kubelet.
	root = t.TempDir()
	writeFile(t, filepath.Join(root, "etc/default/kubelet"), "KUBELET_FLAGS=--address=0.0.0.0 --image-credential-provider-bin-dir=/var/lib/kubelet/credential-provider --image-credential-provider-config=/var/lib/kubelet/credential-provider-config.yaml --max-pods=30\n")
	f, ok = DetectKubeletProvider(root)
	if !ok || f.Config != filepath.Join(root, aksProviderConfig) || f.BinDir != filepath.Join(root, aksProviderBinDir) || !strings.Contains(f.From, "/etc/default/kubelet") {
		t.Errorf("default file: %+v %v", f, ok)
	}
	// A systemd drop-in.
	root = t.TempDir()
	writeFile(t, filepath.Join(root, "etc/systemd/system/kubelet.service.d/10-kubeadm.conf"), "[Service]\nEnvironment=\"KUBELET_EXTRA_ARGS=--image-credential-provider-config /etc/kubernetes/cp.yaml --image-credential-provider-bin-dir /opt/cp/bin\"\n")
	f, ok = DetectKubeletProvider(root)
	if !ok || f.Config != filepath.Join(root, "/etc/kubernetes/cp.yaml") || f.BinDir != filepath.Join(root, "/opt/cp/bin") {
		t.Errorf("drop-in: %+v %v", f, ok)
	}
	// The EKS convention when nothing names the flags.
	root = t.TempDir()
	writeFile(t, filepath.Join(root, eksProviderConfig), "{}")
	f, ok = DetectKubeletProvider(root)
	if !ok || !strings.Contains(f.From, "EKS convention") {
		t.Errorf("eks convention: %+v %v", f, ok)
	}
	if _, ok := DetectKubeletProvider(t.TempDir()); ok {
		t.Errorf("found a config on an empty root")
	}
	_ = os.Getpid
}
