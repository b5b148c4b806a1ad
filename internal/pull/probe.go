// Package pull walks an image pull the way the node's container runtime
// does, from the node's network namespace, and names the first broken link.
// It returns a report.ProbeReport; it never prints.
package pull

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Options say what to pull and how the node is configured.
type Options struct {
	Image          string
	Platform       string // os/arch[/variant]; "" is the running node's
	Node           string // a label for the report; "" is the hostname
	CertsDir       string // containerd registry config_path (hosts.toml)
	DockerCertsDir string // /etc/docker/certs.d
	ExtraCAs       []string
	DockerConfig   string // docker config.json with auths / credHelpers
	Username       string // overrides DockerConfig when set
	Password       string
	// Credentials, when set, gives the credentials for a registry host
	// instead of DockerConfig (Username and Password still come first):
	// a long-running caller caches them for their lifetime.
	Credentials   func(ctx context.Context, host string) (runtimecfg.Credentials, error)
	Net           netcheck.Config
	ExpectPrivate bool          // a public answer for any host is a finding
	Quick         bool          // fetch the first bytes of each blob only
	HTTPTimeout   time.Duration // wait for response headers; default Defaults.HTTP
	StallTimeout  time.Duration // a blob body that sends nothing this long is stalled; default Defaults.Stall
	MaxRedirects  int           // redirects followed per request; default Defaults.MaxRedirects, containerd's
	Concurrency   int           // blobs downloaded at once; default Defaults.Concurrency, like containerd
	Progress      func(Progress)
	// Proxy is the runtime's proxy as found on the node
	// (runtimecfg.DiscoverProxy): every hop goes through it or direct by
	// its settings, as the runtime's requests do. nil walks direct, as a
	// runtime without proxy settings does.
	Proxy *runtimecfg.ProxyDiscovery
	// ContainerdConfig is containerd's config file on the node, read for
	// the limits a hosts.toml chain is held against
	// (image_pull_progress_timeout); "" or unreadable: unknown.
	ContainerdConfig string
	// Runtime is step 0 as found on the node (runtimecfg.DiscoverRuntime):
	// the runtime, its config, and the registry configuration the walk
	// follows (its Registry). nil reads CertsDir and DockerCertsDir as
	// containerd's config_path, as before discovery.
	Runtime *runtimecfg.RuntimeConfig
	// CheckUpstream: when a mirror served, walk the upstream registry too,
	// so a cache hiding a broken upstream is named.
	CheckUpstream bool
	// MTUBudget bounds the path MTU test of a direct hop that stalled
	// after TCP connected (mtu.go); default Defaults.MTU. NoMTUTest turns
	// the test off.
	MTUBudget time.Duration
	NoMTUTest bool
	// Trace traces the failing address when the walk fails by a timeout
	// (trace.go): where the packets stop.
	Trace bool
	// PullBudget is how long the whole pull may take on this node: a full
	// walk whose projected time is longer warns (pace.go). Default
	// Defaults.PullBudget.
	PullBudget time.Duration
}

// Progress is reported while blobs download (for a progress bar).
type Progress struct {
	Done, Total int64
	Blobs       int
	BlobsDone   int
}

// maxManifestSize is containerd's MaxManifestSize
// (core/remotes/docker/resolver.go): 4*1048*1048 bytes, as written there.
const maxManifestSize = 4 * 1048 * 1048

// MaxRedirects is containerd's redirect limit for one request: its
// registry client stops at the 10th request of a chain
// (core/remotes/docker/resolver.go, request.do: CheckRedirect
// "len(via) >= 10"), and its token client has Go's default policy, the
// same 10 (net/http defaultCheckRedirect): 9 redirects are followed, the
// 10th stops the pull.
const MaxRedirects = 9

