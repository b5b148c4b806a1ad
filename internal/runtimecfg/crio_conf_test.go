package runtimecfg

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContainersCertsFor(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"/etc/containers/certs.d/registry.corp.example:5000/ca.crt":      "x",
		"/etc/containers/certs.d/registry.corp.example:5000/extra.crt":   "x",
		"/etc/containers/certs.d/registry.corp.example:5000/client.cert": "x",
		"/etc/containers/certs.d/registry.corp.example:5000/client.key":  "x",
		"/etc/docker/certs.d/registry.corp.example:5000/docker-ca.crt":   "x",
		"/etc/docker/certs.d/only-docker.example/ca.crt":                 "x",
		"/etc/containers/certs.d/half-pair.example/client.cert":          "x",
		"/etc/containers/certs.d/lone-key.example/client.key":            "x",
	})
	rel := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			out = append(out, strings.TrimPrefix(p, root))
		}
		return out
	}
	t.Run("the first folder that exists is the only one read", func(t *testing.T) {
		got, err := ContainersCertsFor(root, "", "registry.corp.example:5000")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"/etc/containers/certs.d/registry.corp.example:5000/ca.crt", "/etc/containers/certs.d/registry.corp.example:5000/extra.crt"}
		if diff := cmp.Diff(want, rel(got.CAFiles)); diff != "" {
			t.Errorf("CAFiles (-want +got):\n%s", diff)
		}
		if len(got.ClientPairs) != 1 || !strings.HasSuffix(got.ClientPairs[0][1], "client.key") {
			t.Errorf("ClientPairs = %v, want client.cert + client.key", got.ClientPairs)
		}
		if diff := cmp.Diff([]string{"/etc/docker/certs.d/registry.corp.example:5000"}, rel(got.Shadowed)); diff != "" {
			t.Errorf("Shadowed (-want +got):\n%s", diff)
		}
	})
	t.Run("/etc/docker/certs.d when containers has none", func(t *testing.T) {
		got, err := ContainersCertsFor(root, "", "only-docker.example")
		if err != nil || len(got.CAFiles) != 1 || !strings.HasSuffix(got.CAFiles[0], "/etc/docker/certs.d/only-docker.example/ca.crt") {
			t.Errorf("ContainersCertsFor(only-docker.example) = %+v, %v", got, err)
		}
	})
	for host, want := range map[string]string{
		"half-pair.example": "missing key client.key for client certificate client.cert",
		"lone-key.example":  "missing client certificate client.cert for key client.key",
	} {
		_, err := ContainersCertsFor(root, "", host)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ContainersCertsFor(%s) = %v, want %q", host, err, want)
		}
	}
	if got, err := ContainersCertsFor(root, "", "nothing.example"); err != nil || got.Dir != "" {
		t.Errorf("ContainersCertsFor(nothing.example) = %+v, %v, want nothing", got, err)
	}
}

// secretPassword must never show in any error, string or JSON.
const secretPassword = "s3cr3t-Pa55word-never-printed"

func authJSON(entries map[string]string) string {
	auths := map[string]map[string]string{}
	for k, user := range entries {
		auths[k] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + secretPassword))}
	}
	b, _ := json.Marshal(map[string]any{"auths": auths})
	return string(b)
}

