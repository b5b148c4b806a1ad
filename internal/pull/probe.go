// Package pull walks an image pull the way the node's container runtime
// does, from the node's network namespace, and names the first broken link.
// It returns a report.ProbeReport; it never prints.
package pull

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/pullpath/pullpath/internal/units"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
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
	HTTPTimeout   time.Duration // wait for response headers; default 30s
	StallTimeout  time.Duration // a blob body that sends nothing this long is stalled; default 20s
	MaxRedirects  int           // redirects followed per request; default 9, containerd's
	Concurrency   int           // blobs downloaded at once; default 3, like containerd
	Progress      func(Progress)
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

// configInvalid marks a node configuration file the walk cannot read
// (hosts.toml, a CA file): bad input, returned as a one-line error, not a
// verdict about the pull.
const configInvalid verdict.Code = "config-invalid"

func (o *Options) defaults() {
	if o.HTTPTimeout == 0 {
		o.HTTPTimeout = 30 * time.Second
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = 20 * time.Second
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = MaxRedirects
	}
	if o.Concurrency == 0 {
		o.Concurrency = 3
	}
	if o.Net.DNSTimeout == 0 {
		o.Net.DNSTimeout = 2 * time.Second
	}
	if o.Net.ConnectTimeout == 0 {
		o.Net.ConnectTimeout = 5 * time.Second
	}
	if o.Net.TLSTimeout == 0 {
		o.Net.TLSTimeout = 5 * time.Second
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
}

// Probe walks the pull of opts.Image. The error is for bad input only (a
// malformed flag value or node file), as one line; every finding about the
// pull itself is in the report's verdict.
func Probe(ctx context.Context, opts Options) (*report.ProbeReport, error) {
	opts.defaults()
	rep := &report.ProbeReport{
		APIVersion: report.APIVersion,
		Kind:       "ProbeReport",
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
		rep.Warnings = append(rep.Warnings, report.Finding{Code: verdict.HostsFileLine, Message: m, Advice: verdict.Advise(verdict.HostsFileLine, "", "")})
	}
	w := &walker{opts: opts, nc: nc, platform: plat, rep: rep, endpoints: map[string]*endpoint{}, sec: redact.NewSecrets()}
	w.sec.AddBasic(opts.Username, opts.Password)
	defer w.closeIdle()

	f := w.walk(ctx)
	if f != nil && f.code == configInvalid {
		return nil, errors.New(w.sec.String(f.summary))
	}
	w.finish(f)
	rep.DurationMS = float64(time.Since(rep.StartedAt).Microseconds()) / 1000
	// Every string of the report, whatever a server put in it, is masked
	// against every secret the run held or obtained.
	w.sec.Scrub(rep)
	return rep, nil
}

// walk follows the runtime's order:
//
//  1. reference: parse IMAGE like the kubelet; read the runtime's registry
//     config (hosts.toml mirrors, CAs) and the node's credentials
//  2. resolve each new host like the node (hosts file, then its nameservers)
//  3. connect to every address
//  4. TLS with the runtime's trust
//  5. ping GET /v2/: 200, or 401 with a Basic or Bearer challenge
//  6. token service (Bearer): the realm host goes through 2-4 as role auth
//  7. manifest: an index selects the node's platform
//  8. config and every layer: redirects followed by hand, every new host
//     through 2-4 as role blob, every byte hashed against its digest
//
// Mirrors are tried in hosts.toml order and fall back like the runtime.
// The first failure of the last host tried is the verdict.
func (w *walker) walk(ctx context.Context) *failure {
	// 1. Reference and node configuration.
	start := time.Now()
	ref, err := runtimecfg.ParseReference(w.opts.Image)
	if err != nil {
		w.step("reference", "", report.StepFail, verdict.ReferenceInvalid, err.Error(), since(start), 0)
		return fail(verdict.ReferenceInvalid, verdict.StageReference, "", "", "%v", err)
	}
	w.ref = ref
	w.rep.Reference = report.Reference{Registry: ref.Registry, Host: ref.Host, Repository: ref.Repository, Tag: ref.Tag, Digest: ref.Digest}
	hosts, err := runtimecfg.Hosts(w.opts.CertsDir, w.opts.DockerCertsDir, ref)
	if err != nil {
		return fail(configInvalid, verdict.StageReference, "", "", "%v", err)
	}
	w.step("reference", "", report.StepPass, "", ref.String(), since(start), 0)

	var last *failure
	tried := 0
	for i, h := range hosts {
		if !h.Has("resolve") || !h.Has("pull") {
			continue
		}
		tried++
		f := w.pullFrom(ctx, h)
		if f == nil {
			return nil
		}
		last = f
		if i < len(hosts)-1 {
			w.warn(verdict.MirrorFailed, h.Host, fmt.Sprintf("%s (%s) failed, the runtime falls back to the next host: %s", h.Host, hostRole(h), f.summary))
			w.resetForNextHost()
		}
	}
	if tried == 0 {
		return fail(configInvalid, verdict.StageReference, "", "", "no host in the runtime's registry config for %s may pull and resolve", ref.Registry)
	}
	return last
}

func hostRole(h runtimecfg.RegistryHost) verdict.Role {
	if h.Mirror {
		return verdict.RoleMirror
	}
	return verdict.RoleRegistry
}

// resetForNextHost forgets the steps' failure state between mirrors; the
// endpoints and steps stay in the report as evidence.
func (w *walker) resetForNextHost() {
	w.mu.Lock()
	w.registryOK = false
	w.mu.Unlock()
}

// pullFrom runs steps 2 to 8 against one registry host (a mirror or the
// registry itself).
func (w *walker) pullFrom(ctx context.Context, h runtimecfg.RegistryHost) *failure {
	role := hostRole(h)
	tlsCfg, err := h.TLSConfig(w.opts.ExtraCAs)
	if err != nil {
		return fail(configInvalid, verdict.StageReference, role, h.Host, "%v", err)
	}
	if h.Scheme == "http" {
		tlsCfg = nil
	}
	creds, cerr := w.credentials(ctx, h.Host)
	if cerr != nil {
		w.step("credentials", h.Host, report.StepFail, verdict.CredentialsError, cerr.Error(), 0, 0)
		return fail(verdict.CredentialsError, verdict.StageAuth, role, h.Host, "%s", w.sec.String(cerr.Error()))
	}
	w.sec.AddBasic(creds.Username, creds.Password)
	w.sec.Add(creds.IdentityToken, creds.RegistryToken)
	w.creds = creds
	base := &url.URL{Scheme: h.Scheme, Host: h.Host, Path: h.Path}
	via := "image reference"
	if h.Mirror {
		via = "hosts.toml mirror (" + h.Source + ")"
	}

	// 2-4. The registry host. containerd tries HTTPS first and falls back
	// to plain HTTP for loopback registries and hosts.toml http entries
	// with TLS settings (HTTPFallback): so does the walk.
	reg := w.reach(ctx, base, role, via, tlsCfg)
	if reg.fail != nil && h.HTTPFallback && reg.fail.code == verdict.TLSHandshakeFailed {
		plain := *base
		plain.Scheme = "http"
		base, tlsCfg = &plain, nil
		reg = w.reach(ctx, base, role, via+", plain HTTP after HTTPS failed", nil)
	}
	if reg.fail != nil {
		return reg.fail
	}
	s := &session{w: w, reg: reg, base: base, role: role, tlsCfg: tlsCfg, header: h.Header}

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
	return s.blobs(ctx, m)
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
func (w *walker) finish(f *failure) {
	if f == nil {
		sum := "the whole pull succeeded from this node"
		if t := w.rep.Transfer; t != nil {
			if t.Verified {
				sum = fmt.Sprintf("the whole pull succeeded from this node: %d blobs, %s, every digest verified", t.Blobs, units.Bytes(t.Bytes))
			} else {
				sum = fmt.Sprintf("every endpoint answered from this node (quick check: the first bytes of %d blobs, digests not verified)", t.Blobs)
			}
		}
		w.rep.Verdict = verdict.Decide(verdict.Outcome{Code: verdict.OK, Summary: sum})
		return
	}
	w.rep.Verdict = verdict.Decide(verdict.Outcome{Code: f.code, Stage: f.stage, Role: f.role, Host: f.host, RegistryOK: w.registryOK, Summary: f.summary})
	w.skipRest(f)
}

// skipRest records the steps the failure kept from running.
func (w *walker) skipRest(f *failure) {
	done := map[string]bool{}
	for _, s := range w.rep.Steps {
		done[s.Name] = true
	}
	done["layers"] = done["layer"] || done["config"]
	reason := "not run: an earlier step failed (" + string(f.code) + ")"
	for _, name := range []string{"ping", "token", "manifest", "config", "layers"} {
		if !done[name] && !(name == "token" && done["ping"]) {
			w.rep.Steps = append(w.rep.Steps, report.Step{Name: name, Status: report.StepSkip, Detail: reason})
		}
	}
}

func (w *walker) step(name, endpoint string, st report.StepStatus, code verdict.Code, detail string, ms float64, bytes int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rep.Steps = append(w.rep.Steps, report.Step{Name: name, Endpoint: endpoint, Status: st, Code: code, Detail: w.sec.String(detail), DurationMS: ms, Bytes: bytes})
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
	w.rep.Warnings = append(w.rep.Warnings, report.Finding{Code: code, Endpoint: endpoint, Message: w.sec.String(msg), Advice: verdict.Advise(code, endpoint, role)})
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
	if hosts, err := runtimecfg.Hosts(w.opts.CertsDir, w.opts.DockerCertsDir, ref); err == nil {
		for _, h := range hosts {
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
