package netcheck

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Tunnel is what net/http's Transport does before an https:// request
// through a proxy (transport.go dialConn): connect to the proxy (TLS to it
// when its URL is https://), send CONNECT HOST:PORT with Proxy-Authorization
// when the proxy URL has user info, read the answer; anything but 200
// fails the request with the status text alone ("Forbidden", "Proxy
// Authentication Required"), and a failed dial with "proxyconnect tcp: "
// before the dial error.
type Tunnel struct {
	Conn net.Conn // open on success: TLS to the target runs through it
	Info *report.ProxyConnect
	Code verdict.Code // "" on success
	Err  error        // the underlying error, for errors.Is/As
}

// maxConnectHeader bounds the proxy's answer to CONNECT (net/http reads at
// most MaxResponseHeaderBytes, 1 MiB by default).
const maxConnectHeader = 1 << 20

// OpenTunnel connects to the proxy at proxyAddr (ip:port) and asks it for
// a tunnel to target (host:port). wait bounds the proxy's answer (net/http
// waits up to a minute); the TCP connect has ConnectTimeout and a TLS
// handshake with an https:// proxy TLSTimeout. proxyTLS is the TLS
// configuration toward an https:// proxy (net/http uses the transport's,
// the registry host's).
func (c *Checker) OpenTunnel(ctx context.Context, proxyAddr string, proxy *url.URL, target string, proxyTLS *tls.Config, wait time.Duration) Tunnel {
	t := Tunnel{Info: &report.ProxyConnect{Target: target}}
	start := time.Now()
	defer func() { t.Info.DurationMS = units.MS(time.Since(start)) }()
	fail := func(code verdict.Code, err error, msg string) Tunnel {
		t.Code, t.Err, t.Info.Error = code, err, msg
		if t.Conn != nil {
			t.Conn.Close()
			t.Conn = nil
		}
		return t
	}

	d := net.Dialer{Timeout: c.cfg.ConnectTimeout}
	dctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
	conn, err := d.DialContext(dctx, "tcp", proxyAddr)
	cancel()
	if err != nil {
		return fail(dialCode(err), err, "proxyconnect tcp: "+err.Error())
	}
	t.Conn = conn
	if proxy.Scheme == "https" {
		cfg := &tls.Config{}
		if proxyTLS != nil {
			cfg = proxyTLS.Clone()
		}
		cfg.ServerName = proxy.Hostname()
		tc := tls.Client(conn, cfg)
		hctx, cancel := context.WithTimeout(ctx, c.cfg.TLSTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			return fail(verdict.ProxyConnectError, err, "proxyconnect tcp: TLS with the https:// proxy "+proxy.Host+": "+err.Error())
		}
		t.Conn = tc
	}

	req := &http.Request{
		Method: http.MethodConnect,
		URL:    &url.URL{Opaque: target},
		Host:   target,
		Header: http.Header{},
	}
	if u := proxy.User; u != nil {
		pw, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
		t.Info.Authenticated = true
	}
	if wait <= 0 {
		wait = time.Minute
	}
	deadline := time.Now().Add(wait)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	t.Conn.SetDeadline(deadline)
	if err := req.Write(t.Conn); err != nil {
		return fail(ioCode(err), err, "CONNECT "+target+": writing to the proxy: "+err.Error())
	}
	br := bufio.NewReader(io.LimitReader(t.Conn, maxConnectHeader))
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		if isTimeout(err) {
			return fail(verdict.ProxyTimeout, err, fmt.Sprintf("CONNECT %s: the proxy accepted the connection and did not answer within %s", target, wait.Round(time.Second)))
		}
		return fail(ioCode(err), err, "CONNECT "+target+": reading the proxy's answer: "+err.Error())
	}
	resp.Body.Close()
	t.Conn.SetDeadline(time.Time{})
	t.Info.Status = resp.StatusCode
	_, t.Info.Reason, _ = strings.Cut(resp.Status, " ")
	t.Info.ProxyError = resp.Header.Get("X-Squid-Error")
	t.Info.Server = resp.Header.Get("Server")
	if v := resp.Header.Get("Via"); t.Info.Server == "" && v != "" {
		t.Info.Server = v
	}
	if resp.StatusCode == http.StatusOK {
		return t
	}
	err = errors.New(t.Info.Reason) // what net/http returns, the status text alone
	// 407 is the proxy's authentication; another 4xx its refusal (an
	// ACL); a 5xx says the proxy could not do it: reach, resolve or
	// forward to the destination (squid: 503 ERR_CONNECT_FAIL, 503
	// ERR_DNS_FAIL, 500 ERR_CANNOT_FORWARD; 502 and 504 from others).
	code := verdict.ProxyDenied
	switch c := resp.StatusCode; {
	case c == http.StatusProxyAuthRequired:
		code = verdict.ProxyAuthRequired
		t.Info.AuthSchemes = AuthSchemes(resp.Header.Values("Proxy-Authenticate"))
		if len(t.Info.AuthSchemes) > 0 && !slices.ContainsFunc(t.Info.AuthSchemes, isBasic) {
			code = verdict.ProxyAuthScheme
		}
	case c >= 500:
		code = verdict.ProxyUpstreamFailed
	}
	msg := fmt.Sprintf("CONNECT %s: the proxy answered %s", target, resp.Status)
	if t.Info.ProxyError != "" {
		msg += " (" + t.Info.ProxyError + ")"
	}
	if pa := resp.Header.Values("Proxy-Authenticate"); len(pa) > 0 {
		msg += ", Proxy-Authenticate: " + strings.Join(pa, "; ")
	}
	return fail(code, err, msg)
}

// dialCode is the code of a failed connect to the proxy.
func dialCode(err error) verdict.Code {
	switch result, _ := ClassifyDialError(err); result {
	case "refused":
		return verdict.ProxyRefused
	case "timeout":
		return verdict.ProxyTimeout
	case "unreachable":
		return verdict.ProxyUnreachable
	}
	return verdict.ProxyConnectError
}

// ioCode is the code of a failed exchange on an open connection to the
// proxy.
func ioCode(err error) verdict.Code {
	if isTimeout(err) {
		return verdict.ProxyTimeout
	}
	return verdict.ProxyConnectError
}

// AuthSchemes lists the schemes of Proxy-Authenticate (or
// WWW-Authenticate) values, in order and once each: one header may carry
// several challenges separated by commas ("Negotiate, NTLM", "Basic
// realm=\"a,b\", NTLM"), each a scheme token followed by parameters or
// a token68.
func AuthSchemes(values []string) []string {
	var out []string
	for _, v := range values {
		for _, part := range splitOutsideQuotes(v, ',') {
			word, _, _ := strings.Cut(strings.TrimSpace(part), " ")
			if word == "" || strings.Contains(word, "=") {
				continue // a parameter of the challenge before (realm="x")
			}
			if !slices.ContainsFunc(out, func(s string) bool { return strings.EqualFold(s, word) }) {
				out = append(out, word)
			}
		}
	}
	return out
}

// isBasic says whether scheme is Basic, the only proxy scheme Go's
// net/http answers (from the proxy URL's user:password).
func isBasic(scheme string) bool { return strings.EqualFold(scheme, "basic") }

// splitOutsideQuotes splits s at sep where sep is not inside a quoted
// string.
func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case c == '\\' && quoted:
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
