package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// containerd's own waits for one request to one host, the same in 1.6, 1.7
// and 2.x: the CRI's transport (pkg/cri/server/image_pull.go newTransport in
// 1.6; core/remotes/docker/config/hosts.go and DefaultHTTPTransport later)
// dials with a 30 s timeout (hosts.toml dial_timeout replaces it from 1.7),
// gives the TLS handshake 10 s, and sets no ResponseHeaderTimeout: a host
// that accepts and never answers holds the request until the pull's context
// ends.
const (
	RuntimeDialTimeout = 30 * time.Second
	RuntimeTLSTimeout  = 10 * time.Second
	// RuntimeProgressInterval is how often the CRI's pull progress reporter
	// looks (1.7 and later, defaultPullProgressReportInterval).
	RuntimeProgressInterval = 10 * time.Second
	// RuntimeMaxConcurrentDownloads is the CRI's max_concurrent_downloads
	// default.
	RuntimeMaxConcurrentDownloads = 3
)

// ResolveHosts are the hosts containerd's resolver tries for ref, in order
// (core/remotes/docker/resolver.go Resolve, filterHosts): a tag needs
// pull and resolve, a digest needs pull only.
func ResolveHosts(hosts []RegistryHost, byDigest bool) []RegistryHost {
	var out []RegistryHost
	for _, h := range hosts {
		if h.Has(CapPull) && (byDigest || h.Has(CapResolve)) {
			out = append(out, h)
		}
	}
	return out
}

// FetchHosts are the hosts containerd's fetcher tries for every manifest by
// digest and every blob, in order. containerd checks that one host may pull
// and then loops over all of them, whatever their capabilities
// (core/remotes/docker/fetcher.go Fetch: filterHosts(HostCapabilityPull)
// for the check, `for _, host := range r.hosts` for the requests; 1.6
// through 2.x): a resolve-only or push-only entry still serves blobs.
func FetchHosts(hosts []RegistryHost) []RegistryHost {
	for _, h := range hosts {
		if h.Has(CapPull) {
			return hosts
		}
	}
	return nil
}

// NamespaceQuery is the query containerd adds to every request to a host
// that is not the reference's own registry (resolver.go addNamespace,
// RegistryHost.isProxy): "ns=REGISTRY", so a pull-through cache knows which
// upstream is meant. docker.io served by registry-1.docker.io is not a
// proxy. "" when none is added.
func NamespaceQuery(h RegistryHost, ref Ref) string {
	if h.Host == ref.Registry || (ref.Registry == DockerHubRegistry && h.Host == DockerHubHost) {
		return ""
	}
	return "ns=" + ref.Registry
}

// PullLimits are the runtime's limits on a pull that a stalled or slow
// host runs into, read from containerd's config where readable.
type PullLimits struct {
	// ConfigFile is the containerd config read ("" when none was given or
	// it could not be read).
	ConfigFile string
	// ProgressTimeout is the CRI's image_pull_progress_timeout: the pull is
	// cancelled when requests are open and no byte arrived for this long
	// (containerd 1.7 and later). 0 with ProgressTimeoutSet means the file
	// turns it off.
	ProgressTimeout    time.Duration
	ProgressTimeoutSet bool
	// MaxConcurrentDownloads is the CRI's max_concurrent_downloads (3 when
	// not set).
	MaxConcurrentDownloads int
	// Note says where the values came from, in words.
	Note string
}

// ProgressTimeoutDefaults says what image_pull_progress_timeout is when a
// config does not set it, by containerd version (pkg/cri/config: none in
// 1.6; 1m in 1.7.0 to 1.7.9; 5m from 1.7.10 and in 2.x).
const ProgressTimeoutDefaults = "containerd 1.6 has no such limit; 1.7.0 to 1.7.9 default to 1m, 1.7.10 and 2.x to 5m"

// containerdConfig is the part of containerd's config that limits a pull:
// version 2 keeps the CRI's keys under io.containerd.grpc.v1.cri, version 3
// (containerd 2.x) under io.containerd.cri.v1.images.
type containerdConfig struct {
	Version int                       `toml:"version"`
	Plugins map[string]map[string]any `toml:"plugins"`
}

// ReadPullLimits reads containerd's config file for the pull's limits. A
// missing file is not an error: the limits say they are the defaults. A
// file that does not parse is an error naming it.
func ReadPullLimits(file string) (PullLimits, error) {
	l := PullLimits{MaxConcurrentDownloads: RuntimeMaxConcurrentDownloads}
	if file == "" {
		l.Note = "containerd's config was not given: image_pull_progress_timeout unknown (" + ProgressTimeoutDefaults + ")"
		return l, nil
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		l.Note = file + " is not readable here: image_pull_progress_timeout unknown (" + ProgressTimeoutDefaults + ")"
		return l, nil
	}
	if err != nil {
		return l, &ConfigError{File: file, Reason: "cannot read: " + pathErrReason(err)}
	}
	var c containerdConfig
	if err := toml.Unmarshal(b, &c); err != nil {
		return l, &ConfigError{File: file, Reason: tomlReason(err)}
	}
	sec := criV2Section
	if c.Version >= 3 {
		sec = criImagesSection
	}
	l, err = limitsFrom(file, sec, c.Plugins[sec])
	l.ConfigFile = file
	return l, err
}

// limitsFrom reads the pull's limits from the CRI section sec of file.
func limitsFrom(file, sec string, p map[string]any) (PullLimits, error) {
	l := PullLimits{MaxConcurrentDownloads: RuntimeMaxConcurrentDownloads}
	if file == "" {
		l.Note = "containerd runs without a config file: image_pull_progress_timeout is its default (" + ProgressTimeoutDefaults + ")"
		return l, nil
	}
	if v, ok := p["image_pull_progress_timeout"]; ok {
		s, isStr := v.(string)
		d, err := time.ParseDuration(s)
		if !isStr || err != nil || d < 0 {
			return l, &ConfigError{File: file, Reason: fmt.Sprintf("[plugins.%q] image_pull_progress_timeout = %v: want a duration such as \"5m0s\" (containerd refuses to start with it)", sec, v)}
		}
		l.ProgressTimeout, l.ProgressTimeoutSet = d, true
	}
	if v, ok := p["max_concurrent_downloads"]; ok {
		if n, isInt := v.(int64); isInt && n > 0 {
			l.MaxConcurrentDownloads = int(n)
		}
	}
	switch {
	case l.ProgressTimeoutSet && l.ProgressTimeout == 0:
		l.Note = file + " sets image_pull_progress_timeout = \"0s\": no limit, a stalled host holds the pull until the caller gives up"
	case l.ProgressTimeoutSet:
		l.Note = fmt.Sprintf("%s sets image_pull_progress_timeout = %q (containerd 1.7 and later read it; 1.6 has no such limit)", file, l.ProgressTimeout)
	default:
		l.Note = file + " does not set image_pull_progress_timeout (" + ProgressTimeoutDefaults + ")"
	}
	return l, nil
}

// String is "host (mirror)" or "host (registry)", for messages.
func (h RegistryHost) String() string {
	role := "registry"
	if h.Mirror {
		role = "mirror"
	}
	return h.Host + " (" + role + ")"
}
