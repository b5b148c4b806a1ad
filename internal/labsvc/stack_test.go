package labsvc_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrv1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/testenv"
)

// pullOpts returns ggcr options that go through the stack's DNS and CA,
// with the given password (basic credentials; ggcr trades them for a token
// when the registry asks for one).
func pullOpts(t *testing.T, s *labsvc.Stack, password string, timeout time.Duration) []remote.Option {
	rt := s.Transport()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return []remote.Option{
		remote.WithTransport(rt),
		remote.WithAuth(&authn.Basic{Username: s.Username, Password: password}),
		remote.WithContext(ctx),
		remote.WithRetryBackoff(remote.Backoff{Steps: 1}),
		remote.WithRetryStatusCodes(),
	}
}

// pullAll fetches the reference as ggcr would (index or image) and reads
// every layer to the end, which makes ggcr verify each digest. It returns
// the number of layer bytes read.
func pullAll(t *testing.T, s *labsvc.Stack, opts []remote.Option) (int64, error) {
	t.Helper()
	ref, err := name.ParseReference(s.Ref())
	if err != nil {
		t.Fatalf("ParseReference(%q): %v", s.Ref(), err)
	}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return 0, err
	}
	var imgs []ggcrv1.Image
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return 0, err
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return 0, err
		}
		for _, m := range im.Manifests {
			img, err := idx.Image(m.Digest)
			if err != nil {
				return 0, err
			}
			imgs = append(imgs, img)
		}
	} else {
		img, err := desc.Image()
		if err != nil {
			return 0, err
		}
		imgs = append(imgs, img)
	}
	var total int64
	for _, img := range imgs {
		if _, err := img.ConfigFile(); err != nil {
			return total, err
		}
		layers, err := img.Layers()
		if err != nil {
			return total, err
		}
		for _, l := range layers {
			rc, err := l.Compressed()
			if err != nil {
				return total, err
			}
			n, err := io.Copy(io.Discard, rc)
			total += n
			cerr := rc.Close()
			if err != nil {
				return total, err
			}
			if cerr != nil {
				return total, cerr
			}
		}
	}
	return total, nil
}

func transportStatus(err error) int {
	var te *transport.Error
	if errors.As(err, &te) {
		return te.StatusCode
	}
	return 0
}

func TestStackTokenPull(t *testing.T) {
	t.Parallel()
	s := testenv.StartStack(t, labsvc.StackConfig{})
	n, err := pullAll(t, s, pullOpts(t, s, s.Password, 30*time.Second))
	if err != nil {
		t.Fatalf("pull %s: %v", s.Ref(), err)
	}
	if want := s.Image.TotalLayerBytes(); n != want {
		t.Errorf("pull %s read %d layer bytes, want %d", s.Ref(), n, want)
	}
	// The blob host served the layers, and never saw an Authorization header.
	var gets int
	for _, r := range s.Blob.Requests() {
		if r.HasAuthorization {
			t.Errorf("blob host got Authorization on %s %s (Host %s)", r.Method, r.Path, r.Host)
		}
		if r.Method == http.MethodGet && r.Status == http.StatusOK {
			gets++
		}
	}
	if want := len(s.Image.Platforms[0].Layers); gets < want {
		t.Errorf("blob host served %d GETs, want at least %d (one per layer)", gets, want)
	}
	// The token service saw the user and granted pull on the repository.
	var granted bool
	for _, r := range s.Token.Requests() {
		for _, g := range r.Granted {
			if g.Name == s.Image.Repository && r.User == s.Username {
				granted = true
			}
		}
	}
	if !granted {
		t.Errorf("token service requests %+v: want a pull grant on %q for %q", s.Token.Requests(), s.Image.Repository, s.Username)
	}
}

