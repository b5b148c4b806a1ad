package labsvc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// blobFixture seeds an image and returns the storage root and the first layer.
func blobFixture(t *testing.T) (string, Descriptor) {
	t.Helper()
	root := t.TempDir()
	img, err := WriteImage(context.Background(), root, ImageSpec{Repository: "lab/app", Tag: "v1", LayerSizes: []int64{10000}, Seed: 5})
	if err != nil {
		t.Fatalf("WriteImage: %v", err)
	}
	return root, img.Platforms[0].Layers[0]
}

func blobPath(dg string) string {
	hex := strings.TrimPrefix(dg, "sha256:")
	return "/docker/registry/v2/blobs/sha256/" + hex[:2] + "/" + hex + "/data"
}

func startBlob(t *testing.T, cfg BlobHostConfig) *BlobHost {
	t.Helper()
	cfg.Addr = "127.0.0.12:0"
	b, err := StartBlobHost(context.Background(), cfg)
	if err != nil {
		t.Fatalf("StartBlobHost: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func noRedirectClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func TestBlobHostServes(t *testing.T) {
	t.Parallel()
	root, layer := blobFixture(t)
	b := startBlob(t, BlobHostConfig{RootDir: root})
	c := noRedirectClient(5 * time.Second)

	req, _ := http.NewRequest(http.MethodGet, b.URL()+blobPath(layer.Digest), nil)
	req.Header.Set("Authorization", "Bearer should-be-recorded-as-present")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET blob: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sum := sha256.Sum256(body)
	if got := "sha256:" + hex.EncodeToString(sum[:]); resp.StatusCode != 200 || got != layer.Digest {
		t.Errorf("GET blob = %d with digest %s, want 200 with %s", resp.StatusCode, got, layer.Digest)
	}

	req, _ = http.NewRequest(http.MethodGet, b.URL()+blobPath(layer.Digest), nil)
	req.Header.Set("Range", "bytes=100-199")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatalf("ranged GET: %v", err)
	}
	part, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, body[100:200]) {
		t.Errorf("ranged GET = %d with %d bytes, want 206 with bytes 100-199", resp.StatusCode, len(part))
	}

	resp, err = c.Head(b.URL() + blobPath(layer.Digest))
	if err != nil {
		t.Fatalf("HEAD: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != layer.Size {
		t.Errorf("HEAD = %d length %d, want 200 length %d", resp.StatusCode, resp.ContentLength, layer.Size)
	}

	missing := "sha256:" + strings.Repeat("ab", 32)
	resp, err = c.Get(b.URL() + blobPath(missing))
	if err != nil {
		t.Fatalf("GET missing: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET missing blob = %d, want 404", resp.StatusCode)
	}

	reqs := b.Requests()
	if len(reqs) != 4 {
		t.Fatalf("recorded %d requests, want 4: %+v", len(reqs), reqs)
	}
	want := []struct {
		method string
		auth   bool
		status int
	}{{"GET", true, 200}, {"GET", false, 206}, {"HEAD", false, 200}, {"GET", false, 404}}
	for i, w := range want {
		r := reqs[i]
		if r.Method != w.method || r.HasAuthorization != w.auth || r.Status != w.status || r.Host != b.Addr() {
			t.Errorf("request %d = %+v, want %s auth=%v status %d host %s", i, r, w.method, w.auth, w.status, b.Addr())
		}
	}
}

func TestBlobHostFaults(t *testing.T) {
	t.Parallel()
	root, layer := blobFixture(t)
	second := startBlob(t, BlobHostConfig{RootDir: root})
	tests := []struct {
		name   string
		faults BlobFaults
		check  func(t *testing.T, resp *http.Response, body []byte, err error)
	}{
		{"corrupt", BlobFaults{CorruptDigest: layer.Digest}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			sum := sha256.Sum256(body)
			if err != nil || resp.StatusCode != 200 || int64(len(body)) != layer.Size || "sha256:"+hex.EncodeToString(sum[:]) == layer.Digest {
				t.Errorf("corrupt GET = %v/%d, %d bytes, want 200 with %d bytes of the wrong digest", err, status(resp), len(body), layer.Size)
			}
		}},
		{"truncate", BlobFaults{Truncate: "*"}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if !errors.Is(err, io.ErrUnexpectedEOF) || int64(len(body)) >= layer.Size {
				t.Errorf("truncated GET read %d bytes with %v, want fewer than %d and unexpected EOF", len(body), err, layer.Size)
			}
		}},
		{"trickle", BlobFaults{Trickle: layer.Digest, TrickleBytes: 8}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err == nil || len(body) != 8 {
				t.Errorf("trickle GET read %d bytes with %v, want 8 bytes then a timeout", len(body), err)
			}
		}},
		{"redirect-loop", BlobFaults{RedirectLoop: true}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err != nil || resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != blobPath(layer.Digest) {
				t.Errorf("redirect-loop GET = %v/%d Location %q, want 307 to itself", err, status(resp), resp.Header.Get("Location"))
			}
		}},
		{"forbidden", BlobFaults{Forbidden: true}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err != nil || resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "<Code>AccessDenied</Code>") {
				t.Errorf("forbidden GET = %v/%d %q, want 403 with an AccessDenied body", err, status(resp), body)
			}
		}},
		{"extra-redirect", BlobFaults{ExtraRedirectHost: second.URL()}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err != nil || resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != second.URL()+blobPath(layer.Digest) {
				t.Errorf("extra-redirect GET = %v/%d Location %q, want 307 to %s", err, status(resp), resp.Header.Get("Location"), second.URL())
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := startBlob(t, BlobHostConfig{RootDir: root, Faults: tt.faults})
			resp, err := noRedirectClient(time.Second).Get(b.URL() + blobPath(layer.Digest))
			var body []byte
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			tt.check(t, resp, body, err)
		})
	}
}

func status(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

func TestBlobHostRejectsBadConfig(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for name, cfg := range map[string]BlobHostConfig{
		"invalid-wildcard": {Addr: "0.0.0.0:0", RootDir: root},
		"invalid-name":     {Addr: "localhost:0", RootDir: root},
		"invalid-no-root":  {Addr: "127.0.0.1:0"},
		"invalid-extra":    {Addr: "127.0.0.1:0", RootDir: root, Faults: BlobFaults{ExtraRedirectHost: "blob2:80"}},
	} {
		if b, err := StartBlobHost(context.Background(), cfg); err == nil {
			b.Close()
			t.Errorf("StartBlobHost(%s) = nil error, want an error", name)
		}
	}
}
