package pull

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The slow path: while the blobs download, the walk times each blob host
// and the longest stretch without a byte, as containerd's progress
// reporter counts it (any byte of any open request is progress). After,
// the whole pull's time is projected from the manifest's sizes at the
// rate measured and held against --pull-budget (a warning: the pull works,
// late), and the longest stretch against the node's progress timeout by
// containerd's version (a failure: the runtime aborts it).

// pace is the blob phase's clock.
type pace struct {
	mu      sync.Mutex
	start   time.Time
	last    time.Time // the last byte (the phase's start before any)
	maxGap  time.Duration
	gapHost string
	hosts   map[string]*hostPace
	order   []string
}

// hostPace is one blob host's share.
type hostPace struct {
	blobs       int
	bytes       int64
	first, last time.Time
}

func newPace() *pace {
	now := time.Now()
	return &pace{start: now, last: now, hosts: map[string]*hostPace{}}
}

// host is h's record, made at its first request (sent at t0).
func (p *pace) host(h string, t0 time.Time) *hostPace {
	hp := p.hosts[h]
	if hp == nil {
		hp = &hostPace{first: t0}
		p.hosts[h] = hp
		p.order = append(p.order, h)
	}
	return hp
}

// requested records a blob request to host h sent at t0.
func (p *pace) requested(h string, t0 time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.host(h, t0).blobs++
	p.mu.Unlock()
}

// arrived records n bytes from host h.
func (p *pace) arrived(h string, n int) {
	if p == nil {
		return
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if gap := now.Sub(p.last); gap > p.maxGap {
		p.maxGap, p.gapHost = gap, h
	}
	p.last = now
	hp := p.host(h, now)
	hp.bytes += int64(n)
	hp.last = now
}

// report is the phase's pace; imageBytes are the manifest's blobs.
func (p *pace) report(imageBytes, bytes int64, el time.Duration, quick bool) *report.TransferPace {
	p.mu.Lock()
	defer p.mu.Unlock()
	tp := &report.TransferPace{ImageBytes: imageBytes, MaxGapMS: units.MS(p.maxGap), MaxGapHost: p.gapHost}
	for _, h := range p.order {
		hp := p.hosts[h]
		r := report.HostRate{Host: h, Blobs: hp.blobs, Bytes: hp.bytes}
		if !hp.last.IsZero() && hp.last.After(hp.first) {
			d := hp.last.Sub(hp.first)
			r.DurationMS = units.MS(d)
			r.MBps = float64(hp.bytes) / 1e6 / d.Seconds()
		}
		tp.Hosts = append(tp.Hosts, r)
	}
	if !quick && bytes > 0 && el > 0 {
		tp.ProjectedMS = units.MS(time.Duration(float64(el) * float64(imageBytes) / float64(bytes)))
	}
	return tp
}

// progressLimit is the node's runtime's progress timeout: its version and
// config when step 0 found the runtime, else the config file given.
func (w *walker) progressLimit() runtimecfg.ProgressLimit {
	if rc := w.opts.Runtime; rc != nil {
		if rc.Runtime != runtimecfg.RuntimeContainerd {
			return runtimecfg.ProgressLimit{Why: rc.Runtime + "'s progress timeout is not read (containerd's only)"}
		}
		var l runtimecfg.PullLimits
		if rc.Limits != nil {
			l = *rc.Limits
		}
		return runtimecfg.EffectiveProgressTimeout(rc.Version, l)
	}
	l, err := runtimecfg.ReadPullLimits(w.opts.ContainerdConfig)
	if err != nil {
		return runtimecfg.ProgressLimit{Why: err.Error()}
	}
	return runtimecfg.EffectiveProgressTimeout("", l)
}

// pullBudget is --pull-budget (default Defaults.PullBudget).
func (w *walker) pullBudget() time.Duration {
	if w.opts.PullBudget > 0 {
		return w.opts.PullBudget
	}
	return Defaults.PullBudget
}

// judgePace holds the blob phase's pace against the limits: the failure
// it ends with (first, as download found it, or the runtime's abort), and
// a warning for a pull that works but late.
func (s *session) judgePace(t *report.Transfer, first *Error) *Error {
	w := s.w
	tp := t.Pace
	lim := w.progressLimit()
	tp.ProgressNote = lim.Why
	tp.ProgressTimeoutMS = units.MS(lim.Timeout)
	tp.PullBudgetMS = units.MS(w.pullBudget())
	gap := time.Duration(tp.MaxGapMS * float64(time.Millisecond))
	switch {
	case first != nil && first.Code == verdict.BlobStalled && lim.Timeout > 0 && lim.Timeout <= w.opts.StallTimeout:
		// the runtime gives up before the probe calls it stalled
		return s.progressFailure(first.Host, tp, lim, fmt.Sprintf("%s; %s: the runtime aborts this pull", strings.TrimSuffix(first.Summary, "."), lim.Why))
	case first != nil && first.Code == verdict.BlobStalled:
		first.Summary += "; " + lim.Why
		return first
	case first != nil:
		return first
	case lim.Timeout > 0 && gap >= lim.Timeout:
		return s.progressFailure(tp.MaxGapHost, tp, lim, fmt.Sprintf("no blob received a byte for %s while downloading from %s (%s): %s, so the runtime aborts this pull, though every byte arrived in the end here",
			dur(tp.MaxGapMS), tp.MaxGapHost, rates(t), lim.Why))
	}
	if tp.ProjectedMS > tp.PullBudgetMS && tp.PullBudgetMS > 0 {
		w.warn(verdict.PullSlow, slowestHost(tp), fmt.Sprintf("the whole pull of %s takes %s at %s, over --pull-budget %s: the kubelet pulls one image at a time by default (serializeImagePulls), so every pull behind this one on the node waits as long; %s",
			units.Bytes(tp.ImageBytes), dur(tp.ProjectedMS), rates(t), dur(tp.PullBudgetMS), lim.Why))
	}
	return nil
}

// progressFailure is PULL_PROGRESS_TIMEOUT on host.
func (s *session) progressFailure(host string, tp *report.TransferPace, lim runtimecfg.ProgressLimit, summary string) *Error {
	at := site{stage: verdict.StageBlob, role: verdict.RoleBlob, host: host}
	s.w.mu.Lock()
	for _, ep := range s.w.endpoints {
		if ep.rep.Host == host {
			at = ep.in(verdict.StageBlob)
		}
	}
	s.w.mu.Unlock()
	return at.fail(verdict.PullProgressTimeout, nil, "%s", summary)
}

// rates is the transfer's rate in words: overall, and per host when more
// than one served.
func rates(t *report.Transfer) string {
	s := fmt.Sprintf("%.2f MB/s", t.MBps)
	if t.Pace == nil {
		return s
	}
	var hs []string
	for _, h := range t.Pace.Hosts {
		hs = append(hs, fmt.Sprintf("%s %.2f MB/s", h.Host, h.MBps))
	}
	return s + " (" + strings.Join(hs, ", ") + ")"
}

// slowestHost is the host with the lowest rate that sent bytes.
func slowestHost(tp *report.TransferPace) string {
	best := ""
	low := -1.0
	for _, h := range tp.Hosts {
		if h.Bytes > 0 && (low < 0 || h.MBps < low) {
			best, low = h.Host, h.MBps
		}
	}
	return best
}