func TestStackScenarios(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, s *labsvc.Stack, err error)
	ok := func(t *testing.T, s *labsvc.Stack, err error) {
		if err != nil {
			t.Fatalf("pull %s: %v, want success", s.Ref(), err)
		}
	}
	wantStatus := func(code int, text string) check {
		return func(t *testing.T, s *labsvc.Stack, err error) {
			if got := transportStatus(err); got != code || !strings.Contains(err.Error(), text) {
				t.Fatalf("pull %s = %v (status %d), want status %d mentioning %q", s.Ref(), err, got, code, text)
			}
		}
	}
	wantErr := func(target func(error) bool, what string) check {
		return func(t *testing.T, s *labsvc.Stack, err error) {
			if err == nil || !target(err) {
				t.Fatalf("pull %s = %v, want %s", s.Ref(), err, what)
			}
		}
	}
	contains := func(text string) check {
		return wantErr(func(err error) bool { return strings.Contains(err.Error(), text) }, "an error mentioning "+strconvQuote(text))
	}
	noAuthAtBlobHost := func(t *testing.T, hosts ...*labsvc.BlobHost) {
		for _, b := range hosts {
			if b == nil {
				continue
			}
			for _, r := range b.Requests() {
				if r.HasAuthorization {
					t.Errorf("blob host %s got an Authorization header on %s %s", b.Addr(), r.Method, r.Path)
				}
			}
		}
	}
	tests := []struct {
		name    string
		cfg     labsvc.StackConfig
		pass    string // "" means the right password
		timeout time.Duration
		check   check
		after   func(t *testing.T, s *labsvc.Stack)
	}{
		{name: "valid-basic", cfg: labsvc.StackConfig{Auth: labsvc.AuthBasic}, check: ok},
		{name: "valid-none", cfg: labsvc.StackConfig{Auth: labsvc.AuthNone}, check: ok},
		{name: "valid-no-redirect", cfg: labsvc.StackConfig{NoRedirect: true}, check: ok},
		{name: "valid-index", cfg: labsvc.StackConfig{Image: labsvc.ImageSpec{Platforms: []string{"linux/amd64", "linux/arm64"}, LayerSizes: []int64{5000}}}, check: ok,
			after: func(t *testing.T, s *labsvc.Stack) {
				var gets int
				for _, r := range s.Blob.Requests() {
					if r.Method == http.MethodGet && r.Status == 200 {
						gets++
					}
				}
				if gets < 2 {
					t.Errorf("blob host served %d GETs for a 2-platform index, want at least 2", gets)
				}
			}},
		{name: "valid-second-hop", cfg: labsvc.StackConfig{SecondHop: true}, check: ok,
			after: func(t *testing.T, s *labsvc.Stack) {
				if len(s.Blob2.Requests()) == 0 {
					t.Errorf("second blob host got no requests, want the layers")
				}
				noAuthAtBlobHost(t, s.Blob2)
			}},
		{name: "invalid-token-wrong-password", cfg: labsvc.StackConfig{}, pass: "wrong", check: wantStatus(401, "UNAUTHORIZED")},
		{name: "invalid-basic-wrong-password", cfg: labsvc.StackConfig{Auth: labsvc.AuthBasic}, pass: "wrong", check: wantStatus(401, "UNAUTHORIZED")},
		{name: "invalid-deny-empty", cfg: labsvc.StackConfig{UserCannotRead: true, DenyMode: labsvc.DenyEmpty}, check: wantStatus(401, "UNAUTHORIZED"),
			after: func(t *testing.T, s *labsvc.Stack) {
				for _, r := range s.Token.Requests() {
					if r.Status != 200 || len(r.Granted) != 0 {
						t.Errorf("token request %+v, want 200 with nothing granted", r)
					}
				}
			}},
		{name: "invalid-deny-forbidden", cfg: labsvc.StackConfig{UserCannotRead: true, DenyMode: labsvc.DenyForbidden}, check: wantStatus(403, "DENIED")},
		{name: "invalid-tls-untrusted", cfg: labsvc.StackConfig{RegistryTLS: labsvc.TLSUntrustedCA}, check: wantErr(func(err error) bool {
			var e x509.UnknownAuthorityError
			return errors.As(err, &e)
		}, "x509.UnknownAuthorityError")},
		{name: "invalid-tls-expired", cfg: labsvc.StackConfig{RegistryTLS: labsvc.TLSExpired}, check: wantErr(func(err error) bool {
			var e x509.CertificateInvalidError
			return errors.As(err, &e) && e.Reason == x509.Expired && strings.Contains(err.Error(), "expired")
		}, "an expired certificate")},
		{name: "invalid-tls-not-yet-valid", cfg: labsvc.StackConfig{RegistryTLS: labsvc.TLSNotYetValid}, check: wantErr(func(err error) bool {
			var e x509.CertificateInvalidError
			return errors.As(err, &e) && strings.Contains(err.Error(), "not yet valid")
		}, "a not-yet-valid certificate")},
		{name: "invalid-tls-wrong-name", cfg: labsvc.StackConfig{RegistryTLS: labsvc.TLSWrongName}, check: wantErr(func(err error) bool {
			var e x509.HostnameError
			return errors.As(err, &e)
		}, "x509.HostnameError")},
		{name: "invalid-blob-host-down", cfg: labsvc.StackConfig{BlobHostDown: true}, check: wantErr(func(err error) bool {
			return errors.Is(err, syscall.ECONNREFUSED)
		}, "connection refused")},
		{name: "invalid-blob-corrupt", cfg: labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{CorruptDigest: "*"}}, check: contains("checksum")},
		{name: "invalid-blob-truncate", cfg: labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{Truncate: "*"}}, check: wantErr(func(err error) bool {
			return errors.Is(err, io.ErrUnexpectedEOF)
		}, "unexpected EOF")},
		{name: "invalid-blob-trickle", cfg: labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{Trickle: "*"}}, timeout: 2 * time.Second, check: wantErr(func(err error) bool {
			return errors.Is(err, context.DeadlineExceeded)
		}, "the deadline to pass")},
		// ggcr v0.22 follows a redirect loop until its context ends (no
		// hop limit), so the loop shows as many hops and a deadline.
		{name: "invalid-blob-redirect-loop", cfg: labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{RedirectLoop: true}}, timeout: time.Second, check: wantErr(func(err error) bool {
			return errors.Is(err, context.DeadlineExceeded)
		}, "the deadline to pass"),
			after: func(t *testing.T, s *labsvc.Stack) {
				if n := len(s.Blob.Requests()); n <= 10 {
					t.Errorf("blob host saw %d requests in a redirect loop, want more than 10 hops", n)
				}
			}},
		{name: "invalid-blob-forbidden", cfg: labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{Forbidden: true}}, check: wantStatus(403, "")},
		{name: "invalid-dns-registry-nxdomain", cfg: labsvc.StackConfig{DNSBehaviours: map[string]labsvc.DNSBehaviour{labsvc.RegistryHostName: labsvc.DNSNXDomain}}, check: contains("NXDOMAIN")},
		{name: "invalid-dns-auth-servfail", cfg: labsvc.StackConfig{DNSBehaviours: map[string]labsvc.DNSBehaviour{labsvc.AuthHostName: labsvc.DNSServFail}}, check: contains("SERVFAIL")},
		{name: "invalid-dns-blob-refused", cfg: labsvc.StackConfig{DNSBehaviours: map[string]labsvc.DNSBehaviour{labsvc.BlobHostName: labsvc.DNSRefused}}, check: contains("REFUSED")},
		{name: "invalid-dns-blob-nodata", cfg: labsvc.StackConfig{DNSBehaviours: map[string]labsvc.DNSBehaviour{labsvc.BlobHostName: labsvc.DNSNoData}}, check: wantErr(func(err error) bool {
			return errors.Is(err, labsvc.ErrDNSNoAddress)
		}, "no address")},
		{name: "invalid-dns-registry-drop", cfg: labsvc.StackConfig{DNSBehaviours: map[string]labsvc.DNSBehaviour{labsvc.RegistryHostName: labsvc.DNSDrop}}, check: contains("timeout")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := testenv.StartStack(t, tt.cfg)
			pass := s.Password
			if tt.pass != "" {
				pass = tt.pass
			}
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 20 * time.Second
			}
			_, err := pullAll(t, s, pullOpts(t, s, pass, timeout))
			tt.check(t, s, err)
			noAuthAtBlobHost(t, s.Blob, s.Blob2)
			if tt.after != nil {
				tt.after(t, s)
			}
		})
	}
}

