package lab

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
)

// hostAddrs lists a host's addresses: its interface addresses (by subnet
// name), then the gateways of the subnets it routes.
func (t *Topology) hostAddrs(host string) []netip.Addr {
	var out []netip.Addr
	h := t.Hosts[host]
	if h != nil {
		for _, sn := range sortedKeys(h.Interfaces) {
			if a, err := netip.ParseAddr(h.Interfaces[sn]); err == nil {
				out = append(out, a)
			}
		}
	}
	for _, sn := range t.routerOf(host) {
		out = append(out, t.Subnets[sn].gateway())
	}
	return out
}

// listenAddr is the address a service listens on: its address: field or
// the host's first address.
func (t *Topology) listenAddr(host, address string, port int) (string, error) {
	addrs := t.hostAddrs(host)
	if address != "" {
		a, err := netip.ParseAddr(address)
		if err == nil {
			for _, x := range addrs {
				if x == a {
					return netip.AddrPortFrom(a, uint16(port)).String(), nil
				}
			}
		}
		return "", fmt.Errorf("address %q is not an address of host %s (%v)", address, host, addrs)
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("host %s has no address to listen on", host)
	}
	return netip.AddrPortFrom(addrs[0], uint16(port)).String(), nil
}

// baseURL is scheme://NAME[:PORT] of a service.
func (s *Service) baseURL() string {
	scheme, def := "https", 443
	if s.TLS == "none" {
		scheme, def = "http", 80
	}
	if p := s.port(); p != def {
		return scheme + "://" + s.Name + ":" + strconv.Itoa(p)
	}
	return scheme + "://" + s.Name
}

// pki issues the lab's certificates for one run.
type pki struct {
	dir       string
	ca        *labsvc.CA
	untrusted *labsvc.CA
}

// leaf writes the certificate of a service as its TLS mode asks and returns
// the cert and key files ("" for plain HTTP).
func (p *pki) leaf(role string, s *Service) (string, string, error) {
	if s.TLS == "none" {
		return "", "", nil
	}
	ca := p.ca
	opts := labsvc.LeafOptions{DNSNames: []string{s.Name}}
	switch s.TLS {
	case "untrusted":
		if p.untrusted == nil {
			c, err := labsvc.NewCA("Untrusted Corp Issuing CA")
			if err != nil {
				return "", "", err
			}
			p.untrusted = c
		}
		ca = p.untrusted
	case "wrong-name":
		// a wildcard that does not cover the name itself: a classic mistake
		opts.DNSNames = []string{"*." + s.Name}
	case "expired":
		now := time.Now()
		opts.NotBefore = now.Add(-400 * 24 * time.Hour)
		opts.NotAfter = now.Add(-35 * 24 * time.Hour)
	}
	l, err := ca.Issue(opts)
	if err != nil {
		return "", "", fmt.Errorf("%s certificate: %v", role, err)
	}
	cf := filepath.Join(p.dir, role+".crt")
	kf := filepath.Join(p.dir, role+".key")
	if err := l.WriteFiles(cf, kf); err != nil {
		return "", "", err
	}
	return cf, kf, nil
}

func seedOf(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64() & 0x7fffffffffffffff)
}