// Budgets are a probe's time budgets and limits.
type Budgets struct {
	DNS, Connect, TLS time.Duration // each DNS query, TCP connect (per address), TLS handshake
	HTTP              time.Duration // for a server to start answering a request
	Stall             time.Duration // a blob body that sends nothing this long is stalled
	Probe             time.Duration // the whole probe (the CLI's --timeout)
	Concurrency       int           // blobs downloaded at once
	MaxRedirects      int           // redirects followed per request
	MTU               time.Duration // the path MTU test of a hop that stalled
	PullBudget        time.Duration // the whole pull's time before a warning
}

// Defaults are the budgets of a probe whose Options leave them zero. The
// CLI's flags take their defaults from here and netcheck's zero values are
// the same constants, so each budget is set in one place.
var Defaults = Budgets{
	DNS:          netcheck.DefaultDNSTimeout,
	Connect:      netcheck.DefaultConnectTimeout,
	TLS:          netcheck.DefaultTLSTimeout,
	HTTP:         30 * time.Second,
	Stall:        20 * time.Second,
	Probe:        15 * time.Minute,
	Concurrency:  3, // containerd's max_concurrent_downloads
	MaxRedirects: MaxRedirects,
	MTU:          10 * time.Second,
	PullBudget:   5 * time.Minute,
}

func (o *Options) defaults() {
	if o.HTTPTimeout == 0 {
		o.HTTPTimeout = Defaults.HTTP
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = Defaults.Stall
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = Defaults.MaxRedirects
	}
	if o.Concurrency == 0 {
		o.Concurrency = Defaults.Concurrency
	}
	if o.Net.DNSTimeout == 0 {
		o.Net.DNSTimeout = Defaults.DNS
	}
	if o.Net.ConnectTimeout == 0 {
		o.Net.ConnectTimeout = Defaults.Connect
	}
	if o.Net.TLSTimeout == 0 {
		o.Net.TLSTimeout = Defaults.TLS
	}
	if o.Node == "" {
		o.Node, _ = os.Hostname()
	}
}

type walker struct {
	opts     Options
	nc       *netcheck.Checker
	ref      runtimecfg.Ref
	platform Platform
	creds    runtimecfg.Credentials
	sec      *redact.Secrets // every secret of this run, masked in every string of the report

	mu         sync.Mutex
	rep        *report.ProbeReport
	endpoints  map[string]*endpoint
	transports []*http.Transport
	registryOK bool
	px         proxyState
	crio       *runtimecfg.CRIONode // the node's CRI-O, when it pulls there (walkCRIO)
}

// Probe walks the pull of opts.Image. The error is for bad input only (a
// malformed flag value or node file), as one line; every finding about the
// pull itself is in the report's verdict.
func Probe(ctx context.Context, opts Options) (*report.ProbeReport, error) {
	opts.defaults()
	w, err := newWalker(opts)
	if err != nil {
		return nil, err
	}
	defer w.closeIdle()
	var failure *Error
	if err := w.walk(ctx); err != nil && !errors.As(err, &failure) {
		return nil, w.sec.Err(err)
	}
	w.trace(ctx, failure)
	w.finish(failure)
	w.rep.DurationMS = units.MS(time.Since(w.rep.StartedAt))
	// Every string of the report, whatever a server put in it, is masked
	// against every secret the run held or obtained.
	w.sec.Scrub(w.rep)
	return w.rep, nil
}

