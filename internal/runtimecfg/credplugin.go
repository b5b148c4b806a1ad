package runtimecfg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/redact"
)

// Running credential provider plugins as the kubelet does
// (k8s.io/kubernetes pkg/credentialprovider/plugin/plugin.go execPlugin):
// BIN_DIR/NAME ARGS..., the kubelet's environment plus the provider's env,
// a CredentialProviderRequest on stdin, a CredentialProviderResponse on
// stdout, one minute at most. The response's auth map goes through the
// kubelet's keyring; the response is cached for cacheDuration (or the
// provider's defaultCacheDuration) under the image, the registry or one
// global key, as cacheKeyType says.

// MaxPluginResponse is the most of a plugin's stdout that is read; a
// larger answer is refused (no real plugin writes more than a few KiB).
const MaxPluginResponse = 1 << 20

// maxPluginStderr is what is kept of a plugin's stderr, as evidence.
const maxPluginStderr = 8 << 10

// DefaultPluginTimeout is the kubelet's catch-all timeout for one exec.
const DefaultPluginTimeout = time.Minute

// PluginError is a credential provider plugin that gave no credentials:
// missing, not executable, failing, timing out, or answering garbage. It is
// a CREDENTIALS_ERROR finding (stage auth) of its own. Stderr is redacted:
// it never holds the provider's env values or a returned password.
type PluginError struct {
	Plugin string // the provider's name
	Path   string // the binary
	Reason string
	Stderr string
	Err    error
}

func (e *PluginError) Error() string {
	return fmt.Sprintf("credential provider plugin %s (%s): %s", e.Plugin, e.Path, e.Reason)
}
func (e *PluginError) Unwrap() error { return e.Err }

// pluginRequest and pluginResponse are the credentialprovider.kubelet.k8s.io
// wire types.
type pluginRequest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Image      string `json:"image"`
}

type pluginResponse struct {
	APIVersion    string                    `json:"apiVersion"`
	Kind          string                    `json:"kind"`
	CacheKeyType  string                    `json:"cacheKeyType"`
	CacheDuration *string                   `json:"cacheDuration,omitempty"`
	Auth          map[string]pluginAuthPair `json:"auth,omitempty"`
}

type pluginAuthPair struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// PluginResult is what one provider gave for an image.
type PluginResult struct {
	Provider string
	Path     string
	Cached   bool           // served from the cache, the plugin did not run
	CacheKey string         // the key it is cached under ("" when not cached)
	TTL      time.Duration  // how long it is cached
	Keys     []string       // the auth map's patterns (not secret)
	Entries  []KeyringEntry // the auth map
}

// PluginRunner runs a config's plugins. It caches responses for their
// cacheDuration, for long-running callers (sweep, monitor); a one-shot
// probe makes one call. Safe for concurrent use.
type PluginRunner struct {
	Config  *CredentialProviderConfig
	BinDir  string
	Timeout time.Duration        // per exec; DefaultPluginTimeout when 0
	Environ func() []string      // the environment the plugin inherits; os.Environ when nil
	Now     func() time.Time     // time.Now when nil
	Secrets func(vals ...string) // told every env value and returned password, for redaction; may be nil

	mu    sync.Mutex
	cache map[string]cacheEntry // provider + "\x00" + key
}

type cacheEntry struct {
	res     PluginResult
	expires time.Time
}

// Provide runs every provider whose matchImages match image (a repository
// as KubeletImage returns it), in config order, and returns what each gave;
// a provider that fails is a *PluginError in errs and gives nothing (the
// kubelet logs it and pulls without those credentials).
func (r *PluginRunner) Provide(ctx context.Context, image string) (results []PluginResult, errs []error) {
	for _, p := range r.Config.Providers {
		if !p.Matches(image) {
			continue
		}
		res, err := r.provide(ctx, p, image)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		results = append(results, res)
	}
	return results, errs
}

func (r *PluginRunner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *PluginRunner) provide(ctx context.Context, p CredentialProvider, image string) (PluginResult, error) {
	registry := strings.SplitN(image, "/", 2)[0]
	r.mu.Lock()
	for _, k := range []string{image, registry, "\x00global"} {
		if e, ok := r.cache[p.Name+"\x00"+k]; ok {
			if r.now().Before(e.expires) {
				r.mu.Unlock()
				e.res.Cached = true
				return e.res, nil
			}
			delete(r.cache, p.Name+"\x00"+k)
		}
	}
	r.mu.Unlock()

	resp, path, err := r.exec(ctx, p, image)
	if err != nil {
		return PluginResult{}, err
	}
	res := PluginResult{Provider: p.Name, Path: path}
	fail := func(reason string) (PluginResult, error) {
		return PluginResult{}, &PluginError{Plugin: p.Name, Path: path, Reason: reason}
	}
	var key string
	switch resp.CacheKeyType {
	case "Image":
		key = image
	case "Registry":
		key = registry
	case "Global":
		key = "\x00global"
	default:
		return fail(fmt.Sprintf("cacheKeyType %q, want Image, Registry or Global", resp.CacheKeyType))
	}
	ttl := p.defaultCache
	if resp.CacheDuration != nil {
		d, err := time.ParseDuration(*resp.CacheDuration)
		if err != nil || d < 0 {
			return fail(fmt.Sprintf("cacheDuration %q, want a duration such as 6h", *resp.CacheDuration))
		}
		ttl = d
	}
	for pattern, a := range resp.Auth {
		if r.Secrets != nil {
			r.Secrets(a.Password)
		}
		res.Keys = append(res.Keys, pattern)
	}
	sortStrings(res.Keys)
	for _, pattern := range res.Keys {
		a := resp.Auth[pattern]
		res.Entries = append(res.Entries, KeyringEntry{Key: pattern, Creds: Credentials{Username: a.Username, Password: a.Password, Source: "credential provider " + p.Name + " (" + pattern + ")", Origin: "provider " + p.Name}})
	}
	if ttl > 0 {
		res.TTL = ttl
		res.CacheKey = strings.TrimPrefix(key, "\x00")
		r.mu.Lock()
		if r.cache == nil {
			r.cache = map[string]cacheEntry{}
		}
		r.cache[p.Name+"\x00"+key] = cacheEntry{res: res, expires: r.now().Add(ttl)}
		r.mu.Unlock()
	}
	return res, nil
}