// prepare writes everything the run's services and probe need under runDir
// (certificates, the image in registry storage, htpasswd, token keys, the
// node's docker config and CA) and returns one serve config per host.
func prepare(ctx context.Context, t *Topology, n *Network, runDir string) (*Env, map[string]*ServeConfig, error) {
	for _, d := range []string{"pki", "storage", "node", "logs", "serve"} {
		if err := os.MkdirAll(filepath.Join(runDir, d), 0o755); err != nil {
			return nil, nil, err
		}
	}
	ca, err := labsvc.NewCA("pullpath lab CA")
	if err != nil {
		return nil, nil, err
	}
	p := &pki{dir: filepath.Join(runDir, "pki"), ca: ca}
	configs := map[string]*ServeConfig{}
	cfg := func(host string) *ServeConfig {
		if configs[host] == nil {
			configs[host] = &ServeConfig{Host: host}
		}
		return configs[host]
	}
	reg := t.Registry

	// the image, in the registry's filesystem storage
	storage := filepath.Join(runDir, "storage")
	im := reg.Image
	layers := im.Layers
	if layers == 0 {
		layers = 2
	}
	size := im.LayerSize
	if size == 0 {
		size = 64 << 10
	}
	sizes := make([]int64, layers)
	for i := range sizes {
		sizes[i] = size + int64(i)*1024
	}
	spec := labsvc.ImageSpec{
		Repository: im.Repository, Tag: im.Tag, Platforms: im.Platforms,
		LayerSizes: sizes, Seed: seedOf(t.Name + "/" + im.Repository),
	}
	if t.Cluster != nil && t.binDir != "" {
		// a cluster runs the image: its first layer is the pause binary
		if spec.BaseLayer, err = pauseLayer(filepath.Join(t.binDir, "pause")); err != nil {
			return nil, nil, err
		}
		spec.Cmd = []string{"/pause"}
	}
	if _, err := labsvc.WriteImage(ctx, storage, spec); err != nil {
		return nil, nil, fmt.Errorf("image: %v", err)
	}

	// the registry
	addr, err := t.listenAddr(reg.Host, reg.Address, reg.port())
	if err != nil {
		return nil, nil, fmt.Errorf("registry: %v", err)
	}
	cf, kf, err := p.leaf("registry", &reg.Service)
	if err != nil {
		return nil, nil, err
	}
	rc := &labsvc.RegistryConfig{Addr: addr, RootDir: storage, CertFile: cf, KeyFile: kf}
	switch reg.Auth.Mode {
	case "basic":
		users := map[string]string{}
		for _, u := range reg.Auth.Users {
			users[u.Name] = u.Password
		}
		hp := filepath.Join(runDir, "pki", "htpasswd")
		if err := labsvc.WriteHtpasswd(hp, users); err != nil {
			return nil, nil, err
		}
		rc.Auth, rc.HtpasswdFile, rc.BasicRealm = labsvc.AuthBasic, hp, reg.baseURL()
	case "bearer":
		signer, err := labsvc.NewTokenSigner()
		if err != nil {
			return nil, nil, err
		}
		keyFile := filepath.Join(runDir, "pki", "token-signing.key")
		jwks := filepath.Join(runDir, "pki", "token.jwks")
		if err := signer.WriteKeyFile(keyFile); err != nil {
			return nil, nil, err
		}
		if err := signer.WriteJWKS(jwks); err != nil {
			return nil, nil, err
		}
		tok := t.Token
		rc.Auth = labsvc.AuthToken
		rc.TokenRealm = tok.baseURL() + "/token"
		rc.TokenService = reg.Name
		rc.TokenIssuer = tok.Name
		rc.TokenJWKSFile = jwks
		taddr, err := t.listenAddr(tok.Host, tok.Address, tok.port())
		if err != nil {
			return nil, nil, fmt.Errorf("token: %v", err)
		}
		tcf, tkf, err := p.leaf("token", tok)
		if err != nil {
			return nil, nil, err
		}
		users := map[string]labsvc.User{}
		for _, u := range reg.Auth.Users {
			read := u.Repositories
			if read == nil {
				read = []string{"*"}
			}
			users[u.Name] = labsvc.User{Password: u.Password, Read: read}
		}
		deny := labsvc.DenyForbidden
		if reg.Auth.Deny == "insufficient-scope" {
			deny = labsvc.DenyEmpty
		}
		cfg(tok.Host).Token = &labsvc.TokenConfig{
			Addr: taddr, CertFile: tcf, KeyFile: tkf,
			Issuer: tok.Name, Service: reg.Name, SigningKeyFile: keyFile,
			Users: users, DenyMode: deny,
		}
	}
	if t.Blob != nil {
		b := t.Blob
		rc.RedirectBaseURL = b.baseURL()
		baddr, err := t.listenAddr(b.Host, b.Address, b.port())
		if err != nil {
			return nil, nil, fmt.Errorf("blob: %v", err)
		}
		bcf, bkf, err := p.leaf("blob", &b.Service)
		if err != nil {
			return nil, nil, err
		}
		bc := &labsvc.BlobHostConfig{Addr: baddr, RootDir: storage, CertFile: bcf, KeyFile: bkf}
		switch b.Fault {
		case "forbidden":
			bc.Faults.Forbidden = true
		case "corrupt":
			bc.Faults.CorruptDigest = "*"
		case "stall":
			bc.Faults.Trickle = "*"
		case "truncate":
			bc.Faults.Truncate = "*"
		}
		cfg(b.Host).Blob = bc
	}
	cfg(reg.Host).Registry = rc
	if err := prepareDNS(t, cfg); err != nil {
		return nil, nil, err
	}

	// the node: docker config and trusted CA
	env := &Env{Topology: t, Network: n, NodeNS: n.NS[t.Node.Host], RunDir: runDir, Image: t.ProbeImage()}
	env.DockerConfig = filepath.Join(runDir, "node", "config.json")
	dc := map[string]any{"auths": map[string]any{}}
	if c := t.Node.Credentials; c != nil {
		key := reg.Name
		if reg.port() != 443 {
			key = fmt.Sprintf("%s:%d", reg.Name, reg.port())
		}
		dc["auths"] = map[string]any{key: map[string]string{
			"auth": base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password)),
		}}
	}
	b, _ := json.MarshalIndent(dc, "", "  ")
	if err := os.WriteFile(env.DockerConfig, b, 0o600); err != nil {
		return nil, nil, err
	}
	if t.Node.TrustLabCA == nil || *t.Node.TrustLabCA {
		env.CAFile = filepath.Join(runDir, "node", "ca.crt")
		if err := ca.WriteCAFile(env.CAFile); err != nil {
			return nil, nil, err
		}
	}
	return env, configs, nil
}
