package netcheck

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// The path MTU test. A tunnel (IPsec, WireGuard, a VPN gateway) lowers
// the path MTU; when the ICMP "fragmentation needed" that would tell the
// sender is dropped on its way back, full-size segments vanish while
// small ones pass: TCP connects, then the TLS handshake (a server's
// first flight is large) or a body stalls. A client can shrink what the
// server sends it without privilege: the MSS it offers in its SYN
// (TCP_MAXSEG set before connect) bounds the server's segments. So the
// test repeats the exchange that stalled on new connections with clamped
// MSS values, several at once, and narrows down the largest that
// completes. It proves the black hole only when a clamped connection
// really completed where the node's own stalled.

// MSSAttempt runs the exchange that stalled once, on connections dial
// opens (their MSS clamped, or not), within ctx. Completed means the
// exchange got through: the server's answer arrived whole.
type MSSAttempt func(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (completed bool, err error)

// MTUSearch bounds one test.
type MTUSearch struct {
	Address netip.AddrPort // the address that stalled
	After   string         // what stalled: tls or blob
	// Budget bounds the whole test (default 10s).
	Budget time.Duration
	// Wait bounds one attempt until a first one completes (default 5s);
	// after that an attempt gets ten times the first completion's time,
	// at least MinWait (default 300ms).
	Wait, MinWait time.Duration
	// ConnectTimeout bounds each TCP connect.
	ConnectTimeout time.Duration
	// Width is how many MSS values each round tries at once (default 8).
	Width int
}

// Minimum MSS values the test goes down to: IPv4's 536 (RFC 879), and
// IPv6's 1220 (its minimum MTU of 1280 less 60).
const (
	minMSS4 = 536
	minMSS6 = 1220
)

// HeaderBytes is what a TCP segment of MSS bytes adds to become a packet
// that must fit the path MTU: the IPv4 and TCP headers (40), or IPv6's
// (60). Options such as timestamps come out of the MSS itself.
func HeaderBytes(a netip.Addr) int {
	if a.Unmap().Is4() {
		return 40
	}
	return 60
}

// NodeMSS is the MSS the node's own connections offer toward the route
// rf describes: the route's advmss when set, else its mtu or the
// interface's, less the headers; fallback when the route is unknown.
func NodeMSS(rf *report.RouteFacts, a netip.Addr) int {
	switch {
	case rf != nil && rf.AdvMSS > 0:
		return rf.AdvMSS
	case rf != nil && rf.MTU > 0:
		return rf.MTU - HeaderBytes(a)
	case rf != nil && rf.InterfaceMTU > 0 && rf.InterfaceMTU < 65536:
		return rf.InterfaceMTU - HeaderBytes(a)
	}
	return 1500 - HeaderBytes(a)
}

// ClampedDialer is a dialer whose connections offer mss in their SYN
// (TCP_MAXSEG set on the socket before connect); mss 0 leaves the
// kernel's.
func ClampedDialer(timeout time.Duration, mss int) *net.Dialer {
	d := &net.Dialer{Timeout: timeout}
	if mss > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) { serr = setMSS(fd, mss) }); err != nil {
				return err
			}
			return serr
		}
	}
	return d
}

// SearchMSS runs the MTU test: the exchange of try on new connections to
// s.Address, first the node's own (unclamped, to see the stall repeat)
// and a spread of clamped values down to the minimum, then rounds that
// narrow the gap between the largest MSS that completed and the smallest
// that stalled, Width values at a time, until it is one byte or the
// budget is spent.
func SearchMSS(ctx context.Context, s MTUSearch, try MSSAttempt) *report.MTUTest {
	if s.Budget <= 0 {
		s.Budget = 10 * time.Second
	}
	if s.Wait <= 0 {
		s.Wait = 5 * time.Second
	}
	s.Wait = min(s.Wait, s.Budget/2) // round 0 ends before the budget does
	if s.MinWait <= 0 {
		s.MinWait = 300 * time.Millisecond
	}
	if s.Width <= 1 {
		s.Width = 8
	}
	start := time.Now()
	addr := s.Address.Addr().Unmap()
	rt := RouteTo(addr)
	t := &report.MTUTest{After: s.After, Address: s.Address.String(), Route: rt, NodeMSS: NodeMSS(rt, addr), BudgetMS: units.MS(s.Budget)}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, s.Budget)
	defer cancel()
	floor := minMSS4
	if !addr.Is4() {
		floor = minMSS6
	}
	work, fail := 0, t.NodeMSS // largest completed, smallest stalled (the node's own stalled)
	wait := s.Wait
	first := true
	for ctx.Err() == nil {
		var values []int
		if first {
			values = append([]int{0}, spread(floor, t.NodeMSS-1, s.Width-1)...)
		} else {
			values = spread(work+1, fail-1, s.Width)
		}
		if len(values) == 0 {
			break
		}
		res, fastest := round(ctx, s, values, wait, try)
		t.Attempts = append(t.Attempts, res...)
		if first && completedMSS(res, 0) {
			t.Result = report.MTUNotRepeated
			t.Note = "a new connection without clamping completed: the stall did not repeat"
			break
		}
		work, fail = bracket(res, work, fail)
		if work == 0 {
			break // nothing completed, even at the minimum
		}
		if first {
			wait = max(s.MinWait, 10*fastest)
			wait = min(wait, s.Wait)
			first = false
		}
		if fail-work <= 1 {
			break
		}
	}
	t.DurationMS = units.MS(time.Since(start))
	switch {
	case t.Result != "":
	case work == 0 && parent.Err() != nil:
		t.Result = report.MTUInterrupted
		t.Note = "the walk ended before any connection of the test completed"
	case work == 0:
		t.Result = report.MTUNotMTU
		t.Note = fmt.Sprintf("clamped connections stalled too, down to MSS %d: not the path MTU", floor)
	default:
		t.Result = report.MTUBlackHole
		t.WorkingMSS, t.FailingMSS = work, fail
		t.PathMTU = work + HeaderBytes(addr)
		t.PathMTUExact = fail == work+1
		if !t.PathMTUExact {
			t.Note = fmt.Sprintf("the budget ended before the search did: the path MTU is between %d and %d", t.PathMTU, fail-1+HeaderBytes(addr))
		}
	}
	return t
}

