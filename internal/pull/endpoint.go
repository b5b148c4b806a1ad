package pull

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// endpoint is one host of the pull as the walk knows it: its evidence, and
// an HTTP client pinned to the address that was proven to connect.
type endpoint struct {
	rep    *report.Endpoint
	client *http.Client
	err    *Error // non-nil: the host cannot be used
	ready  chan struct{}
	// addr and tlsCfg are the address proven to connect and the TLS
	// config of a direct hop (the MTU test dials them again); mtu is that
	// test's result, once per endpoint (mtu.go).
	addr   string
	tlsCfg *tls.Config
	mtu    mtuOnce
}

// hostPort splits a URL's host into name and port, with the scheme's default.
func hostPort(u *url.URL) (string, int) {
	host := u.Hostname()
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return host, n
	}
	if u.Scheme == "http" {
		return host, 80
	}
	return host, 443
}

// reach resolves, connects and handshakes with the host of u, once per
// scheme://host:port for the whole walk: steps 2 to 4 of the pull. A later
// request for the same host reuses the result.
func (w *walker) reach(ctx context.Context, u *url.URL, role verdict.Role, via string, tlsCfg *tls.Config) *endpoint {
	key := u.Scheme + "://" + u.Host
	w.mu.Lock()
	if ep, ok := w.endpoints[key]; ok {
		w.mu.Unlock()
		<-ep.ready
		return ep
	}
	host, port := hostPort(u)
	ep := &endpoint{
		rep:   &report.Endpoint{Host: host, Port: port, Scheme: u.Scheme, Role: role, Via: via, Status: report.StepPass},
		ready: make(chan struct{}),
	}
	w.endpoints[key] = ep
	w.rep.Endpoints = append(w.rep.Endpoints, ep.rep)
	w.mu.Unlock()
	defer close(ep.ready)

	ep.err = w.resolveConnectTLS(ctx, ep, u, tlsCfg)
	if ep.err != nil {
		ep.rep.Status = report.StepFail
		ep.rep.Code = ep.err.Code
	}
	return ep
}

// resolveConnectTLS is steps 2 to 4 on one endpoint, each phase a
// function: resolve its name the node's way, connect to its addresses,
// shake hands with TLS, then bind the endpoint's HTTP client to the address
// that answered; or all of it through the runtime's proxy when its
// settings send u there (checkViaProxy).
func (w *walker) resolveConnectTLS(ctx context.Context, ep *endpoint, u *url.URL, tlsCfg *tls.Config) *Error {
	if d := w.decide(ep, u); !d.Direct() {
		return w.checkViaProxy(ctx, ep, u, d, tlsCfg)
	}
	res, privateExpected, err := w.resolve(ctx, ep)
	if err != nil {
		return err
	}
	addr, err := w.connect(ctx, ep, res, privateExpected)
	if err != nil {
		return err
	}
	ep.addr, ep.tlsCfg = addr, tlsCfg
	if err := w.handshake(ctx, ep, addr, tlsCfg); err != nil {
		return err
	}
	ep.client = w.httpClient(addr, tlsCfg, ep.rep.Host)
	return nil
}

// resolve is step 2: the name, the way the node resolves it.
func (w *walker) resolve(ctx context.Context, ep *endpoint) (*report.Resolution, bool, *Error) {
	r := ep.rep
	name := r.Host
	res := w.nc.Resolve(ctx, name)
	r.Resolve = res
	if res.Code != "" {
		w.step(stepResolve, name, report.StepFail, res.Code, resolveDetail(res), res.DurationMS, 0)
		return nil, false, ep.fail(res.Code, nil, "%s (%s) does not resolve on this node: %s", name, r.Role, resolveDetail(res))
	}
	public := publicAnswers(res)
	status := report.StepPass
	if res.Source == "hosts" {
		status = report.StepWarn
		w.warn(verdict.HostsFileEntry, name, fmt.Sprintf("%s is pinned to %s by the node's hosts file %s: this node works, a replacement node will not have the entry", name, answerList(res), w.nc.Resolver().HostsFile))
	}
	privateExpected := w.opts.ExpectPrivate || verdict.PrivateLinkName(name) || anyPrivateLink(res.CNAMEs)
	if len(public) > 0 && privateExpected && w.opts.ExpectPrivate {
		w.step(stepResolve, name, report.StepFail, verdict.DNSPublicAnswer, resolveDetail(res), res.DurationMS, 0)
		return nil, false, ep.fail(verdict.DNSPublicAnswer, nil, "%s resolves to public %s on this node, and a private address was expected (--expect-private): private DNS is off or the private zone is not linked to the node's network", name, strings.Join(public, ", "))
	}
	w.step(stepResolve, name, status, "", resolveDetail(res), res.DurationMS, 0)
	return res, privateExpected, nil
}

