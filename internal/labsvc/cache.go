package labsvc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// dialAs returns a DialContext that dials addr whenever host (HOST or
// HOST:PORT, as in a URL) is asked for, and anything else as asked: a
// hosts-file line for one name. nil when addr is empty.
func dialAs(host, addr string) func(ctx context.Context, network, a string) (net.Conn, error) {
	if addr == "" {
		return nil
	}
	var d net.Dialer
	return func(ctx context.Context, network, a string) (net.Conn, error) {
		h, _, _ := net.SplitHostPort(a)
		if a == host || h == host || h == hostOnly(host) {
			a = addr
		}
		return d.DialContext(ctx, network, a)
	}
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// setUpstreamTransport makes http.DefaultTransport trust caFile and dial
// addr for host (either may be empty).
func setUpstreamTransport(host, caFile, addr string) error {
	if caFile == "" && addr == "" {
		return nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return fmt.Errorf("CA file %s: %v", caFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("CA file %s: no PEM certificate in it", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if d := dialAs(host, addr); d != nil {
		tr.DialContext = d
	}
	tr.Proxy = nil
	http.DefaultTransport = tr
	return nil
}

// WarmCache pulls repository:tag through the pull-through cache at base
// (scheme://IP:PORT, reached with tlsConf) once, as a node would: the
// manifest by tag, the manifests of an index, the config and every layer,
// each read to its end, so that the cache holds them. It returns the
// blobs' digests (the cache commits a blob just after it served it: see
// WaitStored).
func WarmCache(ctx context.Context, base string, tlsConf *tls.Config, repository, tag string) ([]string, error) {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf, Proxy: nil}, Timeout: 60 * time.Second}
	get := func(path string, accept string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return nil, err
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %v", path, err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b)))
		}
		return b, nil
	}
	accept := strings.Join([]string{MediaTypeIndex, MediaTypeManifest,
		"application/vnd.docker.distribution.manifest.list.v2+json", "application/vnd.docker.distribution.manifest.v2+json"}, ", ")
	repo := "/v2/" + repository
	type desc struct {
		Digest string `json:"digest"`
	}
	var m struct {
		Manifests []desc `json:"manifests"`
		Config    *desc  `json:"config"`
		Layers    []desc `json:"layers"`
	}
	b, err := get(repo+"/manifests/"+url.PathEscape(tag), accept)
	if err != nil {
		return nil, fmt.Errorf("warm %s:%s: %v", repository, tag, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("warm %s:%s: manifest: %v", repository, tag, err)
	}
	manifests := []struct {
		Config *desc
		Layers []desc
	}{{m.Config, m.Layers}}
	for _, d := range m.Manifests {
		b, err := get(repo+"/manifests/"+d.Digest, accept)
		if err != nil {
			return nil, fmt.Errorf("warm %s:%s: %v", repository, tag, err)
		}
		var cm struct {
			Config *desc  `json:"config"`
			Layers []desc `json:"layers"`
		}
		if err := json.Unmarshal(b, &cm); err != nil {
			return nil, fmt.Errorf("warm %s:%s: manifest %s: %v", repository, tag, d.Digest, err)
		}
		manifests = append(manifests, struct {
			Config *desc
			Layers []desc
		}{cm.Config, cm.Layers})
	}
	var got []string
	for _, mm := range manifests {
		blobs := mm.Layers
		if mm.Config != nil {
			blobs = append([]desc{*mm.Config}, blobs...)
		}
		for _, d := range blobs {
			if _, err := get(repo+"/blobs/"+d.Digest, ""); err != nil {
				return got, fmt.Errorf("warm %s:%s: %v", repository, tag, err)
			}
			got = append(got, d.Digest)
		}
	}
	return got, nil
}

// WaitStored waits until every blob of digests is in the filesystem
// storage under rootDir (what a registry's filesystem driver writes on
// commit), or ctx ends.
func WaitStored(ctx context.Context, rootDir string, digests []string) error {
	for _, d := range digests {
		alg, hex, ok := strings.Cut(d, ":")
		if !ok || len(hex) < 2 {
			return fmt.Errorf("digest %q, want ALG:HEX", d)
		}
		f := filepath.Join(rootDir, "docker", "registry", "v2", "blobs", alg, hex[:2], hex, "data")
		for {
			if _, err := os.Stat(f); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("blob %s not stored by the cache: %v", d, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}
