package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pullpath/pullpath/internal/probesummary"
	"github.com/pullpath/pullpath/internal/pull"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Agent is the node agent: one walk at a time, on a schedule.
type Agent struct {
	o       Options
	Metrics *Metrics
	creds   *credCache
	kube    *kubeClient // nil: no Kubernetes API
	// kid is the kubelet's identity (credential provider plugins), kept for
	// the agent's lifetime so that the plugins' answers are cached for
	// their cacheDuration; nil walks with the docker config.
	kid *runtimecfg.KubeletIdentity
	ln  net.Listener
	log *log.Logger

	// probe is the walk (pull.Probe); tests count or replace calls through it.
	probe func(context.Context, pull.Options) (*report.ProbeReport, error)
	now   func() time.Time
	rnd   *rand.Rand

	mu        sync.Mutex
	static    []target
	cluster   []target
	results   map[string]*report.MonitorTarget
	lastOK    map[string]time.Time // image_host -> latest passing walk
	nodeUID   string
	place     NodePlace
	lastState verdict.Status // what the latest Event said
	started   time.Time
	rounds    int
	fullNext  int
	walking   bool
	// Walks counts walks started, per image (tests: never twice in one
	// interval).
	walks map[string]int
	// lastMTU is when a walk last ran the path MTU test (path.go): at most
	// once per interval.
	lastMTU time.Time
}

type target struct {
	image, host, source string
}

// New checks the options, binds the listener (so a port in use is an error
// at start, not later) and reads the credential source. The caller runs
// Run; Close releases the listener if Run is never called.
func New(o Options, logw io.Writer) (*Agent, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	a := &Agent{o: o, Metrics: NewMetrics(), log: log.New(logw, "", log.LstdFlags|log.LUTC), probe: pull.Probe,
		now: time.Now, rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		results: map[string]*report.MonitorTarget{}, lastOK: map[string]time.Time{}, walks: map[string]int{}}
	for _, img := range o.Images {
		ref, _ := runtimecfg.ParseReference(img) // Validate parsed it
		a.static = append(a.static, target{image: img, host: ref.Registry, source: "static"})
	}
	src := DockerConfigSource{Path: o.DockerConfig, Optional: o.DockerOptional}
	a.creds = newCredCache(src, o.CredentialTTL, a.now)
	if o.DockerConfig != "" {
		if _, _, err := src.Credentials(context.Background(), "pullpath.invalid"); err != nil {
			var ce *runtimecfg.CredentialsError
			if errors.As(err, &ce) && ce.Source == "docker config "+o.DockerConfig {
				return nil, fmt.Errorf("--docker-config: %v", err)
			}
		}
	}
	if o.ProviderConfig != "" {
		c, err := runtimecfg.LoadCredentialProviderConfig(o.ProviderConfig)
		if err != nil {
			return nil, err
		}
		timeout := runtimecfg.DefaultPluginTimeout
		if o.ProbeTimeout < timeout {
			timeout = o.ProbeTimeout
		}
		a.kid = &runtimecfg.KubeletIdentity{Plugins: &runtimecfg.PluginRunner{Config: c, BinDir: o.ProviderBinDir, Timeout: timeout}, ConfigFrom: "--image-credential-provider-config"}
	}
	if o.KubeAPI != "" {
		k, err := newKubeClient(o.KubeAPI, o.KubeTokenFile, o.KubeCAFile)
		if err != nil {
			return nil, err
		}
		a.kube = k
	}
	a.place = NodePlace{Pool: o.Pool, Zone: o.Zone, Subnet: o.Subnet}
	a.Metrics.interval.Set(o.Interval.Seconds())
	// Before the first walk, the last run is the start: the stale alert
	// counts from here.
	a.Metrics.lastRun.Set(float64(a.now().UnixNano()) / 1e9)
	a.Metrics.SetNodeInfo(o.Node, a.place.Pool, a.place.Zone, a.place.Subnet)
	if !o.Once {
		ln, err := net.Listen("tcp", o.Listen)
		if err != nil {
			return nil, fmt.Errorf("--listen %s: %v", o.Listen, listenReason(err))
		}
		a.ln = ln
	}
	return a, nil
}

