package crirun

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite internal/explain/testdata/runtime fixtures from the runtime's real messages")

// fixtureDir is where the runtime's messages become explain's test data.
const fixtureDir = "../explain/testdata/runtime"

// The lab zone: every name resolves to a loopback address inside the test
// namespace; nx.lab.test does not exist.
const (
	nameserver   = "127.0.0.53"
	hostHealthy  = "registry.lab.test"
	hostUntrust  = "untrusted.lab.test"
	hostRefused  = "refused.lab.test"
	hostAuth     = "auth.lab.test"
	hostNX       = "nx.lab.test"
	labUser      = "puller"
	labPassword  = "s3cret-lab-password"
	labImageRepo = "lab/app"
	labImageTag  = "v1"
)

var labZone = labDNS{
	hostHealthy: "127.0.0.10",
	hostUntrust: "127.0.0.11",
	hostRefused: "127.0.0.12", // nothing listens there
	hostAuth:    "127.0.0.13",
}

// lab is one namespace with DNS, three registries and a node certs.d.
type lab struct {
	ns    string
	certs string
}

func startLab(t *testing.T) *lab {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ns := testNetns(t, nameserver)
	startDNS(t, ns, net.JoinHostPort(nameserver, "53"), labZone)

	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := labsvc.WriteImage(ctx, storage, labsvc.ImageSpec{Repository: labImageRepo, Tag: labImageTag, LayerSizes: []int64{256 << 10, 64 << 10}, Seed: 7}); err != nil {
		t.Fatalf("WriteImage: %v", err)
	}
	trusted, err := labsvc.NewCA("pullpath crirun test CA")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := labsvc.NewCA("a CA the node does not trust")
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := labsvc.WriteHtpasswd(htpasswd, map[string]string{labUser: labPassword}); err != nil {
		t.Fatal(err)
	}
	certs := filepath.Join(dir, "certs.d")
	for _, h := range []string{hostHealthy, hostAuth} {
		if err := trusted.WriteCAFile(filepath.Join(certs, h, "ca.crt")); err != nil {
			t.Fatal(err)
		}
	}
	regs := []struct {
		host string
		ca   *labsvc.CA
		auth string
	}{
		{hostHealthy, trusted, labsvc.AuthNone},
		{hostUntrust, stranger, labsvc.AuthNone},
		{hostAuth, trusted, labsvc.AuthBasic},
	}
	for _, rg := range regs {
		leaf, err := rg.ca.Issue(labsvc.LeafOptions{DNSNames: []string{rg.host}})
		if err != nil {
			t.Fatal(err)
		}
		cert, err := leaf.TLSCertificate()
		if err != nil {
			t.Fatal(err)
		}
		cfg := labsvc.RegistryConfig{
			Addr: net.JoinHostPort(labZone[rg.host], "443"), RootDir: storage, Cert: &cert,
			Auth: rg.auth, HtpasswdFile: htpasswd,
		}
		var reg *labsvc.Registry
		if err := testenv.InNetns(ns, func() (err error) { reg, err = labsvc.StartRegistry(ctx, cfg); return }); err != nil {
			t.Fatalf("StartRegistry(%s): %v", rg.host, err)
		}
		t.Cleanup(func() { _ = reg.Close() })
	}
	return &lab{ns: ns, certs: certs}
}

// startRuntime starts containerd in the lab's namespace; its log is
// printed only when the test fails.
func startRuntime(t *testing.T, l *lab, crictl string) (*Runtime, string) {
	t.Helper()
	var log syncBuffer
	wd := filepath.Join(t.TempDir(), "ctrd")
	r, err := Start(context.Background(), Options{Netns: l.ns, WorkDir: wd, CertsDir: l.certs, Crictl: crictl, Log: &log})
	if err != nil {
		t.Fatalf("Start: %v\ncontainerd log:\n%s", err, log.String())
	}
	t.Cleanup(func() {
		if err := r.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if t.Failed() {
			t.Logf("containerd log:\n%s", log.String())
		}
	})
	return r, wd
}

