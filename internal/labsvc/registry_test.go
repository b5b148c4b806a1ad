package labsvc

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// roundTripJSON marshals and unmarshals v, as a lab process reading its
// config from a file would see it.
func roundTripJSON[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %T: %v", v, err)
	}
	return out
}

// TestServicesFromFiles starts each service from a JSON config that names
// files only (as `pullpath lab serve` does), then pulls through them.
func TestServicesFromFiles(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	img, err := WriteImage(ctx, storage, ImageSpec{Repository: "team/svc", Tag: "1.0", LayerSizes: []int64{20000}, Seed: 11})
	if err != nil {
		t.Fatalf("WriteImage: %v", err)
	}
	ca, err := NewCA("")
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	files := func(host string) (string, string) {
		leaf, err := ca.Issue(LeafOptions{DNSNames: []string{host}})
		if err != nil {
			t.Fatalf("Issue(%s): %v", host, err)
		}
		c, k := filepath.Join(dir, host+".crt"), filepath.Join(dir, host+".key")
		if err := leaf.WriteFiles(c, k); err != nil {
			t.Fatalf("WriteFiles: %v", err)
		}
		return c, k
	}
	signer, err := NewTokenSigner()
	if err != nil {
		t.Fatalf("NewTokenSigner: %v", err)
	}
	keyFile, jwks := filepath.Join(dir, "token.key"), filepath.Join(dir, "jwks.json")
	if err := signer.WriteKeyFile(keyFile); err != nil {
		t.Fatalf("WriteKeyFile: %v", err)
	}
	if err := signer.WriteJWKS(jwks); err != nil {
		t.Fatalf("WriteJWKS: %v", err)
	}

	dnsSrv, err := StartDNS(ctx, roundTripJSON(t, DNSConfig{Addr: "127.0.0.53:0", Zones: []string{"corp.example"}, Records: map[string][]DNSRecord{
		"reg.corp.example":  {{Type: "A", Value: "127.0.0.20"}},
		"auth.corp.example": {{Type: "CNAME", Value: "sso.corp.example"}},
		"sso.corp.example":  {{Type: "A", Value: "127.0.0.21"}},
		"s3.corp.example":   {{Type: "A", Value: "127.0.0.22"}},
	}}))
	if err != nil {
		t.Fatalf("StartDNS: %v", err)
	}
	defer dnsSrv.Close()
	bc, bk := files("s3.corp.example")
	blob, err := StartBlobHost(ctx, roundTripJSON(t, BlobHostConfig{Addr: "127.0.0.22:0", RootDir: storage, CertFile: bc, KeyFile: bk}))
	if err != nil {
		t.Fatalf("StartBlobHost: %v", err)
	}
	defer blob.Close()
	tc, tk := files("auth.corp.example")
	tok, err := StartTokenServer(ctx, roundTripJSON(t, TokenConfig{Addr: "127.0.0.21:0", CertFile: tc, KeyFile: tk, Issuer: "corp-iss", Service: "corp-registry",
		SigningKeyFile: keyFile, Users: map[string]User{"ci": {Password: "ci-pass", Read: []string{"team/*"}}}, DenyMode: DenyForbidden}))
	if err != nil {
		t.Fatalf("StartTokenServer: %v", err)
	}
	defer tok.Close()
	if tok.Signer().KeyID != signer.KeyID {
		t.Fatalf("token server key ID %q, want %q from the key file", tok.Signer().KeyID, signer.KeyID)
	}
	_, blobPort, _ := net.SplitHostPort(blob.Addr())
	_, tokPort, _ := net.SplitHostPort(tok.Addr())
	rc, rk := files("reg.corp.example")
	reg, err := StartRegistry(ctx, roundTripJSON(t, RegistryConfig{Addr: "127.0.0.20:0", RootDir: storage, CertFile: rc, KeyFile: rk, Auth: AuthToken,
		TokenRealm: "https://auth.corp.example:" + tokPort + "/token", TokenService: "corp-registry", TokenIssuer: "corp-iss", TokenJWKSFile: jwks,
		RedirectBaseURL: "https://s3.corp.example:" + blobPort + "/"}))
	if err != nil {
		t.Fatalf("StartRegistry: %v", err)
	}
	defer reg.Close()
	if !strings.HasPrefix(reg.URL(), "https://127.0.0.20:") {
		t.Errorf("registry URL = %q, want https://127.0.0.20:PORT", reg.URL())
	}

	_, regPort, _ := net.SplitHostPort(reg.Addr())
	ref, err := name.ParseReference("reg.corp.example:" + regPort + "/team/svc:1.0")
	if err != nil {
		t.Fatalf("ParseReference: %v", err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
	defer pcancel()
	rt := &http.Transport{DialContext: DialContextVia(dnsSrv.Addr()), TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}
	image, err := remote.Image(ref, remote.WithTransport(rt), remote.WithContext(pctx), remote.WithAuth(&authn.Basic{Username: "ci", Password: "ci-pass"}))
	if err != nil {
		t.Fatalf("remote.Image(%s): %v", ref, err)
	}
	dg, err := image.Digest()
	if err != nil || dg.String() != img.Top.Digest {
		t.Errorf("pulled manifest digest %v (%v), want %s", dg, err, img.Top.Digest)
	}
	layers, _ := image.Layers()
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatalf("layer: %v", err)
		}
		if _, err := io.ReadAll(rc); err != nil {
			t.Errorf("read layer: %v", err)
		}
		rc.Close()
	}
	if len(blob.Requests()) == 0 {
		t.Errorf("blob host got no requests, want the redirected layer GET")
	}

	// Cancelling the context stops every service.
	cancel()
	// a listener closes a moment after its context ends: retry each dial,
	// bounded (5s), until it is refused
	for what, addr := range map[string]string{"registry": reg.Addr(), "token": tok.Addr(), "blob": blob.Addr(), "dns/tcp": dnsSrv.Addr()} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil && !errors.Is(err, syscall.ECONNRESET) { // reset: the listener is closing
				if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("dial %s %s after the context ended = %v, want connection refused", what, addr, err)
				}
				break
			}
			if c != nil {
				c.Close()
			}
			if time.Now().After(deadline) {
				t.Errorf("%s still accepts on %s 5s after the context ended", what, addr)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestRegistryRejectsBadConfig(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tests := map[string]RegistryConfig{
		"invalid-no-root":        {Addr: "127.0.0.1:0"},
		"invalid-root-missing":   {Addr: "127.0.0.1:0", RootDir: filepath.Join(root, "nope")},
		"invalid-wildcard":       {Addr: ":0", RootDir: root},
		"invalid-auth":           {Addr: "127.0.0.1:0", RootDir: root, Auth: "oauth"},
		"invalid-basic-no-file":  {Addr: "127.0.0.1:0", RootDir: root, Auth: AuthBasic},
		"invalid-token-no-realm": {Addr: "127.0.0.1:0", RootDir: root, Auth: AuthToken, TokenService: "s", TokenIssuer: "i", TokenJWKSFile: "j"},
		"invalid-token-no-jwks":  {Addr: "127.0.0.1:0", RootDir: root, Auth: AuthToken, TokenRealm: "https://a/token", TokenService: "s", TokenIssuer: "i", TokenJWKSFile: filepath.Join(root, "missing.json")},
		"invalid-redirect":       {Addr: "127.0.0.1:0", RootDir: root, RedirectBaseURL: "blob:80"},
		"invalid-tls-half":       {Addr: "127.0.0.1:0", RootDir: root, CertFile: "c.pem"},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := StartRegistry(context.Background(), cfg)
			if err == nil {
				r.Close()
				t.Fatalf("StartRegistry(%+v) = nil error, want an error", cfg)
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error %q spans several lines, want one", err)
			}
		})
	}
}
