package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
)

// labPlugin answers the kubelet's protocol with the credentials its env
// holds (as AKS passes a client secret), for the images it is configured
// for; MODE=fail fails, MODE=garbage answers junk.
const labPlugin = `#!/bin/sh
req=$(cat)
case "$MODE" in
fail) echo "token exchange refused for $LAB_PASS: AccessDenied" >&2; exit 1;;
garbage) echo "not json $LAB_PASS"; exit 0;;
esac
printf '{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse","cacheKeyType":"Registry","cacheDuration":"10m","auth":{"%s":{"username":"%s","password":"%s"}}}\n' "$LAB_REGISTRY" "$LAB_USER" "$LAB_PASS"
`

func writeProviderConfig(t *testing.T, st *labsvc.Stack, mode, user, pass string) (cfg, bin string) {
	t.Helper()
	dir := t.TempDir()
	bin = filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "lab-credential-provider"), []byte(labPlugin), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "credential-provider-config.yaml")
	body := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: lab-credential-provider
  matchImages: ["%s"]
  defaultCacheDuration: 1h
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  env:
  - {name: MODE, value: "%s"}
  - {name: LAB_REGISTRY, value: "%s"}
  - {name: LAB_USER, value: "%s"}
  - {name: LAB_PASS, value: "%s"}
  - {name: AZURE_CLIENT_SECRET, value: "unused-client-secret-value"}
`, st.RegistryHost, mode, st.RegistryHost, user, pass)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, bin
}

func TestProbeWithTheKubeletsIdentity(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.13.53", Registry: "127.0.13.10", Token: "127.0.13.11", Blob: "127.0.13.12", Blob2: "127.0.13.13"}})
	noRead := testenv.StartStack(t, labsvc.StackConfig{UserCannotRead: true, DenyMode: labsvc.DenyForbidden, Addrs: labsvc.StackAddrs{DNS: "127.0.14.53", Registry: "127.0.14.10", Token: "127.0.14.11", Blob: "127.0.14.12", Blob2: "127.0.14.13"}})
	good, goodBin := writeProviderConfig(t, st, "ok", st.Username, st.Password)
	failing, failBin := writeProviderConfig(t, st, "fail", st.Username, st.Password)
	garbage, garbageBin := writeProviderConfig(t, st, "garbage", st.Username, st.Password)
	scoped, scopedBin := writeProviderConfig(t, noRead, "ok", noRead.Username, noRead.Password)

	secretDir := t.TempDir()
	wrongSecret := filepath.Join(secretDir, "wrong.yaml")
	os.WriteFile(wrongSecret, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: stale}\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: "+
		base64.StdEncoding.EncodeToString([]byte(`{"auths":{"`+st.RegistryHost+`":{"username":"puller","password":"stale-pass-9"}}}`))+"\n"), 0o644)
	rightSecret := filepath.Join(secretDir, "right.json")
	os.WriteFile(rightSecret, []byte(`{"auths":{"`+st.RegistryHost+`":{"auth":"`+base64.StdEncoding.EncodeToString([]byte(st.Username+":"+st.Password))+`"}}}`), 0o644)

	for _, tc := range []struct {
		name     string
		st       *labsvc.Stack
		args     []string
		wantCode int
		want     []string // in the text output
		attempts int
	}{
		{"the plugin's credentials pull", st, []string{"--image-credential-provider-config", good, "--image-credential-provider-bin-dir", goodBin}, 0, []string{"VERDICT  OK", "lab-credential-provider"}, 1},
		{"a failing plugin is its own finding", st, []string{"--image-credential-provider-config", failing, "--image-credential-provider-bin-dir", failBin}, 6, []string{"CREDENTIALS_ERROR", "exited with exit status 1", "AccessDenied"}, 1},
		{"a plugin answering garbage", st, []string{"--image-credential-provider-config", garbage, "--image-credential-provider-bin-dir", garbageBin}, 6, []string{"CREDENTIALS_ERROR", "not a JSON CredentialProviderResponse"}, 1},
		{"a valid identity without read is scope", noRead, []string{"--image-credential-provider-config", scoped, "--image-credential-provider-bin-dir", scopedBin}, 6, []string{"AUTH_FORBIDDEN", "this identity is valid but may not pull lab/app"}, 1},
		{"pull secrets in order: a stale one, then the right one", st, []string{"--pull-secret", wrongSecret, "--pull-secret", rightSecret}, 0, []string{"VERDICT  OK"}, 2},
		{"a stale pull secret alone is rejected credentials", st, []string{"--pull-secret", wrongSecret}, 6, []string{"AUTH_UNAUTHORIZED"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secrets := []string{st.Password, noRead.Password, "stale-pass-9", "unused-client-secret-value"}
			for _, format := range []string{"text", "wide", "json", "yaml"} {
				args := append(append([]string{"probe", tc.st.Ref(), "-o", format}, nodeFlags(tc.st)...), tc.args...)
				code, out, errOut := runCLI(t, "", args...)
				if code != tc.wantCode {
					t.Fatalf("-o %s: exit %d, want %d\n%s\n%s", format, code, tc.wantCode, out, errOut)
				}
				for _, s := range secrets {
					if strings.Contains(out+errOut, s) {
						t.Errorf("-o %s: output contains the secret %q", format, s)
					}
				}
				if format == "text" {
					for _, w := range tc.want {
						if !strings.Contains(out, w) {
							t.Errorf("text output lacks %q:\n%s", w, out)
						}
					}
				}
				if format == "json" {
					var rep report.ProbeReport
					if err := json.Unmarshal([]byte(out), &rep); err != nil {
						t.Fatal(err)
					}
					if rep.Identity == nil || len(rep.Identity.Attempts) != tc.attempts {
						t.Errorf("identity %+v, want %d attempts", rep.Identity, tc.attempts)
					}
				}
			}
		})
	}
}

func TestProbeIdentityBadInput(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.15.53", Registry: "127.0.15.10", Token: "127.0.15.11", Blob: "127.0.15.12", Blob2: "127.0.15.13"}})
	dir := t.TempDir()
	notYAML := filepath.Join(dir, "cp.yaml")
	os.WriteFile(notYAML, []byte("providers: [\n"), 0o644)
	badSecret := filepath.Join(dir, "secret.yaml")
	os.WriteFile(badSecret, []byte("kind: Secret\ntype: Opaque\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--image-credential-provider-config", notYAML}, "credential provider config " + notYAML + ": not YAML"},
		{[]string{"--image-credential-provider-config", filepath.Join(dir, "nope.yaml")}, "no such file"},
		{[]string{"--pull-secret", badSecret}, "pull secret " + badSecret + `: type "Opaque"`},
		{[]string{"--kubelet-credentials", "yes"}, `--kubelet-credentials "yes": want auto`},
		{[]string{"--pull-secret", badSecret, "--docker-config", "/x"}, "replaces --username/--password-stdin and --docker-config"},
		{[]string{"--image-credential-provider-bin-dir", dir}, "needs --image-credential-provider-config"},
	} {
		args := append(append([]string{"probe", st.Ref()}, nodeFlags(st)...), tc.args...)
		code, out, errOut := runCLI(t, "", args...)
		if code != 1 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d stderr %q stdout %q, want exit 1 and one line with %q", tc.args, code, errOut, out, tc.want)
		}
	}
}
