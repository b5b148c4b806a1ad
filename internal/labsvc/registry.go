package labsvc

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"golang.org/x/crypto/bcrypt"

	// Storage driver, storage middleware and access controllers register
	// themselves by init.
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/auth/token"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/middleware/redirect"
)

// Registry auth modes.
const (
	AuthNone  = "none"
	AuthBasic = "basic" // htpasswd with bcrypt lines (ECR-like)
	AuthToken = "token" // bearer tokens from a token service (Docker Hub, ACR-like)
)

// RegistryConfig configures the reference registry run in-process.
type RegistryConfig struct {
	// Addr is IP:PORT to listen on; port 0 picks one.
	Addr string `json:"addr"`
	// RootDir is the filesystem storage root (fill it with WriteImage).
	RootDir string `json:"rootDir"`
	// TLS: either Cert, or CertFile and KeyFile; none means plain HTTP.
	Cert     *tls.Certificate `json:"-"`
	CertFile string           `json:"certFile,omitempty"`
	KeyFile  string           `json:"keyFile,omitempty"`
	// Auth is AuthNone (default), AuthBasic or AuthToken.
	Auth string `json:"auth,omitempty"`
	// Basic auth: the realm in the challenge and an htpasswd file
	// (see WriteHtpasswd).
	BasicRealm   string `json:"basicRealm,omitempty"`
	HtpasswdFile string `json:"htpasswdFile,omitempty"`
	// Token auth: realm URL, service, issuer, and a JWKS file with the
	// token service's public key (TokenSigner.WriteJWKS).
	TokenRealm    string `json:"tokenRealm,omitempty"`
	TokenService  string `json:"tokenService,omitempty"`
	TokenIssuer   string `json:"tokenIssuer,omitempty"`
	TokenJWKSFile string `json:"tokenJWKSFile,omitempty"`
	// RedirectBaseURL, when set, makes blob GET/HEAD answer 307 to
	// BASE/docker/registry/v2/blobs/sha256/XX/HEX/data (the blob host).
	RedirectBaseURL string `json:"redirectBaseURL,omitempty"`
	// ProxyRemoteURL, when set, runs the registry as a pull-through cache
	// of that upstream (distribution's proxy.remoteurl): what it lacks it
	// fetches from there and keeps. The upstream is reached with Go's
	// default transport (system trust): give it a plain-HTTP URL in a lab.
	ProxyRemoteURL string `json:"proxyRemoteURL,omitempty"`
	// ProxyRemoteCAFile and ProxyRemoteAddr, when set, are how the cache
	// reaches its upstream in a lab: the CA it trusts for it and the
	// IP:PORT it dials for the upstream's name (as a hosts-file line
	// would). distribution's proxy uses http.DefaultTransport, so they
	// replace it for the whole process: a cache runs in a `lab serve`
	// process of its own host.
	ProxyRemoteCAFile string `json:"proxyRemoteCAFile,omitempty"`
	ProxyRemoteAddr   string `json:"proxyRemoteAddr,omitempty"`
	// ProxyUsername and ProxyPassword are the credentials the cache
	// gives its upstream (proxy.username, proxy.password).
	ProxyUsername string `json:"proxyUsername,omitempty"`
	ProxyPassword string `json:"proxyPassword,omitempty"`
	// Debug lets distribution's logs through to stderr.
	Debug bool `json:"debug,omitempty"`
}

// Registry is a running reference registry.
type Registry struct {
	svc *httpService
	app *handlers.App
	cfg RegistryConfig
}

// StartRegistry starts distribution's registry app on cfg.Addr. It stops
// on Close or when ctx ends.
func StartRegistry(ctx context.Context, cfg RegistryConfig) (*Registry, error) {
	dc, err := cfg.distributionConfig()
	if err != nil {
		return nil, err
	}
	tlsConf, err := loadTLS(cfg.Cert, cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	if err := checkListenAddr("registry", cfg.Addr); err != nil {
		return nil, err
	}
	setDistributionLogging(cfg.Debug)
	app, err := newApp(ctx, dc)
	if err != nil {
		return nil, err
	}
	svc, err := startHTTP(ctx, "registry", cfg.Addr, tlsConf, app)
	if err != nil {
		_ = app.Shutdown()
		return nil, err
	}
	return &Registry{svc: svc, app: app, cfg: cfg}, nil
}

// newApp turns NewApp's panics on bad configuration into errors.
func newApp(ctx context.Context, dc *configuration.Configuration) (app *handlers.App, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("registry: bad configuration: %v", r)
		}
	}()
	return handlers.NewApp(context.WithoutCancel(ctx), dc), nil
}

