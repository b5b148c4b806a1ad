package lab

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/labsvc"
)

// pki issues the lab's certificates for one run.
type pki struct {
	dir       string
	ca        *labsvc.CA
	untrusted *labsvc.CA
}

// leaf writes the certificate of a service as its TLS mode asks and returns
// the cert and key files ("" for plain HTTP).
func (p *pki) leaf(role string, s *scenario.Service) (string, string, error) {
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

// prepare writes everything the run's services and probe need under runDir
// (certificates, the image in registry storage, htpasswd, token keys, the
// node's docker config and CA) and returns one serve config per host.
func prepare(ctx context.Context, t *scenario.Scenario, n *Network, runDir string, o StartOptions) (*Env, map[string]*ServeConfig, error) {
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
	written, err := prepareImage(ctx, t, storage, o)
	if err != nil {
		return nil, nil, err
	}
	rc, err := prepareRegistry(t, p, runDir, storage, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := prepareBlob(t, p, storage, rc, cfg); err != nil {
		return nil, nil, err
	}
	cfg(reg.Host).Registry = rc
	if err := prepareDNS(t, cfg); err != nil {
		return nil, nil, err
	}
	preparePath(t, cfg)
	if err := prepareNAT64(t, runDir, cfg); err != nil {
		return nil, nil, err
	}

	// the node: docker config and trusted CA
	env := &Env{Scenario: t, Network: n, NodeNS: n.NS[t.Node.Host], RunDir: runDir, Image: t.ProbeImage()}
	env.DockerConfig = filepath.Join(runDir, "node", "config.json")
	if err := os.WriteFile(env.DockerConfig, DockerConfig(t), 0o600); err != nil {
		return nil, nil, err
	}
	if t.Node.TrustLabCA == nil || *t.Node.TrustLabCA {
		env.CAFile = filepath.Join(runDir, "node", "ca.crt")
		if err := ca.WriteCAFile(env.CAFile); err != nil {
			return nil, nil, err
		}
	}
	if err := prepareProxy(t, n, runDir, p, env, cfg); err != nil {
		return nil, nil, err
	}
	if err := prepareMirrors(t, p, cfg, runDir, env.CAFile, env); err != nil {
		return nil, nil, err
	}
	if t.Probe.ByDigest {
		env.Image = strings.TrimSuffix(env.Image, ":"+reg.Image.Tag) + "@" + written.Top.Digest
	}
	if err := prepareCRIO(t, runDir, env); err != nil {
		return nil, nil, err
	}
	if err := prepareLayout(t, runDir, env); err != nil {
		return nil, nil, err
	}
	return env, configs, nil
}

// prepareImage writes the scenario's image into the registry's storage.
func prepareImage(ctx context.Context, t *scenario.Scenario, storage string, o StartOptions) (*labsvc.Image, error) {
	im := t.Registry.Image
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
		LayerSizes: sizes, Seed: scenario.Seed(t.Name + "/" + im.Repository),
	}
	if o.ImageBase != nil {
		// a cluster runs the image (its first layer is the pause binary)
		spec.BaseLayer, spec.Cmd = o.ImageBase, o.ImageCmd
	}
	written, err := labsvc.WriteImage(ctx, storage, spec)
	if err != nil {
		return nil, fmt.Errorf("image: %v", err)
	}
	return written, nil
}

// prepareRegistry configures the registry and its authentication: an
// htpasswd file, or a token service on its own host.
func prepareRegistry(t *scenario.Scenario, p *pki, runDir, storage string, cfg func(string) *ServeConfig) (*labsvc.RegistryConfig, error) {
	reg := t.Registry
	addr, err := t.ListenAddrs(reg.Host, reg.Address, reg.EffectivePort())
	if err != nil {
		return nil, fmt.Errorf("registry: %v", err)
	}
	cf, kf, err := p.leaf("registry", &reg.Service)
	if err != nil {
		return nil, err
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
			return nil, err
		}
		rc.Auth, rc.HtpasswdFile, rc.BasicRealm = labsvc.AuthBasic, hp, reg.BaseURL()
	case "bearer":
		if err := prepareToken(t, p, runDir, rc, cfg); err != nil {
			return nil, err
		}
	}
	return rc, nil
}

// prepareToken sets the registry's bearer authentication and configures
// the token service that signs its tokens.
func prepareToken(t *scenario.Scenario, p *pki, runDir string, rc *labsvc.RegistryConfig, cfg func(string) *ServeConfig) error {
	reg := t.Registry
	signer, err := labsvc.NewTokenSigner()
	if err != nil {
		return err
	}
	keyFile := filepath.Join(runDir, "pki", "token-signing.key")
	jwks := filepath.Join(runDir, "pki", "token.jwks")
	if err := signer.WriteKeyFile(keyFile); err != nil {
		return err
	}
	if err := signer.WriteJWKS(jwks); err != nil {
		return err
	}
	tok := t.Token
	rc.Auth = labsvc.AuthToken
	rc.TokenRealm = tok.BaseURL() + "/token"
	rc.TokenService = reg.Name
	rc.TokenIssuer = tok.Name
	rc.TokenJWKSFile = jwks
	taddr, err := t.ListenAddrs(tok.Host, tok.Address, tok.EffectivePort())
	if err != nil {
		return fmt.Errorf("token: %v", err)
	}
	tcf, tkf, err := p.leaf("token", tok)
	if err != nil {
		return err
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
	return nil
}

// prepareBlob configures the blob host the registry redirects layers to,
// with its fault, when the scenario has one.
func prepareBlob(t *scenario.Scenario, p *pki, storage string, rc *labsvc.RegistryConfig, cfg func(string) *ServeConfig) error {
	b := t.Blob
	if b == nil {
		return nil
	}
	rc.RedirectBaseURL = b.BaseURL()
	baddr, err := t.ListenAddrs(b.Host, b.Address, b.EffectivePort())
	if err != nil {
		return fmt.Errorf("blob: %v", err)
	}
	bcf, bkf, err := p.leaf("blob", &b.Service)
	if err != nil {
		return err
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
	case "pause":
		bc.Faults.Pause, bc.Faults.PauseMS = "*", int(b.Pause.Milliseconds())
	}
	cfg(b.Host).Blob = bc
	return nil
}

// DockerConfig is the node's docker config.json: node.credentials for the
// registry (by its host, with the port unless 443), or no credentials.
func DockerConfig(t *scenario.Scenario) []byte {
	auths := map[string]any{}
	if c := t.Node.Credentials; c != nil {
		auths[t.RegistryKey()] = map[string]string{
			"auth": base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password)),
		}
	}
	b, _ := json.MarshalIndent(map[string]any{"auths": auths}, "", "  ")
	return b
}
