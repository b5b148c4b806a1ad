package labsvc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

// Mirror behaviours: how a broken mirror or cache of hosts.toml answers.
const (
	// MirrorSilent accepts TCP and never sends a byte: a TLS client waits in
	// its handshake.
	MirrorSilent = "silent"
	// MirrorHang completes TLS, reads each request and never answers it (a
	// hung cache process, a proxy waiting on a dead backend).
	MirrorHang = "hang"
	// MirrorHeadNotFound forwards every request to Upstream but answers a
	// manifest HEAD with 404, as Harbor's proxy cache did before 2.1.1.
	MirrorHeadNotFound = "head-404"
	// MirrorHTML answers every request 200 with an HTML page (a portal, a
	// web server's default site at the mirror's address).
	MirrorHTML = "html"
	// MirrorTooMany answers 429 with the registry error TOOMANYREQUESTS, as
	// a cache passing its upstream's rate limit through.
	MirrorTooMany = "429"
	// MirrorManifestsTooMany answers manifest requests 429 TOOMANYREQUESTS
	// and forwards the rest to Upstream, as Docker Hub limits manifest
	// GETs only: the rate-limited upstream of a lab cache.
	MirrorManifestsTooMany = "manifests-429"
)

// MirrorConfig is one broken mirror.
type MirrorConfig struct {
	Addr      string           // IP:PORT, port 0 picks one
	Cert      *tls.Certificate // nil: plain HTTP
	Behaviour string           // one of the Mirror* behaviours
	// Upstream is the registry URL MirrorHeadNotFound and
	// MirrorManifestsTooMany forward to;
	// UpstreamTLS its client TLS settings (nil: the system's).
	Upstream    string
	UpstreamTLS *tls.Config
	// UpstreamAddr, when set, is the IP:PORT dialled for Upstream's host.
	UpstreamAddr string
}

// Mirror is a running broken mirror.
type Mirror struct {
	cfg  MirrorConfig
	svc  *httpService
	raw  net.Listener // MirrorSilent
	stop chan struct{}
	once sync.Once

	mu    sync.Mutex
	reqs  []string // "METHOD PATH?QUERY", in order
	conns []net.Conn
}

// StartMirror starts a mirror that misbehaves as cfg.Behaviour says.
func StartMirror(ctx context.Context, cfg MirrorConfig) (*Mirror, error) {
	m := &Mirror{cfg: cfg, stop: make(chan struct{})}
	if cfg.Behaviour == MirrorSilent {
		ln, err := listenTCP("mirror", cfg.Addr)
		if err != nil {
			return nil, err
		}
		m.raw = ln
		go m.holdConns()
		return m, nil
	}
	var h http.Handler
	switch cfg.Behaviour {
	case MirrorHang:
		h = http.HandlerFunc(m.hang)
	case MirrorHTML:
		h = http.HandlerFunc(m.html)
	case MirrorTooMany:
		h = http.HandlerFunc(m.tooMany)
	case MirrorHeadNotFound, MirrorManifestsTooMany:
		u, err := url.Parse(cfg.Upstream)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("mirror: upstream %q, want http(s)://HOST[:PORT]", cfg.Upstream)
		}
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.Transport = &http.Transport{TLSClientConfig: cfg.UpstreamTLS, DialContext: dialAs(u.Host, cfg.UpstreamAddr)}
		rp.ErrorLog = discardLogger()
		if cfg.Behaviour == MirrorHeadNotFound {
			h = m.headNotFound(rp)
		} else {
			h = m.manifestsTooMany(rp)
		}
	default:
		return nil, fmt.Errorf("mirror: behaviour %q, want one of %s, %s, %s, %s, %s, %s", cfg.Behaviour, MirrorSilent, MirrorHang, MirrorHeadNotFound, MirrorHTML, MirrorTooMany, MirrorManifestsTooMany)
	}
	var tlsConf *tls.Config
	if cfg.Cert != nil {
		tlsConf = &tls.Config{Certificates: []tls.Certificate{*cfg.Cert}}
	}
	svc, err := startHTTP(ctx, "mirror", cfg.Addr, tlsConf, m.record(h))
	if err != nil {
		return nil, err
	}
	m.svc = svc
	return m, nil
}

// Addr is the real listening address, IP:PORT.
func (m *Mirror) Addr() string {
	if m.raw != nil {
		return m.raw.Addr().String()
	}
	return m.svc.Addr()
}

// Requests are the requests the mirror received, "METHOD PATH?QUERY".
func (m *Mirror) Requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.reqs...)
}

// Close stops the mirror and drops every connection it holds.
func (m *Mirror) Close() error {
	m.once.Do(func() {
		close(m.stop)
		if m.raw != nil {
			_ = m.raw.Close()
			m.mu.Lock()
			for _, c := range m.conns {
				_ = c.Close()
			}
			m.mu.Unlock()
		}
		if m.svc != nil {
			_ = m.svc.Close()
		}
	})
	return nil
}

func (m *Mirror) holdConns() {
	for {
		c, err := m.raw.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		m.mu.Lock()
		m.conns = append(m.conns, c)
		m.reqs = append(m.reqs, "CONNECT "+c.RemoteAddr().String())
		m.mu.Unlock()
	}
}

func (m *Mirror) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := r.Method + " " + r.URL.Path
		if r.URL.RawQuery != "" {
			line += "?" + r.URL.RawQuery
		}
		m.mu.Lock()
		m.reqs = append(m.reqs, line)
		m.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (m *Mirror) hang(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-m.stop:
	}
}

func (m *Mirror) html(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte("<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>\n"))
	}
}

func (m *Mirror) tooMany(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(`{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit"}]}` + "\n"))
	}
}

func (m *Mirror) manifestsTooMany(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			m.tooMany(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (m *Mirror) headNotFound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/manifests/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			return
		}
		next.ServeHTTP(w, r)
	})
}
