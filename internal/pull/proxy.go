package pull

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Through a proxy, steps 2 to 4 of a hop are what net/http does for the
// runtime (transport.go dialConn):
//
//	2. resolve the proxy's name, not the host's (the proxy resolves that)
//	3. connect to the proxy
//	3b. CONNECT HOST:PORT, its own step: the proxy's status and reason
//	4. TLS with the host, through the tunnel
//
// A plain http:// hop has no tunnel: its requests go to the proxy as
// absolute URLs. Each hop decides proxy-or-direct for itself
// (runtimecfg.ProxySettings.Decide, httpproxy's ProxyFunc), so a token or
// blob host can go through the proxy while the registry goes direct.

// proxyHop is the proxy as the walk reached it: once per proxy URL.
type proxyHop struct {
	url   *url.URL
	res   *report.Resolution
	addrs []report.AddrResult
	addr  string // the address proven to connect
	code  verdict.Code
	why   string // the failure, in words
	ready chan struct{}
}

// proxyState is the walker's part for the proxy.
type proxyState struct {
	settings *runtimecfg.ProxySettings // nil: every hop direct, nothing to say
	mu       sync.Mutex
	hops     map[string]*proxyHop
}

// proxySettings are the runtime's proxy settings the walk follows; nil
// walks direct.
func (w *walker) proxySettings() *runtimecfg.ProxySettings { return w.px.settings }

// proxyReport fills the report's proxy section and warnings from the
// discovery, and adds the proxy URLs' passwords to the run's secrets. A
// runtime with no proxy setting and nothing to warn about leaves the
// report as it was: every hop direct.
func (w *walker) proxyReport() {
	d := w.opts.Proxy
	if d == nil || !d.Settings.Active() && !d.Settings.Disabled && len(d.Warnings) == 0 {
		return
	}
	s := d.Settings
	w.px.settings = &s
	for _, v := range []runtimecfg.ProxyValue{s.HTTPS, s.HTTP} {
		if u, err := url.Parse(v.Value); err == nil {
			w.sec.AddURL(u)
		}
		if u, err := url.Parse("http://" + v.Value); err == nil {
			w.sec.AddURL(u)
		}
	}
	rc := &report.ProxyConfig{
		Origin:     s.Origin,
		HTTPSProxy: runtimecfg.RedactProxyValue(s.HTTPS.Value),
		HTTPProxy:  runtimecfg.RedactProxyValue(s.HTTP.Value),
		NoProxy:    s.NoProxy.Value,
		Disabled:   s.Disabled,
		Unit:       d.Unit,
		Files:      d.Files,
		Notes:      d.Notes,
	}
	for _, v := range []runtimecfg.ProxyValue{s.HTTPS, s.HTTP, s.NoProxy} {
		if v.Var != "" {
			rc.Sources = append(rc.Sources, report.ProxyVar{Name: v.Var, Value: runtimecfg.RedactProxyValue(v.Value), From: v.From})
		}
	}
	if d.Running != nil {
		for _, n := range slices.Sorted(maps.Keys(d.Intent)) {
			v := d.Intent[n]
			rc.Intent = append(rc.Intent, report.ProxyVar{Name: n, Value: runtimecfg.RedactProxyValue(v.Value), From: v.From})
		}
	}
	w.rep.Proxy = rc
	for _, x := range d.Warnings {
		w.warn(x.Code, "", x.Message)
	}
}

// decide records how the runtime sends requests to u and returns the
// decision (nil settings: direct, nothing recorded).
func (w *walker) decide(ep *endpoint, u *url.URL) runtimecfg.ProxyDecision {
	s := w.proxySettings()
	if s == nil {
		return runtimecfg.ProxyDecision{}
	}
	d := s.Decide(u)
	ep.rep.Proxy = &report.EndpointProxy{Via: "direct", Variable: d.Var, NoProxyMatch: d.NoProxyMatch, Reason: d.Reason}
	if !d.Direct() {
		ep.rep.Proxy.Via = "proxy"
		ep.rep.Proxy.Proxy = canonicalHostPort(d.Proxy)
	}
	return d
}