func TestContainersCredentials(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"/var/lib/kubelet/config.json": authJSON(map[string]string{
			"quay.io":                     "registry-user",
			"quay.io/team":                "team-user",
			"https://index.docker.io/v1/": "hub-user",
		}),
		"/run/containers/0/auth.json": `{"auths": {"mirror.corp.example": {"auth": ""}}}`,
		"/root/.docker/config.json":   authJSON(map[string]string{"mirror.corp.example": "mirror-user"}),
		"/root/.dockercfg":            `{"legacy.corp.example": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("legacy-user:"+secretPassword)) + `"}}`,
		"/etc/crio/broken.json":       `{"auths": {"quay.io": {"auth": "%%%"}}}`,
	})
	ctx := context.Background()
	global := ContainersAuthOptions{Root: root, AuthFile: "/var/lib/kubelet/config.json"}
	def := ContainersAuthOptions{Root: root}
	tests := []struct {
		o    ContainersAuthOptions
		ref  string
		want string // user, or "" for anonymous
	}{
		{global, "quay.io/team/app:1", "team-user"},
		{global, "quay.io/other/app:1", "registry-user"},
		{global, "docker.io/library/nginx:1", "hub-user"},
		{global, "mirror.corp.example/app:1", ""}, // global_auth_file is the only file read
		{def, "mirror.corp.example/app:1", "mirror-user"},
		{def, "legacy.corp.example/app:1", "legacy-user"},
		{def, "quay.io/team/app:1", ""},
	}
	for _, tt := range tests {
		ref, err := ParseReference(tt.ref)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ContainersCredentials(ctx, tt.o, ref)
		if err != nil {
			t.Errorf("ContainersCredentials(%s, %s): %v", tt.o.AuthFile, tt.ref, err)
			continue
		}
		if c.Username != tt.want {
			t.Errorf("ContainersCredentials(%s, %s) = %s, want user %q", tt.o.AuthFile, tt.ref, c, tt.want)
		}
		if tt.want != "" && c.Password != secretPassword {
			t.Errorf("ContainersCredentials(%s, %s): the password was not read", tt.o.AuthFile, tt.ref)
		}
		shown := c.String() + fmt.Sprintf("%v %+v %#v", c, c, c)
		if b, err := json.Marshal(c); err == nil {
			shown += string(b)
		}
		if strings.Contains(shown, secretPassword) {
			t.Errorf("ContainersCredentials(%s): the password shows: %s", tt.ref, shown)
		}
	}
	ref, _ := ParseReference("quay.io/team/app:1")
	_, err := ContainersCredentials(ctx, ContainersAuthOptions{Root: root, AuthFile: "/etc/crio/broken.json"}, ref)
	var ce *CredentialsError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `auths "quay.io": "auth" is not valid base64`) || strings.Contains(err.Error(), secretPassword) {
		t.Errorf("ContainersCredentials(broken) = %v, want the bad entry named", err)
	}
}

