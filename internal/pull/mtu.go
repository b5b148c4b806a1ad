package pull

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The path MTU test of a direct hop that stalled after TCP connected
// (netcheck.SearchMSS): the TLS handshake that timed out, or a blob body
// that stopped, repeated on new connections with a clamped MSS. A clamped
// connection that completes where the node's own stalls again proves a
// path MTU black hole (PATH_MTU_BLACKHOLE); otherwise the walk keeps its
// verdict and says the test was done.

const stepMTU stepName = "mtu"

// mtuOnce is one endpoint's MTU test: the first stall on the endpoint
// runs it, later stalls (the other blobs of a black-holed host) wait for
// it and take its result.
type mtuOnce struct {
	once sync.Once
	test *report.MTUTest
	ran  bool // recorded as a step
}

// mtuBudget is the MTU test's budget (Options.MTUBudget, default
// Defaults.MTU).
func (w *walker) mtuBudget() time.Duration {
	if w.opts.MTUBudget > 0 {
		return w.opts.MTUBudget
	}
	return Defaults.MTU
}

// mtuAfterStall runs the MTU test on ep for an exchange that stalled
// there (after: tls or blob; try repeats it) and returns the walk's
// failure: PATH_MTU_BLACKHOLE at site at when a clamped connection
// completed, else f with the test's finding added to its summary. A hop
// through a proxy is not tested (clamping the node's MSS shapes only its
// own connection to the proxy).
func (w *walker) mtuAfterStall(ctx context.Context, ep *endpoint, at site, after string, try netcheck.MSSAttempt, f *Error) *Error {
	if w.opts.NoMTUTest || ep.addr == "" {
		return f
	}
	ap, err := netip.ParseAddrPort(ep.addr)
	if err != nil {
		return f
	}
	ep.mtu.once.Do(func() {
		wait := min(w.opts.Net.TLSTimeout, 5*time.Second)
		s := netcheck.MTUSearch{Address: ap, After: after, Budget: w.mtuBudget(), Wait: wait, ConnectTimeout: w.opts.Net.ConnectTimeout}
		t := netcheck.SearchMSS(ctx, s, try)
		w.mu.Lock()
		ep.mtu.test = t
		ep.rep.MTU = t
		w.mu.Unlock()
		if after == "tls" {
			w.recordMTU(ep)
		}
	})
	t := ep.mtu.test
	switch t.Result {
	case report.MTUBlackHole:
		return at.fail(verdict.PathMTUBlackHole, f.Err, "%s", mtuSummary(ep.rep, f, t))
	case report.MTUNotRepeated:
		f.Summary += fmt.Sprintf("; the MTU test was done (%d connections in %s): a new connection without clamping completed, so the stall did not repeat (intermittent loss or a slow server, not the path MTU)", len(t.Attempts), dur(t.DurationMS))
	default:
		f.Summary += fmt.Sprintf("; the MTU test was done (%d connections in %s): %s", len(t.Attempts), dur(t.DurationMS), t.Note)
	}
	return f
}

// recordMTU records ep's MTU test as a step, once.
func (w *walker) recordMTU(ep *endpoint) {
	w.mu.Lock()
	t := ep.mtu.test
	if t == nil || ep.mtu.ran {
		w.mu.Unlock()
		return
	}
	ep.mtu.ran = true
	w.mu.Unlock()
	status, code := report.StepPass, verdict.Code("")
	detail := fmt.Sprintf("not the path MTU: %s", t.Note)
	switch t.Result {
	case report.MTUBlackHole:
		status, code = report.StepFail, verdict.PathMTUBlackHole
		detail = fmt.Sprintf("MSS %d completed, %d stalled: path MTU %s toward %s; the node offers MSS %d (%s)", t.WorkingMSS, t.FailingMSS, pathMTU(t), t.Address, t.NodeMSS, routeDesc(t.Route))
	case report.MTUNotRepeated:
		detail = "not the path MTU: " + t.Note
	}
	detail += fmt.Sprintf("; %d connections in %s (budget %s)", len(t.Attempts), dur(t.DurationMS), dur(t.BudgetMS))
	w.step(stepMTU, ep.rep.Host, status, code, detail, t.DurationMS, 0)
}

// recordBlobMTU records the MTU tests the blobs ran, after the blobs'
// own steps.
func (s *session) recordBlobMTU() {
	w := s.w
	w.mu.Lock()
	var eps []*endpoint
	for _, e := range w.endpoints {
		if e.mtu.test != nil && e.mtu.test.After == "blob" {
			eps = append(eps, e)
		}
	}
	w.mu.Unlock()
	for _, e := range eps {
		w.recordMTU(e)
	}
}

