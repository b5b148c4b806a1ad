package labsvc

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Deny modes: what the token service does when a user may not read a
// requested repository.
const (
	// DenyForbidden answers 403 {"errors":[{"code":"DENIED",...}]} (ACR-like).
	DenyForbidden = "forbidden"
	// DenyEmpty issues a token with empty access, so the registry answers
	// 401 insufficient_scope (Docker Hub-like). The default.
	DenyEmpty = "empty"
)

// User is an account of the token service.
type User struct {
	Password string   `json:"password"`
	Read     []string `json:"read"` // repository names, path.Match globs ("lab/*"), or "*" for all
}

// TokenSigner holds the ES256 key that signs tokens and its key ID (the
// RFC 7638 thumbprint), which goes in each token's "kid" header and in the
// JWKS the registry trusts.
type TokenSigner struct {
	Key   *ecdsa.PrivateKey
	KeyID string
}

// NewTokenSigner makes a new P-256 signing key.
func NewTokenSigner() (*TokenSigner, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate token signing key: %w", err)
	}
	return signerFromKey(key)
}

func signerFromKey(key *ecdsa.PrivateKey) (*TokenSigner, error) {
	jwk := jose.JSONWebKey{Key: &key.PublicKey}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("token key thumbprint: %w", err)
	}
	return &TokenSigner{Key: key, KeyID: base64.RawURLEncoding.EncodeToString(tp)}, nil
}

// LoadTokenSigner reads an "EC PRIVATE KEY" PEM file (WriteKeyFile).
func LoadTokenSigner(path string) (*TokenSigner, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read token signing key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "EC PRIVATE KEY" {
		return nil, fmt.Errorf("token signing key %q: want a PEM \"EC PRIVATE KEY\" block", path)
	}
	key, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("token signing key %q: %w", path, err)
	}
	return signerFromKey(key)
}

// WriteKeyFile writes the private key in PEM (mode 0600).
func (s *TokenSigner) WriteKeyFile(path string) error {
	b, err := EncodeKeyPEM(s.Key)
	if err != nil {
		return err
	}
	return writeFile(path, b, 0o600)
}

// JWKS returns the public key as a JSON Web Key Set.
func (s *TokenSigner) JWKS() ([]byte, error) {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &s.Key.PublicKey, KeyID: s.KeyID, Algorithm: string(jose.ES256), Use: "sig"}}}
	return json.Marshal(set)
}

// WriteJWKS writes the JWKS for the registry's token auth "jwks" option.
func (s *TokenSigner) WriteJWKS(path string) error {
	b, err := s.JWKS()
	if err != nil {
		return fmt.Errorf("marshal JWKS: %w", err)
	}
	return writeFile(path, b, 0o644)
}

// TokenAccess is one entry of a token's "access" claim.
type TokenAccess struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

// claimSet is the claim set distribution's token verifier reads.
type claimSet struct {
	Issuer     string         `json:"iss"`
	Subject    string         `json:"sub"`
	Audience   []string       `json:"aud"`
	Expiration int64          `json:"exp"`
	NotBefore  int64          `json:"nbf"`
	IssuedAt   int64          `json:"iat"`
	JWTID      string         `json:"jti"`
	Access     []*TokenAccess `json:"access"`
}

// Sign issues a token for subject with the given access.
func (s *TokenSigner) Sign(issuer, service, subject string, access []*TokenAccess, now time.Time, ttl time.Duration) (string, error) {
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: s.Key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), s.KeyID))
	if err != nil {
		return "", fmt.Errorf("token signer: %w", err)
	}
	if access == nil {
		access = []*TokenAccess{}
	}
	cs := claimSet{
		Issuer:     issuer,
		Subject:    subject,
		Audience:   []string{service},
		Expiration: now.Add(ttl).Unix(),
		NotBefore:  now.Add(-time.Second).Unix(),
		IssuedAt:   now.Unix(),
		JWTID:      randomHex(16),
		Access:     access,
	}
	tok, err := jwt.Signed(sig).Claims(cs).Serialize()
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return tok, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TokenConfig configures the token service.
type TokenConfig struct {
	Addr     string           `json:"addr"`
	Cert     *tls.Certificate `json:"-"`
	CertFile string           `json:"certFile,omitempty"`
	KeyFile  string           `json:"keyFile,omitempty"`
	// Issuer and Service must match the registry's token auth options.
	Issuer  string `json:"issuer"`
	Service string `json:"service"`
	// Signer, or SigningKeyFile (WriteKeyFile), signs the tokens.
	Signer         *TokenSigner    `json:"-"`
	SigningKeyFile string          `json:"signingKeyFile,omitempty"`
	Users          map[string]User `json:"users"`
	// AnonymousRead lists repositories (or globs) anyone may pull.
	AnonymousRead []string `json:"anonymousRead,omitempty"`
	// DenyMode is DenyEmpty (default) or DenyForbidden.
	DenyMode string `json:"denyMode,omitempty"`
	// TTL of issued tokens (nanoseconds in JSON); default 5 minutes.
	TTL time.Duration `json:"ttl,omitempty"`
}

