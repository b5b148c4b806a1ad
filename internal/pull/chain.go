package pull

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// hostTry is one host of the chain while the walk goes through it.
type hostTry struct {
	h   runtimecfg.RegistryHost
	row *report.ChainHost
	s   *session // nil until reached
	// down is a failure that keeps every request from this host (DNS,
	// connect, TLS, a stall): containerd meets it again on every request.
	down       *Error
	opened     bool
	registryOK bool
	failedReqs int // requests it answered with a failure (404, 5xx, ...)
	served     bool
}

// resolved is what containerd's resolver got for the tag: the digest and
// media type of the root manifest, and the host that answered.
type resolved struct {
	by        *hostTry
	digest    string
	mediaType string
}

// walkChain walks a registry whose hosts.toml names mirrors the way
// containerd's resolver and fetcher go through them (core/remotes/docker
// resolver.go Resolve, fetcher.go Fetch; the same in 1.6 and 2.x):
//
//  1. resolve: the hosts that may pull (and resolve, for a tag), in order,
//     each sent the manifest HEAD with ns=REGISTRY when it is not the
//     registry itself; an error or a status over 399 moves on to the next
//     host, and so does a 404; a 2xx resolves the digest (a GET on the
//     same host when the HEAD gave no digest or length);
//  2. the manifest by digest: every host in order, whatever its
//     capabilities; the first that answers 2xx serves it;
//  3. the config and layers: the same, for every blob.
//
// A host that accepts and never answers holds containerd forever (no
// response timeout): the walk marks it stalled, goes on to learn what the
// hosts after it would have done, and the verdict is the stall.
func (w *walker) walkChain(ctx context.Context, hosts []runtimecfg.RegistryHost) error {
	c := w.newChain(hosts)
	tries := make([]*hostTry, len(hosts))
	for i, h := range hosts {
		tries[i] = &hostTry{h: h, row: &c.Hosts[i]}
	}
	res, err := w.chainResolve(ctx, tries)
	var f *Error
	switch {
	case err == nil:
		f = w.chainFetch(ctx, tries, res)
	case !errors.As(err, &f):
		return err
	}
	for _, t := range tries {
		w.registryOK = w.registryOK || t.registryOK
	}
	w.judgeChain(ctx, c, tries, res, f)
	if f == nil {
		f = w.chainVerdict(c, tries)
	}
	if f != nil {
		return f
	}
	return nil
}

// newChain builds the chain's rows from the runtime's hosts.
func (w *walker) newChain(hosts []runtimecfg.RegistryHost) *report.HostChain {
	byDigest := w.ref.Digest != ""
	resolves := map[string]bool{}
	for _, h := range runtimecfg.ResolveHosts(hosts, byDigest) {
		resolves[h.URL()] = true
	}
	fetches := len(runtimecfg.FetchHosts(hosts)) > 0
	c := &report.HostChain{Hosts: make([]report.ChainHost, 0, len(hosts))}
	for _, h := range hosts {
		if c.File == "" && strings.HasSuffix(h.Source, "hosts.toml") {
			c.File = h.Source
		}
		c.Hosts = append(c.Hosts, report.ChainHost{
			Host: h.Host, URL: h.URL(), Role: hostRole(h), Server: h.Server,
			Capabilities: append([]string{}, h.Capabilities...), SkipVerify: h.SkipVerify, OverridePath: h.OverridePath,
			Namespace: runtimecfg.NamespaceQuery(h, w.ref), Resolves: resolves[h.URL()], Fetches: fetches,
			Source: h.Source, Steps: []report.ChainStep{}, Outcome: report.ChainNotTried,
		})
	}
	w.rep.Chain = c
	return c
}

// chainStep records one step on a host's row.
func (t *hostTry) step(name string, st report.StepStatus, httpStatus int, code verdict.Code, detail string, ms float64) {
	t.row.Steps = append(t.row.Steps, report.ChainStep{Name: name, Status: st, HTTPStatus: httpStatus, Code: code, Detail: detail, DurationMS: ms})
}

// open reaches one host (resolve, connect, TLS), asks for /v2/ and the
// token, once for the walk: what containerd does on its first request to
// the host. A failure here is the host's for every request.
func (w *walker) open(ctx context.Context, t *hostTry) *Error {
	if t.opened {
		return t.down
	}
	t.opened = true
	tlsCfg, err := t.h.TLSConfig(w.opts.ExtraCAs)
	if err != nil {
		t.down = site{stage: verdict.StageRegistry, role: hostRole(t.h), host: t.h.Host}.fail(verdict.TLSHandshakeFailed, err, "%s: the runtime cannot load its TLS settings: %v", t.h.Host, err)
		t.step("tls", report.StepFail, 0, t.down.Code, t.down.Summary, 0)
		return t.down
	}
	if t.h.Scheme == "http" {
		tlsCfg = nil
	}
	if f := w.loadCredentials(ctx, t.h); f != nil {
		t.down = f
		return f
	}
	s, f := w.connectRegistry(ctx, t.h, tlsCfg)
	if s != nil {
		s.query = runtimecfg.NamespaceQuery(t.h, w.ref)
	}
	w.chainNetSteps(t)
	if f != nil {
		t.down = f
		return f
	}
	start := time.Now()
	if f := s.ping(ctx); f != nil {
		t.step("ping", report.StepFail, 0, f.Code, f.Summary, since(start))
		t.down = f
		return f
	}
	t.registryOK = true
	if f := s.authorize(ctx); f != nil {
		t.step("token", report.StepFail, 0, f.Code, f.Summary, since(start))
		t.down = f
		return f
	}
	t.s = s
	return nil
}

