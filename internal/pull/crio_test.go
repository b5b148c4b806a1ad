//go:build !fuzzonly

package pull

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/printers"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

// crioRegistry is an in-process registry for the CRI-O walk: TLS from a
// lab CA under a lab name, the test image under repo, an optional basic
// auth user, every request recorded.
type crioRegistry struct {
	name, host string // name.lab.test, name.lab.test:PORT
	srv        *httptest.Server
	mu         sync.Mutex
	reqs       []string // METHOD PATH user
}

func startCRIORegistry(t *testing.T, ca *labsvc.CA, name, repo, user, pass string) *crioRegistry {
	t.Helper()
	img := newTestImage()
	r := &crioRegistry{name: name + ".lab.test"}
	leaf, err := ca.Issue(labsvc.LeafOptions{DNSNames: []string{r.name}})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u, p, _ := req.BasicAuth()
		r.mu.Lock()
		r.reqs = append(r.reqs, req.Method+" "+req.URL.Path+" "+u+":"+p)
		r.mu.Unlock()
		if user != "" && (u != user || p != pass) {
			w.Header().Set("WWW-Authenticate", `Basic realm="lab"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if req.URL.Path == "/v2/" {
			return
		}
		req.URL.Path = strings.Replace(req.URL.Path, "/v2/"+repo+"/", "/v2/app/", 1)
		if !img.serve(w, req) {
			http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`, http.StatusNotFound)
		}
	}))
	r.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	_, port, _ := net.SplitHostPort(r.srv.Listener.Addr().String())
	r.host = r.name + ":" + port
	return r
}

func (r *crioRegistry) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.reqs...)
}

// crioNode writes a node's files under a fresh root (node path ->
// content) and loads CRI-O's configuration from it.
func crioNode(t *testing.T, files map[string]string) (*runtimecfg.RuntimeConfig, string) {
	t.Helper()
	root := t.TempDir()
	files["/var/run/crio/version"] = `"1.35.2"`
	if _, ok := files["/etc/containers/policy.json"]; !ok {
		files["/etc/containers/policy.json"] = `{"default": [{"type": "insecureAcceptAnything"}]}`
	}
	testenv.WriteTree(t, root, files)
	// step 0 as on a node whose crio is not seen running: the cri-o
	// layout asked for, its files under root
	rc, err := runtimecfg.DiscoverRuntime(runtimecfg.RuntimeOptions{Root: root, Runtime: runtimecfg.RuntimeCRIO, ProcRoot: filepath.Join(root, "proc")})
	if err != nil {
		t.Fatalf("DiscoverRuntime: %v", err)
	}
	if _, ok := rc.Registry.(*runtimecfg.CRIONode); !ok {
		t.Fatalf("DiscoverRuntime(cri-o).Registry = %T, want *runtimecfg.CRIONode", rc.Registry)
	}
	return rc, root
}

func probeCRIO(t *testing.T, n *runtimecfg.RuntimeConfig, image string, names []string, mut func(*Options)) *report.ProbeReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := Options{
		Image: image, Platform: "linux/amd64", Runtime: n,
		// a containerd certs.d that must not be read on a CRI-O node
		CertsDir: filepath.Join(t.TempDir(), "containerd-certs.d"),
		Net: netcheck.Config{HostsFile: hostsFile(t, names...), Nameservers: []string{"127.0.0.1:1"},
			DNSTimeout: 300 * time.Millisecond, ConnectTimeout: time.Second, TLSTimeout: 2 * time.Second},
		HTTPTimeout: 2 * time.Second, StallTimeout: 2 * time.Second,
	}
	if mut != nil {
		mut(&o)
	}
	rep, err := Probe(ctx, o)
	if err != nil {
		t.Fatalf("Probe(%s): %v", image, err)
	}
	return rep
}