// canonicalHostPort is u's host:port with the scheme's default port.
func canonicalHostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "socks5": "1080"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// checkViaProxy is steps 2 to 4 of a hop that goes through the proxy.
func (w *walker) checkViaProxy(ctx context.Context, ep *endpoint, u *url.URL, d runtimecfg.ProxyDecision, tlsCfg *tls.Config) *Error {
	r := ep.rep
	px := r.Proxy
	if s := d.Proxy.Scheme; s != "http" && s != "https" {
		w.step(stepProxy, r.Host, report.StepFail, verdict.ProxyConnectError, "", 0, 0)
		return ep.fail(verdict.ProxyConnectError, nil, "%s (%s) goes through the %s proxy %s (%s): pullpath walks http:// and https:// proxies only; check this hop by hand", r.Host, r.Role, s, px.Proxy, d.Var)
	}
	ph := w.reachProxy(ctx, d.Proxy)
	px.Resolve, px.Addresses = ph.res, ph.addrs
	if ph.code != "" {
		w.step(stepProxy, r.Host, report.StepSkip, "", fmt.Sprintf("not run: the proxy %s itself failed (%s)", px.Proxy, ph.code), 0, 0)
		return ep.fail(ph.code, nil, "%s (%s) goes through the proxy %s (%s), and %s; the registry side was never contacted", r.Host, r.Role, px.Proxy, d.Var, ph.why)
	}
	target := canonicalHostPort(u)
	if u.Scheme == "http" {
		// No tunnel: the proxy gets each request with its absolute URL.
		w.step(stepProxy, r.Host, report.StepPass, "", fmt.Sprintf("plain http: requests go to the proxy %s as absolute URLs, no CONNECT", px.Proxy), 0, 0)
		w.warn(verdict.PlainHTTP, r.Host, fmt.Sprintf("%s is reached over plain HTTP (through the proxy %s)", r.Host, px.Proxy))
		ep.client = w.proxyClient(ph.addr, d.Proxy, nil, r.Host)
		return nil
	}
	tun := w.nc.OpenTunnel(ctx, ph.addr, d.Proxy, target, tlsCfg, w.opts.HTTPTimeout)
	px.Connect = tun.Info
	if tun.Code != "" {
		code, summary := w.tunnelFailure(ctx, ep, d, tun)
		w.step(stepProxy, r.Host, report.StepFail, code, tun.Info.Error, tun.Info.DurationMS, 0)
		return ep.fail(code, tun.Err, "%s", summary)
	}
	w.step(stepProxy, r.Host, report.StepPass, "", fmt.Sprintf("CONNECT %s via %s: %d %s", target, px.Proxy, tun.Info.Status, tun.Info.Reason), tun.Info.DurationMS, 0)
	w.noProxyCIDRWarning(ctx, ep, d)

	// 4. TLS through the tunnel; a second look at a bad certificate
	// opens a tunnel of its own.
	first := tun.Conn
	dial := func(ctx context.Context) (net.Conn, error) {
		if c := first; c != nil {
			first = nil
			return c, nil
		}
		t := w.nc.OpenTunnel(ctx, ph.addr, d.Proxy, target, tlsCfg, w.opts.HTTPTimeout)
		if t.Code != "" {
			return nil, t.Err
		}
		return t.Conn, nil
	}
	info := w.nc.HandshakeVia(ctx, dial, target+" through the proxy "+px.Proxy, r.Host, tlsCfg)
	if first != nil {
		first.Close()
	}
	r.TLS = info
	if info.Code != "" {
		code, summary := w.tunnelTLSFailure(ctx, ep, px.Proxy, info, tlsCfg)
		w.step(stepTLS, r.Host, report.StepFail, code, info.Error, info.DurationMS, 0)
		return ep.fail(code, nil, "%s", summary)
	}
	tstatus := report.StepPass
	if tlsCfg != nil && tlsCfg.InsecureSkipVerify {
		tstatus = report.StepWarn
		w.warn(verdict.TLSVerifySkipped, r.Host, fmt.Sprintf("%s: certificate verification is skipped (skip_verify)", r.Host))
	}
	if p := verdict.InterceptionProduct(info.Issuer); p != "" {
		tstatus = report.StepWarn
		w.warn(verdict.ProxyTLSInterception, r.Host, fmt.Sprintf("%s: the certificate that comes through the proxy %s is issued by %q (%s intercepts TLS) and the node trusts it: the proxy sees every request to %s, registry credentials included", r.Host, px.Proxy, info.Issuer, p, r.Host))
	}
	w.step(stepTLS, r.Host, tstatus, "", tlsDetail(info)+" (through the tunnel)", info.DurationMS, 0)
	ep.client = w.proxyClient(ph.addr, d.Proxy, tlsCfg, r.Host)
	return nil
}

