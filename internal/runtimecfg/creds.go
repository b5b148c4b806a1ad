package runtimecfg

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"
)

// Credentials are what the runtime presents to a registry. The secret
// fields never leave the process: String, GoString and JSON leave them out.
type Credentials struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"-"` // never printed
	IdentityToken string `json:"-"` // refresh token for the token service (OAuth2 POST grant_type=refresh_token)
	RegistryToken string `json:"-"` // bearer token to use as-is
	Source        string `json:"source"`
	// Origin names where the kubelet got them, compactly: "secret NAME"
	// (a pull secret), "provider NAME" (a credential provider plugin);
	// "" for the runtime's own files.
	Origin string `json:"origin,omitempty"`
}

// Anonymous reports whether there is nothing to present.
func (c Credentials) Anonymous() bool {
	return c.Username == "" && c.Password == "" && c.IdentityToken == "" && c.RegistryToken == ""
}

// String describes the credentials without any secret:
// "user alice from docker config /x".
func (c Credentials) String() string {
	from := ""
	if c.Source != "" && c.Source != "anonymous" {
		from = " from " + c.Source
	}
	switch {
	case c.RegistryToken != "":
		return "registry token" + from
	case c.IdentityToken != "":
		if c.Username != "" && c.Username != tokenUsername {
			return "identity token for user " + c.Username + from
		}
		return "identity token" + from
	case c.Username != "" || c.Password != "":
		if c.Password == "" {
			return "user " + c.Username + " without a password" + from
		}
		return "user " + c.Username + from
	}
	switch {
	case strings.HasPrefix(c.Source, "anonymous"):
		return c.Source
	case c.Source != "":
		return "anonymous (" + c.Source + ")"
	}
	return "anonymous"
}

// GoString keeps %#v as safe as %v.
func (c Credentials) GoString() string { return "runtimecfg.Credentials{" + c.String() + "}" }

// CredentialsError is a docker config or credential helper that cannot give
// credentials: the caller reports CREDENTIALS_ERROR. Source names the file
// or helper; Reason never holds a secret.
type CredentialsError struct {
	Source string // "docker config /x", "credential helper docker-credential-ecr-login"
	Reason string
	Err    error // the underlying error, e.g. fs.ErrNotExist or exec.ErrNotFound
}

func (e *CredentialsError) Error() string { return e.Source + ": " + e.Reason }
func (e *CredentialsError) Unwrap() error { return e.Err }

// tokenUsername is the Username a credential helper returns with an
// identity token in Secret.
const tokenUsername = "<token>"

// dockerHubServer is the key and server URL Docker uses for docker.io.
const dockerHubServer = "https://index.docker.io/v1/"

type dockerConfigFile struct {
	Auths       map[string]dockerAuth `json:"auths"`
	CredHelpers map[string]string     `json:"credHelpers"`
	CredsStore  string                `json:"credsStore"`
}

type dockerAuth struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
	RegistryToken string `json:"registrytoken"`
}

// LoadCredentials is LoadCredentialsContext with a background context.
func LoadCredentials(dockerConfig string, host string) (Credentials, error) {
	return LoadCredentialsContext(context.Background(), dockerConfig, host)
}

// CredentialOptions tune how credentials are looked up.
type CredentialOptions struct {
	// HelperTimeout bounds each credential helper run
	// (DefaultHelperTimeout when zero).
	HelperTimeout time.Duration
}

// LoadCredentialsContext is LoadCredentialsWith with the default options.
func LoadCredentialsContext(ctx context.Context, dockerConfig string, host string) (Credentials, error) {
	return LoadCredentialsWith(ctx, dockerConfig, host, CredentialOptions{})
}

// LoadCredentialsWith finds the credentials a docker config.json holds
// for host ("docker.io", "registry-1.docker.io" and "index.docker.io" all
// mean Docker Hub), the way the Docker CLI does:
//
//  1. dockerConfig "" means no config: anonymous. A path that does not
//     exist is an error wrapping fs.ErrNotExist.
//  2. credHelpers[host] runs docker-credential-NAME; else credsStore does.
//     A helper answering "credentials not found" gives anonymous; a helper
//     missing from PATH, failing, or hanging past o.HelperTimeout (10 s by
//     default) is an error; cancelling ctx (Ctrl-C) kills the helper.
//  3. Otherwise auths, keyed by host, https://host, https://host/v1/ (for
//     Docker Hub https://index.docker.io/v1/), or any key whose host part
//     is host: auth (base64 user:password), username/password,
//     identitytoken, registrytoken.
//
// Every error is a *CredentialsError.
func LoadCredentialsWith(ctx context.Context, dockerConfig string, host string, o CredentialOptions) (Credentials, error) {
	if o.HelperTimeout <= 0 {
		o.HelperTimeout = DefaultHelperTimeout
	}
	if dockerConfig == "" {
		return Credentials{Source: "anonymous"}, nil
	}
	src := "docker config " + dockerConfig
	b, err := os.ReadFile(dockerConfig)
	if err != nil {
		reason := pathErrReason(err)
		if errors.Is(err, fs.ErrNotExist) {
			reason = "no such file (pass no docker config for anonymous pulls)"
		}
		return Credentials{}, &CredentialsError{Source: src, Reason: reason, Err: err}
	}
	var cfg dockerConfigFile
	if err := json.Unmarshal(b, &cfg); err != nil {
		return Credentials{}, &CredentialsError{Source: src, Reason: "invalid JSON: " + jsonReason(err), Err: errors.New("invalid JSON")}
	}

	hub := isDockerHub(host)
	keys := candidateKeys(host)

	// 2. credential helpers, as the Docker CLI: a per-registry helper, else the store.
	for _, k := range keys {
		if name, ok := cfg.CredHelpers[k]; ok && name != "" {
			return runHelper(ctx, name, helperServer(host, hub), o.HelperTimeout)
		}
	}
	if cfg.CredsStore != "" {
		return runHelper(ctx, cfg.CredsStore, helperServer(host, hub), o.HelperTimeout)
	}

	// 3. auths: exact keys first, then any key whose host part matches.
	key, a, ok := findAuth(cfg.Auths, keys, host)
	if !ok {
		return Credentials{Source: fmt.Sprintf("anonymous (no entry for %s in %s)", host, src)}, nil
	}
	c := Credentials{
		Username:      a.Username,
		Password:      a.Password,
		IdentityToken: a.IdentityToken,
		RegistryToken: a.RegistryToken,
		Source:        fmt.Sprintf("%s (auths %q)", src, key),
	}
	if a.Auth != "" {
		user, pass, err := decodeAuth(a.Auth)
		if err != nil {
			return Credentials{}, &CredentialsError{Source: src, Reason: fmt.Sprintf("auths %q: %s", key, err)}
		}
		c.Username, c.Password = user, pass
	}
	return c, nil
}

func isDockerHub(host string) bool {
	switch strings.ToLower(host) {
	case DockerHubRegistry, DockerHubHost, "index.docker.io":
		return true
	}
	return false
}

// helperServer is what the Docker CLI writes to a helper's stdin.
func helperServer(host string, hub bool) string {
	if hub {
		return dockerHubServer
	}
	return host
}

// candidateKeys are the config keys that name host exactly, best first.
func candidateKeys(host string) []string {
	if isDockerHub(host) {
		return []string{dockerHubServer, "index.docker.io", "docker.io", "https://docker.io",
			DockerHubHost, "https://" + DockerHubHost, "https://index.docker.io"}
	}
	return []string{host, "https://" + host, "https://" + host + "/v1/", "https://" + host + "/v2/", "http://" + host}
}

func findAuth(auths map[string]dockerAuth, keys []string, host string) (string, dockerAuth, bool) {
	for _, k := range keys {
		if a, ok := auths[k]; ok {
			return k, a, true
		}
	}
	all := make([]string, 0, len(auths))
	for k := range auths {
		all = append(all, k)
	}
	sort.Strings(all)
	hub := isDockerHub(host)
	for _, k := range all {
		h := keyHost(k)
		if strings.EqualFold(h, host) || (hub && isDockerHub(h)) {
			return k, auths[k], true
		}
	}
	return "", dockerAuth{}, false
}

// keyHost is the host part of an auths key ("https://h:5000/v1/" -> "h:5000").
func keyHost(k string) string {
	if strings.Contains(k, "://") {
		if u, err := url.Parse(k); err == nil {
			return u.Host
		}
	}
	h, _, _ := strings.Cut(k, "/")
	return h
}

func decodeAuth(s string) (string, string, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		// some writers drop the padding
		raw, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(strings.TrimSpace(s), "="))
		if err != nil {
			return "", "", errors.New(`"auth" is not valid base64 (want base64 of user:password)`)
		}
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", errors.New(`"auth" does not decode to user:password`)
	}
	return user, pass, nil
}

// jsonReason describes a JSON error by position, never by content.
func jsonReason(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q must be %s, not a %s", te.Field, te.Type.String(), te.Value)
	}
	return "cannot decode"
}
