package lab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/labsvc"
)

// MirrorServe is one mirror of the registry run by its host's `lab serve`:
// a pull-through cache (the reference registry with proxy.remoteurl) or a
// broken mirror of internal/labsvc.
type MirrorServe struct {
	// Name is the mirror as hosts.toml names it, NAME[:PORT].
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Cache runs the reference registry as a pull-through cache (kind cache).
	Cache *labsvc.RegistryConfig `json:"cache,omitempty"`
	// Addr, CertFile, KeyFile, Upstream, UpstreamCAFile and UpstreamAddr
	// configure a broken mirror (labsvc.MirrorConfig).
	Addr           string `json:"addr,omitempty"`
	CertFile       string `json:"certFile,omitempty"`
	KeyFile        string `json:"keyFile,omitempty"`
	Upstream       string `json:"upstream,omitempty"`
	UpstreamCAFile string `json:"upstreamCAFile,omitempty"`
	UpstreamAddr   string `json:"upstreamAddr,omitempty"`
	// UpstreamFault (kind cache): 429 puts a labsvc front answering
	// manifests 429 between the cache and the registry.
	UpstreamFault string `json:"upstreamFault,omitempty"`
	// Warm, when set, is pulled through the cache once before the host
	// says it is ready.
	Warm *MirrorWarm `json:"warm,omitempty"`
}

// MirrorWarm is the image a cache pulls through itself at start.
type MirrorWarm struct {
	Repository string `json:"repository"`
	Tag        string `json:"tag"`
	// ServerName and CAFile: how the cache's own certificate is checked.
	ServerName string `json:"serverName"`
	CAFile     string `json:"caFile,omitempty"`
}

// prepareMirrors writes each mirror's certificate and serve config, and
// the node's certs.d with the registry's hosts.toml (the mirrors in order,
// then the registry as the server), which env.CertsDir then names.
func prepareMirrors(t *scenario.Scenario, p *pki, cfg func(host string) *ServeConfig, runDir, caFile string, env *Env) error {
	if t.Mirrors == nil {
		return nil
	}
	reg := t.Registry
	upAddr, err := t.ListenAddr(reg.Host, reg.Address, reg.EffectivePort())
	if err != nil {
		return fmt.Errorf("registry: %v", err)
	}
	upCA := caFile
	if reg.TLS == "none" {
		upCA = ""
	}
	for i, m := range t.Mirrors.Hosts {
		what := fmt.Sprintf("mirrors.hosts[%d]", i)
		addr, err := t.ListenAddr(m.Host, m.Address, m.EffectivePort())
		if err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
		cf, kf, err := p.leaf(fmt.Sprintf("mirror-%d", i), &m.Service)
		if err != nil {
			return err
		}
		ms := &MirrorServe{Name: m.HostPort(), Kind: m.Kind}
		if m.Kind == scenario.MirrorCache {
			storage := filepath.Join(runDir, fmt.Sprintf("mirror-%d-storage", i))
			if err := os.MkdirAll(storage, 0o755); err != nil {
				return err
			}
			ms.Cache = &labsvc.RegistryConfig{Addr: addr, RootDir: storage, CertFile: cf, KeyFile: kf,
				ProxyRemoteURL: reg.BaseURL(), ProxyRemoteCAFile: upCA, ProxyRemoteAddr: upAddr}
			if m.UpstreamFault != "" {
				ms.UpstreamFault, ms.Upstream, ms.UpstreamCAFile, ms.UpstreamAddr = m.UpstreamFault, reg.BaseURL(), upCA, upAddr
			}
			if c := m.UpstreamCredentials; c != nil {
				ms.Cache.ProxyUsername, ms.Cache.ProxyPassword = c.Username, c.Password
			}
			if m.Warm {
				ms.Warm = &MirrorWarm{Repository: reg.Image.Repository, Tag: reg.Image.Tag, ServerName: m.Name, CAFile: caFile}
			}
		} else {
			ms.Addr, ms.CertFile, ms.KeyFile = addr, cf, kf
			ms.Upstream, ms.UpstreamCAFile, ms.UpstreamAddr = reg.BaseURL(), upCA, upAddr
		}
		c := cfg(m.Host)
		c.Mirrors = append(c.Mirrors, ms)
	}
	if t.Node.IsCRIO() {
		return nil // a CRI-O node's mirrors are in its registries.conf (prepareCRIO)
	}
	env.CertsDir = filepath.Join(runDir, "node", "certs.d")
	hd := filepath.Join(env.CertsDir, t.RegistryKey())
	if err := os.MkdirAll(hd, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(hd, "hosts.toml"), []byte(HostsToml(t, caFile)), 0o644)
}