// reachProxy resolves the proxy's name on the node and connects to it,
// once per proxy for the whole walk.
func (w *walker) reachProxy(ctx context.Context, pu *url.URL) *proxyHop {
	key := pu.Scheme + "://" + canonicalHostPort(pu)
	w.px.mu.Lock()
	if w.px.hops == nil {
		w.px.hops = map[string]*proxyHop{}
	}
	if ph, ok := w.px.hops[key]; ok {
		w.px.mu.Unlock()
		<-ph.ready
		return ph
	}
	ph := &proxyHop{url: pu, ready: make(chan struct{})}
	w.px.hops[key] = ph
	w.px.mu.Unlock()
	defer close(ph.ready)

	name := pu.Hostname()
	hp := canonicalHostPort(pu)
	_, ps, _ := net.SplitHostPort(hp)
	port, _ := strconv.Atoi(ps)
	res := w.nc.Resolve(ctx, name)
	ph.res = res
	if res.Code != "" {
		w.step(stepResolve, name, report.StepFail, verdict.ProxyDNS, "the proxy: "+resolveDetail(res), res.DurationMS, 0)
		ph.code, ph.why = verdict.ProxyDNS, fmt.Sprintf("the node cannot resolve the proxy's name %s: %s", name, resolveDetail(res))
		return ph
	}
	w.step(stepResolve, name, report.StepPass, "", "the proxy: "+resolveDetail(res)+" (the registry's names are resolved by the proxy)", res.DurationMS, 0)
	start := time.Now()
	ph.addrs = w.nc.ConnectAll(ctx, res.Answers, port)
	for _, a := range ph.addrs {
		if a.Result == "ok" {
			ph.addr = a.Address
			break
		}
	}
	if ph.addr == "" {
		first := report.AddrResult{Code: verdict.ConnectError, Error: "no address", Result: "error"}
		if len(ph.addrs) > 0 {
			first = ph.addrs[0]
		}
		ph.code = map[string]verdict.Code{"refused": verdict.ProxyRefused, "timeout": verdict.ProxyTimeout, "unreachable": verdict.ProxyUnreachable}[first.Result]
		if ph.code == "" {
			ph.code = verdict.ProxyConnectError
		}
		w.step(stepConnect, name, report.StepFail, ph.code, "the proxy: "+connectDetail(ph.addrs), since(start), 0)
		ph.why = fmt.Sprintf("the proxy %s %s (proxyconnect tcp: %s)", hp, strings.TrimPrefix(connectPhrase(first), "does not answer: "), connectDetail(ph.addrs))
		return ph
	}
	w.step(stepConnect, name, report.StepPass, "", "the proxy: "+connectDetail(ph.addrs), since(start), 0)
	return ph
}

// tunnelFailure names a refused or failed CONNECT, with the evidence that
// tells an internal host NO_PROXY misses from a proxy-side problem.
func (w *walker) tunnelFailure(ctx context.Context, ep *endpoint, d runtimecfg.ProxyDecision, tun netcheck.Tunnel) (verdict.Code, string) {
	r := ep.rep
	px := r.Proxy
	ci := tun.Info
	answer := ci.Error
	if ci.Status != 0 {
		answer = fmt.Sprintf("CONNECT %s answered %d %s", ci.Target, ci.Status, ci.Reason)
		if ci.ProxyError != "" {
			answer += " (" + ci.ProxyError + ")"
		}
	}
	noProxy := w.proxySettings().NoProxy.Value
	goes := fmt.Sprintf("%s (%s) goes through the proxy %s (%s; NO_PROXY %q matches no entry for it)", r.Host, r.Role, px.Proxy, d.Var, noProxy)
	switch tun.Code {
	case verdict.ProxyAuthRequired:
		cred := "its proxy URL has no user:password"
		if ci.Authenticated {
			cred = "the user:password in its proxy URL was refused"
		}
		return tun.Code, fmt.Sprintf("%s, and the proxy demands authentication: %s; %s (registry credentials and pull secrets are not sent to a proxy)", goes, answer, cred)
	case verdict.ProxyAuthScheme:
		return tun.Code, fmt.Sprintf("%s, and the proxy demands authentication: %s. %s", goes, answer, schemeAdvice(ci.AuthSchemes))
	case verdict.ProxyDenied, verdict.ProxyUpstreamFailed:
	default:
		return tun.Code, fmt.Sprintf("%s, and the proxy failed the CONNECT: %s", goes, answer)
	}
	internal := w.internalEvidence(ctx, ep, d)
	if tun.Code == verdict.ProxyDenied {
		s := fmt.Sprintf("%s, and the proxy refuses a tunnel to it: %s. Its ACL does not allow %s: this is the proxy's refusal, the registry never saw the request", goes, answer, ci.Target)
		if internal != "" {
			s += "; " + internal + ": add it to NO_PROXY, or allow it in the proxy's ACL"
		}
		return tun.Code, s
	}
	if internal != "" {
		return verdict.ProxyNoProxyMiss, fmt.Sprintf("%s is internal (%s) but goes through the proxy %s because NO_PROXY %q matches no entry for it, and the proxy cannot reach it: %s%s",
			r.Host, internal, px.Proxy, noProxy, answer, cidrNote(r.Host, d, px.NodeResolve))
	}
	return tun.Code, fmt.Sprintf("%s, and the proxy cannot reach it: %s. The far side of the proxy is broken (its DNS, route or egress to %s), not the node", goes, answer, r.Host)
}

