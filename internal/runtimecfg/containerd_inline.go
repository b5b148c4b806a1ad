package runtimecfg

import (
	"fmt"
	"net/url"
	"strings"
)

// inlineRegistry is containerd's CRI without config_path: the inline
// registry.mirrors and registry.configs of its config.toml
// (pkg/cri/server/image_pull.go registryHosts and registryEndpoints in
// 1.6 and 1.7; internal/cri/server/images/image_pull.go in 2.x, local
// pull mode, which containerd 2.x falls back to when mirrors or configs
// are set).
type inlineRegistry struct {
	reg  *ctrdRegistry
	tls  bool   // registry.configs.HOST.tls is read (1.x; 2.x has no such field)
	root string // the node's filesystem, for tls file paths
}

// Hosts implements RegistryConfig, in containerd's order:
//
//  1. The endpoints of registry.mirrors."REGISTRY", else of
//     registry.mirrors."*", in file order. An endpoint without a scheme
//     gets http:// for a localhost or loopback host, https:// otherwise
//     (addDefaultScheme).
//  2. The registry's default host (registry-1.docker.io for docker.io),
//     appended unless an endpoint's host:port is the registry name
//     itself as written in the reference. (For docker.io an endpoint
//     https://registry-1.docker.io does not count: containerd then tries
//     it twice.)
//  3. Each endpoint's API root is its path, or /v2 when it has none (a
//     path is used as written, /v2 is not appended); every endpoint may
//     resolve and pull; there is no HTTPS-to-HTTP fallback.
//  4. registry.configs."HOST:PORT" of the endpoint's own host gives its
//     TLS (ca_file on top of the system roots, cert_file/key_file,
//     insecure_skip_verify; 1.x only) and its credentials (auth).
func (r *inlineRegistry) Hosts(ref Ref) (HostSet, error) {
	var set HostSet
	registry := ref.Registry
	m, ok := r.reg.mirrors[registry]
	if !ok {
		m = r.reg.mirrors["*"]
	}
	type ep struct{ raw, at string }
	var eps []ep
	for _, e := range m.endpoints {
		eps = append(eps, ep{e, m.at})
	}
	hasUpstream := false
	for i, e := range eps {
		full, err := addDefaultScheme(e.raw)
		if err != nil {
			return set, &ConfigError{File: e.at, Reason: fmt.Sprintf("registry.mirrors endpoint %q: %v (containerd fails every pull of %s)", e.raw, err, registry)}
		}
		eps[i].raw = full
		if u, err := url.Parse(full); err == nil && u.Host == registry {
			hasUpstream = true
		}
	}
	if !hasUpstream {
		def := defaultHostOf(registry)
		eps = append(eps, ep{defaultSchemeOf(def) + "://" + def, ""})
	}
	for i, e := range eps {
		u, err := url.Parse(e.raw)
		if err != nil || u.Host == "" {
			return set, &ConfigError{File: e.at, Reason: fmt.Sprintf("registry.mirrors endpoint %q: not a URL with a host (containerd fails every pull of %s)", e.raw, registry)}
		}
		h := RegistryHost{
			Scheme:       u.Scheme,
			Host:         u.Host,
			Path:         u.Path,
			Capabilities: []string{CapPull, CapResolve},
			Source:       e.at,
			Server:       i == len(eps)-1 && e.at == "",
		}
		if h.Path == "" {
			h.Path = "/v2"
		}
		if c := r.reg.configs[u.Host]; c != nil {
			if c.auth != nil {
				a := *c.auth
				h.Auth = &a
			}
			if r.tls && c.tls != nil {
				r.applyTLS(&h, c)
			}
		}
		if isLocalhost(registry) && h.Scheme == "http" {
			h.SkipVerify = true
		}
		h.Mirror = !sameHost(h.Host, ref)
		set.Hosts = append(set.Hosts, h)
	}
	if m.at != "" {
		set.File = fileOf(m.at)
	}
	return set, nil
}

// applyTLS puts registry.configs.HOST.tls on h (the CRI's getTLSConfig).
func (r *inlineRegistry) applyTLS(h *RegistryHost, c *ctrdHost) {
	t := c.tls
	if t.caFile != "" {
		h.CAFiles = []string{underRoot(r.root, t.caFile)}
	}
	if t.certFile != "" || t.keyFile != "" {
		// a cert without a key (or the reverse) fails the pull in
		// containerd; the walk's TLS setup says so, naming the file.
		h.ClientPairs = [][2]string{{underRoot(r.root, t.certFile), underRoot(r.root, t.keyFile)}}
	}
	h.SkipVerify = t.skip
	if h.Source == "" {
		h.Source = c.tlsAt
	} else {
		h.Source += ", TLS " + c.tlsAt
	}
}

// addDefaultScheme is the CRI's addDefaultScheme.
func addDefaultScheme(endpoint string) (string, error) {
	if strings.Contains(endpoint, "://") {
		return endpoint, nil
	}
	u, err := url.Parse("dummy://" + endpoint)
	if err != nil {
		return "", err
	}
	return defaultSchemeOf(u.Host) + "://" + endpoint, nil
}

// defaultSchemeOf is the CRI's defaultScheme: http for localhost.
func defaultSchemeOf(host string) string {
	if isLocalhost(host) {
		return "http"
	}
	return "https"
}

// defaultHostOf is docker.DefaultHost.
func defaultHostOf(registry string) string {
	if registry == DockerHubRegistry {
		return DockerHubHost
	}
	return registry
}
