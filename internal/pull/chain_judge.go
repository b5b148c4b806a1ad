package pull

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// slowChain is the fall-through cost over a whole pull from which the
// chain is a warning of its own (MIRROR_CHAIN_SLOW): the scale of
// containerd's own TLS handshake timeout.
const slowChain = 10 * time.Second

// judgeChain fills each row's outcome, how long containerd holds on it
// per request and how many requests it sends it, the fall-through cost,
// the limits, and the chain's warnings. f is the pull's failure, if any.
func (w *walker) judgeChain(ctx context.Context, c *report.HostChain, tries []*hostTry, res *resolved, f *Error) {
	c.Requests = w.chainRequests()
	served := -1
	for i, t := range tries {
		if t.served {
			served = i
			break
		}
	}
	for i, t := range tries {
		row := t.row
		switch {
		case t.served:
			row.Outcome = report.ChainServed
		case t.down != nil && t.down.Code == verdict.HTTPTimeout:
			row.Outcome, row.Code, row.HoldMS = report.ChainStalled, verdict.MirrorStalled, -1
			row.Detail = t.down.Summary
			continue
		case t.down != nil:
			row.Outcome, row.Code, row.Detail = report.ChainFellThrough, t.down.Code, t.down.Summary
			row.HoldMS = holdOf(t)
			row.Tries = c.Requests
		case t.failedReqs > 0:
			row.Outcome = report.ChainFellThrough
			row.HoldMS, row.Code, row.Detail = answeredHold(row)
			row.Tries = t.failedReqs
		case !row.Resolves && !row.Fetches:
			row.Outcome = report.ChainSkipped
			row.Detail = "its capabilities (" + strings.Join(row.Capabilities, ", ") + ") leave it out of this pull"
			continue
		default:
			continue
		}
		if row.Outcome == report.ChainFellThrough && (served < 0 || i > served) && t.down != nil {
			// nothing after it served: it is where the pull ends
			row.Outcome = report.ChainFailed
		}
		if row.Outcome != report.ChainServed && (served < 0 || i < served) {
			c.FallThroughMS += row.HoldMS * float64(row.Tries)
		}
	}
	c.LongestWaitMS = stretch(c)
	w.chainLimits(c)
	w.chainWarnings(c, tries, res, f)
	if f == nil && w.opts.CheckUpstream {
		w.checkUpstream(ctx, c, tries, res)
	}
}

// chainRequests counts the requests a pull sends through the chain, as
// containerd sends them: the resolve, every manifest (an index and its
// entry), and the blobs in waves of max_concurrent_downloads.
func (w *walker) chainRequests() int {
	n := 1
	for _, s := range w.rep.Steps {
		if s.Name == string(stepIndex) {
			n++
		}
	}
	n++ // the manifest by digest
	if t := w.rep.Transfer; t != nil && t.Blobs > 0 {
		conc := runtimecfg.RuntimeMaxConcurrentDownloads
		n += (t.Blobs + conc - 1) / conc
	}
	return n
}

// holdOf is how long containerd waits on a host that fails below HTTP
// before it moves on, for one request: its own dial and TLS timeouts where
// the host stays silent, the measured time where it answers.
func holdOf(t *hostTry) float64 {
	switch t.down.Code {
	case verdict.ConnectTimeout:
		if t.h.DialTimeout > 0 {
			return units.MS(t.h.DialTimeout)
		}
		return units.MS(runtimecfg.RuntimeDialTimeout)
	case verdict.TLSHandshakeTimeout:
		return units.MS(runtimecfg.RuntimeTLSTimeout)
	}
	var sum float64
	for _, s := range t.row.Steps {
		sum += s.DurationMS
	}
	return sum
}

// answeredHold is the time a host that answered with a failure costs per
// request: the mean of its failed HTTP steps; and the first of them.
func answeredHold(row *report.ChainHost) (float64, verdict.Code, string) {
	var sum float64
	var n int
	var code verdict.Code
	var detail string
	for _, s := range row.Steps {
		if s.Status != report.StepFail {
			continue
		}
		sum += s.DurationMS
		n++
		if code == "" {
			code, detail = s.Code, s.Detail
		}
	}
	if n == 0 {
		return 0, code, detail
	}
	return sum / float64(n), code, detail
}