// internalEvidence resolves the hop's host with the node's resolver and,
// when it answers private addresses, connects to the first directly: ""
// when the host is not internal by that evidence.
func (w *walker) internalEvidence(ctx context.Context, ep *endpoint, d runtimecfg.ProxyDecision) string {
	r := ep.rep
	res := r.Proxy.NodeResolve
	if res == nil {
		res = w.nc.Resolve(ctx, r.Host)
		r.Proxy.NodeResolve = res
	}
	if res.Code != "" {
		return ""
	}
	var private []report.Answer
	for _, a := range res.Answers {
		if a.Scope != "public" {
			private = append(private, a)
		}
	}
	if len(private) == 0 {
		return ""
	}
	s := "the node resolves it to " + answerList(&report.Resolution{Answers: private}) + " (" + private[0].Scope + ")"
	if len(r.Proxy.Direct) == 0 {
		r.Proxy.Direct = w.nc.ConnectAll(ctx, private[:1], r.Port)
	}
	if a := r.Proxy.Direct[0]; a.Result == "ok" {
		s += " and connects to " + a.Address + " directly"
	} else {
		s += " (a direct connect to " + a.Address + ": " + a.Result + ")"
	}
	return s
}

// cidrNote says when a NO_PROXY IP or CIDR entry was meant for the host.
func cidrNote(host string, d runtimecfg.ProxyDecision, res *report.Resolution) string {
	if res == nil {
		return ""
	}
	for _, e := range d.IPEntries {
		for _, a := range res.Answers {
			if runtimecfg.EntryCovers(e, a.Address) {
				return fmt.Sprintf(". NO_PROXY's %q covers %s, but Go matches IP and CIDR entries against IP literals only, never against a name that resolves into them: add %q (or its domain) to NO_PROXY", e, a.Address, host)
			}
		}
	}
	return fmt.Sprintf(": add %q (or its domain) to NO_PROXY", host)
}

// noProxyCIDRWarning warns when a hop goes through the proxy although a
// NO_PROXY IP or CIDR entry covers the address its name resolves to.
func (w *walker) noProxyCIDRWarning(ctx context.Context, ep *endpoint, d runtimecfg.ProxyDecision) {
	if len(d.IPEntries) == 0 {
		return
	}
	r := ep.rep
	res := w.nc.Resolve(ctx, r.Host)
	r.Proxy.NodeResolve = res
	for _, e := range d.IPEntries {
		for _, a := range res.Answers {
			if runtimecfg.EntryCovers(e, a.Address) {
				w.warn(verdict.ProxyNoProxyCIDR, r.Host, fmt.Sprintf("%s resolves to %s on the node, inside NO_PROXY's %q, yet goes through the proxy %s: Go matches IP and CIDR entries against IP literals only. The pull works through the proxy today; if %s is meant to go direct, add %q to NO_PROXY", r.Host, a.Address, e, r.Proxy.Proxy, r.Host, r.Host))
				return
			}
		}
	}
}