func TestCRIOMirrors(t *testing.T) {
	ca, err := labsvc.NewCA("")
	if err != nil {
		t.Fatal(err)
	}
	img := newTestImage()
	mirror := startCRIORegistry(t, ca, "mirror", "cache/team/app", "", "")
	// the registry's name resolves to a port nothing listens on: refused
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, deadPort, _ := net.SplitHostPort(dead.Addr().String())
	dead.Close()
	registry := "registry.lab.test:" + deadPort
	names := []string{"mirror.lab.test", "registry.lab.test"}
	conf := func(setting string) string {
		return fmt.Sprintf(`
[[registry]]
prefix = "%s/team"
location = "%s/team"

[[registry.mirror]]
location = "%s/cache/team"
%s
`, registry, registry, mirror.host, setting)
	}
	certs := map[string]string{"/etc/containers/certs.d/" + mirror.host + "/ca.crt": string(ca.CertPEM)}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			out[a] = b
		}
		return out
	}

	t.Run("a mirror saves a dropped registry", func(t *testing.T) {
		files := with(certs, "/etc/containers/registries.conf.d/50-mirror.conf", conf(""))
		files["/etc/containerd/certs.d/"+registry+"/hosts.toml"] = "server = \"https://elsewhere.example\"\n"
		n, _ := crioNode(t, files)
		rep := probeCRIO(t, n, registry+"/team/app:v1", names, nil)
		if rep.Verdict.Code != verdict.OK {
			t.Fatalf("verdict %s: %s, want OK through the mirror", rep.Verdict.Code, rep.Verdict.Summary)
		}
		c := rep.Chain
		if c == nil || c.Runtime != report.RuntimeCRIO || c.ServedBy.Blobs != mirror.host {
			t.Fatalf("chain %+v, want CRI-O's, served by %s", c, mirror.host)
		}
		row := c.Hosts[0]
		if row.Repository != "cache/team/app" || row.Source != "/etc/containers/registries.conf.d/50-mirror.conf:6" || row.Outcome != report.ChainServed {
			t.Errorf("mirror row = %+v, want repository cache/team/app from 50-mirror.conf:6, served", row)
		}
		if rc := rep.RuntimeConfig; rc == nil || rc.Runtime != runtimecfg.RuntimeCRIO || !strings.Contains(strings.Join(rc.Files, " "), "/etc/containers/registries.conf.d/50-mirror.conf") {
			t.Errorf("runtimeConfig = %+v, want cri-o reading 50-mirror.conf", rc)
		}
		var unread bool
		for _, w := range rep.Warnings {
			unread = unread || w.Code == verdict.RuntimeConfigIgnored && strings.Contains(w.Message, "/etc/containerd/certs.d/"+registry+"/hosts.toml")
		}
		if !unread {
			t.Errorf("no RUNTIME_CONFIG_IGNORED warning for containerd's hosts.toml on a CRI-O node: %+v", rep.Warnings)
		}
		if got := c.Hosts[1].Outcome; got != report.ChainNotTried {
			t.Errorf("registry row outcome %s, want not-tried (the mirror served first)", got)
		}
		if reqs := strings.Join(mirror.requests(), "\n"); !strings.Contains(reqs, "GET /v2/cache/team/app/manifests/v1") {
			t.Errorf("the mirror was not asked for the rewritten repository:\n%s", reqs)
		}
		var text bytes.Buffer
		if err := printers.Print(&text, "text", rep, printers.Options{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"SOURCES (CRI-O's order, containers/image, /etc/containers/registries.conf.d/50-mirror.conf)", "https://" + mirror.host + "/v2/cache/team/app", "served by: " + mirror.host, "1 from /etc/containers/registries.conf.d/50-mirror.conf:6"} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("text output lacks %q:\n%s", want, text.String())
			}
		}
	})

	for _, setting := range []string{`pull-from-mirror = "digest-only"`} {
		t.Run("digest-only mirror, tag pull: CRI-O goes to the dropped registry", func(t *testing.T) {
			n, _ := crioNode(t, with(certs, "/etc/containers/registries.conf", conf(setting)))
			before := len(mirror.requests())
			rep := probeCRIO(t, n, registry+"/team/app:v1", names, nil)
			if rep.Verdict.Code != verdict.ConnectRefused || rep.Verdict.Endpoint != "registry.lab.test" {
				t.Fatalf("verdict %s at %s: %s, want CONNECT_REFUSED at the registry", rep.Verdict.Code, rep.Verdict.Endpoint, rep.Verdict.Summary)
			}
			if !strings.Contains(rep.Verdict.Summary, "would be used only for a pull by digest") {
				t.Errorf("summary %q does not say why the mirror was not used", rep.Verdict.Summary)
			}
			var warned bool
			for _, w := range rep.Warnings {
				warned = warned || w.Code == verdict.MirrorDigestOnly && strings.Contains(w.Message, "/etc/containers/registries.conf:6")
			}
			if !warned {
				t.Errorf("no MIRROR_DIGEST_ONLY warning naming registries.conf:6: %+v", rep.Warnings)
			}
			if len(mirror.requests()) != before {
				t.Errorf("the digest-only mirror was asked for a tag pull")
			}
		})
		t.Run("digest-only mirror, digest pull: the mirror serves", func(t *testing.T) {
			n, _ := crioNode(t, with(certs, "/etc/containers/registries.conf", conf(setting)))
			rep := probeCRIO(t, n, registry+"/team/app@"+sha(img.manifest), names, nil)
			if rep.Verdict.Code != verdict.OK || rep.Chain.ServedBy.Manifest != mirror.host {
				t.Fatalf("verdict %s: %s, served by %+v, want OK from the mirror", rep.Verdict.Code, rep.Verdict.Summary, rep.Chain.ServedBy)
			}
		})
	}

	t.Run("a signature policy that rejects the image, and one that is missing", func(t *testing.T) {
		for policy, want := range map[string]string{
			`{"default": [{"type": "insecureAcceptAnything"}], "transports": {"docker": {"registry.lab.test": [{"type": "insecureAcceptAnything"}], "*.lab.test": [{"type": "reject"}]}}}`: `rejects ` + registry + `/team/app:v1 (scope "*.lab.test"`,
			`{"transports": {}}`: `Default policy is missing`,
		} {
			n, _ := crioNode(t, with(certs, "/etc/containers/policy.json", policy))
			rep := probeCRIO(t, n, registry+"/team/app:v1", names, nil)
			if rep.Verdict.Code != verdict.PolicyRejected || rep.Verdict.Condition != verdict.ConditionImage || !strings.Contains(rep.Verdict.Summary, want) || len(rep.Endpoints) != 0 {
				t.Errorf("verdict %s (%s): %s, %d endpoints; want POLICY_REJECTED naming %q before any packet", rep.Verdict.Code, rep.Verdict.Condition, rep.Verdict.Summary, len(rep.Endpoints), want)
			}
		}
	})

	t.Run("a blocked registry is refused before any packet", func(t *testing.T) {
		reg := startCRIORegistry(t, ca, "blocked", "team/app", "", "")
		n, _ := crioNode(t, map[string]string{
			"/etc/containers/registries.conf":                   fmt.Sprintf("[[registry]]\nlocation = %q\n", reg.host),
			"/etc/containers/registries.conf.d/99-blocked.conf": fmt.Sprintf("\n[[registry]]\nlocation = %q\nblocked = true\n", reg.host),
			"/etc/containers/certs.d/" + reg.host + "/ca.crt":   string(ca.CertPEM),
		})
		rep := probeCRIO(t, n, reg.host+"/team/app:v1", []string{"blocked.lab.test"}, nil)
		if rep.Verdict.Code != verdict.RegistryBlocked || rep.Verdict.Condition != verdict.ConditionImage || rep.Verdict.Stage != verdict.StageReference {
			t.Fatalf("verdict %s (%s, %s): %s, want REGISTRY_BLOCKED, image, reference", rep.Verdict.Code, rep.Verdict.Condition, rep.Verdict.Stage, rep.Verdict.Summary)
		}
		if !strings.Contains(rep.Verdict.Summary, "/etc/containers/registries.conf.d/99-blocked.conf:2") {
			t.Errorf("summary %q does not name the drop-in that blocks it", rep.Verdict.Summary)
		}
		if len(reg.requests()) != 0 || len(rep.Endpoints) != 0 {
			t.Errorf("the blocked registry was contacted: %v, endpoints %d", reg.requests(), len(rep.Endpoints))
		}
	})
}

