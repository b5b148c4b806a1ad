package labsvc

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Lab host names used by StartStack.
const (
	LabZone          = "lab.test"
	RegistryHostName = "registry.lab.test"
	AuthHostName     = "auth.lab.test"
	BlobHostName     = "blob.lab.test"
	Blob2HostName    = "blob2.lab.test"
)

// Registry TLS modes for StackConfig.RegistryTLS.
const (
	TLSTrusted     = "trusted" // default: signed by the lab CA for the right name
	TLSUntrustedCA = "untrusted-ca"
	TLSExpired     = "expired"
	TLSNotYetValid = "not-yet-valid"
	TLSWrongName   = "wrong-name"
	TLSNone        = "none" // plain HTTP
)

// StackAddrs are the loopback IPs of the stack's services (ports are
// always ephemeral). Zero fields take the defaults shown.
type StackAddrs struct {
	DNS      string // 127.0.0.53
	Registry string // 127.0.0.10
	Token    string // 127.0.0.11
	Blob     string // 127.0.0.12
	Blob2    string // 127.0.0.13
}

// StackConfig describes a private registry on loopback and what to break.
type StackConfig struct {
	// Dir holds the storage, the service files and the node-context
	// folder (Dir/node). Required; tests pass t.TempDir().
	Dir string
	// Image to store; zero means lab/app:v1, linux/amd64, two small layers.
	Image ImageSpec
	// Auth is AuthToken (default), AuthBasic or AuthNone.
	Auth string
	// Username and Password of the test user; defaults "puller"/"lab-pass-1".
	Username, Password string
	// WrongPassword puts a wrong password in the node's config.json.
	WrongPassword bool
	// UserCannotRead gives the user no read access to the repository.
	UserCannotRead bool
	// DenyMode of the token service (DenyEmpty default, DenyForbidden).
	DenyMode string
	// RegistryTLS is one of the TLS* modes; default TLSTrusted.
	RegistryTLS string
	// BlobHostDown leaves the blob host's address unserved (connection
	// refused) while the registry still redirects to it.
	BlobHostDown bool
	// NoRedirect makes the registry serve blobs itself.
	NoRedirect bool
	// BlobFaults for the blob host. ExtraRedirectHost is set by SecondHop.
	BlobFaults BlobFaults
	// SecondHop starts blob2.lab.test and makes the blob host redirect there.
	SecondHop bool
	// DNSBehaviours per name (e.g. RegistryHostName: DNSNXDomain).
	DNSBehaviours map[string]DNSBehaviour
	// DNSRecords replace the default records of the names given.
	DNSRecords map[string][]DNSRecord
	// HostsEntries are written to the node's hosts file as "IP name" lines.
	HostsEntries map[string]string
	// Addrs overrides the services' loopback IPs.
	Addrs StackAddrs
	// Debug lets the registry's logs through.
	Debug bool
}

// StackFiles are the paths StartStack wrote.
type StackFiles struct {
	NodeDir      string // the node-context folder
	ResolvConf   string // nameserver line without port: see Stack.Nameserver
	Hosts        string
	CAFile       string // the lab CA in PEM
	CertsDir     string // docker certs.d layout: CertsDir/HOST:PORT/ca.crt
	DockerConfig string // config.json with the test user's credentials
	StorageDir   string // the registry's storage root
	Htpasswd     string // basic auth only
	JWKS         string // token auth only
}

// Stack is a running private registry with its token, blob and DNS hosts.
type Stack struct {
	Config StackConfig
	CA     *CA
	Image  *Image
	DNS    *DNSServer
	Reg    *Registry
	Token  *TokenServer // nil unless Auth is AuthToken
	Blob   *BlobHost    // nil when BlobHostDown or NoRedirect
	Blob2  *BlobHost    // nil unless SecondHop
	Files  StackFiles
	// RegistryHost is "registry.lab.test:PORT".
	RegistryHost string
	// BlobURL is the registry's redirect base URL ("" with NoRedirect).
	BlobURL string
	// Username and Password are the user's real credentials.
	Username, Password string

	closers []func() error
}

