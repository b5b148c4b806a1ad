package events

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metric names, as docs/monitor.md lists them.
const (
	MetricFailures  = "pullpath_pull_failures_total"
	MetricBackoff   = "pullpath_pods_image_pull_backoff"
	MetricFirstSeen = "pullpath_pull_failure_first_seen_timestamp_seconds"
	MetricNodes     = "pullpath_nodes"
	mObjects        = "pullpath_watch_objects_total"
	mRelists        = "pullpath_watch_relists_total"
	mWatches        = "pullpath_watches_total"
	mKubeErrors     = "pullpath_kube_request_errors_total"
)

// OtherHost is the image_host label of every registry host past MaxHosts.
const OtherHost = "other"

// metrics are the exporter's series. Every label is bounded: image_host by
// maxHosts, cause and condition by internal/verdict's vocabulary, pool and
// zone by the cluster's node groups. No Pod, node, image or message is
// ever a label.
type metrics struct {
	reg *prometheus.Registry

	failures  *prometheus.CounterVec // image_host, cause, condition, pool, zone
	backoff   *prometheus.GaugeVec   // image_host, cause, condition, pool, zone
	firstSeen *prometheus.GaugeVec   // image_host, cause, pool, zone
	nodes     *prometheus.GaugeVec   // pool, zone
	objects   *prometheus.CounterVec // resource
	relists   *prometheus.CounterVec // resource
	watches   *prometheus.CounterVec // resource
	errors    *prometheus.CounterVec // resource

	mu       sync.Mutex
	maxHosts int
	hosts    map[string]bool
	first    map[[4]string]float64
}

var resources = []string{"events", "pods", "nodes"}

func newMetrics(maxHosts int) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricFailures,
			Help: "Failed image pulls the kubelets reported (their Failed events, each repeat counted) since the exporter started, by the image's registry host, the classified cause and condition, and the node's pool and zone."},
			[]string{"image_host", "cause", "condition", "pool", "zone"}),
		backoff: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricBackoff,
			Help: "Pods with a container waiting in ImagePullBackOff, ErrImagePull, ErrImageNeverPull or InvalidImageName now, by the image's registry host, cause, condition, and the node's pool and zone."},
			[]string{"image_host", "cause", "condition", "pool", "zone"}),
		firstSeen: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricFirstSeen,
			Help: "Unix time of the earliest pull failure seen for this registry host, cause, pool and zone (the Event's first timestamp)."},
			[]string{"image_host", "cause", "pool", "zone"}),
		nodes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricNodes,
			Help: "Nodes in each pool and zone (the groups the failures are counted by)."},
			[]string{"pool", "zone"}),
		objects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: mObjects,
			Help: "Objects read from the API server, listed or watched, by resource."}, []string{"resource"}),
		relists: prometheus.NewCounterVec(prometheus.CounterOpts{Name: mRelists,
			Help: "Full Lists after the first, by resource: a watch that could not resume (410 Gone) or failed."}, []string{"resource"}),
		watches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: mWatches,
			Help: "Watches started, by resource: each resumes from the last version seen."}, []string{"resource"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: mKubeErrors,
			Help: "Failed List or Watch requests, by resource."}, []string{"resource"}),
		maxHosts: maxHosts,
		hosts:    map[string]bool{},
		first:    map[[4]string]float64{},
	}
	m.reg.MustRegister(m.failures, m.backoff, m.firstSeen, m.nodes, m.objects, m.relists, m.watches, m.errors,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector())
	for _, r := range resources {
		m.objects.WithLabelValues(r)
		m.relists.WithLabelValues(r)
		m.watches.WithLabelValues(r)
		m.errors.WithLabelValues(r)
	}
	return m
}

// host bounds the image_host label: the first maxHosts hosts seen keep
// their name, later ones are OtherHost.
func (m *metrics) host(h string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hosts[h] {
		return h
	}
	if len(m.hosts) >= m.maxHosts {
		return OtherHost
	}
	m.hosts[h] = true
	return h
}

// seenAt lowers the first-seen time of a (host, cause, pool, zone) to t
// when t is earlier (or the series is new).
func (m *metrics) seenAt(k [4]string, t float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.first[k]; ok && old <= t {
		return
	}
	m.first[k] = t
	m.firstSeen.WithLabelValues(k[:]...).Set(t)
}