// tunnelTLSFailure names a TLS failure through the tunnel: an
// interceptor's certificate when its issuer names one, or when the host
// shows another issuer directly.
func (w *walker) tunnelTLSFailure(ctx context.Context, ep *endpoint, proxy string, info *report.TLSInfo, tlsCfg *tls.Config) (verdict.Code, string) {
	r := ep.rep
	if code, summary := tunnelBroken(r, proxy, info); code != "" {
		return code, summary
	}
	base := fmt.Sprintf("TLS with %s (%s) through the proxy %s failed: %s", r.Host, r.Role, proxy, info.Error)
	if info.Code != verdict.TLSUnknownAuthority && info.Code != verdict.TLSNameMismatch {
		return info.Code, base
	}
	if p := verdict.InterceptionProduct(info.Issuer); p != "" {
		return verdict.ProxyTLSIntercepted, fmt.Sprintf("the certificate for %s (%s) that comes through the proxy %s is issued by %q: %s intercepts TLS, and the node does not trust its CA (%s). Trust the interception CA on the node, or bypass the proxy for %s (NO_PROXY, or the proxy's inspection exemptions)", r.Host, r.Role, proxy, info.Issuer, p, info.Error, r.Host)
	}
	// Compare with what the host presents directly, when the node has a
	// direct path (evidence only; the runtime does not go direct).
	res := w.nc.Resolve(ctx, r.Host)
	r.Proxy.NodeResolve = res
	if res.Code == "" && len(res.Answers) > 0 {
		addrs := w.nc.ConnectAll(ctx, res.Answers[:1], r.Port)
		if addrs[0].Result == "ok" {
			direct := w.nc.Handshake(ctx, addrs[0].Address, r.Host, tlsCfg)
			if direct.Issuer != "" && direct.Issuer != info.Issuer {
				return verdict.ProxyTLSIntercepted, fmt.Sprintf("the certificate for %s (%s) that comes through the proxy %s is issued by %q, while %s presents one issued by %q directly: the proxy intercepts TLS, and the node does not trust the interceptor's CA (%s)", r.Host, r.Role, proxy, info.Issuer, r.Host, direct.Issuer, info.Error)
			}
		}
	}
	return info.Code, base + "; if the proxy intercepts TLS, the issuer above is the interceptor's: trust its CA on the node or bypass the proxy for " + r.Host
}

// schemeAdvice says why a 407 offering only schemes other than Basic
// cannot be answered by the runtime, and what can.
func schemeAdvice(schemes []string) string {
	return fmt.Sprintf("It offers only %s: containerd's Go client answers a proxy with Basic credentials from the proxy URL and cannot speak %s, so no user:password in HTTPS_PROXY helps. Run a local authenticating proxy on the node (cntlm, px) as the runtime's proxy, or have a proxy rule let the nodes through without authentication",
		strings.Join(schemes, " and "), strings.Join(schemes, " or "))
}

// tunnelBroken names a TLS handshake through a tunnel the proxy accepted
// (CONNECT 200) and then broke: reset, closed, silent, or carrying bytes
// that are not TLS. Those are the proxy's far side, not the node's route
// nor the registry's certificate. "" when the handshake failed otherwise.
func tunnelBroken(r *report.Endpoint, proxy string, info *report.TLSInfo) (verdict.Code, string) {
	target := net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
	accepted := fmt.Sprintf("the proxy %s answered CONNECT %s with 200 (%s, %s)", proxy, target, r.Host, r.Role)
	farSide := "the proxy accepted the tunnel and its far side broke it (its path to " + r.Host + ", a filter or upstream proxy behind it): not the node's route, not the registry's certificate"
	switch {
	case info.Broken == "reset":
		return verdict.ProxyTunnelBroken, fmt.Sprintf("%s, then reset the tunnel after the TLS ClientHello: %s", accepted, farSide)
	case info.Broken == "closed":
		return verdict.ProxyTunnelBroken, fmt.Sprintf("%s, then closed the tunnel after the TLS ClientHello without a byte of the server's answer: %s", accepted, farSide)
	case info.Broken == "not-tls":
		return verdict.ProxyTunnelNotTLS, fmt.Sprintf("%s, then the tunnel carried bytes that are not TLS where %s's TLS answer belongs: %q. A captive portal or the proxy's block page answers in the registry's place (containerd: %s)", accepted, r.Host, info.Received, goNotTLS(info.Received))
	case info.Code == verdict.TLSHandshakeTimeout:
		return verdict.ProxyTunnelBroken, fmt.Sprintf("%s, then nothing came back through the tunnel: %s. %s", accepted, info.Error, farSide)
	}
	return "", ""
}