type pullCase struct {
	name     string // fixture name
	scenario string
	ref      string
	auth     *Auth
	wantOK   bool
	wantCode string
	wantMsg  string // the exact message (shape recorded in the containerd note)
	expect   string // explain's expected reading, for the fixture
}

func labRef(host string) string { return host + "/" + labImageRepo + ":" + labImageTag }

func pullCases() []pullCase {
	head := func(host string) string {
		return fmt.Sprintf(`failed to pull and unpack image %q: failed to resolve reference %q: failed to do request: Head "https://%s/v2/%s/manifests/%s": `,
			labRef(host), labRef(host), host, labImageRepo, labImageTag)
	}
	resolve := func(host string) string {
		return fmt.Sprintf(`failed to pull and unpack image %q: failed to resolve reference %q: `, labRef(host), labRef(host))
	}
	return []pullCase{
		{name: "healthy", scenario: "healthy registry, lab CA in certs.d, anonymous pull", ref: labRef(hostHealthy), wantOK: true},
		{name: "healthy-cold-again", scenario: "the same pull after RemoveAll", ref: labRef(hostHealthy), wantOK: true},
		{name: "valid-nxdomain", scenario: "the node's resolver answers NXDOMAIN for the registry name",
			ref: labRef(hostNX), wantCode: "Unknown",
			wantMsg: head(hostNX) + "dial tcp: lookup " + hostNX + " on " + nameserver + ":53: no such host",
			expect:  "stage=registry cause=dns code=DNS_NXDOMAIN condition=dns"},
		{name: "valid-connect-refused", scenario: "the registry name resolves; nothing listens on 443 (refused)",
			ref: labRef(hostRefused), wantCode: "Unknown",
			wantMsg: head(hostRefused) + "dial tcp " + labZone[hostRefused] + ":443: connect: connection refused",
			expect:  "stage=registry cause=refused code=CONNECT_REFUSED condition=route"},
		{name: "valid-tls-unknown-ca", scenario: "the registry's certificate comes from a CA the node does not trust",
			ref: labRef(hostUntrust), wantCode: "Unknown",
			wantMsg: head(hostUntrust) + "x509: certificate signed by unknown authority",
			expect:  "stage=registry cause=tls code=TLS_UNKNOWN_AUTHORITY condition=tls-identity"},
		{name: "valid-unauthorized-anonymous", scenario: "basic-auth registry, pulled without credentials",
			ref: labRef(hostAuth), wantCode: "Unknown",
			wantMsg: resolve(hostAuth) + "pulling from host " + hostAuth + " failed with status code [manifests " + labImageTag + "]: 401 Unauthorized",
			expect:  "stage=registry cause=unauthorized code=REGISTRY_UNAUTHORIZED condition=tls-identity"},
		{name: "valid-unauthorized-wrong-password", scenario: "basic-auth registry, pulled with a wrong password",
			ref: labRef(hostAuth), auth: &Auth{Username: labUser, Password: "not-" + labPassword}, wantCode: "Unknown",
			wantMsg: resolve(hostAuth) + "pulling from host " + hostAuth + " failed with status code [manifests " + labImageTag + "]: 401 Unauthorized",
			expect:  "stage=registry cause=unauthorized code=REGISTRY_UNAUTHORIZED condition=tls-identity"},
		{name: "authorized", scenario: "basic-auth registry, pulled with the node's credentials", ref: labRef(hostAuth),
			auth: &Auth{Username: labUser, Password: labPassword}, wantOK: true},
		{name: "valid-manifest-not-found", scenario: "the registry works; the tag does not exist",
			ref: hostHealthy + "/" + labImageRepo + ":missing", wantCode: "NotFound",
			wantMsg: fmt.Sprintf(`failed to pull and unpack image "%[1]s": failed to resolve reference "%[1]s": %[1]s: not found`, hostHealthy+"/"+labImageRepo+":missing"),
			expect:  "stage=registry cause=not_found condition=image"},
	}
}