// bracket narrows (work, fail) with a round's attempts: the largest MSS
// that completed, and the smallest above it that stalled. A stalled value
// below one that completed is a lost packet, not the path MTU.
func bracket(res []report.MSSAttempt, work, fail int) (int, int) {
	for _, a := range res {
		if a.MSS > 0 && a.Result == "completed" && a.MSS > work {
			work = a.MSS
		}
	}
	for _, a := range res {
		if a.MSS > work && a.Result == "stalled" && a.MSS < fail {
			fail = a.MSS
		}
	}
	return work, max(fail, work+1)
}

// spread is n values evenly spaced from lo to hi (both included when n
// allows), ascending and distinct.
func spread(lo, hi, n int) []int {
	if hi < lo || n <= 0 {
		return nil
	}
	if hi-lo+1 <= n {
		out := make([]int, 0, hi-lo+1)
		for v := lo; v <= hi; v++ {
			out = append(out, v)
		}
		return out
	}
	if n == 1 {
		return []int{(lo + hi) / 2}
	}
	out := make([]int, 0, n)
	for i := range n {
		v := lo + (hi-lo)*i/(n-1)
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

func completedMSS(res []report.MSSAttempt, mss int) bool {
	return slices.ContainsFunc(res, func(a report.MSSAttempt) bool { return a.MSS == mss && a.Result == "completed" })
}

// round runs one attempt per value at once. Until one completes, each may
// take wait; once one has, the rest get ten times its time (at least
// MinWait, at most wait): a segment that gets through does so at once, a
// black-holed one never. It returns the attempts in the order of values
// and the fastest completion.
func round(ctx context.Context, s MTUSearch, values []int, wait time.Duration, try MSSAttempt) ([]report.MSSAttempt, time.Duration) {
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	res := make([]report.MSSAttempt, len(values))
	var (
		mu      sync.Mutex
		fastest time.Duration
		once    sync.Once
		wg      sync.WaitGroup
	)
	for i, mss := range values {
		wg.Go(func() {
			a := report.MSSAttempt{MSS: mss}
			d := ClampedDialer(s.ConnectTimeout, mss)
			dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, s.Address.String())
			}
			t0 := time.Now()
			ok, err := try(rctx, dial)
			el := time.Since(t0)
			a.DurationMS = units.MS(el)
			switch {
			case ok:
				a.Result = "completed"
				mu.Lock()
				if fastest == 0 || el < fastest {
					fastest = el
				}
				mu.Unlock()
				once.Do(func() {
					// the others get ten times this long from now
					left := max(s.MinWait, 10*el) - time.Since(start)
					left = min(left, wait-time.Since(start))
					time.AfterFunc(max(left, 0), cancel)
				})
			case ctx.Err() != nil:
				a.Result = "cancelled"
			case rctx.Err() != nil || isTimeout(err):
				a.Result = "stalled"
			default:
				a.Result = "failed"
				if err != nil {
					a.Error = err.Error()
				}
			}
			res[i] = a
		})
	}
	wg.Wait()
	return res, fastest
}

// TLSAttempt is a TLS handshake with serverName and cfg as the exchange
// of the MTU test: it completes when the server's whole first flight
// arrived, whether or not its certificate verifies.
func TLSAttempt(serverName string, cfg *tls.Config) MSSAttempt {
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	cfg.ServerName = serverName
	return func(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (bool, error) {
		raw, err := dial(ctx, "tcp", "")
		if err != nil {
			return false, err
		}
		defer raw.Close()
		if dl, ok := ctx.Deadline(); ok {
			raw.SetDeadline(dl)
		}
		err = tls.Client(raw, cfg).HandshakeContext(ctx)
		return err == nil || certCode(ClassifyTLSError(err)), err
	}
}