func TestCRIOCredentials(t *testing.T) {
	ca, err := labsvc.NewCA("")
	if err != nil {
		t.Fatal(err)
	}
	const kubeletPass, mirrorPass = "kubelet-S3CRET-pass", "mirror-S3CRET-pass"
	mirror := startCRIORegistry(t, ca, "mirror", "team/app", "mirror-user", mirrorPass)
	reg := startCRIORegistry(t, ca, "registry", "team/app", "kubelet-user", kubeletPass)
	auth := func(user, pass string) string {
		return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	}
	n, _ := crioNode(t, map[string]string{
		"/etc/containers/registries.conf":    fmt.Sprintf("[[registry]]\nlocation = %q\n[[registry.mirror]]\nlocation = %q\n", reg.host, mirror.host),
		"/etc/crio/crio.conf.d/10-auth.conf": "[crio.image]\nglobal_auth_file = \"/var/lib/kubelet/config.json\"\n",
		"/var/lib/kubelet/config.json": fmt.Sprintf(`{"auths": {%q: {"auth": %q}, "registry.lab.test": {"auth": %q}}}`,
			mirror.host, auth("mirror-user", mirrorPass), auth("wrong", "wrong")),
		"/etc/containers/certs.d/" + mirror.host + "/ca.crt": string(ca.CertPEM),
		"/etc/containers/certs.d/" + reg.host + "/ca.crt":    string(ca.CertPEM),
	})
	rep := probeCRIO(t, n, reg.host+"/team/app:v1", []string{"mirror.lab.test", "registry.lab.test"}, func(o *Options) {
		o.Username, o.Password = "kubelet-user", kubeletPass
	})
	if rep.Verdict.Code != verdict.OK || rep.Chain.ServedBy.Blobs != mirror.host {
		t.Fatalf("verdict %s: %s, served by %+v; want OK from the mirror with global_auth_file's credentials", rep.Verdict.Code, rep.Verdict.Summary, rep.Chain.ServedBy)
	}
	for _, r := range mirror.requests() {
		if strings.Contains(r, kubeletPass) {
			t.Errorf("the kubelet's credentials went to a mirror on another registry: %s", r)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{kubeletPass, mirrorPass, auth("mirror-user", mirrorPass)} {
		if strings.Contains(string(b), p) {
			t.Errorf("the report holds a secret (%d bytes of JSON)", len(b))
		}
	}
}
