package cli

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
)

// TestProbeInlineCredentialsNeverShow: the node's containerd config holds
// the registry's credentials in registry.configs.HOST.auth (as Bottlerocket
// and k3s render them), the probe is given no credential and no folder:
// step 0 finds the config under --host-root, the walk authenticates with
// those credentials (the registry lets only that user pull, so a pull that
// works proves they were sent), and no output format shows the password,
// its base64 auth form or user:password; the report says where they came
// from, by file and line.
func TestProbeInlineCredentialsNeverShow(t *testing.T) {
	b := make([]byte, 12)
	rand.Read(b)
	pw := "inline-pw-" + hex.EncodeToString(b)
	st := testenv.StartStack(t, labsvc.StackConfig{Password: pw})
	ca, err := os.ReadFile(st.Files.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	encoded := base64.StdEncoding.EncodeToString([]byte(st.Username + ":" + pw))
	for _, form := range []struct{ name, auth string }{
		{"username and password", fmt.Sprintf("username = %q\n  password = %q", st.Username, pw)},
		{"auth", fmt.Sprintf("auth = %q", encoded)},
	} {
		root := testenv.NodeFS(t, map[string]string{
			"/etc/containerd/certs.d/" + st.RegistryHost + "/ca.crt": string(ca),
			"/etc/containerd/config.toml":                            fmt.Sprintf("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.%q.auth]\n  %s\n", st.RegistryHost, form.auth),
		})
		for _, format := range []string{"text", "wide", "json", "yaml"} {
			t.Run(form.name+"/"+format, func(t *testing.T) {
				code, out, errOut := runCLI(t, "", "probe", st.Ref(), "--host-root", root, "--nameserver", st.Nameserver(), "--hosts-file", st.Files.Hosts,
					"--platform", "linux/amd64", "--no-progress", "--connect-timeout", "2s", "-o", format)
				if code != 0 {
					t.Fatalf("exit %d, want 0: the config's credentials pull (the test would prove nothing otherwise)\n%s\n%s", code, out, errOut)
				}
				for name, secret := range map[string]string{"password": pw, "auth": encoded, "user:password": st.Username + ":" + pw} {
					if strings.Contains(out, secret) || strings.Contains(errOut, secret) {
						t.Errorf("the %s shows in the %s output:\n%s\n%s", name, format, out, errOut)
					}
				}
				if format != "json" {
					return
				}
				var rep report.ProbeReport
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatal(err)
				}
				var src []string
				for _, s := range rep.RuntimeConfig.Sources {
					if s.Kind == "configs.auth" {
						src = append(src, fmt.Sprintf("%s:%d %s", s.Path, s.Line, s.Registry))
					}
				}
				if want := "/etc/containerd/config.toml:4 " + st.RegistryHost; len(src) != 1 || src[0] != want {
					t.Errorf("credential sources %q, want %q", src, want)
				}
			})
		}
	}
}