// HostsToml is the node's hosts.toml for the registry: the mirrors in
// order, each with its capabilities, then the registry as the server;
// every TLS host trusts caFile (when set): with a hosts.toml, containerd
// reads no ca.crt beside it.
func HostsToml(t *scenario.Scenario, caFile string) string {
	return MirrorsHostsToml(t, t.Mirrors.Hosts, caFile)
}

// MirrorsHostsToml is HostsToml with the given mirrors only (a cluster
// node's cluster.nodes.HOST.mirrors); ca may be relative to the file's
// folder, as containerd reads it (config/hosts.go makeAbsPath).
func MirrorsHostsToml(t *scenario.Scenario, mirrors []*scenario.Mirror, ca string) string {
	var b strings.Builder
	caLine := func(s *scenario.Service, indent string) {
		if ca != "" && s.TLS != "none" {
			fmt.Fprintf(&b, "%sca = %q\n", indent, ca)
		}
	}
	fmt.Fprintf(&b, "# written by pullpath lab for scenario %s\nserver = %q\n", t.Name, t.Registry.BaseURL())
	caLine(&t.Registry.Service, "")
	for _, m := range mirrors {
		caps := m.EffectiveCapabilities()
		q := make([]string, len(caps))
		for i, c := range caps {
			q[i] = fmt.Sprintf("%q", c)
		}
		fmt.Fprintf(&b, "\n[host.%q]\n  capabilities = [%s]\n", m.BaseURL(), strings.Join(q, ", "))
		caLine(&m.Service, "  ")
	}
	return b.String()
}

// breakUpstream gives the registry's host the mirrors' upstreamBreak rules
// (after its own) once the services, and so the warm caches, are up.
func breakUpstream(ctx context.Context, t *scenario.Scenario, n *Network) error {
	if t.Mirrors == nil || len(t.Mirrors.UpstreamBreak) == 0 {
		return nil
	}
	h := t.Registry.Host
	var rules []scenario.Rule
	if hc := t.Hosts[h]; hc != nil {
		rules = append(rules, hc.Firewall...)
	}
	rules = append(rules, t.Mirrors.UpstreamBreak...)
	if err := n.Firewall(ctx, h, rules); err != nil {
		return fmt.Errorf("mirrors.upstreamBreak: %v", err)
	}
	return nil
}

