package pull

import (
	"context"
	"errors"
	"fmt"
	"github.com/pullpath/pullpath/internal/units"
	"hash"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

const quickBytes = 1024

// blobs is step 8: the config and every layer, downloaded whole and hashed
// while streaming (nothing touches the disk), Concurrency at a time. The
// first failure in manifest order is the verdict; blobs cut short by it are
// skipped, not failed.
func (s *session) blobs(parent context.Context, m *manifestDoc) *failure {
	list := append([]Descriptor{*m.Config}, m.Layers...)
	var total int64
	for _, d := range list {
		total += d.Size
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	type result struct {
		f     *failure
		n     int64
		host  string
		ms    float64
		done  bool
		abort bool
	}
	results := make([]result, len(list))
	var done atomic.Int64
	var blobsDone atomic.Int64
	if p := s.w.opts.Progress; p != nil {
		s.progress = func(n int64) {
			p(Progress{Done: n, Total: total, Blobs: len(list), BlobsDone: int(blobsDone.Load())})
		}
	}
	start := time.Now()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range s.w.opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 256<<10)
			for i := range jobs {
				t0 := time.Now()
				n, host, f := s.fetchBlob(ctx, list[i], buf, &done, total)
				if f != nil && parent.Err() == nil && ctx.Err() != nil && f.code != verdict.BlobStalled {
					results[i] = result{abort: true}
					continue
				}
				results[i] = result{f: f, n: n, host: host, ms: since(t0), done: true}
				if f != nil {
					cancel()
				}
				bd := blobsDone.Add(1)
				if p := s.w.opts.Progress; p != nil {
					p(Progress{Done: done.Load(), Total: total, Blobs: len(list), BlobsDone: int(bd)})
				}
			}
		}()
	}
	for i := range list {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	var first *failure
	var bytes int64
	for i, r := range results {
		name, what := "layer", fmt.Sprintf("layer %d/%d %s", i, len(m.Layers), short(list[i].Digest.String()))
		if i == 0 {
			name, what = "config", "config "+short(list[i].Digest.String())
		}
		switch {
		case r.f != nil && first == nil:
			first = r.f
			s.w.step(name, r.f.host, report.StepFail, r.f.code, r.f.summary, r.ms, r.n)
		case r.done && r.f == nil:
			bytes += r.n
			verb := "verified"
			if s.w.opts.Quick {
				verb = "first bytes read"
			}
			s.w.step(name, r.host, report.StepPass, "", fmt.Sprintf("%s, %s %s", what, units.Bytes(list[i].Size), verb), r.ms, r.n)
		default:
			reason := "not run: an earlier blob failed"
			if first != nil {
				reason = "not run: " + string(first.code) + " on an earlier blob"
			}
			s.w.step(name, "", report.StepSkip, "", what+": "+reason, 0, 0)
		}
	}
	if first == nil && parent.Err() != nil {
		first = fail(verdict.HTTPTimeout, verdict.StageBlob, verdict.RoleRegistry, s.reg.rep.Host, "the probe was stopped before every blob was downloaded: %v", parent.Err())
	}
	el := time.Since(start)
	t := &report.Transfer{Blobs: len(list), Layers: len(m.Layers), Bytes: bytes, Verified: !s.w.opts.Quick && first == nil, DurationMS: float64(el.Microseconds()) / 1000}
	if el > 0 {
		t.MBps = float64(bytes) / 1e6 / el.Seconds()
	}
	s.w.rep.Transfer = t
	if s.w.opts.Quick && first == nil {
		s.w.warn(verdict.QuickCheck, "", "only the first bytes of each blob were fetched: digests were not verified")
	}
	return first
}

// fetchBlob GETs one blob from the registry and follows redirects by hand,
// one hop at a time: each new host goes through resolve, connect and TLS
// as an endpoint of role blob, and never gets the registry's Authorization.
func (s *session) fetchBlob(ctx context.Context, d Descriptor, buf []byte, done *atomic.Int64, total int64) (int64, string, *failure) {
	u := s.url("/" + s.w.ref.Repository + "/blobs/" + d.Digest.String())
	ep := s.reg
	from := s.reg.rep.Host
	for hop := 0; ; hop++ {
		hdr := http.Header{}
		if s.w.opts.Quick {
			hdr.Set("Range", fmt.Sprintf("bytes=0-%d", quickBytes-1))
		}
		rctx, cancel := context.WithCancel(ctx)
		resp, err := s.do(rctx, ep, http.MethodGet, u, hdr)
		if err != nil {
			cancel()
			f := requestFailure(err, ep, "GET blob "+short(d.Digest.String()))
			return 0, ep.rep.Host, f
		}
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified:
			loc := resp.Header.Get("Location")
			resp.Body.Close()
			cancel()
			next, err := u.Parse(loc)
			if loc == "" || err != nil || (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" {
				return 0, ep.rep.Host, fail(verdict.RedirectInvalid, verdict.StageBlob, ep.rep.Role, ep.rep.Host, "%s redirected blob %s to an unusable Location %q", ep.rep.Host, short(d.Digest.String()), redact.URLString(loc))
			}
			s.w.sec.AddURL(next)
			if hop+1 > s.w.opts.MaxRedirects {
				return 0, ep.rep.Host, fail(verdict.RedirectLoop, verdict.StageBlob, ep.rep.Role, ep.rep.Host, "blob %s was still redirecting after %d redirects, containerd's limit (last to %s)", short(d.Digest.String()), s.w.opts.MaxRedirects, redact.URL(next))
			}
			if next.Scheme+"://"+next.Host != u.Scheme+"://"+u.Host {
				ep = s.w.reach(ctx, next, verdict.RoleBlob, "redirect from "+from, s.tlsFor(next))
				if ep.fail != nil {
					return 0, ep.rep.Host, ep.fail
				}
			}
			from = next.Host
			u = next
			continue
		case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent:
			n, f := s.readBlob(rctx, cancel, resp, ep, d, buf, done)
			cancel()
			return n, ep.rep.Host, f
		case resp.StatusCode == http.StatusNotFound:
			es, text := readErrorBody(resp.Body)
			resp.Body.Close()
			cancel()
			return 0, ep.rep.Host, fail(verdict.BlobNotFound, verdict.StageBlob, ep.rep.Role, ep.rep.Host, "%s has no blob %s (404): %s", ep.rep.Host, short(d.Digest.String()), firstMessage(es, text))
		case resp.StatusCode == http.StatusUnauthorized && ep == s.reg:
			resp.Body.Close()
			cancel()
			return 0, ep.rep.Host, fail(verdict.RegistryUnauthorized, verdict.StageBlob, ep.rep.Role, ep.rep.Host, "%s refused blob %s (401) after serving the manifest", ep.rep.Host, short(d.Digest.String()))
		default:
			f := statusFailure(resp, ep, "GET blob "+short(d.Digest.String()))
			resp.Body.Close()
			cancel()
			f.stage = verdict.StageBlob
			return 0, ep.rep.Host, f
		}
	}
}

