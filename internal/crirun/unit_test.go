package crirun

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
)

func TestParseCrictlError(t *testing.T) {
	tests := []struct {
		file     string
		wantOK   bool
		wantCode string
		wantMsg  string
	}{
		{"valid-crictl-stderr-unknown.txt", true, "Unknown",
			`failed to pull and unpack image "127.0.0.1:5999/foo/bar:1": failed to resolve reference "127.0.0.1:5999/foo/bar:1": failed to do request: Head "http://127.0.0.1:5999/v2/foo/bar/manifests/1": dial tcp 127.0.0.1:5999: connect: connection refused`},
		{"valid-crictl-stderr-deadline.txt", true, "DeadlineExceeded", "context deadline exceeded"},
		{"valid-crictl-stderr-unavailable.txt", true, "Unavailable",
			`connection error: desc = "transport: Error while dialing: dial unix /tmp/x/containerd.sock: connect: no such file or directory"`},
		{"invalid-crictl-stderr-nostatus.txt", false, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			code, msg, ok := parseCrictlError(string(b))
			if ok != tc.wantOK || code != tc.wantCode || msg != tc.wantMsg {
				t.Errorf("parseCrictlError(%s) = %q, %q, %v, want %q, %q, %v", tc.file, code, msg, ok, tc.wantCode, tc.wantMsg, tc.wantOK)
			}
		})
	}
}

func TestClientSide(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "valid-crictl-stderr-unavailable.txt"))
	if err != nil {
		t.Fatal(err)
	}
	code, msg, _ := parseCrictlError(string(b))
	if !clientSide(code, msg, string(b)) {
		t.Errorf("clientSide(%q, %q) = false, want true: crictl never reached containerd", code, msg)
	}
	b, err = os.ReadFile(filepath.Join("testdata", "valid-crictl-stderr-unknown.txt"))
	if err != nil {
		t.Fatal(err)
	}
	code, msg, _ = parseCrictlError(string(b))
	if clientSide(code, msg, string(b)) {
		t.Errorf("clientSide(%q, %q) = true, want false: that is the runtime's answer", code, msg)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3\n", "containerd 1.6.20", false},
		{"containerd github.com/containerd/containerd v1.7.24 88bf19b2\n", "containerd 1.7.24", false},
		{"containerd containerd.io 1.6.33 d2d58213\n", "containerd 1.6.33", false},
		{"runc version 1.1.5\n", "", true},
		{"", "", true},
	}
	for _, tc := range tests {
		got, err := parseVersion(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("parseVersion(%q) = %q, %v, want %q (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestNamesPath(t *testing.T) {
	dir := "/tmp/lab/ctrd"
	tests := []struct {
		arg  string
		want bool
	}{
		{"/tmp/lab/ctrd/config.toml", true},
		{"/tmp/lab/ctrd", true},
		{"-address=/tmp/lab/ctrd/containerd.sock", true},
		{"unix:///tmp/lab/ctrd/containerd.sock", true},
		{"/tmp/lab/ctrd2/config.toml", false},
		{"/tmp/lab", false},
		{"containerd", false},
	}
	for _, tc := range tests {
		if got := namesPath(tc.arg, dir); got != tc.want {
			t.Errorf("namesPath(%q, %q) = %v, want %v", tc.arg, dir, got, tc.want)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	tests := map[string]string{
		`/tmp/a\040b`: "/tmp/a b",
		`/plain`:      "/plain",
		`/tab\011x`:   "/tab\tx",
		`/trail\04`:   `/trail\04`,
	}
	for in, want := range tests {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConfigTOML parses the written config with a real TOML parser and
// checks what the note on containerd in a namespace requires.
func TestConfigTOML(t *testing.T) {
	l := newLayout("/tmp/pp-lab/ctrd")
	var cfg map[string]any
	if err := toml.Unmarshal([]byte(configTOML(l, "/tmp/pp-lab/certs.d")), &cfg); err != nil {
		t.Fatalf("configTOML does not parse: %v", err)
	}
	get := func(path ...string) any {
		var cur any = cfg
		for _, p := range path {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[p]
		}
		return cur
	}
	cri := []string{"plugins", "io.containerd.grpc.v1.cri"}
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"version"}, int64(2)},
		{[]string{"root"}, l.root},
		{[]string{"state"}, l.state},
		{[]string{"grpc", "address"}, l.sock},
		{[]string{"ttrpc", "address"}, l.ttrpc},
		{[]string{"debug", "address"}, l.debug},
		{[]string{"metrics", "address"}, ""},
		{[]string{"plugins", "io.containerd.internal.v1.opt", "path"}, l.opt},
		{append(cri, "disable_tcp_service"), true},
		{append(cri, "stream_server_address"), "127.0.0.1"},
		{append(cri, "stream_server_port"), "0"},
		{append(cri, "containerd", "snapshotter"), "overlayfs"},
		{append(cri, "cni", "bin_dir"), l.cniBin},
		{append(cri, "cni", "conf_dir"), l.cniConf},
		{append(cri, "registry", "config_path"), "/tmp/pp-lab/certs.d"},
	}
	for _, c := range checks {
		if got := get(c.path...); !cmp.Equal(got, c.want) {
			t.Errorf("config %s = %#v, want %#v", strings.Join(c.path, "."), got, c.want)
		}
	}
	dis, _ := get("disabled_plugins").([]any)
	if len(dis) == 0 {
		t.Fatal("config disabled_plugins is empty, want the unusable snapshotters")
	}
	for _, d := range dis {
		if d == "io.containerd.runtime.v1.linux" {
			t.Error("config disables io.containerd.runtime.v1.linux; the CRI plugin then fails to load")
		}
	}
}

func TestValidateOptions(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    Options
		want string // a part of the error
	}{
		{"invalid-netns-empty", Options{WorkDir: "/tmp/a/b"}, `network namespace name ""`},
		{"invalid-netns-slash", Options{Netns: "../x", WorkDir: "/tmp/a/b"}, `network namespace name "../x"`},
		{"invalid-workdir-relative", Options{Netns: "n", WorkDir: "a/b"}, "not an absolute path"},
		{"invalid-workdir-root", Options{Netns: "n", WorkDir: "/tmp"}, "too close to /"},
		{"invalid-workdir-quote", Options{Netns: "n", WorkDir: `/tmp/a"b/c`}, "quote"},
		{"invalid-workdir-long", Options{Netns: "n", WorkDir: "/tmp/" + strings.Repeat("x", 100)}, "too long for a unix socket"},
		{"invalid-workdir-not-empty", Options{Netns: "n", WorkDir: full}, "not empty"},
		{"invalid-certs-missing", Options{Netns: "n", WorkDir: "/tmp/pp-none/x", CertsDir: "/nonexistent/certs.d"}, "not a directory"},
		{"invalid-netns-missing", Options{Netns: "pp-no-such-ns", WorkDir: "/tmp/pp-none/x"}, `"pp-no-such-ns" does not exist`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("validate(%+v) = %v, want an error containing %q", tc.o, err, tc.want)
			}
		})
	}
}