// connect is step 3: every address, each with its own budget. It returns
// the first address that connected.
func (w *walker) connect(ctx context.Context, ep *endpoint, res *report.Resolution, privateExpected bool) (string, *Error) {
	r := ep.rep
	name := r.Host
	public := publicAnswers(res)
	start := time.Now()
	r.Addresses = w.nc.ConnectAll(ctx, res.Answers, r.Port)
	r.Families = w.nc.Families(ctx, res, r.Addresses, r.Port)
	famCode := verdict.Code("")
	if r.Families != nil {
		famCode = r.Families.Code
	}
	var ok, bad []report.AddrResult
	for _, a := range r.Addresses {
		if a.Result == "ok" {
			ok = append(ok, a)
		} else {
			bad = append(bad, a)
		}
	}
	ms := since(start)
	if len(ok) == 0 {
		first := report.AddrResult{Code: verdict.ConnectError, Error: "no address"}
		if len(bad) > 0 {
			first = bad[0]
		}
		// the step carries the code the walk stops with, so a report's
		// failing step and its verdict agree
		code := connectFailCode(first.Code, famCode, len(public) > 0 && privateExpected)
		w.step(stepConnect, name, report.StepFail, code, connectDetail(r.Addresses), ms, 0)
		switch code {
		case verdict.DNSPublicAnswer:
			return "", ep.fail(code, nil, "%s resolves to public %s (it should be private: %s) and the node cannot connect to it (%s): private DNS is off or the private zone is not linked", name, strings.Join(public, ", "), privateReason(name, res), first.Result)
		case verdict.AddressFamilyUnusable:
			return "", ep.fail(code, nil, "%s (%s) cannot be reached from this node: %s (%s)", name, r.Role, r.Families.Detail, connectDetail(r.Addresses))
		}
		return "", ep.fail(code, nil, "%s (%s) %s: %s", name, r.Role, connectPhrase(first), connectDetail(r.Addresses))
	}
	cstatus := report.StepPass
	switch {
	case famCode == verdict.IPv6PathBroken || famCode == verdict.IPv4PathBroken:
		cstatus = report.StepWarn
		w.warn(famCode, name, fmt.Sprintf("%s: %s (%s)", name, r.Families.Detail, connectDetail(bad)))
	case len(usableFamily(bad, r.Families)) > 0:
		// an address of a family the node has neither an address nor a
		// route of (the A record an IPv6-only node behind DNS64 sees
		// beside the synthesized AAAA) is no unreachable address: Go's
		// dialer skips it at no cost
		cstatus = report.StepWarn
		w.warn(verdict.AddressUnreachable, name, fmt.Sprintf("%s: %s connects but %s", name, ok[0].Address, connectDetail(usableFamily(bad, r.Families))))
	}
	if len(public) > 0 && privateExpected {
		w.warn(verdict.DNSPublicAnswer, name, fmt.Sprintf("%s resolves to public %s (%s); the pull goes over the internet path (NAT), not the private endpoint", name, strings.Join(public, ", "), privateReason(name, res)))
	}
	w.step(stepConnect, name, cstatus, "", connectDetail(r.Addresses), ms, 0)
	return ok[0].Address, nil
}

// usableFamily keeps the results whose address is of a family the node
// has an address or a route of (all of them without family facts).
func usableFamily(rs []report.AddrResult, f *report.Families) []report.AddrResult {
	if f == nil {
		return rs
	}
	var out []report.AddrResult
	for _, r := range rs {
		ap, err := netip.ParseAddrPort(r.Address)
		if err != nil {
			out = append(out, r)
			continue
		}
		p := &f.IPv6
		if ap.Addr().Unmap().Is4() {
			p = &f.IPv4
		}
		if p.NodeAddress != "" || p.Source != "" {
			out = append(out, r)
		}
	}
	return out
}

// connectFailCode is the code of a connect step where no address
// connected: a public answer where a private one was expected, else the
// family finding when the host has no address of a family the node can
// use (the dials' own code is CONNECT_UNREACHABLE then: network is
// unreachable), else the first address's dial code.
func connectFailCode(dial, family verdict.Code, publicNotPrivate bool) verdict.Code {
	switch {
	case publicNotPrivate:
		return verdict.DNSPublicAnswer
	case family == verdict.AddressFamilyUnusable:
		return family
	}
	return dial
}