func strconvQuote(s string) string { return `"` + s + `"` }

func TestStackNodeFiles(t *testing.T) {
	t.Parallel()
	s := testenv.StartStack(t, labsvc.StackConfig{WrongPassword: true, HostsEntries: map[string]string{"registry.lab.test": "127.0.0.10"}})
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		return string(b)
	}
	dnsIP, _, _ := net.SplitHostPort(s.Nameserver())
	if rc := read(s.Files.ResolvConf); !strings.Contains(rc, "\nnameserver "+dnsIP+"\n") {
		t.Errorf("resolv.conf = %q, want a nameserver %s line", rc, dnsIP)
	}
	if h := read(s.Files.Hosts); !strings.Contains(h, "127.0.0.10\tregistry.lab.test\n") {
		t.Errorf("hosts = %q, want the registry entry", h)
	}
	if ca := read(filepath.Join(s.Files.CertsDir, s.RegistryHost, "ca.crt")); ca != string(s.CA.CertPEM) {
		t.Errorf("certs.d/%s/ca.crt is not the lab labsvc.CA", s.RegistryHost)
	}
	var dc struct {
		Auths map[string]struct {
			Auth string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal([]byte(read(s.Files.DockerConfig)), &dc); err != nil {
		t.Fatalf("config.json: %v", err)
	}
	raw, err := base64.StdEncoding.DecodeString(dc.Auths[s.RegistryHost].Auth)
	if err != nil || string(raw) != s.Username+":"+s.Password+"-wrong" {
		t.Errorf("config.json auth for %s = %q, want the user with the wrong password", s.RegistryHost, raw)
	}
	// The stack's IPs and the node files agree with what DNS answers.
	ips, err := labsvc.LookupIP(context.Background(), s.Nameserver(), labsvc.RegistryHostName)
	if regIP, _, _ := net.SplitHostPort(s.Reg.Addr()); err != nil || len(ips) != 1 || ips[0].String() != regIP {
		t.Errorf("LookupIP(%s) = %v, %v, want [%s]", labsvc.RegistryHostName, ips, err, regIP)
	}
}

func BenchmarkStackPull8MiB(b *testing.B) {
	const size = 8 << 20
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := labsvc.StartStack(ctx, labsvc.StackConfig{Dir: b.TempDir(), Image: labsvc.ImageSpec{LayerSizes: []int64{size}}})
	if err != nil {
		b.Fatalf("StartStack: %v", err)
	}
	defer s.Close()
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ref, _ := name.ParseReference(s.Ref())
		img, err := remote.Image(ref, remote.WithTransport(s.Transport()), remote.WithAuth(&authn.Basic{Username: s.Username, Password: s.Password}), remote.WithContext(ctx))
		if err != nil {
			b.Fatalf("remote.Image: %v", err)
		}
		layers, err := img.Layers()
		if err != nil {
			b.Fatalf("Layers: %v", err)
		}
		for _, l := range layers {
			rc, err := l.Compressed()
			if err != nil {
				b.Fatalf("Compressed: %v", err)
			}
			if _, err := io.Copy(io.Discard, rc); err != nil {
				b.Fatalf("read layer: %v", err)
			}
			rc.Close()
		}
	}
}
