package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/testenv"
)

// TestProbeCommandProxy runs `pullpath probe` with the runtime's proxy
// settings given as a saved environment or as flags, through the real
// squid.
func TestProbeCommandProxy(t *testing.T) {
	if why := labsvc.SquidAvailable(false); why != "" {
		testenv.Unavailable(t, why)
	}
	st := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.4.53", Registry: "127.0.4.10", Token: "127.0.4.11", Blob: "127.0.4.12", Blob2: "127.0.4.13"}})
	sq, err := labsvc.StartSquid(context.Background(), labsvc.SquidConfig{Listen: "127.0.4.62:0", Users: map[string]string{"puller": "squid-secret-3"},
		Hosts: map[string]string{labsvc.RegistryHostName: "127.0.4.10", labsvc.AuthHostName: "127.0.4.11", labsvc.BlobHostName: "127.0.4.12"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	env := filepath.Join(t.TempDir(), "environ")
	if err := os.WriteFile(env, []byte("PATH=/usr/bin\x00HTTPS_PROXY=http://puller:squid-secret-3@"+sq.Addr+"\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		out    string
		errOut string
		noOut  string
	}{
		{"through the proxy from the runtime's saved environment", []string{"--runtime-env", env}, 0, "via proxy " + sq.Addr, "", "squid-secret-3"},
		{"json says the proxy without its password", []string{"--runtime-env", env, "-o", "json"}, 0, `"via": "proxy"`, "", "squid-secret-3"},
		{"the proxy's password refused: exit 10 (proxy)", []string{"--https-proxy", "http://puller:not-it-4@" + sq.Addr}, 10, "PROXY_AUTH_REQUIRED", "", "not-it-4"},
		{"a proxy that is down: exit 10", []string{"--https-proxy", "http://127.0.4.63:3128"}, 10, "PROXY_REFUSED", "", ""},
		{"NO_PROXY sends the whole pull direct", []string{"--runtime-env", env, "--no-proxy", ".lab.test"}, 0, "direct (NO_PROXY .lab.test)", "", ""},
		{"--no-node-proxy with a proxy flag is a usage error", []string{"--no-node-proxy", "--https-proxy", "http://p:1"}, 1, "", "--no-node-proxy walks direct", ""},
		{"a socks5 proxy is not walked", []string{"--https-proxy", "socks5://p:1080"}, 1, "", "scheme socks5", ""},
		{"a missing --runtime-env file", []string{"--runtime-env", filepath.Join(t.TempDir(), "nope")}, 1, "", "--runtime-env", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"probe", st.Ref(), "--docker-config", st.Files.DockerConfig}, nodeFlags(st)...)
			args = append(args, tt.args...)
			code, out, errOut := runCLI(t, "", args...)
			if code != tt.code {
				t.Fatalf("pullpath %v = exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, tt.code, out, errOut)
			}
			if !strings.Contains(out, tt.out) {
				t.Errorf("stdout does not say %q:\n%s", tt.out, out)
			}
			if !strings.Contains(errOut, tt.errOut) || tt.errOut != "" && strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("stderr %q: want one line saying %q", errOut, tt.errOut)
			}
			if tt.noOut != "" && strings.Contains(out+errOut, tt.noOut) {
				t.Errorf("output holds the proxy password %q", tt.noOut)
			}
		})
	}
}