func TestPullRealRuntime(t *testing.T) {
	crictl := needRuntime(t)
	l := startLab(t)
	r, _ := startRuntime(t, l, crictl)
	if !strings.HasPrefix(r.Version(), "containerd ") {
		t.Fatalf("Version() = %q, want \"containerd X.Y.Z\"", r.Version())
	}
	ctx := context.Background()
	for _, tc := range pullCases() {
		t.Run(tc.name, func(t *testing.T) {
			if err := r.RemoveAll(ctx); err != nil {
				t.Fatalf("RemoveAll: %v", err)
			}
			if n := contentCount(t, r); n != 0 {
				t.Fatalf("content store holds %d blobs before the pull, want a cold store", n)
			}
			res := r.Pull(ctx, tc.ref, tc.auth, 20*time.Second)
			t.Logf("%s: ok=%v code=%s %.3fs %s", tc.name, res.OK, res.GRPCCode, res.Duration.Seconds(), res.Message)
			if res.Error != "" {
				t.Fatalf("Pull(%q).Error = %q, want an answer from the runtime", tc.ref, res.Error)
			}
			if res.OK != tc.wantOK {
				t.Fatalf("Pull(%q).OK = %v, want %v (code %s: %s)", tc.ref, res.OK, tc.wantOK, res.GRPCCode, res.Message)
			}
			for _, secret := range []string{labPassword, "not-" + labPassword} {
				if strings.Contains(res.Message, secret) || strings.Contains(res.Event(), secret) {
					t.Errorf("Pull(%q) result carries the password: %q", tc.ref, res.Message)
				}
			}
			if tc.wantOK {
				// 2 layers + config + manifest were fetched.
				if n := contentCount(t, r); n < 4 {
					t.Errorf("after Pull(%q) the content store holds %d blobs, want >= 4", tc.ref, n)
				}
				return
			}
			if res.GRPCCode != tc.wantCode {
				t.Errorf("Pull(%q).GRPCCode = %q, want %q", tc.ref, res.GRPCCode, tc.wantCode)
			}
			if res.Message != tc.wantMsg {
				t.Errorf("Pull(%q).Message =\n  %s\nwant\n  %s", tc.ref, res.Message, tc.wantMsg)
			}
			checkFixture(t, tc, r.Version(), res)
		})
	}
}

// checkFixture writes (with -update) or compares the fixture that keeps
// this real message as explain's test data.
func checkFixture(t *testing.T, tc pullCase, version string, res Result) {
	t.Helper()
	path := filepath.Join(fixtureDir, tc.name+".txt")
	want := fixtureText(tc, version, res)
	if *update {
		if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("fixture %s: %v (run go test ./internal/crirun -run TestPullRealRuntime -update)", path, err)
	}
	if !bytes.Contains(got, []byte("# runtime: "+version+"\n")) {
		t.Logf("fixture %s was recorded with another runtime version; not compared", path)
		return
	}
	if string(got) != want {
		t.Errorf("fixture %s differs from what %s says now:\n%s\nwant\n%s\n(run with -update if the runtime changed)", path, version, got, want)
	}
}

func fixtureText(tc pullCase, version string, res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# scenario: crirun/%s: %s\n", tc.name, tc.scenario)
	fmt.Fprintf(&b, "# runtime: %s\n", version)
	fmt.Fprintf(&b, "# grpc: %s\n", res.GRPCCode)
	fmt.Fprintf(&b, "# expect: %s\n", tc.expect)
	fmt.Fprintf(&b, "# recorded by internal/crirun TestPullRealRuntime (crictl pull through the CRI plugin)\n")
	b.WriteString(res.Event())
	b.WriteString("\n")
	return b.String()
}

// contentCount is the number of blobs in the k8s.io content store.
func contentCount(t *testing.T, r *Runtime) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := r.ctrCmd(ctx, "content", "ls", "-q").Output()
	if err != nil {
		t.Fatalf("ctr content ls: %v", exitDetail(err))
	}
	return len(strings.Fields(string(out)))
}