// TokenRequest is one request the token service received; secrets are
// never recorded.
type TokenRequest struct {
	Time      time.Time     `json:"time"`
	Method    string        `json:"method"`
	Path      string        `json:"path"`
	GrantType string        `json:"grantType,omitempty"`
	Service   string        `json:"service"`
	Scopes    []string      `json:"scopes"`
	User      string        `json:"user,omitempty"` // empty for anonymous
	Status    int           `json:"status"`
	Granted   []TokenAccess `json:"granted,omitempty"`
}

// TokenServer is a running token service.
type TokenServer struct {
	svc     *httpService
	cfg     TokenConfig
	signer  *TokenSigner
	mu      sync.Mutex
	reqs    []TokenRequest
	refresh map[string]string // refresh token -> user
}

// StartTokenServer serves GET and POST /token on cfg.Addr until Close or
// ctx ends.
func StartTokenServer(ctx context.Context, cfg TokenConfig) (*TokenServer, error) {
	if cfg.Issuer == "" || cfg.Service == "" {
		return nil, fmt.Errorf("token service: issuer %q and service %q must both be set", cfg.Issuer, cfg.Service)
	}
	switch cfg.DenyMode {
	case "":
		cfg.DenyMode = DenyEmpty
	case DenyEmpty, DenyForbidden:
	default:
		return nil, fmt.Errorf("token service: deny mode %q, want %q or %q", cfg.DenyMode, DenyEmpty, DenyForbidden)
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 5 * time.Minute
	}
	signer := cfg.Signer
	if signer == nil {
		if cfg.SigningKeyFile == "" {
			return nil, fmt.Errorf("token service: no signing key, set Signer or SigningKeyFile")
		}
		var err error
		if signer, err = LoadTokenSigner(cfg.SigningKeyFile); err != nil {
			return nil, fmt.Errorf("token service: %w", err)
		}
	}
	for name, globs := range map[string][]string{"anonymous": cfg.AnonymousRead} {
		if err := checkGlobs(name, globs); err != nil {
			return nil, err
		}
	}
	for name, u := range cfg.Users {
		if err := checkGlobs(name, u.Read); err != nil {
			return nil, err
		}
	}
	tlsConf, err := loadTLS(cfg.Cert, cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("token service: %w", err)
	}
	ts := &TokenServer{cfg: cfg, signer: signer, refresh: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/token", ts.serveToken)
	svc, err := startHTTP(ctx, "token service", cfg.Addr, tlsConf, mux)
	if err != nil {
		return nil, err
	}
	ts.svc = svc
	return ts, nil
}

func checkGlobs(who string, globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("token service: read pattern %q of %s: %v", g, who, err)
		}
	}
	return nil
}

// Addr is the real listening address, IP:PORT.
func (t *TokenServer) Addr() string { return t.svc.Addr() }

// URL is scheme://IP:PORT of the service.
func (t *TokenServer) URL() string { return t.svc.scheme + "://" + t.svc.Addr() }

// Signer returns the key that signs this service's tokens.
func (t *TokenServer) Signer() *TokenSigner { return t.signer }

// Requests returns a copy of every request received so far.
func (t *TokenServer) Requests() []TokenRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]TokenRequest(nil), t.reqs...)
}

// Close stops the service.
func (t *TokenServer) Close() error { return t.svc.Close() }