// mtuSummary is the verdict's summary of a proved black hole.
func mtuSummary(r *report.Endpoint, f *Error, t *report.MTUTest) string {
	what := fmt.Sprintf("TCP to %s (%s, %s) connects but the TLS handshake stalls: the server's answer never arrives", t.Address, r.Host, r.Role)
	if t.After == "blob" {
		what = strings.TrimSuffix(f.Summary, ".")
	}
	ip, _, _ := net.SplitHostPort(t.Address)
	clamp := t.WorkingMSS
	return fmt.Sprintf("%s. On new connections with the MSS clamped, %d completed and %d stalled: the path MTU toward %s is %s bytes, while this node offers MSS %d (%s). "+
		"The ICMP \"fragmentation needed\" that would shrink the segments never reaches the node: a path MTU black hole (a tunnel, VPN or gateway on the path). "+
		"Fix: clamp the TCP MSS to %d or lower on the tunnel or gateway, let ICMP type 3 code 4 back to the node, or lower the node's MTU toward %s to %d",
		what, t.WorkingMSS, t.FailingMSS, ip, pathMTU(t), t.NodeMSS, routeDesc(t.Route), clamp, ip, t.PathMTU)
}

// pathMTU is the path MTU found, exact or as a range.
func pathMTU(t *report.MTUTest) string {
	if t.PathMTUExact {
		return fmt.Sprint(t.PathMTU)
	}
	ip, _, _ := net.SplitHostPort(t.Address)
	a, _ := netip.ParseAddr(ip)
	return fmt.Sprintf("%d to %d", t.PathMTU, t.FailingMSS-1+netcheck.HeaderBytes(a))
}

// routeDesc says how the node sends toward the address: the interface and
// its MTU, the route's mtu and advmss.
func routeDesc(rf *report.RouteFacts) string {
	if rf == nil {
		return "route unknown"
	}
	if rf.Error != "" {
		return "route unknown: " + rf.Error
	}
	var parts []string
	if rf.Interface != "" {
		parts = append(parts, fmt.Sprintf("%s MTU %d", rf.Interface, rf.InterfaceMTU))
	}
	if rf.MTU > 0 {
		parts = append(parts, fmt.Sprintf("route mtu %d", rf.MTU))
	} else {
		parts = append(parts, "no route mtu")
	}
	if rf.AdvMSS > 0 {
		parts = append(parts, fmt.Sprintf("advmss %d", rf.AdvMSS))
	}
	if rf.Gateway != "" {
		parts = append(parts, "via "+rf.Gateway)
	}
	return strings.Join(parts, ", ")
}

// blobAttempt repeats a blob request that stalled (req, as sent to ep) on
// the connections of the MTU test: it completes when want bytes of the
// body arrived.
func (s *session) blobAttempt(req *http.Request, ep *endpoint, want int64) netcheck.MSSAttempt {
	var tc *tls.Config
	if ep.tlsCfg != nil {
		tc = ep.tlsCfg.Clone()
		tc.ServerName = ep.rep.Host
	}
	return func(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (bool, error) {
		tr := &http.Transport{
			DialContext:        func(ctx context.Context, network, _ string) (net.Conn, error) { return dial(ctx, network, "") },
			TLSClientConfig:    tc,
			DisableCompression: true,
			ForceAttemptHTTP2:  true,
		}
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(req.Clone(ctx))
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
			return false, fmt.Errorf("the repeated request answered %s", resp.Status)
		}
		n, err := io.CopyN(io.Discard, resp.Body, want)
		return n >= want, err
	}
}

// mtuAfterBlobStall runs the MTU test for a blob body that stalled after
// got bytes of d on ep: the same request, on clamped connections, must
// bring 256 KiB more (or the rest of the blob).
func (s *session) mtuAfterBlobStall(ctx context.Context, ep *endpoint, req *http.Request, got int64, d Descriptor, f *Error) *Error {
	if req == nil || ep.rep.Proxy != nil && ep.rep.Proxy.Via == "proxy" {
		return f
	}
	want := min(d.Size, got+256<<10)
	if s.w.opts.Quick {
		want = min(d.Size, quickBytes)
	}
	if want <= 0 {
		return f
	}
	return s.w.mtuAfterStall(ctx, ep, ep.in(verdict.StageBlob), "blob", s.blobAttempt(req, ep, want), f)
}