// TestPullCmdKeepsSecretsOffArgv checks that credentials reach crictl
// only through its environment, never its argv (which ps shows), and that
// nothing of our own environment leaks into it.
func TestPullCmdKeepsSecretsOffArgv(t *testing.T) {
	r := &Runtime{l: newLayout("/tmp/pp-lab/ctrd"), crictl: "/usr/bin/crictl"}
	auth := &Auth{Username: "puller", Password: "hunter2-secret"}
	cmd, secrets, err := r.pullCmd(context.Background(), "registry.lab.test/lab/app:v1", auth, 40*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("puller:hunter2-secret"))
	argv := strings.Join(cmd.Args, " ")
	for _, s := range []string{"hunter2-secret", b64} {
		if strings.Contains(argv, s) {
			t.Errorf("crictl argv %q carries a secret", argv)
		}
	}
	wantArgs := []string{"/usr/bin/crictl", "--config", "/tmp/pp-lab/ctrd/crictl.yaml",
		"--runtime-endpoint", "unix:///tmp/pp-lab/ctrd/containerd.sock", "--image-endpoint", "unix:///tmp/pp-lab/ctrd/containerd.sock",
		"--timeout", "5s", "pull", "--pull-timeout", "40s", "registry.lab.test/lab/app:v1"}
	if d := cmp.Diff(wantArgs, cmd.Args); d != "" {
		t.Errorf("crictl argv (-want +got):\n%s", d)
	}
	wantEnv := []string{cleanPath, "HOME=/tmp/pp-lab/ctrd", "CRICTL_AUTH=" + b64}
	if d := cmp.Diff(wantEnv, cmd.Env); d != "" {
		t.Errorf("crictl environment (-want +got):\n%s", d)
	}
	msg := scrub("auth puller:hunter2-secret as "+b64+" or hunter2-secret", secrets)
	for _, s := range []string{"hunter2-secret", b64} {
		if strings.Contains(msg, s) {
			t.Errorf("scrub left a secret in %q", msg)
		}
	}
}

func TestPullRejectsBadInput(t *testing.T) {
	r := &Runtime{l: newLayout("/tmp/pp-lab/ctrd"), crictl: "/nonexistent/crictl"}
	tests := []struct {
		ref  string
		auth *Auth
		want string
	}{
		{"", nil, "image reference"},
		{"--help", nil, "image reference"},
		{"a b", nil, "image reference"},
		{"registry.lab.test/a:1", &Auth{Username: "a:b", Password: "p"}, "user name"},
		{"registry.lab.test/a:1", &Auth{Password: "p"}, "user name"},
	}
	for _, tc := range tests {
		res := r.Pull(context.Background(), tc.ref, tc.auth, time.Second)
		if res.OK || res.Error == "" || !strings.Contains(res.Error, tc.want) || res.Message != "" {
			t.Errorf("Pull(%q) = %+v, want an Error containing %q", tc.ref, res, tc.want)
		}
	}
}

func TestResultEvent(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{Result{OK: true, Message: "Image is up to date for sha256:abc"}, ""},
		{Result{GRPCCode: "NotFound", Message: "x: not found"}, "rpc error: code = NotFound desc = x: not found"},
		{Result{Error: "crirun: run crictl: no such file"}, ""},
	}
	for _, tc := range tests {
		if got := tc.r.Event(); got != tc.want {
			t.Errorf("%+v.Event() = %q, want %q", tc.r, got, tc.want)
		}
	}
}
