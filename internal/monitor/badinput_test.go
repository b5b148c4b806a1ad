package monitor

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputAtStart: each bad input stops the agent at start with exit
// code 1 and one line naming the input and what was expected.
func TestBadInputAtStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	notJSON := write("bad.json", "images: [a\n")
	wrongKind := write("kind.json", `{"apiVersion": "pullpath/v1", "kind": "Pod", "images": ["nginx:1.27"]}`)
	unknownField := write("field.json", `{"kind": "MonitorConfig", "imagez": ["nginx:1.27"]}`)
	badImageInConfig := write("img.json", `{"kind": "MonitorConfig", "images": ["nginx:1.27", "Registry.Example.com/UPPER:1"]}`)
	badInterval := write("int.json", `{"kind": "MonitorConfig", "images": ["nginx:1.27"], "interval": "often"}`)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no image", []string{}, []string{"no image to walk", "--image"}},
		{"config missing", []string{"--config", filepath.Join(dir, "nope.json")}, []string{"--config", "nope.json", "no such file"}},
		{"config is a directory", []string{"--config", dir}, []string{"--config", "is a directory"}},
		{"config not json", []string{"--config", notJSON}, []string{"--config", "bad.json", "not a MonitorConfig"}},
		{"config wrong kind", []string{"--config", wrongKind}, []string{`kind "Pod", want MonitorConfig`}},
		{"config unknown field", []string{"--config", unknownField}, []string{"not a MonitorConfig", "imagez"}},
		{"config invalid image", []string{"--config", badImageInConfig}, []string{"Registry.Example.com/UPPER:1", "must be lowercase"}},
		{"config bad interval", []string{"--config", badInterval}, []string{`interval "often"`, "want a duration"}},
		{"invalid image", []string{"--image", "nginx:1.27", "--image", "bad image"}, []string{`"bad image"`, "invalid reference format"}},
		{"image twice", []string{"--image", "nginx:1.27", "--image", "nginx:1.27"}, []string{"listed twice"}},
		{"metrics port in use", []string{"--image", "nginx:1.27", "--listen", busy.Addr().String()}, []string{"--listen " + busy.Addr().String(), "address already in use"}},
		{"listen not an address", []string{"--image", "nginx:1.27", "--listen", "9090"}, []string{`--listen "9090"`, "HOST:PORT"}},
		{"docker config missing", []string{"--image", "nginx:1.27", "--docker-config", filepath.Join(dir, "none.json")}, []string{"--docker-config", "none.json", "no such file"}},
		{"full shorter than quick", []string{"--image", "nginx:1.27", "--interval", "10m", "--full-interval", "5m"}, []string{"--full-interval 5m0s is shorter than --interval 10m0s"}},
		{"from-cluster outside a cluster", []string{"--from-cluster", "--kube-api", ""}, []string{"--from-cluster needs the Kubernetes API"}},
		{"argument", []string{"nginx:1.27"}, []string{`unexpected argument "nginx:1.27"`, "--image"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb strings.Builder
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // nothing may run: the error comes first
			code := Main(ctx, "pullpath-agent", append([]string{"--node", "n1"}, tt.args...), &out, &errb)
			msg := strings.TrimSpace(errb.String())
			if code != 1 {
				t.Fatalf("Main(%q) = %d, want 1 (stderr %q)", tt.args, code, msg)
			}
			if strings.Count(msg, "\n") != 0 {
				t.Errorf("Main(%q) error is not one line:\n%s", tt.args, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Main(%q) error = %q, want it to contain %q", tt.args, msg, w)
				}
			}
		})
	}
}

// TestOptionalDockerConfig: with --docker-config-optional a missing file
// (an optional Secret not created) is anonymous, not an error at start.
func TestOptionalDockerConfig(t *testing.T) {
	var o Options
	o.Defaults()
	o.Images, o.Node, o.Once = []string{"nginx:1.27"}, "n1", true
	o.DockerConfig = filepath.Join(t.TempDir(), "config.json")
	if _, err := New(o, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("New without the file = %v, want a no such file error", err)
	}
	o.DockerOptional = true
	a, err := New(o, &strings.Builder{})
	if err != nil {
		t.Fatalf("New with --docker-config-optional = %v", err)
	}
	c, err := a.creds.Get(context.Background(), "registry-1.docker.io")
	if err != nil || !c.Anonymous() || !strings.Contains(c.Source, "optional") {
		t.Errorf("credentials = %v (%s), %v; want anonymous, optional", c, c.Source, err)
	}
}