// exec runs the plugin once and decodes its answer.
func (r *PluginRunner) exec(ctx context.Context, p CredentialProvider, image string) (*pluginResponse, string, error) {
	path := filepath.Join(r.BinDir, p.Name)
	perr := func(reason, stderr string, err error) error {
		return &PluginError{Plugin: p.Name, Path: path, Reason: reason, Stderr: stderr, Err: err}
	}
	if r.BinDir == "" {
		return nil, path, perr("no --image-credential-provider-bin-dir: the kubelet runs plugins from that directory only", "", nil)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, path, perr(fmt.Sprintf("the binary is missing (%v)", unwrapPathError(err)), "", err)
	case fi.IsDir():
		return nil, path, perr("is a directory, want the plugin binary", "", nil)
	case fi.Mode()&0o111 == 0:
		return nil, path, perr("is not executable (mode "+fi.Mode().String()+")", "", nil)
	}
	var secrets []string
	for _, e := range p.Env {
		secrets = append(secrets, e.Value)
	}
	if r.Secrets != nil {
		r.Secrets(secrets...)
	}
	req, _ := json.Marshal(pluginRequest{APIVersion: p.APIVersion, Kind: "CredentialProviderRequest", Image: image})

	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultPluginTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, path, p.Args...)
	environ := os.Environ
	if r.Environ != nil {
		environ = r.Environ
	}
	env := environ()
	for _, e := range p.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(req)
	stdout := &capBuffer{max: MaxPluginResponse + 1}
	stderr := &capBuffer{max: maxPluginStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 2 * time.Second // a plugin's children holding the pipes do not hang the probe
	runErr := cmd.Run()
	errText := scrub(stderr.String(), secrets)
	switch {
	case cctx.Err() != nil && ctx.Err() == nil:
		return nil, path, perr(fmt.Sprintf("timed out after %s (the kubelet's limit is %s)", timeout, DefaultPluginTimeout), errText, cctx.Err())
	case ctx.Err() != nil:
		return nil, path, perr("cancelled", errText, ctx.Err())
	case runErr != nil:
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return nil, path, perr(fmt.Sprintf("exited with %s", ee.ProcessState), errText, runErr)
		}
		return nil, path, perr(fmt.Sprintf("could not run: %s", scrub(runErr.Error(), secrets)), errText, runErr)
	case stdout.Len() > MaxPluginResponse:
		return nil, path, perr(fmt.Sprintf("answered more than %d bytes on stdout, want a CredentialProviderResponse", MaxPluginResponse), errText, nil)
	}
	var resp pluginResponse
	out := bytes.TrimSpace(stdout.Bytes())
	if len(out) == 0 {
		return nil, path, perr("answered nothing on stdout, want a CredentialProviderResponse", errText, nil)
	}
	// The response is never quoted in an error: it may hold credentials.
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, path, perr("answered something that is not a JSON CredentialProviderResponse", errText, nil)
	}
	if resp.APIVersion != p.APIVersion {
		return nil, path, perr(fmt.Sprintf("answered apiVersion %q, want %q (the provider's apiVersion)", resp.APIVersion, p.APIVersion), errText, nil)
	}
	if resp.Kind != "CredentialProviderResponse" {
		return nil, path, perr(fmt.Sprintf("answered kind %q, want CredentialProviderResponse", resp.Kind), errText, nil)
	}
	return &resp, path, nil
}

// scrub removes the provider's env values and anything that looks like a
// credential from a plugin's stderr.
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 3 {
			s = strings.ReplaceAll(s, v, "<redacted>")
		}
	}
	return strings.TrimSpace(redact.String(s))
}

// capBuffer keeps the first max bytes written and counts the rest.
type capBuffer struct {
	buf bytes.Buffer
	max int
	n   int
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.n += len(p)
	if room := c.max - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

func (c *capBuffer) Len() int       { return c.n }
func (c *capBuffer) Bytes() []byte  { return c.buf.Bytes() }
func (c *capBuffer) String() string { return c.buf.String() }

var _ io.Writer = (*capBuffer)(nil)

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