// startMirrors starts the mirrors of one host's serve config; a warm
// cache has pulled its image through itself when it returns.
func startMirrors(ctx context.Context, host string, ms []*MirrorServe, log io.Writer) ([]io.Closer, error) {
	var out []io.Closer
	for _, m := range ms {
		if m.Cache != nil {
			if m.UpstreamFault != "" {
				f, err := startUpstreamFault(ctx, m)
				if err != nil {
					return out, fmt.Errorf("mirror %s: upstream fault %s: %v", m.Name, m.UpstreamFault, err)
				}
				out = append(out, f)
				fmt.Fprintf(log, "%s: cache %s reaches %s through a front answering manifests %s on %s\n", host, m.Name, m.Upstream, m.UpstreamFault, f.Addr())
			}
			// distribution's proxy asks its upstream at start (and refuses
			// to start without an answer); the registry's own `lab serve`
			// may start after this one.
			if err := waitListening(ctx, m.Cache.ProxyRemoteAddr, 15*time.Second); err != nil {
				return out, fmt.Errorf("mirror %s: upstream %s: %v", m.Name, m.Cache.ProxyRemoteURL, err)
			}
			r, err := labsvc.StartRegistry(ctx, *m.Cache)
			if err != nil {
				return out, fmt.Errorf("mirror %s: %v", m.Name, err)
			}
			out = append(out, r)
			fmt.Fprintf(log, "%s: pull-through cache %s on %s (upstream %s)\n", host, m.Name, r.Addr(), m.Cache.ProxyRemoteURL)
			if m.Warm != nil {
				if err := warm(ctx, r, m); err != nil {
					return out, fmt.Errorf("mirror %s: %v", m.Name, err)
				}
				fmt.Fprintf(log, "%s: cache %s warm with %s:%s\n", host, m.Name, m.Warm.Repository, m.Warm.Tag)
			}
			continue
		}
		mc := labsvc.MirrorConfig{Addr: m.Addr, Behaviour: m.Kind, Upstream: m.Upstream, UpstreamAddr: m.UpstreamAddr}
		if m.CertFile != "" {
			c, err := tls.LoadX509KeyPair(m.CertFile, m.KeyFile)
			if err != nil {
				return out, fmt.Errorf("mirror %s: %v", m.Name, err)
			}
			mc.Cert = &c
		}
		if m.UpstreamCAFile != "" {
			pool, err := caPool(m.UpstreamCAFile)
			if err != nil {
				return out, fmt.Errorf("mirror %s: %v", m.Name, err)
			}
			mc.UpstreamTLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		s, err := labsvc.StartMirror(ctx, mc)
		if err != nil {
			return out, fmt.Errorf("mirror %s: %v", m.Name, err)
		}
		out = append(out, s)
		fmt.Fprintf(log, "%s: %s mirror %s on %s\n", host, m.Kind, m.Name, s.Addr())
	}
	return out, nil
}

// startUpstreamFault starts, on the cache's host loopback, the front
// between the cache and the registry (plain HTTP, manifests 429, the rest
// forwarded) and points the cache's proxy.remoteurl at it.
func startUpstreamFault(ctx context.Context, m *MirrorServe) (*labsvc.Mirror, error) {
	mc := labsvc.MirrorConfig{Addr: "127.0.0.1:0", Behaviour: labsvc.MirrorManifestsTooMany, Upstream: m.Upstream, UpstreamAddr: m.UpstreamAddr}
	if m.UpstreamCAFile != "" {
		pool, err := caPool(m.UpstreamCAFile)
		if err != nil {
			return nil, err
		}
		mc.UpstreamTLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	f, err := labsvc.StartMirror(ctx, mc)
	if err != nil {
		return nil, err
	}
	m.Cache.ProxyRemoteURL, m.Cache.ProxyRemoteCAFile, m.Cache.ProxyRemoteAddr = "http://"+f.Addr(), "", f.Addr()
	return f, nil
}

func warm(ctx context.Context, r *labsvc.Registry, m *MirrorServe) error {
	tc := &tls.Config{ServerName: m.Warm.ServerName, MinVersion: tls.VersionTLS12}
	if m.Warm.CAFile != "" {
		pool, err := caPool(m.Warm.CAFile)
		if err != nil {
			return err
		}
		tc.RootCAs = pool
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	digests, err := labsvc.WarmCache(wctx, r.URL(), tc, m.Warm.Repository, m.Warm.Tag)
	if err != nil {
		return err
	}
	return labsvc.WaitStored(wctx, m.Cache.RootDir, digests)
}

func caPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("CA file %s: %v", file, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate in it", file)
	}
	return pool, nil
}

// waitListening waits until addr accepts a TCP connection, or d passes.
func waitListening(ctx context.Context, addr string, d time.Duration) error {
	if addr == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var dl net.Dialer
	for {
		c, err := dl.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not listening after %s: %v", d, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