// StartStack brings up the whole stack on loopback and writes the node
// context. On error everything started is stopped again.
func StartStack(ctx context.Context, cfg StackConfig) (st *Stack, err error) {
	if cfg.Dir == "" {
		return nil, errors.New("stack: Dir is empty, want a directory for storage and node files")
	}
	cfg = cfg.withDefaults()
	s := &Stack{Config: cfg, Username: cfg.Username, Password: cfg.Password}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	svcDir := filepath.Join(cfg.Dir, "svc")
	if err := s.makeDirs(svcDir); err != nil {
		return nil, err
	}
	// 1. PKI and the image.
	if s.CA, err = NewCA("pullpath lab CA"); err != nil {
		return nil, err
	}
	if err := s.CA.WriteCAFile(s.Files.CAFile); err != nil {
		return nil, err
	}
	if s.Image, err = WriteImage(ctx, s.Files.StorageDir, cfg.Image); err != nil {
		return nil, err
	}
	// 2.-4. DNS, the blob hosts, the registry's auth.
	if err := s.startDNS(ctx); err != nil {
		return nil, err
	}
	if err := s.startBlobHosts(ctx); err != nil {
		return nil, err
	}
	regCfg := RegistryConfig{
		Addr:            net.JoinHostPort(cfg.Addrs.Registry, "0"),
		RootDir:         s.Files.StorageDir,
		Auth:            cfg.Auth,
		RedirectBaseURL: s.BlobURL,
		Debug:           cfg.Debug,
	}
	if err := s.startAuth(ctx, svcDir, &regCfg); err != nil {
		return nil, err
	}
	// 5. The registry, with the chosen certificate.
	if cfg.RegistryTLS != TLSNone {
		if regCfg.Cert, err = s.registryCert(cfg.RegistryTLS); err != nil {
			return nil, err
		}
	}
	if s.Reg, err = StartRegistry(ctx, regCfg); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.Reg.Close)
	s.RegistryHost = hostPort(RegistryHostName, s.Reg.Addr())
	// 6. The node context.
	if err := s.writeNodeFiles(); err != nil {
		return nil, err
	}
	return s, nil
}

// makeDirs names the stack's files and makes their folders (and svcDir,
// the services' own files).
func (s *Stack) makeDirs(svcDir string) error {
	nodeDir := filepath.Join(s.Config.Dir, "node")
	s.Files = StackFiles{
		NodeDir:      nodeDir,
		ResolvConf:   filepath.Join(nodeDir, "resolv.conf"),
		Hosts:        filepath.Join(nodeDir, "hosts"),
		CAFile:       filepath.Join(nodeDir, "ca.crt"),
		CertsDir:     filepath.Join(nodeDir, "certs.d"),
		DockerConfig: filepath.Join(nodeDir, "config.json"),
		StorageDir:   filepath.Join(s.Config.Dir, "storage"),
	}
	for _, d := range []string{nodeDir, svcDir, s.Files.StorageDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("stack: %w", err)
		}
	}
	return nil
}

// startDNS starts the DNS server: every lab name points at its loopback
// IP, and the config's records are added.
func (s *Stack) startDNS(ctx context.Context) (err error) {
	cfg := s.Config
	records := map[string][]DNSRecord{
		RegistryHostName: {{Type: "A", Value: cfg.Addrs.Registry}},
		AuthHostName:     {{Type: "A", Value: cfg.Addrs.Token}},
		BlobHostName:     {{Type: "A", Value: cfg.Addrs.Blob}},
		Blob2HostName:    {{Type: "A", Value: cfg.Addrs.Blob2}},
	}
	for name, recs := range cfg.DNSRecords {
		records[name] = recs
	}
	if s.DNS, err = StartDNS(ctx, DNSConfig{Addr: net.JoinHostPort(cfg.Addrs.DNS, "0"), Zones: []string{LabZone}, Records: records, Behaviours: cfg.DNSBehaviours}); err != nil {
		return err
	}
	s.closers = append(s.closers, s.DNS.Close)
	return nil
}

// serviceCert is a certificate for the service host name, issued by the
// stack's CA.
func (s *Stack) serviceCert(name string) (*tls.Certificate, error) {
	leaf, err := s.CA.Issue(LeafOptions{DNSNames: []string{name}})
	if err != nil {
		return nil, err
	}
	c, err := leaf.TLSCertificate()
	return &c, err
}

