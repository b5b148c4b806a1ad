package monitor

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The far side of the path in the agent (issue 38): the rate each walk saw,
// the path MTU a walk proved, and the MTU test at most once per interval
// (a walk that stalls runs it; a fleet whose registry is black-holed must
// not spend every walk on it).

// Metric names of the path, as docs/monitor.md lists them.
const (
	mRate     = "pullpath_transfer_rate_bytes_per_second"
	mPathMTU  = "pullpath_path_mtu_bytes"
	mMTUTests = "pullpath_mtu_tests_total"
)

// pathMetrics are the path's series.
type pathMetrics struct {
	rate     *prometheus.GaugeVec   // image_host, mode
	mtu      *prometheus.GaugeVec   // image_host
	mtuTests *prometheus.CounterVec // result
}

func newPathMetrics() pathMetrics {
	p := pathMetrics{
		rate: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: mRate,
			Help: "Bytes per second of the blobs in the latest walk of an image on the host that downloaded any, by mode: quick (the first bytes of each blob: latency more than throughput) or full (every byte)."}, []string{"image_host", "mode"}),
		mtu: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: mPathMTU,
			Help: "The path MTU toward the host that the latest MTU test proved (PATH_MTU_BLACKHOLE: clamped connections completed where the node's own stalled); the series is deleted when a walk of the host passes."}, []string{"image_host"}),
		mtuTests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: mMTUTests,
			Help: "Path MTU tests run (at most one per interval), by result: black-hole, not-mtu, not-repeated, interrupted."}, []string{"result"}),
	}
	for _, r := range []string{report.MTUBlackHole, report.MTUNotMTU, report.MTUNotRepeated, report.MTUInterrupted} {
		p.mtuTests.WithLabelValues(r)
	}
	return p
}

// observePath publishes what a walk of an image on host learned of the
// path: its rate, and the MTU test it ran.
func (m *Metrics) observePath(host, mode string, rep *report.ProbeReport) {
	if rep == nil {
		return
	}
	if t := rep.Transfer; t != nil && t.Bytes > 0 && t.DurationMS > 0 {
		m.path.rate.WithLabelValues(host, mode).Set(float64(t.Bytes) / (t.DurationMS / 1000))
	}
	proved := 0
	for _, e := range rep.Endpoints {
		if e.MTU == nil {
			continue
		}
		m.path.mtuTests.WithLabelValues(e.MTU.Result).Inc()
		if e.MTU.Result == report.MTUBlackHole {
			proved = e.MTU.PathMTU
		}
	}
	switch {
	case proved > 0:
		m.path.mtu.WithLabelValues(host).Set(float64(proved))
	case rep.Verdict.Status == verdict.StatusOK:
		m.path.mtu.DeleteLabelValues(host)
	}
}

// drop removes host's path series (dropHost).
func (p pathMetrics) drop(host string) {
	for _, mode := range []string{"quick", "full"} {
		p.rate.DeleteLabelValues(host, mode)
	}
	p.mtu.DeleteLabelValues(host)
}

// mtuAllowed says whether the next walk may run the MTU test: none ran in
// the last interval.
func (a *Agent) mtuAllowed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastMTU.IsZero() || a.now().Sub(a.lastMTU) >= a.o.Interval
}

// mtuRan records that rep's walk ran the MTU test at at.
func (a *Agent) mtuRan(rep *report.ProbeReport, at time.Time) {
	if rep == nil {
		return
	}
	for _, e := range rep.Endpoints {
		if e.MTU != nil {
			a.mu.Lock()
			a.lastMTU = at
			a.mu.Unlock()
			return
		}
	}
}