func (cfg RegistryConfig) distributionConfig() (*configuration.Configuration, error) {
	if cfg.RootDir == "" {
		return nil, fmt.Errorf("registry: storage root directory is empty, want the directory WriteImage seeded")
	}
	if st, err := os.Stat(cfg.RootDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("registry: storage root %q is not a directory", cfg.RootDir)
	}
	dc := &configuration.Configuration{}
	dc.Storage = configuration.Storage{
		"filesystem":  configuration.Parameters{"rootdirectory": cfg.RootDir},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}
	dc.HTTP.Secret = "pullpath-lab-registry-secret"
	switch strings.ToLower(cfg.Auth) {
	case "", AuthNone:
	case AuthBasic:
		if cfg.HtpasswdFile == "" {
			return nil, fmt.Errorf("registry: auth %q needs HtpasswdFile", AuthBasic)
		}
		if _, err := os.Stat(cfg.HtpasswdFile); err != nil {
			return nil, fmt.Errorf("registry: htpasswd file %q: %w", cfg.HtpasswdFile, err)
		}
		realm := cfg.BasicRealm
		if realm == "" {
			realm = "pullpath-lab"
		}
		dc.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": realm, "path": cfg.HtpasswdFile}}
	case AuthToken:
		for name, v := range map[string]string{"TokenRealm": cfg.TokenRealm, "TokenService": cfg.TokenService, "TokenIssuer": cfg.TokenIssuer, "TokenJWKSFile": cfg.TokenJWKSFile} {
			if v == "" {
				return nil, fmt.Errorf("registry: auth %q needs %s", AuthToken, name)
			}
		}
		dc.Auth = configuration.Auth{"token": configuration.Parameters{
			"realm":             cfg.TokenRealm,
			"service":           cfg.TokenService,
			"issuer":            cfg.TokenIssuer,
			"jwks":              cfg.TokenJWKSFile,
			"signingalgorithms": []any{"ES256"},
		}}
	default:
		return nil, fmt.Errorf("registry: auth %q, want one of none, basic, token", cfg.Auth)
	}
	if cfg.RedirectBaseURL != "" {
		u, err := url.Parse(cfg.RedirectBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("registry: redirect base URL %q, want http(s)://HOST[:PORT]/", cfg.RedirectBaseURL)
		}
		dc.Middleware = map[string][]configuration.Middleware{
			"storage": {{Name: "redirect", Options: configuration.Parameters{"baseurl": cfg.RedirectBaseURL}}},
		}
	} else {
		dc.Storage["redirect"] = configuration.Parameters{"disable": true}
	}
	if cfg.ProxyRemoteURL != "" {
		u, err := url.Parse(cfg.ProxyRemoteURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("registry: proxy remote URL %q, want http(s)://HOST[:PORT]", cfg.ProxyRemoteURL)
		}
		dc.Proxy = configuration.Proxy{RemoteURL: cfg.ProxyRemoteURL, Username: cfg.ProxyUsername, Password: cfg.ProxyPassword}
		if err := setUpstreamTransport(u.Host, cfg.ProxyRemoteCAFile, cfg.ProxyRemoteAddr); err != nil {
			return nil, fmt.Errorf("registry: proxy remote: %v", err)
		}
	}
	return dc, nil
}

// Addr is the real listening address, IP:PORT.
func (r *Registry) Addr() string { return r.svc.Addr() }

// URL is scheme://IP:PORT of the registry.
func (r *Registry) URL() string { return r.svc.scheme + "://" + r.svc.Addr() }

// Close stops the registry.
func (r *Registry) Close() error {
	err := r.svc.Close()
	_ = r.app.Shutdown()
	return err
}

// WriteHtpasswd writes an htpasswd file with a bcrypt line per user.
func WriteHtpasswd(path string, users map[string]string) error {
	names := make([]string, 0, len(users))
	for u := range users {
		if u == "" || strings.ContainsAny(u, ":\n") {
			return fmt.Errorf("htpasswd: user name %q, want a non-empty name without ':' or newline", u)
		}
		names = append(names, u)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, u := range names {
		h, err := bcrypt.GenerateFromPassword([]byte(users[u]), bcrypt.MinCost)
		if err != nil {
			return fmt.Errorf("htpasswd: hash password of %q: %w", u, err)
		}
		fmt.Fprintf(&b, "%s:%s\n", u, h)
	}
	return writeFile(path, []byte(b.String()), 0o600)
}