// startBlobHosts starts the blob hosts the registry redirects to (the
// second hop first: the first must know its URL) and sets BlobURL; with
// BlobHostDown, BlobURL names a port nothing listens on.
func (s *Stack) startBlobHosts(ctx context.Context) error {
	cfg := s.Config
	faults := cfg.BlobFaults
	if cfg.SecondHop {
		c, err := s.serviceCert(Blob2HostName)
		if err != nil {
			return err
		}
		if s.Blob2, err = StartBlobHost(ctx, BlobHostConfig{Addr: net.JoinHostPort(cfg.Addrs.Blob2, "0"), RootDir: s.Files.StorageDir, Cert: c}); err != nil {
			return err
		}
		s.closers = append(s.closers, s.Blob2.Close)
		faults.ExtraRedirectHost = "https://" + hostPort(Blob2HostName, s.Blob2.Addr())
	}
	switch {
	case cfg.NoRedirect:
	case cfg.BlobHostDown:
		port, err := unusedPort(cfg.Addrs.Blob)
		if err != nil {
			return err
		}
		s.BlobURL = "https://" + net.JoinHostPort(BlobHostName, port)
	default:
		c, err := s.serviceCert(BlobHostName)
		if err != nil {
			return err
		}
		if s.Blob, err = StartBlobHost(ctx, BlobHostConfig{Addr: net.JoinHostPort(cfg.Addrs.Blob, "0"), RootDir: s.Files.StorageDir, Cert: c, Faults: faults}); err != nil {
			return err
		}
		s.closers = append(s.closers, s.Blob.Close)
		s.BlobURL = "https://" + hostPort(BlobHostName, s.Blob.Addr())
	}
	return nil
}

// startAuth sets up the registry's auth in regCfg: an htpasswd file for
// basic auth, or the token server (started) and its keys for token auth.
func (s *Stack) startAuth(ctx context.Context, svcDir string, regCfg *RegistryConfig) error {
	cfg := s.Config
	readable := []string{cfg.Image.Repository}
	if cfg.UserCannotRead {
		readable = []string{"other/*"}
	}
	switch cfg.Auth {
	case AuthBasic:
		if cfg.UserCannotRead {
			return errors.New("stack: UserCannotRead needs token auth: htpasswd has no per-repository access")
		}
		s.Files.Htpasswd = filepath.Join(svcDir, "htpasswd")
		if err := WriteHtpasswd(s.Files.Htpasswd, map[string]string{cfg.Username: cfg.Password}); err != nil {
			return err
		}
		regCfg.HtpasswdFile = s.Files.Htpasswd
		regCfg.BasicRealm = "pullpath-lab"
	case AuthToken:
		signer, err := NewTokenSigner()
		if err != nil {
			return err
		}
		s.Files.JWKS = filepath.Join(svcDir, "jwks.json")
		if err := signer.WriteJWKS(s.Files.JWKS); err != nil {
			return err
		}
		c, err := s.serviceCert(AuthHostName)
		if err != nil {
			return err
		}
		if s.Token, err = StartTokenServer(ctx, TokenConfig{
			Addr: net.JoinHostPort(cfg.Addrs.Token, "0"), Cert: c,
			Issuer: "pullpath-lab-issuer", Service: RegistryHostName, Signer: signer,
			Users:    map[string]User{cfg.Username: {Password: cfg.Password, Read: readable}},
			DenyMode: cfg.DenyMode,
		}); err != nil {
			return err
		}
		s.closers = append(s.closers, s.Token.Close)
		regCfg.TokenRealm = "https://" + hostPort(AuthHostName, s.Token.Addr()) + "/token"
		regCfg.TokenService = RegistryHostName
		regCfg.TokenIssuer = "pullpath-lab-issuer"
		regCfg.TokenJWKSFile = s.Files.JWKS
	}
	return nil
}

func (cfg StackConfig) withDefaults() StackConfig {
	if cfg.Image.Repository == "" {
		cfg.Image.Repository = "lab/app"
	}
	if cfg.Image.Tag == "" {
		cfg.Image.Tag = "v1"
	}
	if len(cfg.Image.LayerSizes) == 0 {
		cfg.Image.LayerSizes = []int64{32 << 10, 16 << 10}
	}
	if cfg.Auth == "" {
		cfg.Auth = AuthToken
	}
	if cfg.Username == "" {
		cfg.Username = "puller"
	}
	if cfg.Password == "" {
		cfg.Password = "lab-pass-1"
	}
	if cfg.RegistryTLS == "" {
		cfg.RegistryTLS = TLSTrusted
	}
	a := &cfg.Addrs
	for _, f := range []struct {
		p   *string
		def string
	}{{&a.DNS, "127.0.0.53"}, {&a.Registry, "127.0.0.10"}, {&a.Token, "127.0.0.11"}, {&a.Blob, "127.0.0.12"}, {&a.Blob2, "127.0.0.13"}} {
		if *f.p == "" {
			*f.p = f.def
		}
	}
	return cfg
}