// newWalker reads the platform and the node's resolver and starts the
// report.
func newWalker(opts Options) (*walker, error) {
	rep := &report.ProbeReport{
		APIVersion: report.APIVersion,
		Kind:       report.ProbeKind,
		Image:      opts.Image,
		Node:       opts.Node,
		Mode:       "full",
		StartedAt:  time.Now().UTC().Truncate(time.Millisecond),
		Endpoints:  []*report.Endpoint{},
		Steps:      []report.Step{},
	}
	if opts.Quick {
		rep.Mode = "quick"
	}
	plat := DefaultPlatform()
	if opts.Platform != "" {
		p, err := ParsePlatform(opts.Platform)
		if err != nil {
			return nil, err
		}
		plat = p
	}
	rep.Platform = plat.String()
	nc, err := netcheck.New(opts.Net)
	if err != nil {
		return nil, err
	}
	rep.Resolver = nc.Resolver()
	for _, m := range nc.Warnings() {
		rep.Warnings = append(rep.Warnings, report.Warning{Code: verdict.HostsFileLine, Message: m, Advice: verdict.Advise(verdict.HostsFileLine, "", "")})
	}
	w := &walker{opts: opts, nc: nc, platform: plat, rep: rep, endpoints: map[string]*endpoint{}, sec: redact.NewSecrets()}
	w.sec.AddBasic(opts.Username, opts.Password)
	w.proxyReport()
	w.runtimeReport()
	return w, nil
}

// walk follows the runtime's order:
//
//  1. reference: parse IMAGE like the kubelet; read the runtime's registry
//     config (hosts.toml mirrors, CAs) and the node's credentials
//  2. resolve each new host like the node (hosts file, then its nameservers)
//  3. connect to every address
//  4. TLS with the runtime's trust
//     (2-4 through the runtime's proxy when its HTTPS_PROXY/NO_PROXY send
//     the host there: resolve and connect to the proxy, CONNECT, then TLS
//     through the tunnel; proxy.go)
//  5. ping GET /v2/: 200, or 401 with a Basic or Bearer challenge
//  6. token service (Bearer): the realm host goes through 2-4 as role auth
//  7. manifest: an index selects the node's platform
//  8. config and every layer: redirects followed by hand, every new host
//     through 2-4 as role blob, every byte hashed against its digest
//
// A registry whose hosts.toml names mirrors is walked host by host as
// containerd goes through them (walkChain). The first failure is the
// verdict, an *Error; any other error is bad input (a
// *runtimecfg.ConfigError, no host that may pull).
func (w *walker) walk(ctx context.Context) error {
	if n, ok := w.registry().(*runtimecfg.CRIONode); ok {
		// CRI-O walks whole sources in turn (containers/image), not
		// containerd's hosts per request.
		return w.walkCRIO(ctx, n)
	}
	hosts, err := w.reference()
	if err != nil {
		return err
	}
	if len(hosts) > 1 || hosts[0].Mirror {
		return w.walkChain(ctx, hosts)
	}
	if !hosts[0].Has(runtimecfg.CapResolve) || !hosts[0].Has(runtimecfg.CapPull) {
		return fmt.Errorf("no host in the runtime's registry config for %s may pull and resolve", w.ref.Registry)
	}
	return w.pullFrom(ctx, hosts[0])
}

// reference is step 1: the reference parsed like the kubelet, and the
// runtime's registry hosts for it.
func (w *walker) reference() ([]runtimecfg.RegistryHost, error) {
	start := time.Now()
	ref, err := runtimecfg.ParseReference(w.opts.Image)
	if err != nil {
		w.step(stepReference, "", report.StepFail, verdict.ReferenceInvalid, err.Error(), since(start), 0)
		return nil, site{stage: verdict.StageReference}.fail(verdict.ReferenceInvalid, err, "%v", err)
	}
	w.ref = ref
	w.rep.Reference = report.Reference{Registry: ref.Registry, Host: ref.Host, Repository: ref.Repository, Tag: ref.Tag, Digest: ref.Digest}
	set, err := w.registry().Hosts(ref)
	if err != nil {
		return nil, err
	}
	hosts := set.Hosts
	w.step(stepReference, "", report.StepPass, "", ref.String(), since(start), 0)
	return hosts, nil
}

func hostRole(h runtimecfg.RegistryHost) verdict.Role {
	if h.Mirror {
		return verdict.RoleMirror
	}
	return verdict.RoleRegistry
}