func listenReason(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error() + " (another process serves this port; pick one with --listen)"
	}
	return err.Error()
}

// Addr is the listener's address ("" with --once).
func (a *Agent) Addr() string {
	if a.ln == nil {
		return ""
	}
	return a.ln.Addr().String()
}

// Close releases the listener.
func (a *Agent) Close() error {
	if a.ln == nil {
		return nil
	}
	return a.ln.Close()
}

// Run serves the metrics and walks until ctx ends. With Once it walks every
// image once and returns. A failing walk is a metric and a log line, never
// an error: Run's error is for the server only.
func (a *Agent) Run(ctx context.Context) error {
	a.mu.Lock()
	a.started = a.now()
	a.mu.Unlock()
	srvErr := make(chan error, 1)
	if a.ln != nil {
		srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { srvErr <- srv.Serve(a.ln) }()
		defer srv.Close()
		a.log.Printf("serving /metrics, /status and /healthz on %s", a.ln.Addr())
	}
	a.refresh(ctx)
	if a.o.Once {
		a.round(ctx, "")
		return nil
	}

	// The first runs start at a random point of the first jitter window,
	// so a fleet's agents (started together by a rollout) spread out.
	now := a.now()
	nextQuick := now.Add(a.spread(a.o.Interval))
	var nextFull time.Time
	if a.o.FullInterval > 0 {
		nextFull = now.Add(a.spread(a.o.FullInterval))
	}
	nextRefresh := now.Add(a.o.Refresh)
	for {
		due := nextQuick
		if !nextFull.IsZero() && nextFull.Before(due) {
			due = nextFull
		}
		if a.kube != nil && nextRefresh.Before(due) {
			due = nextRefresh
		}
		t := time.NewTimer(due.Sub(a.now()))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case err := <-srvErr:
			t.Stop()
			return fmt.Errorf("metrics server: %v", err)
		case <-t.C:
		}
		now := a.now()
		if a.kube != nil && !now.Before(nextRefresh) {
			a.refresh(ctx)
			nextRefresh = now.Add(a.jittered(a.o.Refresh))
		}
		fullDone := ""
		if !nextFull.IsZero() && !now.Before(nextFull) {
			fullDone = a.full(ctx)
			nextFull = a.now().Add(a.jittered(a.o.FullInterval))
		}
		if !now.Before(nextQuick) {
			start := a.now()
			a.round(ctx, fullDone)
			nextQuick = start.Add(a.jittered(a.o.Interval))
			if late := a.now().Sub(nextQuick); late > 0 {
				a.log.Printf("a round of walks took longer than --interval %s (%s late): the next starts now", a.o.Interval, late.Round(time.Second))
				nextQuick = a.now()
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// spread is the delay of a schedule's first run: uniform over the jitter
// window.
func (a *Agent) spread(d time.Duration) time.Duration {
	return time.Duration(a.rnd.Float64() * a.o.Jitter * float64(d))
}

// jittered is d give or take half the jitter window.
func (a *Agent) jittered(d time.Duration) time.Duration {
	return d + time.Duration((a.rnd.Float64()-0.5)*a.o.Jitter*float64(d))
}

func (a *Agent) targets() []target {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := append([]target{}, a.static...)
	seen := map[string]bool{}
	for _, t := range a.static {
		seen[t.image] = true
	}
	for _, t := range a.cluster {
		if !seen[t.image] && len(out) < a.o.MaxTargets {
			out = append(out, t)
		}
	}
	return out
}

// round walks every target once, quick, one at a time; skip was just
// walked by the full pull.
func (a *Agent) round(ctx context.Context, skip string) {
	ts := a.targets()
	a.Metrics.targets.Set(float64(len(ts)))
	for _, t := range ts {
		if ctx.Err() != nil {
			return
		}
		if t.image == skip {
			continue
		}
		a.walk(ctx, t, true)
	}
	a.mu.Lock()
	a.rounds++
	a.mu.Unlock()
	a.verdictChanged(ctx)
}

// full runs the verified pull of the next target in turn.
func (a *Agent) full(ctx context.Context) string {
	ts := a.targets()
	if len(ts) == 0 {
		return ""
	}
	a.mu.Lock()
	t := ts[a.fullNext%len(ts)]
	a.fullNext++
	a.mu.Unlock()
	a.walk(ctx, t, false)
	a.verdictChanged(ctx)
	return t.image
}

// walk runs one probe of t and publishes it. It is never retried: a
// failure is what the metrics must show.
func (a *Agent) walk(ctx context.Context, t target, quick bool) {
	timeout, mode := a.o.ProbeTimeout, "quick"
	if !quick {
		timeout, mode = a.o.FullTimeout, "full"
	}
	o := a.o
	po := pull.Options{
		Image: t.image, Platform: o.Platform, Node: o.Node,
		CertsDir: o.CertsDir, DockerCertsDir: o.DockerCertsDir, ExtraCAs: o.ExtraCAs,
		// the runtime's configuration as it is now (a hosts.toml or a
		// k3s render changes between walks)
		Runtime:      a.runtime(),
		DockerConfig: o.DockerConfig, Credentials: a.creds.Get,
		Net: o.Net, ExpectPrivate: o.ExpectPrivate, Quick: quick,
	}
	po.Net.ResolvConf, po.Net.HostsFile, po.Net.Nameservers = o.ResolvConf, o.HostsFile, o.Nameservers
	// containerd's proxy settings as they are now (a drop-in changes
	// between walks): the walk goes where the runtime's pull goes
	po.Proxy = a.proxy(po.Runtime)
	po.NoMTUTest = !a.mtuAllowed()
	a.mu.Lock()
	a.walks[t.image]++
	a.walking = true
	a.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	start := a.now()
	var rep *report.ProbeReport
	var err error
	if a.kid != nil {
		// one walk at a time (ProbeAsKubelet sets the runner's redaction
		// hook for its walk and puts the previous one back)
		po.Credentials, po.DockerConfig = nil, ""
		rep, err = pull.ProbeAsKubelet(wctx, po, a.kid, report.ProbeIdentity{ProviderConfig: o.ProviderConfig, ProviderBinDir: o.ProviderBinDir, From: "--image-credential-provider-config"})
	} else {
		rep, err = a.probe(wctx, po)
	}
	cancel()
	if ctx.Err() != nil {
		a.mu.Lock()
		a.walking = false
		a.mu.Unlock()
		return // shutting down: not a verdict
	}
	at := a.now()
	res := &report.MonitorTarget{Image: t.image, ImageHost: t.host, Source: t.source, Mode: mode, At: &at,
		DurationMS: units.MS(at.Sub(start))}
	if err != nil {
		res.Error = err.Error()
		a.log.Printf("walk %s (%s): could not run: %v", t.image, mode, err)
	} else {
		v := rep.Verdict
		v.Advice = nil
		res.Verdict = &v
		sum := probesummary.Of(rep)
		res.Runtime, res.Mirrors = sum.Runtime, sum.Mirrors
		a.log.Printf("walk %s (%s): %s %s in %.0f ms: %s", t.image, mode, v.Status, v.Code, res.DurationMS, v.Summary)
	}
	a.Metrics.observeRun(t.host, rep, err, at)
	a.Metrics.observePath(t.host, mode, rep)
	a.mtuRan(rep, at)

	a.mu.Lock()
	a.walking = false
	if res.Verdict != nil && res.Verdict.Status == verdict.StatusOK {
		a.lastOK[t.host] = at
	}
	if ok, has := a.lastOK[t.host]; has {
		res.LastOK = &ok
	}
	a.results[t.image] = res
	st := a.hostStateLocked(t.host)
	a.mu.Unlock()
	a.Metrics.setHost(t.host, st)
}

// hostStateLocked combines the latest walks of every target on host.
func (a *Agent) hostStateLocked(host string) hostState {
	st := hostState{OK: true, Code: verdict.OK, LastSuccess: a.lastOK[host]}
	for _, t := range a.allTargetsLocked() {
		if t.host != host {
			continue
		}
		r := a.results[t.image]
		if r == nil {
			continue
		}
		if c := resultCode(r); c != verdict.OK && st.OK {
			st.OK, st.Code = false, c
		}
	}
	return st
}

func (a *Agent) allTargetsLocked() []target {
	return append(append([]target{}, a.static...), a.cluster...)
}

func resultCode(r *report.MonitorTarget) verdict.Code {
	if r.Verdict == nil {
		return ProbeError
	}
	if r.Verdict.Status == verdict.StatusOK {
		return verdict.OK
	}
	return r.Verdict.Code
}

// Status is the node's latest verdicts (served on /status).
func (a *Agent) Status() *report.MonitorStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &report.MonitorStatus{APIVersion: report.APIVersion, Kind: report.MonitorStatusKind, Node: a.o.Node,
		Pool: a.place.Pool, Zone: a.place.Zone, Subnet: a.place.Subnet, StartedAt: a.started, Rounds: a.rounds, Targets: []report.MonitorTarget{}}
	for _, t := range a.static {
		s.Targets = append(s.Targets, a.targetStatusLocked(t))
	}
	n := len(s.Targets)
	for _, t := range a.cluster {
		if n >= a.o.MaxTargets {
			break
		}
		s.Targets = append(s.Targets, a.targetStatusLocked(t))
		n++
	}
	s.Status = a.nodeStatusLocked()
	return s
}

func (a *Agent) targetStatusLocked(t target) report.MonitorTarget {
	if r := a.results[t.image]; r != nil {
		return *r
	}
	return report.MonitorTarget{Image: t.image, ImageHost: t.host, Source: t.source}
}

// nodeStatusLocked: fail if any target's latest walk failed, ok if all
// walked targets passed, "" before the first walk.
func (a *Agent) nodeStatusLocked() verdict.Status {
	st := verdict.Status("")
	for _, t := range a.allTargetsLocked() {
		r := a.results[t.image]
		if r == nil {
			continue
		}
		if resultCode(r) != verdict.OK {
			return verdict.StatusFail
		}
		st = verdict.StatusOK
	}
	return st
}

// Handler serves /metrics, /status and /healthz.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(a.Metrics.Registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(a.Status())
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

// summaryLine is the Event message: the first failing image, or all ok.
func (a *Agent) summaryLocked() (verdict.Status, string, map[string]string) {
	st := a.nodeStatusLocked()
	total, failing := 0, 0
	first := ""
	ann := map[string]string{AnnotationCode: string(verdict.OK)}
	for _, t := range a.allTargetsLocked() {
		r := a.results[t.image]
		if r == nil {
			continue
		}
		total++
		if resultCode(r) == verdict.OK {
			continue
		}
		failing++
		if first == "" {
			ann = map[string]string{AnnotationCode: string(resultCode(r)), AnnotationImageHost: t.host, AnnotationImage: t.image}
			if r.Verdict != nil {
				ann[AnnotationCondition] = string(r.Verdict.Condition)
				first = fmt.Sprintf("%s: %s (%s, %s host %s): %s", t.image, r.Verdict.Code, dash(string(r.Verdict.Condition)), dash(string(r.Verdict.Role)), dash(r.Verdict.Endpoint), r.Verdict.Summary)
			} else {
				first = fmt.Sprintf("%s: %s: %s", t.image, ProbeError, r.Error)
			}
		}
	}
	if st == verdict.StatusOK {
		return st, fmt.Sprintf("the pull path of every monitored image (%d) passes from this node", total), ann
	}
	return st, fmt.Sprintf("%d of %d monitored images fail from this node; %s", failing, total, first), ann
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// verdictChanged posts an Event on the Node when its verdict changed
// (and for the first verdict, so every node has one).
func (a *Agent) verdictChanged(ctx context.Context) {
	a.mu.Lock()
	st, msg, ann := a.summaryLocked()
	changed := st != "" && st != a.lastState
	prev := a.lastState
	uid := a.nodeUID
	a.mu.Unlock()
	if !changed {
		return
	}
	reason, typ := ReasonOK, "Normal"
	if st == verdict.StatusFail {
		reason, typ = ReasonBroken, "Warning"
	} else if prev == verdict.StatusFail {
		msg = "restored: " + msg
	}
	a.log.Printf("node verdict %s -> %s: %s", dash(string(prev)), st, msg)
	if a.kube == nil || !a.o.Events {
		a.mu.Lock()
		a.lastState = st
		a.mu.Unlock()
		return
	}
	if err := a.kube.postNodeEvent(ctx, a.o.EventNS, a.o.Node, uid, reason, typ, msg, ann, a.now()); err != nil {
		a.Metrics.kubeErrors.Inc()
		a.log.Printf("event on node %s: %v (posted again with the next verdict)", a.o.Node, err)
		return
	}
	a.mu.Lock()
	a.lastState = st
	a.mu.Unlock()
}

// refresh reads the Node (pool, zone, subnet, uid, taints) and, with
// --from-cluster, the workloads' images. Errors are logged and counted;
// the agent keeps walking what it has.
func (a *Agent) refresh(ctx context.Context) {
	if a.kube == nil {
		return
	}
	n, err := a.kube.getNode(ctx, a.o.Node)
	if err != nil {
		a.Metrics.kubeErrors.Inc()
		a.log.Printf("node %s: %v (node info keeps the flags' pool/zone/subnet)", a.o.Node, err)
		return
	}
	p := placeOf(n)
	if a.o.Pool != "" {
		p.Pool = a.o.Pool
	}
	if a.o.Zone != "" {
		p.Zone = a.o.Zone
	}
	if a.o.Subnet != "" {
		p.Subnet = a.o.Subnet
	}
	a.mu.Lock()
	a.place, a.nodeUID = p, n.Metadata.UID
	a.mu.Unlock()
	a.Metrics.SetNodeInfo(a.o.Node, p.Pool, p.Zone, p.Subnet)
	if !a.o.FromCluster {
		return
	}
	imgs, err := a.kube.clusterImages(ctx, n, a.o.MaxTargets)
	if err != nil {
		a.Metrics.kubeErrors.Inc()
		a.log.Printf("--from-cluster: %v (keeping the previous %d images)", err, len(a.cluster))
		return
	}
	var ts []target
	var bad []string
	for _, img := range imgs {
		ref, err := runtimecfg.ParseReference(img)
		if err != nil {
			bad = append(bad, img)
			continue
		}
		ts = append(ts, target{image: img, host: ref.Registry, source: "cluster"})
	}
	if len(bad) > 0 {
		a.log.Printf("--from-cluster: skipped %d image references the runtime could not parse either: %s", len(bad), strings.Join(bad, ", "))
	}
	a.mu.Lock()
	old := a.allTargetsLocked()
	a.cluster = ts
	keep := map[string]bool{}
	hosts := map[string]bool{}
	for _, t := range a.allTargetsLocked() {
		keep[t.image] = true
		hosts[t.host] = true
	}
	var gone []string
	for _, t := range old {
		if !keep[t.image] {
			delete(a.results, t.image)
		}
		if !hosts[t.host] {
			gone = append(gone, t.host)
		}
	}
	a.mu.Unlock()
	for _, h := range gone {
		a.Metrics.dropHost(h)
	}
	a.log.Printf("--from-cluster: %d images could land on %s", len(ts), a.o.Node)
}

// runtime finds the node's runtime and reads its configuration under
// --host-root (step 0); --certs-dir replaces its registry part. nil when
// the configuration cannot be read (the walk then reads --certs-dir, or
// none), which the log says.
func (a *Agent) runtime() *runtimecfg.RuntimeConfig {
	ro := runtimecfg.RuntimeOptions{Root: a.o.HostRoot}
	if a.o.CertsDir != "" {
		ro.CertsDir, ro.DockerCertsDir = &a.o.CertsDir, &a.o.DockerCertsDir
	}
	rc, err := runtimecfg.DiscoverRuntime(ro)
	if err != nil {
		a.log.Printf("the runtime's configuration: %v", err)
		return nil
	}
	return rc
}

// proxy finds the node's runtime's proxy settings under --host-root (of
// rc's runtime when known). It cannot fail: without --runtime-env,
// discovery has no bad input.
func (a *Agent) proxy(rc *runtimecfg.RuntimeConfig) *runtimecfg.ProxyDiscovery {
	po := runtimecfg.ProxyDiscoveryOptions{Root: a.o.HostRoot, NoNodeProxy: a.o.NoNodeProxy}
	if rc != nil {
		po.Runtime = rc.Runtime
	}
	d, err := runtimecfg.DiscoverProxy(po)
	if err != nil {
		a.log.Printf("proxy settings: %v (walking direct)", err)
		return nil
	}
	return d
}