// goNotTLS is what Go's net/http (containerd) says when the first bytes
// of a TLS connection are received instead of a TLS record.
func goNotTLS(received string) string {
	if strings.HasPrefix(received, "HTTP/") {
		return "http: server gave HTTP response to HTTPS client"
	}
	return "tls: first record does not look like a TLS handshake"
}

// proxyClient is a client whose every connection goes to the proxy at
// addr (the address proven to connect) with the proxy URL pu: net/http
// then sends CONNECT (https) or absolute URLs (http), with
// Proxy-Authorization from pu's user info, as the runtime's transport
// does.
func (w *walker) proxyClient(addr string, pu *url.URL, tlsCfg *tls.Config, serverName string) *http.Client {
	c := w.httpClient(addr, tlsCfg, serverName)
	tr := c.Transport.(*http.Transport)
	tr.Proxy = http.ProxyURL(pu)
	if tr.TLSClientConfig != nil {
		// net/http names each TLS peer itself: the proxy (https://) by
		// its name, the host through the tunnel by its own.
		tr.TLSClientConfig.ServerName = ""
	}
	tr.OnProxyConnectResponse = func(_ context.Context, _ *url.URL, _ *http.Request, resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("the proxy answered CONNECT with %s", resp.Status)
		}
		return nil
	}
	return c
}

// proxySite adds the proxy of a plain-http hop to a site, so an answer the
// proxy gives in the registry's place (407, an error page) is the proxy's.
func proxySite(st site, ep *endpoint) site {
	if px := ep.rep.Proxy; px != nil && px.Via == "proxy" && ep.rep.Scheme == "http" {
		st.proxy = px.Proxy
	}
	return st
}

// proxyStatusFailure is the failure of an answer a forward proxy gave to
// a plain-http request instead of the host: 407 always, and any answer
// that carries the proxy's error header (squid's X-Squid-Error).
func (st site) proxyStatusFailure(resp *http.Response, what string) *Error {
	if st.proxy == "" {
		return nil
	}
	perr := resp.Header.Get("X-Squid-Error")
	detail := fmt.Sprintf("%s on %s answered %s through the proxy %s", what, st.host, resp.Status, st.proxy)
	if perr != "" {
		detail += " (" + perr + ": the proxy's own answer)"
	}
	switch c := resp.StatusCode; {
	case c == http.StatusProxyAuthRequired:
		if schemes := netcheck.AuthSchemes(resp.Header.Values("Proxy-Authenticate")); len(schemes) > 0 && !slices.ContainsFunc(schemes, func(s string) bool { return strings.EqualFold(s, "basic") }) {
			return st.fail(verdict.ProxyAuthScheme, nil, "%s: the proxy demands authentication. %s", detail, schemeAdvice(schemes))
		}
		return st.fail(verdict.ProxyAuthRequired, nil, "%s: the proxy demands authentication and the runtime's proxy URL has no, or wrong, user:password", detail)
	case perr != "" && c >= 500:
		return st.fail(verdict.ProxyUpstreamFailed, nil, "%s: the proxy cannot reach %s", detail, st.host)
	case perr != "" && c >= 400:
		return st.fail(verdict.ProxyDenied, nil, "%s: the proxy refuses the request", detail)
	}
	return nil
}

// viaProxySummary says, for a pull that worked, which hosts went through
// the proxy: "" when the runtime has no proxy settings.
func (w *walker) viaProxySummary() string {
	if w.proxySettings() == nil {
		return ""
	}
	var via []string
	proxies := map[string]bool{}
	for _, e := range w.rep.Endpoints {
		if e.Proxy != nil && e.Proxy.Via == "proxy" {
			via = append(via, e.Host)
			proxies[e.Proxy.Proxy] = true
		}
	}
	switch {
	case len(via) == 0:
		return "every host direct (the runtime's proxy settings send none of them through a proxy)"
	case len(via) == len(w.rep.Endpoints):
		return fmt.Sprintf("every host through the proxy %s", strings.Join(slices.Sorted(maps.Keys(proxies)), ", "))
	}
	return fmt.Sprintf("%s through the proxy %s, the rest direct", strings.Join(via, ", "), strings.Join(slices.Sorted(maps.Keys(proxies)), ", "))
}