// readBlob streams the body through the digest's hash, watching for a
// stall: StallTimeout without a byte cancels the request.
func (s *session) readBlob(ctx context.Context, cancel context.CancelFunc, resp *http.Response, ep *endpoint, d Descriptor, buf []byte, done *atomic.Int64) (int64, *failure) {
	defer resp.Body.Close()
	host := ep.rep.Host
	var stalled atomic.Bool
	timer := time.AfterFunc(s.w.opts.StallTimeout, func() { stalled.Store(true); cancel() })
	defer timer.Stop()

	var h hash.Hash
	if !s.w.opts.Quick {
		if !d.Digest.Algorithm().Available() {
			return 0, fail(verdict.ManifestInvalid, verdict.StageBlob, ep.rep.Role, host, "blob %s uses an unsupported digest algorithm", d.Digest)
		}
		h = d.Digest.Algorithm().Hash()
	}
	// A length the server announces that contradicts the descriptor is a
	// finding before any byte is read: containerd would fail the blob
	// either way (core/content/helpers.go: a short read, or a commit of
	// the wrong size).
	if !s.w.opts.Quick && resp.StatusCode == http.StatusOK && resp.ContentLength >= 0 && resp.ContentLength != d.Size {
		return 0, fail(verdict.BlobSizeMismatch, verdict.StageBlob, ep.rep.Role, host, "blob %s from %s announces Content-Length %d, the manifest says %d", short(d.Digest.String()), host, resp.ContentLength, d.Size)
	}
	limit := d.Size + 1
	if s.w.opts.Quick {
		limit = quickBytes
	}
	r := io.LimitReader(resp.Body, limit)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			timer.Reset(s.w.opts.StallTimeout)
			n += int64(k)
			done.Add(int64(k))
			if h != nil {
				h.Write(buf[:k])
			}
			if s.progress != nil {
				s.progress(done.Load())
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if stalled.Load() {
				return n, fail(verdict.BlobStalled, verdict.StageBlob, ep.rep.Role, host, "blob %s from %s stalled: no bytes for %s after %s of %s", short(d.Digest.String()), host, s.w.opts.StallTimeout, units.Bytes(n), units.Bytes(d.Size))
			}
			if truncated(err) {
				return n, fail(verdict.BlobSizeMismatch, verdict.StageBlob, ep.rep.Role, host, "blob %s from %s ended after %s of %s: the server closed the connection cleanly before the whole blob (truncated, not reset)", short(d.Digest.String()), host, units.Bytes(n), units.Bytes(d.Size))
			}
			f := requestFailure(err, ep, "reading blob "+short(d.Digest.String()))
			f.stage = verdict.StageBlob
			return n, f
		}
	}
	if s.w.opts.Quick {
		return n, nil
	}
	if n != d.Size {
		return n, fail(verdict.BlobSizeMismatch, verdict.StageBlob, ep.rep.Role, host, "blob %s from %s is %d bytes, the manifest says %d", short(d.Digest.String()), host, n, d.Size)
	}
	if got := fmt.Sprintf("%s:%x", d.Digest.Algorithm(), h.Sum(nil)); got != d.Digest.String() {
		return n, fail(verdict.BlobDigestMismatch, verdict.StageBlob, ep.rep.Role, host, "blob %s from %s hashes to %s: the bytes are not what the manifest names", short(d.Digest.String()), host, short(got))
	}
	return n, nil
}

// truncated says a body ended early on a clean close (TLS close_notify, or
// FIN), not a reset: the server or a proxy ended the response, the route
// is fine. containerd names it a short read (core/content/helpers.go).
func truncated(err error) bool {
	return (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) && !errors.Is(err, syscall.ECONNRESET)
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}
