package monitor

import (
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Metric names, as docs/monitor.md lists them.
const (
	mSuccess     = "pullpath_probe_success"
	mVerdictCode = "pullpath_probe_verdict_code"
	mStepSeconds = "pullpath_step_duration_seconds"
	mLastSuccess = "pullpath_last_success_timestamp_seconds"
	mRuns        = "pullpath_probe_runs_total"
	mBytes       = "pullpath_bytes_verified_total"
	mNodeInfo    = "pullpath_node_info"
	mLastRun     = "pullpath_last_run_timestamp_seconds"
	mInterval    = "pullpath_probe_interval_seconds"
	mTargets     = "pullpath_monitor_targets"
	mKubeErrors  = "pullpath_kube_request_errors_total"
	mServedBy    = "pullpath_served_by"
)

// maxChainHosts caps the served_by values of one image host: the first
// maxChainHosts hosts of its hosts.toml chain (mirrors, then the server);
// a host beyond them is "other". With no host serving, "none".
const maxChainHosts = 8

// ProbeError is the code label of a walk that could not run at all (a
// node file unreadable, a bad platform): not a verdict about the pull, but
// a failing target all the same.
const ProbeError verdict.Code = "MONITOR_PROBE_ERROR"

// Metrics are the agent's Prometheus series. Cardinality is bounded by the
// number of registry hosts H among the targets: no image, tag, digest,
// signed URL or address ever becomes a label.
type Metrics struct {
	Registry *prometheus.Registry

	success     *prometheus.GaugeVec   // image_host
	code        *prometheus.GaugeVec   // image_host, code
	step        *prometheus.GaugeVec   // image_host, role, step
	lastSuccess *prometheus.GaugeVec   // image_host
	runs        *prometheus.CounterVec // result
	bytes       *prometheus.CounterVec // image_host
	nodeInfo    *prometheus.GaugeVec   // node, pool, zone, subnet
	lastRun     prometheus.Gauge
	interval    prometheus.Gauge
	targets     prometheus.Gauge
	kubeErrors  prometheus.Counter
	servedBy    *prometheus.GaugeVec // image_host, served_by, role
	path        pathMetrics          // path.go

	mu      sync.Mutex
	codes   map[string]string             // image_host -> current code label
	steps   map[string]map[[2]string]bool // image_host -> {role, step}
	served  map[string][2]string          // image_host -> {served_by, role}
	info    [4]string
	hasInfo bool
}

// NewMetrics registers every series on a fresh registry (with the process
// collector: RSS and CPU of the agent itself).
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		success: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: mSuccess,
			Help: "1 if the latest walk of every image on this registry host passed from this node, else 0."}, []string{"image_host"}),
		code: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: mVerdictCode,
			Help: "1 for the current verdict code of this registry host from this node (OK, or the first failing image's code); one series per host."}, []string{"image_host", "code"}),
		step: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: mStepSeconds,
			Help: "Seconds each step took in the latest walk of an image on this host, summed per endpoint role (registry, auth, blob, mirror)."}, []string{"image_host", "role", "step"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: mLastSuccess,
			Help: "Unix time of the latest walk of an image on this host that passed; 0 if none has yet."}, []string{"image_host"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: mRuns,
			Help: "Walks run, by result: ok, fail (a verdict), error (the walk could not run)."}, []string{"result"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: mBytes,
			Help: "Blob bytes downloaded and digest-verified by full pulls."}, []string{"image_host"}),
		nodeInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: mNodeInfo,
			Help: "Always 1: this node's name, pool, zone and subnet, to join on (instance)."}, []string{"node", "pool", "zone", "subnet"}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{Name: mLastRun,
			Help: "Unix time the latest walk finished, whatever its result: a stale value means the monitor stopped walking."}),
		interval: prometheus.NewGauge(prometheus.GaugeOpts{Name: mInterval,
			Help: "The configured quick-walk interval, for alerts that count intervals."}),
		targets: prometheus.NewGauge(prometheus.GaugeOpts{Name: mTargets,
			Help: "Images walked each interval."}),
		kubeErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: mKubeErrors,
			Help: "Kubernetes API requests of the agent that failed (Events, the Node, the workload list)."}),
		servedBy: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: mServedBy,
			Help: "1 for the host that served the latest walk of an image on this registry host (its blobs, else its manifest): the registry itself, a hosts.toml mirror (role mirror; the first 8 hosts of the chain, beyond them other), or none; one series per host."}, []string{"image_host", "served_by", "role"}),
		codes:  map[string]string{},
		steps:  map[string]map[[2]string]bool{},
		served: map[string][2]string{},
	}
	m.path = newPathMetrics()
	m.Registry.MustRegister(m.success, m.code, m.step, m.lastSuccess, m.runs, m.bytes, m.nodeInfo, m.lastRun, m.interval, m.targets, m.kubeErrors, m.servedBy,
		m.path.rate, m.path.mtu, m.path.mtuTests,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range []string{"ok", "fail", "error"} {
		m.runs.WithLabelValues(r)
	}
	return m
}

// SetNodeInfo replaces the one pullpath_node_info series.
func (m *Metrics) SetNodeInfo(node, pool, zone, subnet string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := [4]string{node, pool, zone, subnet}
	if m.hasInfo && m.info == v {
		return
	}
	if m.hasInfo {
		m.nodeInfo.DeleteLabelValues(m.info[:]...)
	}
	m.nodeInfo.WithLabelValues(v[:]...).Set(1)
	m.info, m.hasInfo = v, true
}

