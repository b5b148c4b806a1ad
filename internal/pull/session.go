package pull

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// session is the conversation with one registry host: its endpoint, the
// challenge it gave, and the Authorization value it accepts. The
// Authorization value goes to that host only, never to a redirect target.
type session struct {
	w      *walker
	reg    *endpoint
	base   *url.URL // scheme://host/v2
	role   verdict.Role
	tlsCfg *tls.Config
	header http.Header // extra headers from hosts.toml
	query  string      // ns=REGISTRY on a mirror's requests, as containerd adds it

	challenge    *Challenge
	auth         string // Authorization header value; never printed
	grantedEmpty bool   // the token service granted no access for the scope

	progress func(done int64) // set while blobs download, when Options.Progress is
	pace     *pace            // the blob phase's clock (pace.go)
}

func (s *session) url(path string) *url.URL {
	u := *s.base
	u.Path = strings.TrimSuffix(s.base.Path, "/") + path
	if path != "/" {
		u.RawQuery = s.query
	}
	return &u
}

// do sends one request on ep, recording the exchange (URL redacted) on the
// endpoint. Authorization is added only when ep is the registry host.
func (s *session) do(ctx context.Context, ep *endpoint, method string, u *url.URL, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for k, v := range s.header {
		req.Header[k] = v
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "pullpath/1 (containerd-compatible probe)")
	if ep == s.reg && s.auth != "" {
		req.Header.Set("Authorization", s.auth)
	}
	return s.send(ep, req)
}

// send sends req on ep and records the exchange (URL redacted) on the
// endpoint's evidence.
func (s *session) send(ep *endpoint, req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := ep.client.Do(req)
	ex := report.HTTPExchange{Method: req.Method, URL: redact.URL(req.URL), DurationMS: since(start)}
	if err != nil {
		ex.Error = s.w.sec.String(err.Error())
	} else {
		ex.Status = resp.StatusCode
	}
	s.w.mu.Lock()
	ep.rep.HTTP = append(ep.rep.HTTP, ex)
	s.w.mu.Unlock()
	return resp, err
}

// requestFailure classifies an error of an HTTP request on an endpoint that
// was already proven to connect.
func (st site) requestFailure(err error, what string) *Error {
	var ue *url.Error
	inner := err
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	result, code := netcheck.ClassifyDialError(inner)
	switch {
	case result == "timeout":
		code = verdict.HTTPTimeout
	case code == "" || code == verdict.ConnectError:
		if tc := netcheck.ClassifyTLSError(inner); tc != "" && tc != verdict.TLSHandshakeFailed {
			code = tc
		} else {
			code = verdict.HTTPBadResponse
		}
	}
	return st.fail(code, inner, "%s on %s failed: %s", what, st.host, redact.String(inner.Error()))
}

// statusFailure maps an unexpected HTTP status to a failure.
func (st site) statusFailure(resp *http.Response, what string) *Error {
	if f := st.proxyStatusFailure(resp, what); f != nil {
		return f
	}
	es, text := readErrorBody(resp.Body)
	msg := firstMessage(es, text)
	detail := fmt.Sprintf("%s on %s answered %s", what, st.host, resp.Status)
	if msg != "" {
		detail += ": " + redact.String(msg)
	}
	switch c := resp.StatusCode; {
	case c == http.StatusTooManyRequests || hasCode(es, "TOOMANYREQUESTS"):
		return st.fail(verdict.RateLimited, nil, "%s", detail)
	case c >= 500:
		return st.fail(verdict.RegistryServerError, nil, "%s", detail)
	case c == http.StatusForbidden && st.role == verdict.RoleBlob:
		return st.fail(verdict.BlobForbidden, nil, "%s", detail)
	case c == http.StatusForbidden:
		return st.fail(verdict.RegistryForbidden, nil, "%s", detail)
	}
	return st.fail(verdict.HTTPBadResponse, nil, "%s", detail)
}

// registry is the registry host (or mirror) as the site of steps 5 to 7.
func (s *session) registry() site {
	return site{stage: verdict.StageRegistry, role: s.role, host: s.reg.rep.Host}
}

// get sends GET u to the registry host and follows redirects one hop at a
// time, as containerd's registry client does (core/remotes/docker/
// resolver.go, request.do, on Go's client): the statuses Go follows (301,
// 302, 303, 307, 308), 9 redirects at most (MaxRedirects); each new host
// is reached as an endpoint of role blob (a host the registry hands out)
// and never gets the registry's Authorization (do sends it to the
// registry host only). req names the request ("GET blob sha256:..."), obj
// what it fetches ("blob sha256:...").
func (s *session) get(ctx context.Context, u *url.URL, hdr http.Header, stage verdict.Stage, req, obj string) (*http.Response, *endpoint, *Error) {
	ep := s.reg
	from := s.reg.rep.Host
	for hops := 1; ; hops++ {
		resp, err := s.do(ctx, ep, http.MethodGet, u, hdr)
		if err != nil {
			return nil, ep, ep.site().requestFailure(err, req)
		}
		if !followedRedirect(resp.StatusCode) {
			return resp, ep, nil
		}
		loc := resp.Header.Get("Location")
		resp.Body.Close()
		next, nextURL, f := s.redirect(ctx, ep, u, loc, from, hops, stage, obj)
		if f != nil {
			return nil, ep, f
		}
		ep, u, from = next, nextURL, nextURL.Host
	}
}

// redirect checks redirect number hops of obj to loc and reaches its host
// (resolve, connect, TLS as role blob) when it is new.
func (s *session) redirect(ctx context.Context, ep *endpoint, u *url.URL, loc, from string, hops int, stage verdict.Stage, obj string) (*endpoint, *url.URL, *Error) {
	at := ep.in(stage)
	next, err := u.Parse(loc)
	if loc == "" || err != nil || (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" {
		return nil, nil, at.fail(verdict.RedirectInvalid, err, "%s redirected %s to an unusable Location %q", ep.rep.Host, obj, redact.URLString(loc))
	}
	s.w.sec.AddURL(next)
	if hops > s.w.opts.MaxRedirects {
		return nil, nil, at.fail(verdict.RedirectLoop, nil, "%s was still redirecting after %d redirects, containerd's limit (last to %s)", obj, s.w.opts.MaxRedirects, redact.URL(next))
	}
	if next.Scheme+"://"+next.Host != u.Scheme+"://"+u.Host {
		ep = s.w.reach(ctx, next, verdict.RoleBlob, "redirect from "+from, s.tlsFor(next))
		if ep.err != nil {
			return nil, nil, ep.err
		}
	}
	return ep, next, nil
}
