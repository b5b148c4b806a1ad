package labsvc

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestManifestsTooMany: the rate-limited upstream of a lab cache answers
// manifest requests 429 TOOMANYREQUESTS and forwards everything else.
func TestManifestsTooMany(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "upstream "+r.URL.Path)
	}))
	defer up.Close()
	m, err := StartMirror(context.Background(), MirrorConfig{Addr: "127.0.0.1:0", Behaviour: MirrorManifestsTooMany, Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, c := range []struct {
		method, path string
		status       int
		body         string
	}{
		{http.MethodGet, "/v2/", 200, "upstream /v2/"},
		{http.MethodGet, "/v2/shop/checkout/blobs/sha256:aa", 200, "upstream /v2/shop/checkout/blobs/sha256:aa"},
		{http.MethodHead, "/v2/shop/checkout/manifests/1.4.2", 429, ""},
		{http.MethodGet, "/v2/shop/checkout/manifests/1.4.2", 429, `"code":"TOOMANYREQUESTS"`},
	} {
		req, _ := http.NewRequest(c.method, "http://"+m.Addr()+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.body) {
			t.Errorf("%s %s = %d %q, want %d with %q", c.method, c.path, resp.StatusCode, b, c.status, c.body)
		}
	}
}