// hostState is what the metrics of one registry host are computed from.
type hostState struct {
	OK          bool
	Code        verdict.Code
	LastSuccess time.Time
}

// observeRun counts one walk and its verified bytes.
func (m *Metrics) observeRun(host string, rep *report.ProbeReport, err error, at time.Time) {
	switch {
	case err != nil:
		m.runs.WithLabelValues("error").Inc()
	case rep.Verdict.Status == verdict.StatusOK:
		m.runs.WithLabelValues("ok").Inc()
	default:
		m.runs.WithLabelValues("fail").Inc()
	}
	m.lastRun.Set(float64(at.UnixNano()) / 1e9)
	if rep != nil && rep.Transfer != nil && rep.Transfer.Verified {
		m.bytes.WithLabelValues(host).Add(float64(rep.Transfer.Bytes))
	}
	if rep != nil {
		m.setSteps(host, rep)
	}
	m.setServedBy(host, rep)
}

// servedBy is the {served_by, role} of a walk of an image on host: the
// chain host that served its blobs (else its manifest, else its resolve)
// when hosts.toml names a chain, the host itself when the walk passed
// without one, "none" when nothing served. Only hosts of the chain's
// first maxChainHosts (and the image host) become values: "other" beyond.
func servedBy(host string, rep *report.ProbeReport) [2]string {
	if rep == nil {
		return [2]string{"none", "none"}
	}
	ch := rep.Chain
	if ch == nil {
		if rep.Verdict.Status == verdict.StatusOK {
			return [2]string{host, string(verdict.RoleRegistry)}
		}
		return [2]string{"none", "none"}
	}
	by := ch.ServedBy.Blobs
	if by == "" {
		by = ch.ServedBy.Manifest
	}
	if by == "" {
		by = ch.ServedBy.Resolve
	}
	if by == "" {
		return [2]string{"none", "none"}
	}
	for i, h := range ch.Hosts {
		if h.Host == by {
			if i >= maxChainHosts && h.Role != verdict.RoleRegistry {
				return [2]string{"other", string(h.Role)}
			}
			return [2]string{by, string(h.Role)}
		}
	}
	if by == host {
		return [2]string{host, string(verdict.RoleRegistry)}
	}
	return [2]string{"other", "other"}
}

// setServedBy replaces the host's served_by series with rep's.
func (m *Metrics) setServedBy(host string, rep *report.ProbeReport) {
	v := servedBy(host, rep)
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, had := m.served[host]; had && old != v {
		m.servedBy.DeleteLabelValues(host, old[0], old[1])
	}
	m.servedBy.WithLabelValues(host, v[0], v[1]).Set(1)
	m.served[host] = v
}

// setSteps replaces the host's step durations with those of rep.
func (m *Metrics) setSteps(host string, rep *report.ProbeReport) {
	roles := map[string]verdict.Role{}
	for _, e := range rep.Endpoints {
		roles[e.Host] = e.Role
	}
	sum := map[[2]string]float64{}
	for _, s := range rep.Steps {
		if s.Status == report.StepSkip {
			continue
		}
		role := string(roles[s.Endpoint])
		if role == "" {
			role = "none" // reference, credentials: no endpoint
		}
		sum[[2]string{role, s.Name}] += s.DurationMS / 1000
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.steps[host] {
		if _, ok := sum[k]; !ok {
			m.step.DeleteLabelValues(host, k[0], k[1])
		}
	}
	keys := map[[2]string]bool{}
	for k, v := range sum {
		m.step.WithLabelValues(host, k[0], k[1]).Set(v)
		keys[k] = true
	}
	m.steps[host] = keys
}

// setHost publishes a host's state.
func (m *Metrics) setHost(host string, st hostState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ok := 0.0
	if st.OK {
		ok = 1
	}
	m.success.WithLabelValues(host).Set(ok)
	code := string(st.Code)
	if old, had := m.codes[host]; had && old != code {
		m.code.DeleteLabelValues(host, old)
	}
	m.code.WithLabelValues(host, code).Set(1)
	m.codes[host] = code
	ts := 0.0
	if !st.LastSuccess.IsZero() {
		ts = float64(st.LastSuccess.UnixNano()) / 1e9
	}
	m.lastSuccess.WithLabelValues(host).Set(ts)
}

// dropHost removes every series of a host no target uses any more.
func (m *Metrics) dropHost(host string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.success.DeleteLabelValues(host)
	if c, ok := m.codes[host]; ok {
		m.code.DeleteLabelValues(host, c)
		delete(m.codes, host)
	}
	for k := range m.steps[host] {
		m.step.DeleteLabelValues(host, k[0], k[1])
	}
	delete(m.steps, host)
	m.lastSuccess.DeleteLabelValues(host)
	m.bytes.DeleteLabelValues(host)
	if v, ok := m.served[host]; ok {
		m.servedBy.DeleteLabelValues(host, v[0], v[1])
		delete(m.served, host)
	}
	m.path.drop(host)
}

// Hosts lists the hosts with series, sorted (for tests).
func (m *Metrics) Hosts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for h := range m.codes {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}