// pullFrom runs steps 2 to 8 against one registry host (a mirror or the
// registry itself). The error is an *Error, or bad input (a CA file the
// runtime cannot read).
func (w *walker) pullFrom(ctx context.Context, h runtimecfg.RegistryHost) error {
	tlsCfg, err := h.TLSConfig(w.opts.ExtraCAs)
	if err != nil {
		return err
	}
	if h.Scheme == "http" {
		tlsCfg = nil
	}
	if err := w.loadCredentials(ctx, h); err != nil {
		return err
	}
	s, f := w.connectRegistry(ctx, h, tlsCfg)
	if f != nil {
		return f
	}

	// 5. Ping.
	if f := s.ping(ctx); f != nil {
		return f
	}
	w.mu.Lock()
	w.registryOK = true
	w.mu.Unlock()

	// 6. Token (when the registry asks for one).
	if f := s.authorize(ctx); f != nil {
		return f
	}

	// 7. Manifest.
	m, f := s.manifest(ctx)
	if f != nil {
		return f
	}

	// 8. Config and every layer.
	if f := s.blobs(ctx, m); f != nil {
		return f
	}
	return nil
}

// loadCredentials reads the node's credentials for h and adds every
// secret in them to the run's set.
func (w *walker) loadCredentials(ctx context.Context, h runtimecfg.RegistryHost) *Error {
	creds, err := w.credentials(ctx, h.Host)
	if err != nil {
		at := site{stage: verdict.StageAuth, role: hostRole(h), host: h.Host}
		return w.failed(stepCredentials, time.Time{}, at.fail(verdict.CredentialsError, err, "%s", w.sec.String(err.Error())))
	}
	if creds.Anonymous() && h.Auth != nil {
		// the kubelet passes none: containerd's CRI uses its config's
		// registry.configs HOST auth
		creds = *h.Auth
	}
	w.sec.AddBasic(creds.Username, creds.Password)
	w.sec.Add(creds.IdentityToken, creds.RegistryToken)
	w.creds = creds
	return nil
}

// connectRegistry is steps 2 to 4 on the registry host. containerd tries
// HTTPS first and falls back to plain HTTP for loopback registries and
// hosts.toml http entries with TLS settings (HTTPFallback): so does the
// walk.
func (w *walker) connectRegistry(ctx context.Context, h runtimecfg.RegistryHost, tlsCfg *tls.Config) (*session, *Error) {
	role := hostRole(h)
	base := &url.URL{Scheme: h.Scheme, Host: h.Host, Path: h.Path}
	via := "image reference"
	if h.Mirror {
		via = mirrorVia(h)
	}
	reg := w.reach(ctx, base, role, via, tlsCfg)
	if reg.err != nil && h.HTTPFallback && reg.err.Code == verdict.TLSHandshakeFailed {
		plain := *base
		plain.Scheme = "http"
		base, tlsCfg = &plain, nil
		reg = w.reach(ctx, base, role, via+", plain HTTP after HTTPS failed", nil)
	}
	if reg.err != nil {
		return nil, reg.err
	}
	return &session{w: w, reg: reg, base: base, role: role, tlsCfg: tlsCfg, header: h.Header}, nil
}

func (w *walker) credentials(ctx context.Context, host string) (runtimecfg.Credentials, error) {
	if w.opts.Username != "" || w.opts.Password != "" {
		return runtimecfg.Credentials{Username: w.opts.Username, Password: w.opts.Password, Source: "flags"}, nil
	}
	load := func(host string) (runtimecfg.Credentials, error) {
		if w.opts.Credentials != nil {
			return w.opts.Credentials(ctx, host)
		}
		return runtimecfg.LoadCredentialsContext(ctx, w.opts.DockerConfig, host)
	}
	c, err := load(host)
	if err != nil {
		return c, err
	}
	if c.Anonymous() && host != w.ref.Host {
		// a mirror without credentials of its own: the runtime uses the
		// registry's.
		return load(w.ref.Host)
	}
	return c, nil
}

