package pull

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Where the packets stop (--trace): when the walk fails by a timeout on
// an address, TCP SYNs to that address and port with a rising TTL
// (netcheck.Trace) name the last router that answered and the first that
// did not, and the verdict's summary says so. When the walk works, each
// endpoint's address is traced: the healthy paths sweep puts beside a
// failing node's.

const stepTrace stepName = "trace"

// traceWait bounds each round of the trace's probes.
const traceWait = 2 * time.Second

// trace runs the traces of the walk whose failure is f (nil: it worked),
// when asked.
func (w *walker) trace(ctx context.Context, f *Error) {
	if !w.opts.Trace {
		return
	}
	skip := func(why string) {
		w.step(stepTrace, "", report.StepSkip, "", "not run: "+why, 0, 0)
	}
	if ctx.Err() != nil {
		skip("the probe's time ran out")
		return
	}
	if f == nil {
		w.traceHealthy(ctx)
		return
	}
	info, _ := verdict.Lookup(f.Code)
	if info.Cause != verdict.CauseTimeout {
		skip(fmt.Sprintf("%s is not a timeout: packets come back from %s", f.Code, f.Host))
		return
	}
	addr, what := w.failedAddress(f)
	if !addr.IsValid() {
		skip("no address of " + f.Host + " to trace (" + what + ")")
		return
	}
	tr := netcheck.Trace(ctx, addr, netcheck.TraceOptions{Wait: traceWait})
	w.mu.Lock()
	w.rep.Traces = append(w.rep.Traces, tr)
	w.mu.Unlock()
	if tr.Skipped != "" {
		skip(tr.Skipped)
		return
	}
	status := report.StepPass
	if !tr.Reached {
		status = report.StepWarn
	}
	finding := TraceFinding(tr)
	w.step(stepTrace, f.Host, status, "", what+": "+finding, tr.DurationMS, 0)
	f.Summary += "; --trace to " + tr.Destination + ": " + finding
}

// traceHealthy traces every endpoint's address at once, after a walk
// that worked.
func (w *walker) traceHealthy(ctx context.Context) {
	type target struct {
		host string
		addr netip.AddrPort
	}
	var ts []target
	seen := map[netip.AddrPort]bool{}
	w.mu.Lock()
	for _, e := range w.rep.Endpoints {
		for _, ep := range w.endpoints {
			if ep.rep != e {
				continue
			}
			if ap, err := netip.ParseAddrPort(ep.addr); err == nil && !seen[ap] {
				seen[ap] = true
				ts = append(ts, target{e.Host, ap})
			}
		}
	}
	w.mu.Unlock()
	if len(ts) == 0 {
		w.step(stepTrace, "", report.StepSkip, "", "not run: no endpoint was reached directly (through a proxy, the proxy's far side is not this node's path)", 0, 0)
		return
	}
	trs := make([]*report.Trace, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Go(func() { trs[i] = netcheck.Trace(ctx, t.addr, netcheck.TraceOptions{Wait: traceWait}) })
	}
	wg.Wait()
	w.mu.Lock()
	w.rep.Traces = append(w.rep.Traces, trs...)
	w.mu.Unlock()
	for i, tr := range trs {
		status := report.StepPass
		if tr.Skipped != "" {
			status = report.StepSkip
		}
		w.step(stepTrace, ts[i].host, status, "", ts[i].addr.String()+": "+TraceFinding(tr), tr.DurationMS, 0)
	}
}

// failedAddress is the address the failure f happened on, and what it
// is: the proxy's for a proxy hop, the address that timed out for a
// connect, else the one that connected.
func (w *walker) failedAddress(f *Error) (netip.AddrPort, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ep := range w.endpoints {
		r := ep.rep
		if r.Host != f.Host {
			continue
		}
		if px := r.Proxy; px != nil && px.Via == "proxy" {
			for _, a := range px.Addresses {
				if ap, err := netip.ParseAddrPort(a.Address); err == nil {
					return ap, "the proxy " + px.Proxy
				}
			}
			continue
		}
		if ap, err := netip.ParseAddrPort(ep.addr); err == nil {
			return ap, r.Host + " at " + ep.addr
		}
		for _, a := range r.Addresses {
			if a.Result == "timeout" {
				if ap, err := netip.ParseAddrPort(a.Address); err == nil {
					return ap, r.Host + " at " + a.Address
				}
			}
		}
	}
	return netip.AddrPort{}, "it has none that failed by a timeout"
}

// TraceFinding says in one line where a trace's packets stop.
func TraceFinding(tr *report.Trace) string {
	switch {
	case tr.Skipped != "":
		return "not run: " + tr.Skipped
	case tr.Reached:
		last := tr.Hops[len(tr.Hops)-1]
		return fmt.Sprintf("SYNs reach %s at hop %d (it answers %s): the path to the port works, the stall is past TCP", last.Address, last.TTL, last.Result)
	case tr.LastAnswered == 0:
		return fmt.Sprintf("no hop answered, not even the first router: the packets (or every answer) stop at the node's own gateway (%d hops tried)", tr.MaxHops)
	}
	s := fmt.Sprintf("the last hop that answered is hop %d (%s)", tr.LastAnswered, tr.LastAddress)
	if tr.FirstSilent > 0 {
		s += fmt.Sprintf("; hop %d and every hop after it stayed silent", tr.FirstSilent)
	}
	return s + ". A router past it drops the packets, or has no route back to this node's subnet: a hop that answers a trace from a healthy subnet and not from this one is missing the route back (pullpath sweep --trace puts both side by side)"
}