// chainNetSteps copies the host's resolve, connect and TLS evidence from
// its endpoint onto its row. Through the runtime's proxy the node resolves
// and connects to the proxy only, then asks it to CONNECT: those are the
// host's steps, and its row says via which proxy.
func (w *walker) chainNetSteps(t *hostTry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ep := range w.rep.Endpoints {
		if ep.Host != hostname(t.h.Host) || ep.Role != hostRole(t.h) {
			continue
		}
		res, addrs := ep.Resolve, ep.Addresses
		px := ep.Proxy
		if px != nil {
			t.row.Via = px.Via
			if px.Via == "proxy" {
				t.row.Via = "proxy " + px.Proxy
				res, addrs = px.Resolve, px.Addresses
			}
		}
		if res != nil {
			st := report.StepPass
			if res.Code != "" {
				st = report.StepFail
			}
			t.step("resolve", st, 0, res.Code, resolveDetail(res), res.DurationMS)
			if res.Code != "" {
				return
			}
		}
		if len(addrs) > 0 {
			st, code, ms := report.StepFail, verdict.Code(""), 0.0
			for _, a := range addrs {
				ms = max(ms, a.DurationMS)
				if a.Result == "ok" {
					st = report.StepPass
				} else if code == "" {
					code = a.Code
				}
			}
			if st == report.StepPass {
				code = ""
			}
			t.step("connect", st, 0, code, connectDetail(addrs), ms)
			if st == report.StepFail {
				return
			}
		}
		if px != nil && px.Via == "proxy" && px.Connect != nil {
			c := px.Connect
			st := report.StepPass
			if c.Error != "" || c.Status/100 != 2 {
				st = report.StepFail
			}
			t.step("proxy-connect", st, c.Status, "", firstNonEmpty(c.Error, firstNonEmpty(c.ProxyError, c.Reason)), c.DurationMS)
			if st == report.StepFail {
				return
			}
		}
		if ep.TLS != nil {
			st := report.StepPass
			if ep.TLS.Code != "" {
				st = report.StepFail
			}
			t.step("tls", st, 0, ep.TLS.Code, firstNonEmpty(ep.TLS.Error, tlsDetail(ep.TLS)), ep.TLS.DurationMS)
		}
		return
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// hostname is host without its port.
func hostname(hostport string) string {
	if i := strings.LastIndexByte(hostport, ':'); i > 0 && !strings.Contains(hostport[i:], "]") {
		return hostport[:i]
	}
	return hostport
}

// chainResolve is step 1: the manifest HEAD on each resolve host in
// order. The error is the chain's failure when no host resolved, or bad
// input.
func (w *walker) chainResolve(ctx context.Context, tries []*hostTry) (*resolved, error) {
	var order []*hostTry
	for _, t := range tries {
		if t.row.Resolves {
			order = append(order, t)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no host in the runtime's registry config for %s may pull and resolve", w.ref.Registry)
	}
	var last *Error
	for _, t := range order {
		if f := w.open(ctx, t); f != nil {
			last = f
			continue
		}
		r, f, through := w.head(ctx, t)
		if f == nil {
			t.served = true
			w.rep.Chain.ServedBy.Resolve = t.h.Host
			return r, nil
		}
		last = f
		t.failedReqs++
		if !through {
			return nil, f
		}
	}
	return nil, last
}

// head sends the manifest HEAD containerd resolves a tag with (Accept as
// its resolver sends it, ns= on a mirror) and judges the answer as
// containerd does. through says containerd moves on to the next host.
func (w *walker) head(ctx context.Context, t *hostTry) (*resolved, *Error, bool) {
	s := t.s
	reg := s.registry()
	ref := w.ref
	u := s.url("/" + ref.Repository + "/manifests/" + ref.Reference())
	start := time.Now()
	resp, err := s.do(ctx, s.reg, http.MethodHead, u, http.Header{"Accept": {acceptManifests}})
	if err != nil {
		f := reg.requestFailure(err, "HEAD manifest")
		t.step("head", report.StepFail, 0, f.Code, f.Summary, since(start))
		if f.Code == verdict.HTTPTimeout {
			t.down = f
		}
		return nil, f, true
	}
	resp.Body.Close()
	ms := since(start)
	mt, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	mt = strings.TrimSpace(mt)
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		if t.h.Mirror && strings.HasPrefix(mt, "text/html") {
			f := reg.fail(verdict.MirrorNotRegistry, nil, "the mirror %s answered the manifest HEAD of %s with %d and an HTML page (Content-Type %s): containerd takes a 2xx as the answer, does not try the next host, and fails on the page", t.h.Host, ref.String(), c, mt)
			t.step("head", report.StepFail, c, f.Code, f.Summary, ms)
			return nil, f, false
		}
		dg := resp.Header.Get("Docker-Content-Digest")
		if ref.Digest != "" {
			dg = ref.Digest
		}
		t.step("head", report.StepPass, c, "", fmt.Sprintf("%s %s", firstNonEmpty(mt, "no Content-Type"), firstNonEmpty(dg, "no Docker-Content-Digest")), ms)
		if dg == "" || resp.ContentLength < 0 {
			// containerd GETs the manifest on the same host and hashes it
			// (a failure of that GET is the pull's, no other host tried).
			gs := time.Now()
			b, gmt, f := s.fetchManifest(ctx, ref.Reference(), ref.Digest, acceptManifests)
			if f != nil {
				t.step("get", report.StepFail, 0, f.Code, f.Summary, since(gs))
				return nil, f, false
			}
			dg, mt = digestOf(b), gmt
			t.step("get", report.StepPass, http.StatusOK, "", "no digest in the HEAD: "+dg+" from the body", since(gs))
		}
		return &resolved{by: t, digest: dg, mediaType: mt}, nil, true
	case c == http.StatusNotFound:
		f := reg.fail(verdict.ManifestNotFound, nil, "%s answered the manifest HEAD of %s with 404", t.h.Host, ref.String())
		t.step("head", report.StepFail, c, f.Code, "404: containerd tries the next host", ms)
		return nil, f, true
	case c == http.StatusTooManyRequests && t.h.Mirror:
		f := reg.fail(verdict.MirrorRateLimited, nil, "the mirror %s answered the manifest HEAD of %s with 429 (too many requests)", t.h.Host, ref.String())
		t.step("head", report.StepFail, c, f.Code, "429: containerd retries up to 5 times, then tries the next host", ms)
		w.warn(verdict.MirrorRateLimited, t.h.Host, f.Summary+": containerd retries it up to 5 times at once, then falls through to the next host")
		return nil, f, true
	case c > 399:
		f := s.manifestStatus(resp)
		t.step("head", report.StepFail, c, f.Code, f.Summary, ms)
		return nil, f, true
	}
	f := reg.fail(verdict.HTTPBadResponse, nil, "%s answered the manifest HEAD of %s with %s: containerd fails the pull (\"unexpected status code\") without trying the next host", t.h.Host, ref.String(), resp.Status)
	t.step("head", report.StepFail, resp.StatusCode, f.Code, f.Summary, ms)
	return nil, f, false
}

// chainFetch is steps 2 and 3: the manifest by digest, then every blob,
// each from the first host in order that serves it.
func (w *walker) chainFetch(ctx context.Context, tries []*hostTry, res *resolved) *Error {
	accept := acceptEntry(res.mediaType)
	var m *manifestDoc
	var first *Error
	for _, t := range tries {
		if !t.row.Fetches || w.open(ctx, t) != nil {
			continue
		}
		if err := w.loadCredentials(ctx, t.h); err != nil {
			continue
		}
		start := time.Now()
		doc, f := t.s.manifestAt(ctx, res.digest, res.digest, accept)
		if f != nil {
			t.step("get", report.StepFail, 0, f.Code, f.Summary, since(start))
			t.failedReqs++
			first = firstErr(first, f)
			continue
		}
		t.step("get", report.StepPass, http.StatusOK, "", "manifest "+short(res.digest), since(start))
		t.served = true
		w.rep.Chain.ServedBy.Manifest = t.h.Host
		m = doc
		break
	}
	if m == nil {
		return firstErr(first, res.by.s.registry().fail(verdict.ManifestNotFound, nil, "no host of the chain serves the manifest %s", res.digest))
	}
	first = nil
	for _, t := range tries {
		if !t.row.Fetches || w.open(ctx, t) != nil {
			continue
		}
		start := time.Now()
		f := t.s.blobs(ctx, m)
		if f != nil {
			t.step("blobs", report.StepFail, 0, f.Code, f.Summary, since(start))
			t.failedReqs++
			first = firstErr(first, f)
			continue
		}
		detail := "config and layers"
		if tr := w.rep.Transfer; tr != nil {
			detail = fmt.Sprintf("%d blobs", tr.Blobs)
		}
		t.step("blobs", report.StepPass, http.StatusOK, "", detail, since(start))
		t.served = true
		w.rep.Chain.ServedBy.Blobs = t.h.Host
		return nil
	}
	return first
}

func firstErr(a, b *Error) *Error {
	if a != nil {
		return a
	}
	return b
}

func digestOf(b []byte) string { return digest.FromBytes(b).String() }