// finish turns the first failure into the verdict and marks later steps.
func (w *walker) finish(f *Error) {
	if f == nil {
		sum := "the whole pull succeeded from this node"
		if t := w.rep.Transfer; t != nil {
			if t.Verified {
				sum = fmt.Sprintf("the whole pull succeeded from this node: %d blobs, %s, every digest verified", t.Blobs, units.Bytes(t.Bytes))
			} else {
				sum = fmt.Sprintf("every endpoint answered from this node (quick check: the first bytes of %d blobs, digests not verified)", t.Blobs)
			}
		}
		if via := w.viaProxySummary(); via != "" {
			sum += "; " + via
		}
		w.rep.Verdict = verdict.Decide(verdict.Outcome{Code: verdict.OK, Summary: sum})
		return
	}
	w.rep.Verdict = verdict.Decide(verdict.Outcome{Code: f.Code, Stage: f.Stage, Role: f.Role, Host: f.Host, RegistryOK: w.registryOK, Summary: f.Summary})
	w.skipRest(f)
}

// skipRest records the steps the failure kept from running.
func (w *walker) skipRest(f *Error) {
	done := map[stepName]bool{}
	for _, s := range w.rep.Steps {
		done[stepName(s.Name)] = true
	}
	done[stepLayers] = done[stepLayer] || done[stepConfig]
	reason := "not run: an earlier step failed (" + string(f.Code) + ")"
	for _, name := range []stepName{stepPing, stepToken, stepManifest, stepConfig, stepLayers} {
		if !done[name] && !(name == stepToken && done[stepPing]) {
			w.rep.Steps = append(w.rep.Steps, report.Step{Name: string(name), Status: report.StepSkip, Detail: reason})
		}
	}
}

// step records one step of the report; its detail is masked against the
// run's secrets.
func (w *walker) step(name stepName, endpoint string, st report.StepStatus, code verdict.Code, detail string, ms float64, bytes int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rep.Steps = append(w.rep.Steps, report.Step{Name: string(name), Endpoint: endpoint, Status: st, Code: code, Detail: w.sec.String(detail), DurationMS: ms, Bytes: bytes})
}

func (w *walker) warn(code verdict.Code, endpoint, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, x := range w.rep.Warnings {
		if x.Code == code && x.Endpoint == endpoint {
			return
		}
	}
	var role verdict.Role
	for _, e := range w.rep.Endpoints {
		if e.Host == endpoint {
			role = e.Role
		}
	}
	w.rep.Warnings = append(w.rep.Warnings, report.Warning{Code: code, Endpoint: endpoint, Message: w.sec.String(msg), Advice: verdict.Advise(code, endpoint, role)})
}

func (w *walker) closeIdle() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.transports {
		t.CloseIdleConnections()
	}
}

// tlsFor returns the TLS config for a host the registry hands out (token
// realm, blob redirect). containerd sends those requests with the registry
// host's own client, so the registry's trust (certs.d CA, skip_verify)
// applies to them too; a certs.d folder of the new host's own comes first.
func (s *session) tlsFor(u *url.URL) *tls.Config {
	if u.Scheme != "https" {
		return nil
	}
	w := s.w
	ref := w.ref
	ref.Registry, ref.Host = u.Host, u.Host
	if set, err := w.registry().Hosts(ref); err == nil {
		for _, h := range set.Hosts {
			if !h.Mirror && (h.Source != "" || len(h.CAFiles) > 0 || len(h.ClientPairs) > 0) {
				if c, err := h.TLSConfig(w.opts.ExtraCAs); err == nil {
					return c
				}
			}
		}
	}
	if s.tlsCfg != nil {
		return s.tlsCfg.Clone()
	}
	c, err := (runtimecfg.RegistryHost{Scheme: "https", Host: u.Host}).TLSConfig(w.opts.ExtraCAs)
	if err != nil {
		return &tls.Config{}
	}
	return c
}