// handshake is step 4: TLS with the runtime's trust (nothing for plain
// HTTP but a warning).
func (w *walker) handshake(ctx context.Context, ep *endpoint, addr string, tlsCfg *tls.Config) *Error {
	r := ep.rep
	name := r.Host
	if r.Scheme != "https" {
		w.warn(verdict.PlainHTTP, name, fmt.Sprintf("%s is reached over plain HTTP", name))
		return nil
	}
	info := w.nc.Handshake(ctx, addr, name, tlsCfg)
	r.TLS = info
	if info.Code != "" {
		w.step(stepTLS, name, report.StepFail, info.Code, info.Error, info.DurationMS, 0)
		if info.Code == verdict.ConnectReset {
			return ep.fail(info.Code, nil, "%s (%s) reset the connection during the TLS handshake, after a ClientHello naming %s: a firewall that filters by SNI does this (%s)", name, r.Role, name, info.Error)
		}
		f := ep.fail(info.Code, nil, "TLS with %s (%s) failed: %s", name, r.Role, info.Error)
		if info.Code == verdict.TLSHandshakeTimeout {
			// TCP connected and the handshake stalled: is it the path MTU?
			return w.mtuAfterStall(ctx, ep, ep.site(), "tls", netcheck.TLSAttempt(name, tlsCfg), f)
		}
		return f
	}
	tstatus := report.StepPass
	if tlsCfg != nil && tlsCfg.InsecureSkipVerify {
		tstatus = report.StepWarn
		w.warn(verdict.TLSVerifySkipped, name, fmt.Sprintf("%s: certificate verification is skipped (skip_verify)", name))
	}
	w.step(stepTLS, name, tstatus, "", tlsDetail(info), info.DurationMS, 0)
	return nil
}

// httpClient returns a client whose every connection goes to addr, the
// address proven to connect; redirects are not followed (the walk follows
// them by hand, one hop at a time).
func (w *walker) httpClient(addr string, tlsCfg *tls.Config, serverName string) *http.Client {
	d := &net.Dialer{Timeout: w.opts.Net.ConnectTimeout}
	var tc *tls.Config
	if tlsCfg != nil {
		tc = tlsCfg.Clone()
		tc.ServerName = serverName
	}
	tr := &http.Transport{
		Proxy: nil, // direct; proxyClient sets the runtime's proxy for a hop that goes through it
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   w.opts.Net.TLSTimeout,
		ResponseHeaderTimeout: w.opts.HTTPTimeout,
		DisableCompression:    true,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       30 * time.Second,
	}
	w.mu.Lock()
	w.transports = append(w.transports, tr)
	w.mu.Unlock()
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func publicAnswers(res *report.Resolution) []string {
	var out []string
	for _, a := range res.Answers {
		if a.Scope == "public" {
			out = append(out, a.Address)
		}
	}
	return out
}

func anyPrivateLink(names []string) bool {
	for _, n := range names {
		if verdict.PrivateLinkName(n) {
			return true
		}
	}
	return false
}

func privateReason(name string, res *report.Resolution) string {
	for _, n := range res.CNAMEs {
		if verdict.PrivateLinkName(n) {
			return "its CNAME " + n + " is a private-link name"
		}
	}
	if verdict.PrivateLinkName(name) {
		return "it is a private-link name"
	}
	return "--expect-private"
}

func answerList(res *report.Resolution) string {
	var s []string
	for _, a := range res.Answers {
		s = append(s, a.Address)
	}
	return strings.Join(s, ", ")
}

func resolveDetail(res *report.Resolution) string {
	if res.Code != "" {
		msg := res.Error
		if msg == "" {
			msg = string(res.Code)
		}
		if res.Nameserver != "" && !strings.Contains(msg, res.Nameserver) {
			msg += " (nameserver " + res.Nameserver + ")"
		}
		return msg
	}
	var parts []string
	for _, a := range res.Answers {
		parts = append(parts, a.Address+" ("+a.Scope+")")
	}
	via := res.Source
	if res.Source == "dns" && res.Nameserver != "" {
		via = "nameserver " + res.Nameserver
	}
	s := strings.Join(parts, ", ") + " from " + via
	if len(res.CNAMEs) > 0 {
		s += " via CNAME " + strings.Join(res.CNAMEs, " -> ")
	}
	return s
}

func connectDetail(as []report.AddrResult) string {
	var parts []string
	for _, a := range as {
		p := fmt.Sprintf("%s %s in %.0fms", a.Address, a.Result, a.DurationMS)
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

func connectPhrase(a report.AddrResult) string {
	switch a.Result {
	case "timeout":
		return "does not answer: TCP connect to " + a.Address + " timed out (packets leave, nothing comes back)"
	case "refused":
		return "refuses connections on " + a.Address
	case "unreachable":
		return "is unreachable: the node has no route to " + a.Address
	case "reset":
		return "resets connections on " + a.Address
	}
	return "cannot be connected to at " + a.Address + ": " + a.Error
}

func tlsDetail(t *report.TLSInfo) string {
	s := t.Version
	if t.Subject != "" {
		s += ", subject " + t.Subject
	}
	if t.Issuer != "" {
		s += ", issuer " + t.Issuer
	}
	return strings.TrimPrefix(s, ", ")
}

func since(t time.Time) float64 { return units.MS(time.Since(t)) }