// dur renders milliseconds for a message: "30.0s", "120ms".
func dur(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.1fs", v/1000)
	}
	return fmt.Sprintf("%.0fms", v)
}

// chainLimits reads containerd's limits on a pull (the node's config when
// readable) and the kubelet's.
func (w *walker) chainLimits(c *report.HostChain) {
	var l runtimecfg.PullLimits
	var err error
	if rc := w.opts.Runtime; rc != nil && rc.Limits != nil && rc.Runtime == runtimecfg.RuntimeContainerd {
		l = *rc.Limits // the merged config containerd reads, imports included
	} else {
		l, err = runtimecfg.ReadPullLimits(w.opts.ContainerdConfig)
	}
	c.Limits.KubeletDeadline = "none: the kubelet's runtimeRequestTimeout excludes pulls (its PullImage call has no deadline)"
	if err != nil {
		c.Limits.Note = err.Error()
		return
	}
	c.Limits.Note = l.Note
	if l.ProgressTimeoutSet && l.ProgressTimeout > 0 {
		c.Limits.ProgressTimeoutMS = units.MS(l.ProgressTimeout)
	}
}

// stretch is the longest time containerd waits without a byte on one
// request: the holds of the failing hosts before the one that serves.
func stretch(c *report.HostChain) float64 {
	var sum float64
	for _, h := range c.Hosts {
		if h.Outcome == report.ChainServed {
			break
		}
		if h.Outcome == report.ChainFellThrough && h.Tries > 0 && h.HoldMS > 0 && h.Tries == c.Requests {
			sum += h.HoldMS
		}
	}
	return sum
}

// chainWarnings says what each failing host costs and what the caches did.
func (w *walker) chainWarnings(c *report.HostChain, tries []*hostTry, res *resolved, f *Error) {
	for _, t := range tries {
		row := t.row
		if !t.h.Mirror {
			continue
		}
		if headGetMismatch(row) {
			w.warn(verdict.MirrorHeadMismatch, t.h.Host, fmt.Sprintf("the mirror %s answers the manifest HEAD with %d but serves the GET: containerd resolves the tag on the next host, then fetches the manifest and blobs from %s (Harbor's proxy cache before 2.1.1 did not proxy the HEAD)", t.h.Host, headStatus(row), t.h.Host))
		}
		if row.Outcome == report.ChainFellThrough {
			w.warn(verdict.MirrorFailed, t.h.Host, fmt.Sprintf("%s (mirror) failed (%s) and containerd falls back to the next host after %s per request, %d request(s) of this pull: %s. %s",
				t.h.Host, row.Code, holdText(row.HoldMS), row.Tries, dur(row.HoldMS*float64(row.Tries)), row.Detail))
		}
	}
	if c.FallThroughMS >= units.MS(slowChain) && f == nil {
		w.warn(verdict.MirrorChainSlow, c.ServedBy.Blobs, fmt.Sprintf("falling through the failing hosts of %s costs every pull on this node %s before %s serves (%d requests, each waiting on them again)", c.File, dur(c.FallThroughMS), firstNonEmpty(c.ServedBy.Manifest, c.ServedBy.Resolve), c.Requests))
	}
}

func holdText(v float64) string {
	if v < 0 {
		return "never"
	}
	return dur(v)
}

func headStatus(row *report.ChainHost) int {
	for _, s := range row.Steps {
		if s.Name == "head" {
			return s.HTTPStatus
		}
	}
	return 0
}

// headGetMismatch: the HEAD failed with a status while a GET served.
func headGetMismatch(row *report.ChainHost) bool {
	head, get := false, false
	for _, s := range row.Steps {
		switch {
		case s.Name == "head" && s.Status == report.StepFail && s.HTTPStatus >= 400:
			head = true
		case (s.Name == "get" || s.Name == "blobs") && s.Status == report.StepPass:
			get = true
		}
	}
	return head && get
}

