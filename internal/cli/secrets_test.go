package cli

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
)

// A registry and token service that quote back every secret they were
// sent or gave out: the password, user:password and its base64 (the Basic
// header), the token, the Authorization header, and the signature of the
// signed URL they redirect to. For every output format and both ways a
// password arrives (--password-stdin, a credential helper), no secret
// value may appear anywhere in stdout or stderr.
func TestProbeNoSecretInAnyOutput(t *testing.T) {
	rnd := func(p string) string {
		b := make([]byte, 12)
		rand.Read(b)
		return p + hex.EncodeToString(b)
	}
	password, helperPassword := rnd("pw"), rnd("helperpw")
	token, sig := rnd("tok"), rnd("sig")
	config := []byte(`{"architecture":"amd64","os":"linux"}`)
	layer := []byte("layer")
	manifest := fmt.Sprintf(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":%q,"size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":%q,"size":%d}]}`,
		digest.FromBytes(config), len(config), digest.FromBytes(layer), len(layer))

	var mu sync.Mutex
	var heard []string // every credential the servers were sent
	echo := func(w http.ResponseWriter, r *http.Request, status int) {
		mu.Lock()
		all := strings.Join(heard, " ")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"errors":[{"code":"DENIED","message":"you sent %s and %s; your token was %s; sig %s"}]}`,
			strings.ReplaceAll(all, `"`, `'`), r.Header.Get("Authorization"), token, sig)
	}
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if a := r.Header.Get("Authorization"); a != "" {
			heard = append(heard, a)
			if u, p, ok := r.BasicAuth(); ok {
				heard = append(heard, u+":"+p, p)
			}
		}
		mu.Unlock()
		switch {
		case r.URL.Path == "/token":
			if _, p, _ := r.BasicAuth(); p != password && p != helperPassword {
				echo(w, r, http.StatusUnauthorized)
				return
			}
			fmt.Fprintf(w, `{"token":%q}`, token)
		case r.Header.Get("Authorization") != "Bearer "+token && !strings.HasPrefix(r.URL.Path, "/signed/"):
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="reg"`, srv.URL))
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == "/v2/":
		case r.URL.Path == "/v2/app/manifests/v1":
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Write([]byte(manifest))
		case strings.HasPrefix(r.URL.Path, "/v2/app/blobs/"):
			http.Redirect(w, r, "/signed/blob?X-Amz-Signature="+sig+"&X-Amz-Expires=300", http.StatusTemporaryRedirect)
		default:
			echo(w, r, http.StatusForbidden)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")

	// A real credential helper on PATH, as the docker config names it.
	dir := t.TempDir()
	helper := filepath.Join(dir, "docker-credential-hostile")
	if err := os.WriteFile(helper, []byte("#!/bin/sh\ncat >/dev/null\nprintf '{\"Username\":\"u\",\"Secret\":\""+helperPassword+"\"}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	dockerConfig := filepath.Join(dir, "config.json")
	if err := os.WriteFile(dockerConfig, []byte(`{"credHelpers":{"`+host+`":"hostile"}}`), 0o600); err != nil {
		t.Fatal(err)
	}

	// --host-root: an empty node, so the machine's own containerd config
	// (a 1.6 one without config_path walks a loopback registry over plain
	// HTTP) does not decide the walk.
	common := []string{"probe", host + "/app:v1", "--nameserver", "127.0.0.1:1", "--platform", "linux/amd64", "--no-progress", "--http-timeout", "3s", "--host-root", t.TempDir()}
	for _, source := range []struct {
		name     string
		args     []string
		stdin    string
		password string
	}{
		{"password-stdin", []string{"--username", "u", "--password-stdin"}, password + "\n", password},
		{"credential helper", []string{"--docker-config", dockerConfig}, "", helperPassword},
	} {
		secrets := map[string]string{
			"password": source.password, "token": token, "signature": sig, "user:password": "u:" + source.password,
			"basic header value": base64.StdEncoding.EncodeToString([]byte("u:" + source.password)),
		}
		for _, format := range []string{"text", "wide", "json", "yaml"} {
			t.Run(source.name+"/"+format, func(t *testing.T) {
				mu.Lock()
				heard = nil
				mu.Unlock()
				args := append(append(append([]string{}, common...), source.args...), "-o", format)
				code, out, errOut := runCLI(t, source.stdin, args...)
				if code != 5 && code != 8 && code != 6 {
					t.Fatalf("exit %d, want a failure verdict; stdout:\n%s\nstderr:\n%s", code, out, errOut)
				}
				mu.Lock()
				all := strings.Join(heard, " ")
				mu.Unlock()
				if !strings.Contains(all, source.password) {
					t.Fatalf("the servers never heard the password (the test would prove nothing): %q", all)
				}
				if !strings.Contains(out, "DENIED") {
					t.Fatalf("the servers' echo is not in the output (the test would prove nothing):\n%s", out)
				}
				for name, v := range secrets {
					if strings.Contains(out, v) || strings.Contains(errOut, v) {
						t.Errorf("the %s %q appears in the %s output:\n%s\n%s", name, v, format, out, errOut)
					}
				}
			})
		}
	}
}