type tokenError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Detail  any    `json:"detail,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// tokenAsk is what a token request asks for, as the client sent it.
type tokenAsk struct {
	user, password, service string
	scopes                  []string
	hasCreds, offline       bool
}

// ask reads a token request: a GET with Basic auth (the Docker token
// protocol) or a POST form (OAuth2's password and refresh_token grants). A
// request it refuses gives the status, error code and message.
func (t *TokenServer) ask(r *http.Request, rec *TokenRequest) (a tokenAsk, status int, code, msg string) {
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		a.service, a.scopes = q.Get("service"), q["scope"]
		a.offline = q.Get("offline_token") == "true"
		a.user, a.password, a.hasCreds = r.BasicAuth()
	case http.MethodPost:
		if err := r.ParseForm(); err != nil {
			return a, http.StatusBadRequest, "UNSUPPORTED", "bad form body"
		}
		a.service = r.PostForm.Get("service")
		for _, s := range r.PostForm["scope"] {
			a.scopes = append(a.scopes, strings.Fields(s)...)
		}
		rec.GrantType = r.PostForm.Get("grant_type")
		a.offline = r.PostForm.Get("access_type") == "offline"
		switch rec.GrantType {
		case "password":
			a.user, a.password, a.hasCreds = r.PostForm.Get("username"), r.PostForm.Get("password"), true
		case "refresh_token":
			t.mu.Lock()
			u, ok := t.refresh[r.PostForm.Get("refresh_token")]
			t.mu.Unlock()
			if !ok {
				return a, http.StatusUnauthorized, "UNAUTHORIZED", "invalid refresh token"
			}
			a.user, a.password, a.hasCreds = u, t.cfg.Users[u].Password, true
			a.offline = true
		default:
			return a, http.StatusBadRequest, "UNSUPPORTED", "grant_type must be password or refresh_token"
		}
	default:
		return a, http.StatusMethodNotAllowed, "UNSUPPORTED", "method not allowed"
	}
	return a, 0, "", ""
}

func (t *TokenServer) serveToken(w http.ResponseWriter, r *http.Request) {
	rec := TokenRequest{Time: time.Now(), Method: r.Method, Path: r.URL.Path}
	defer func() {
		t.mu.Lock()
		if len(t.reqs) < maxRecorded {
			t.reqs = append(t.reqs, rec)
		}
		t.mu.Unlock()
	}()
	fail := func(status int, code, msg string) {
		rec.Status = status
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="pullpath-lab-token"`)
		}
		writeJSON(w, status, map[string]any{"errors": []tokenError{{Code: code, Message: msg}}, "details": msg})
	}

	a, status, code, msg := t.ask(r, &rec)
	if status != 0 {
		if status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", "GET, POST")
		}
		fail(status, code, msg)
		return
	}
	user, password, service, scopes, hasCreds, offline := a.user, a.password, a.service, a.scopes, a.hasCreds, a.offline
	rec.Service, rec.Scopes, rec.User = service, scopes, user
	if service != "" && service != t.cfg.Service {
		fail(http.StatusBadRequest, "INVALID_SERVICE", fmt.Sprintf("unknown service %q", service))
		return
	}

	read := t.cfg.AnonymousRead
	if hasCreds {
		u, ok := t.cfg.Users[user]
		if !ok || u.Password != password {
			fail(http.StatusUnauthorized, "UNAUTHORIZED", "authentication required: incorrect username or password")
			return
		}
		read = append(append([]string(nil), read...), u.Read...)
	}

	var granted []*TokenAccess
	for _, s := range scopes {
		typ, name, actions, ok := parseScope(s)
		if !ok {
			fail(http.StatusBadRequest, "INVALID_SCOPE", fmt.Sprintf("scope %q, want type:name:actions", s))
			return
		}
		allowed := typ == "repository" && matchAny(read, name) && slices.Contains(actions, "pull")
		if !allowed {
			if t.cfg.DenyMode == DenyForbidden {
				if !hasCreds {
					fail(http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
					return
				}
				fail(http.StatusForbidden, "DENIED", fmt.Sprintf("requested access to the resource is denied: %s", s))
				return
			}
			continue
		}
		granted = append(granted, &TokenAccess{Type: typ, Name: name, Actions: []string{"pull"}})
	}
	now := time.Now()
	tok, err := t.signer.Sign(t.cfg.Issuer, t.cfg.Service, user, granted, now, t.cfg.TTL)
	if err != nil {
		fail(http.StatusInternalServerError, "UNKNOWN", "could not sign token")
		return
	}
	for _, g := range granted {
		rec.Granted = append(rec.Granted, *g)
	}
	ans := map[string]any{
		"token":        tok,
		"access_token": tok,
		"expires_in":   int(t.cfg.TTL / time.Second),
		"issued_at":    now.UTC().Format(time.RFC3339),
	}
	if offline && hasCreds {
		rt := randomHex(24)
		t.mu.Lock()
		t.refresh[rt] = user
		t.mu.Unlock()
		ans["refresh_token"] = rt
	}
	rec.Status = http.StatusOK
	writeJSON(w, http.StatusOK, ans)
}

// parseScope splits "repository:lab/app:pull,push". The name may itself
// hold colons (a host:port prefix), so type is before the first colon and
// actions after the last.
func parseScope(s string) (typ, name string, actions []string, ok bool) {
	i, j := strings.Index(s, ":"), strings.LastIndex(s, ":")
	if i <= 0 || j <= i+1 || j == len(s)-1 {
		return "", "", nil, false
	}
	return s[:i], s[i+1 : j], strings.Split(s[j+1:], ","), true
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if g == "*" || g == name {
			return true
		}
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
