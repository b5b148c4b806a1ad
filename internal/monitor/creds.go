package monitor

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// CredentialSource gives the credentials the node's runtime would present
// to a registry host, and how long they may be reused (0: the cache's
// default). It is the seam for the kubelet's credential provider plugins,
// whose answers carry their own cacheDuration.
type CredentialSource interface {
	Credentials(ctx context.Context, host string) (runtimecfg.Credentials, time.Duration, error)
	// Version changes when the source's input changes (a Secret update
	// rewrites the mounted file): cached answers are then dropped.
	Version() string
}

// DockerConfigSource reads a docker config.json (auths, credHelpers,
// credsStore), e.g. mounted from a Secret. Path "" is anonymous; so is a
// missing file when Optional (an optional Secret not created).
type DockerConfigSource struct {
	Path     string
	Optional bool
}

func (d DockerConfigSource) Credentials(ctx context.Context, host string) (runtimecfg.Credentials, time.Duration, error) {
	if d.Optional && d.Path != "" {
		if _, err := os.Stat(d.Path); errors.Is(err, fs.ErrNotExist) {
			return runtimecfg.Credentials{Source: "anonymous (no docker config at " + d.Path + ", optional)"}, 0, nil
		}
	}
	c, err := runtimecfg.LoadCredentialsContext(ctx, d.Path, host)
	return c, 0, err
}

func (d DockerConfigSource) Version() string {
	if d.Path == "" {
		return ""
	}
	fi, err := os.Stat(d.Path)
	if err != nil {
		return "missing"
	}
	return fi.ModTime().UTC().Format(time.RFC3339Nano) + "/" + strconv.FormatInt(fi.Size(), 10)
}

// credCache keeps each host's credentials for their lifetime: an ECR
// token from a credential helper lasts 12 h, and GetAuthorizationToken is
// rate limited per account and region, so the agent asks once per lifetime,
// not once per walk. Failures are not cached: the next interval asks again
// (never sooner: a walk is never retried inside its interval).
type credCache struct {
	src CredentialSource
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	version string
	entries map[string]credEntry
	lookups int // calls that reached the source (for tests)
}

type credEntry struct {
	c       runtimecfg.Credentials
	expires time.Time
}

func newCredCache(src CredentialSource, ttl time.Duration, now func() time.Time) *credCache {
	return &credCache{src: src, ttl: ttl, now: now, entries: map[string]credEntry{}}
}

// Get is pull.Options.Credentials.
func (c *credCache) Get(ctx context.Context, host string) (runtimecfg.Credentials, error) {
	c.mu.Lock()
	if v := c.src.Version(); v != c.version {
		c.entries, c.version = map[string]credEntry{}, v
	}
	if e, ok := c.entries[host]; ok && c.now().Before(e.expires) {
		c.mu.Unlock()
		return e.c, nil
	}
	c.lookups++
	c.mu.Unlock()
	cr, ttl, err := c.src.Credentials(ctx, host)
	if err != nil {
		return cr, err
	}
	if ttl <= 0 {
		ttl = c.ttl
	}
	if ttl > 0 {
		c.mu.Lock()
		c.entries[host] = credEntry{c: cr, expires: c.now().Add(ttl)}
		c.mu.Unlock()
	}
	return cr, nil
}

func (c *credCache) Lookups() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lookups
}