// chainVerdict is the chain's own failure when the pull otherwise worked
// through it: a host that stalls containerd before any host serves, or
// failing hosts that hold it longer than image_pull_progress_timeout.
func (w *walker) chainVerdict(c *report.HostChain, tries []*hostTry) *Error {
	for _, t := range tries {
		row := t.row
		if row.Outcome == report.ChainServed && t.served {
			break
		}
		if row.Outcome != report.ChainStalled {
			continue
		}
		after := "no later host was reached"
		if c.ServedBy.Blobs != "" {
			after = "the hosts after it serve the whole pull (" + c.ServedBy.Blobs + "), but containerd never gets there"
		}
		at := site{stage: verdict.StageRegistry, role: hostRole(t.h), host: hostname(t.h.Host)}
		return at.fail(verdict.MirrorStalled, t.down, "%s (%s) accepts connections and never answers (%s): containerd sets no response timeout and does not try the next host, so the pull hangs on it (%s; the kubelet's pull has no deadline); %s",
			t.h.Host, hostRole(t.h), t.down.Summary, stallLimit(c), after)
	}
	if lim := c.Limits.ProgressTimeoutMS; lim > 0 {
		if st := c.LongestWaitMS; st >= lim {
			var names []string
			for _, h := range c.Hosts {
				if h.Outcome == report.ChainFellThrough && h.Tries == c.Requests {
					names = append(names, h.Host)
				}
			}
			at := site{stage: verdict.StageRegistry, role: verdict.RoleMirror, host: hostname(names[0])}
			return at.fail(verdict.MirrorChainTimeout, nil, "containerd waits %s without a byte on every request while %s fail before %s answers, over image_pull_progress_timeout (%s): containerd cancels the pull", dur(st), strings.Join(names, ", "), firstNonEmpty(c.ServedBy.Resolve, "the registry"), dur(lim))
		}
	}
	return nil
}

// stallLimit says what ends a stalled pull.
func stallLimit(c *report.HostChain) string {
	if c.Limits.ProgressTimeoutMS > 0 {
		return "containerd 1.7+ cancels the whole pull after image_pull_progress_timeout " + dur(c.Limits.ProgressTimeoutMS) + ", 1.6 waits forever"
	}
	return "containerd 1.6 waits forever; 1.7+ cancel the whole pull after image_pull_progress_timeout (1m or 5m by default)"
}

// checkUpstream walks the upstream registry (the server entry) on its own
// when a mirror served: a cache serving while the upstream fails hides the
// failure until the first uncached tag or a node without the mirror.
func (w *walker) checkUpstream(ctx context.Context, c *report.HostChain, tries []*hostTry, res *resolved) {
	var up *hostTry
	for _, t := range tries {
		if t.h.Server && !t.h.Mirror {
			up = t
		}
	}
	if up == nil || (up.served && c.ServedBy.Blobs == up.h.Host) {
		return
	}
	chk := &report.UpstreamCheck{Host: up.h.Host, Status: report.StepPass}
	c.Upstream = chk
	fail := func(f *Error) {
		chk.Status, chk.Code, chk.Summary = report.StepFail, f.Code, f.Summary
		w.warn(verdict.MirrorHidesUpstream, up.h.Host, fmt.Sprintf("the mirror %s served this pull while the upstream %s fails from this node (%s: %s): the mirror hides a broken upstream; the first uncached tag, or a node without the mirror, will fail", firstNonEmpty(c.ServedBy.Blobs, c.ServedBy.Manifest), up.h.Host, f.Code, f.Summary))
	}
	if f := w.open(ctx, up); f != nil {
		fail(f)
		return
	}
	if _, f, _ := w.head(ctx, up); f != nil {
		fail(f)
		return
	}
	start := time.Now()
	if _, f := up.s.manifestAt(ctx, res.digest, res.digest, acceptEntry(res.mediaType)); f != nil {
		up.step("get", report.StepFail, 0, f.Code, f.Summary, since(start))
		fail(f)
		return
	}
	up.step("get", report.StepPass, http.StatusOK, "", "upstream check: manifest "+short(res.digest), since(start))
	chk.Summary = fmt.Sprintf("the upstream %s serves %s too (manifest HEAD and GET)", up.h.Host, w.ref.String())
}