func TestReadCRIOConfig(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"/etc/crio/crio.conf": `[crio.image]
global_auth_file = "/etc/crio/auth.json"
pause_image = "registry.k8s.io/pause:3.9"
insecure_registries = ["10.0.0.0/8"]
`,
		"/etc/crio/crio.conf.d/00-default": `[crio.image]
pause_image = "quay.io/openshift/pause:latest"
`,
		"/etc/crio/crio.conf.d/10-mco/01-auth.conf": `[crio.image]
global_auth_file = "/var/lib/kubelet/config.json"
short_name_mode = "disabled"
`,
		"/etc/crio/crio.conf.d/20-insecure.conf": `[crio.image]
insecure_registries = ["legacy.corp.example:5000"]
`,
	})
	c, err := ReadCRIOConfig(CRIOConfigOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range c.Files {
		files = append(files, strings.TrimPrefix(f, root))
	}
	want := []string{"/etc/crio/crio.conf", "/etc/crio/crio.conf.d/00-default", "/etc/crio/crio.conf.d/10-mco/01-auth.conf", "/etc/crio/crio.conf.d/20-insecure.conf"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if c.GlobalAuthFile.Value != "/var/lib/kubelet/config.json" || !strings.HasSuffix(c.GlobalAuthFile.From, "10-mco/01-auth.conf") {
		t.Errorf("global_auth_file = %+v", c.GlobalAuthFile)
	}
	if c.PauseImage.Value != "quay.io/openshift/pause:latest" {
		t.Errorf("pause_image = %+v", c.PauseImage)
	}
	if diff := cmp.Diff([]string{"legacy.corp.example:5000"}, c.InsecureRegistries); diff != "" {
		t.Errorf("insecure_registries (a later list replaces the whole list) (-want +got):\n%s", diff)
	}

	flagged, err := ReadCRIOConfig(CRIOConfigOptions{Root: root,
		Args: []string{"--config-dir=/etc/crio/none", "--global-auth-file", "/etc/crio/flag.json", "--log-level", "info", "-insecure-registry", "a.example", "--insecure-registry=b.example"},
		Env:  map[string]string{"CONTAINER_GLOBAL_AUTH_FILE": "/from/env.json", "CONTAINER_PAUSE_IMAGE": "env.example/pause:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if flagged.GlobalAuthFile.Value != "/etc/crio/flag.json" || flagged.PauseImage.Value != "env.example/pause:1" {
		t.Errorf("flags over env over files: global_auth_file %+v, pause_image %+v", flagged.GlobalAuthFile, flagged.PauseImage)
	}
	if diff := cmp.Diff([]string{"a.example", "b.example"}, flagged.InsecureRegistries); diff != "" {
		t.Errorf("--insecure-registry (-want +got):\n%s", diff)
	}
	if len(flagged.Files) != 1 {
		t.Errorf("--config-dir to a missing folder: files %v, want crio.conf only", flagged.Files)
	}

	if _, err := ReadCRIOConfig(CRIOConfigOptions{Root: root, Args: []string{"-c", "/etc/crio/missing.conf"}}); err == nil || !strings.Contains(err.Error(), "missing.conf") {
		t.Errorf("an explicit --config that is missing = %v, want an error naming it", err)
	}
	writeTree(t, root, map[string]string{"/etc/crio/crio.conf.d/99-bad.conf": "[crio.image]\nshort_name_mode = \"permissive\"\n"})
	if _, err := ReadCRIOConfig(CRIOConfigOptions{Root: root}); err == nil || !strings.Contains(err.Error(), "99-bad.conf: [crio.image] short_name_mode = \"permissive\"") {
		t.Errorf("short_name_mode permissive = %v, want CRI-O's refusal", err)
	}
}

func TestCRIOVersionRules(t *testing.T) {
	c := &CRIOConfig{}
	for _, tt := range []struct {
		version, mode string
		set           string
		insecure      bool
	}{
		{"1.33.4", ShortNameDisabled, "enforcing", true},
		{"1.34.0", ShortNameEnforcing, "", true},
		{"1.34.0", ShortNameDisabled, "disabled", true},
		{"1.35.1", ShortNameEnforcing, "", false},
		{"", ShortNameEnforcing, "", true},
	} {
		c.ShortNameMode = CRIOSetting{Value: tt.set, From: "crio.conf"}
		if got, why := c.EffectiveShortNameMode(CRIOVersion{Version: tt.version}); got != tt.mode || why == "" {
			t.Errorf("EffectiveShortNameMode(%s, short_name_mode=%q) = %s (%s), want %s", tt.version, tt.set, got, why, tt.mode)
		}
		if got := c.InsecureRegistriesApply(CRIOVersion{Version: tt.version}); got != tt.insecure {
			t.Errorf("InsecureRegistriesApply(%s) = %v, want %v", tt.version, got, tt.insecure)
		}
	}
	for v, want := range map[string]bool{"v5.38.0": false, "v5.39.4": false, "v5.41.0": true, "5.42.1": true, "": false} {
		if got := CImageRulesFor(v).Configfile; got != want {
			t.Errorf("CImageRulesFor(%q).Configfile = %v, want %v", v, got, want)
		}
	}
}

func TestCRIOPolicy(t *testing.T) {
	policy := `{
  "default": [{"type": "insecureAcceptAnything"}],
  "transports": {
    "docker": {
      "quay.io/openshift-release-dev": [{"type": "sigstoreSigned", "keyPath": "/etc/pki/release.pub"}],
      "quay.io/openshift-release-dev/ocp-release:4.16.3-x86_64": [{"type": "insecureAcceptAnything"}],
      "*.untrusted.example": [{"type": "reject"}],
      "docker.io": [{"type": "reject"}]
    }
  }
}`
	root := nodeFS(t, map[string]string{"/etc/containers/policy.json": policy})
	n := &CRIONode{Root: root, Home: "/root", Config: &CRIOConfig{}}
	for _, tt := range []struct {
		image, scope string
		reject, sig  bool
	}{
		{"quay.io/openshift-release-dev/ocp-release:4.16.3-x86_64", "quay.io/openshift-release-dev/ocp-release:4.16.3-x86_64", false, false},
		{"quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + digestA, "quay.io/openshift-release-dev", false, true},
		{"registry.untrusted.example:5000/app:1", "*.untrusted.example", true, false},
		{"nginx:1.25", "docker.io", true, false},
		{"registry.corp.example/team/app:1", "default", false, false},
	} {
		ref, err := ParseReference(tt.image)
		if err != nil {
			t.Fatal(err)
		}
		d := n.Policy(ref)
		if d.Err != nil || d.Scope != tt.scope || d.Rejects() != tt.reject || d.NeedsSignature() != tt.sig {
			t.Errorf("Policy(%s) = scope %q types %v err %v, want scope %q reject %v signature %v", tt.image, d.Scope, d.Types, d.Err, tt.scope, tt.reject, tt.sig)
		}
	}
	n.Config.SignaturePolicy = CRIOSetting{Value: "/etc/crio/policy.json", From: "crio.conf"}
	ref, _ := ParseReference("quay.io/team/app:1")
	if d := n.Policy(ref); d.Err == nil || !strings.Contains(d.Err.Error(), "/etc/crio/policy.json does not exist") {
		t.Errorf("Policy with a missing signature_policy = %+v, want the missing file named", d)
	}
}