func (s *Stack) registryCert(mode string) (*tls.Certificate, error) {
	now := time.Now()
	opts := LeafOptions{DNSNames: []string{RegistryHostName}}
	ca := s.CA
	switch mode {
	case TLSTrusted:
	case TLSUntrustedCA:
		other, err := NewCA("untrusted lab CA")
		if err != nil {
			return nil, err
		}
		ca = other
	case TLSExpired:
		opts.NotBefore, opts.NotAfter = now.Add(-48*time.Hour), now.Add(-24*time.Hour)
	case TLSNotYetValid:
		opts.NotBefore, opts.NotAfter = now.Add(24*time.Hour), now.Add(48*time.Hour)
	case TLSWrongName:
		opts.DNSNames = []string{"wrong.lab.test"}
	default:
		return nil, fmt.Errorf("stack: registry TLS mode %q, want one of %s, %s, %s, %s, %s, %s", mode, TLSTrusted, TLSUntrustedCA, TLSExpired, TLSNotYetValid, TLSWrongName, TLSNone)
	}
	leaf, err := ca.Issue(opts)
	if err != nil {
		return nil, err
	}
	c, err := leaf.TLSCertificate()
	return &c, err
}

func (s *Stack) writeNodeFiles() error {
	dnsIP, dnsPort, _ := net.SplitHostPort(s.DNS.Addr())
	resolv := fmt.Sprintf("# pullpath lab: the server listens on port %s; use --nameserver %s\nnameserver %s\nsearch %s\noptions ndots:1 timeout:2 attempts:1\n", dnsPort, s.DNS.Addr(), dnsIP, LabZone)
	if err := writeFile(s.Files.ResolvConf, []byte(resolv), 0o644); err != nil {
		return err
	}
	hosts := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	names := make([]string, 0, len(s.Config.HostsEntries))
	for n := range s.Config.HostsEntries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		hosts += fmt.Sprintf("%s\t%s\n", s.Config.HostsEntries[n], n)
	}
	if err := writeFile(s.Files.Hosts, []byte(hosts), 0o644); err != nil {
		return err
	}
	if err := s.CA.WriteCAFile(filepath.Join(s.Files.CertsDir, s.RegistryHost, "ca.crt")); err != nil {
		return err
	}
	pass := s.Password
	if s.Config.WrongPassword {
		pass = s.Password + "-wrong"
	}
	dc := map[string]any{"auths": map[string]any{
		s.RegistryHost: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(s.Username + ":" + pass))},
	}}
	b, err := json.MarshalIndent(dc, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(s.Files.DockerConfig, b, 0o600)
}

// hostPort joins name with the port of addr.
func hostPort(name, addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort(name, port)
}

// unusedPort reserves then frees a port on ip, so connecting is refused.
func unusedPort(ip string) (string, error) {
	ln, err := listenTCP("stack", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", err
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return port, nil
}

// Nameserver is the DNS server's IP:PORT (resolv.conf cannot carry a port).
func (s *Stack) Nameserver() string { return s.DNS.Addr() }

// Ref is the image reference, "registry.lab.test:PORT/lab/app:v1".
func (s *Stack) Ref() string {
	return s.RegistryHost + "/" + s.Image.Repository + ":" + s.Image.Tag
}

// Transport is an HTTP transport that resolves lab names through the
// stack's DNS and trusts the lab CA; it sends nothing off loopback.
func (s *Stack) Transport() *http.Transport {
	return &http.Transport{
		DialContext:           DialContextVia(s.Nameserver()),
		TLSClientConfig:       &tls.Config{RootCAs: s.CA.Pool(), MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		ForceAttemptHTTP2:     true,
	}
}

// Close stops every service, last started first.
func (s *Stack) Close() error {
	var errs []string
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i](); err != nil {
			errs = append(errs, err.Error())
		}
	}
	s.closers = nil
	if len(errs) > 0 {
		return errors.New("stack close: " + strings.Join(errs, "; "))
	}
	return nil
}
