package pull

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

const quickBytes = 1024

// blobResult is what became of one blob.
type blobResult struct {
	err   *Error
	n     int64
	host  string
	ms    float64
	done  bool
	abort bool
}

// blobs is step 8: the config and every layer, downloaded whole and hashed
// while streaming (nothing touches the disk), Concurrency at a time. The
// first failure in manifest order is the verdict; blobs cut short by it are
// skipped, not failed.
func (s *session) blobs(parent context.Context, m *manifestDoc) *Error {
	list := append([]Descriptor{*m.Config}, m.Layers...)
	start := time.Now()
	s.pace = newPace()
	results := s.download(parent, list)
	first, bytes := s.recordBlobs(list, len(m.Layers), results)
	s.recordBlobMTU()
	if first == nil && parent.Err() != nil {
		first = site{stage: verdict.StageBlob, role: verdict.RoleRegistry, host: s.reg.rep.Host}.fail(verdict.HTTPTimeout, parent.Err(), "the probe was stopped before every blob was downloaded: %v", parent.Err())
	}
	el := time.Since(start)
	t := &report.Transfer{Blobs: len(list), Layers: len(m.Layers), Bytes: bytes, Verified: !s.w.opts.Quick && first == nil, DurationMS: units.MS(el)}
	if el > 0 {
		t.MBps = float64(bytes) / 1e6 / el.Seconds()
	}
	var imageBytes int64
	for _, d := range list {
		imageBytes += d.Size
	}
	t.Pace = s.pace.report(imageBytes, bytes, el, s.w.opts.Quick)
	first = s.judgePace(t, first)
	s.w.rep.Transfer = t
	if s.w.opts.Quick && first == nil {
		s.w.warn(verdict.QuickCheck, "", "only the first bytes of each blob were fetched: digests were not verified")
	}
	return first
}

// download fetches list, Concurrency at a time; the first failure cancels
// the rest (those come back aborted).
func (s *session) download(parent context.Context, list []Descriptor) []blobResult {
	var total int64
	for _, d := range list {
		total += d.Size
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	results := make([]blobResult, len(list))
	var done, blobsDone atomic.Int64
	progress := s.w.opts.Progress
	if progress != nil {
		s.progress = func(n int64) {
			progress(Progress{Done: n, Total: total, Blobs: len(list), BlobsDone: int(blobsDone.Load())})
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range s.w.opts.Concurrency {
		wg.Go(func() {
			buf := make([]byte, 256<<10)
			for i := range jobs {
				t0 := time.Now()
				n, host, err := s.fetchBlob(ctx, list[i], buf, &done)
				if err != nil && parent.Err() == nil && ctx.Err() != nil && err.Code != verdict.BlobStalled && err.Code != verdict.PathMTUBlackHole {
					results[i] = blobResult{abort: true}
					continue
				}
				results[i] = blobResult{err: err, n: n, host: host, ms: since(t0), done: true}
				if err != nil {
					cancel()
				}
				bd := blobsDone.Add(1)
				if progress != nil {
					progress(Progress{Done: done.Load(), Total: total, Blobs: len(list), BlobsDone: int(bd)})
				}
			}
		})
	}
	for i := range list {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return results
}

// recordBlobs writes one step per blob, in manifest order, and returns the
// first failure and the bytes that arrived whole.
func (s *session) recordBlobs(list []Descriptor, layers int, results []blobResult) (*Error, int64) {
	var first *Error
	var bytes int64
	for i, r := range results {
		name, what := stepLayer, fmt.Sprintf("layer %d/%d %s", i, layers, short(list[i].Digest.String()))
		if i == 0 {
			name, what = stepConfig, "config "+short(list[i].Digest.String())
		}
		switch {
		case r.err != nil && first == nil:
			first = r.err
			s.w.step(name, r.err.Host, report.StepFail, r.err.Code, r.err.Summary, r.ms, r.n)
		case r.done && r.err == nil:
			bytes += r.n
			verb := "verified"
			if s.w.opts.Quick {
				verb = "first bytes read"
			}
			s.w.step(name, r.host, report.StepPass, "", fmt.Sprintf("%s, %s %s", what, units.Bytes(list[i].Size), verb), r.ms, r.n)
		default:
			reason := "not run: an earlier blob failed"
			if first != nil {
				reason = "not run: " + string(first.Code) + " on an earlier blob"
			}
			s.w.step(name, "", report.StepSkip, "", what+": "+reason, 0, 0)
		}
	}
	return first, bytes
}

// fetchBlob GETs one blob from the registry, its redirects followed by
// get, and reads it.
func (s *session) fetchBlob(ctx context.Context, d Descriptor, buf []byte, done *atomic.Int64) (int64, string, *Error) {
	u := s.url("/" + s.w.ref.Repository + "/blobs/" + d.Digest.String())
	hdr := http.Header{}
	if s.w.opts.Quick {
		hdr.Set("Range", fmt.Sprintf("bytes=0-%d", quickBytes-1))
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	obj := "blob " + short(d.Digest.String())
	t0 := time.Now()
	resp, ep, f := s.get(rctx, u, hdr, verdict.StageBlob, "GET "+obj, obj)
	if f != nil {
		return 0, f.Host, f
	}
	s.pace.requested(ep.rep.Host, t0)
	n, f := s.blobAnswer(cancel, resp, ep, d, buf, done)
	if f != nil && f.Code == verdict.BlobStalled {
		// bytes stopped after TCP connected: is it the path MTU?
		f = s.mtuAfterBlobStall(ctx, ep, resp.Request, n, d, f)
	}
	return n, ep.rep.Host, f
}

// blobAnswer reads a blob answer that is not a redirect.
func (s *session) blobAnswer(cancel context.CancelFunc, resp *http.Response, ep *endpoint, d Descriptor, buf []byte, done *atomic.Int64) (int64, *Error) {
	at := ep.in(verdict.StageBlob)
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent:
		return s.readBlob(cancel, resp, ep, d, buf, done)
	case resp.StatusCode == http.StatusNotFound:
		defer resp.Body.Close()
		es, text := readErrorBody(resp.Body)
		return 0, at.fail(verdict.BlobNotFound, nil, "%s has no blob %s (404): %s", ep.rep.Host, short(d.Digest.String()), firstMessage(es, text))
	case resp.StatusCode == http.StatusUnauthorized && ep == s.reg:
		resp.Body.Close()
		return 0, at.fail(verdict.RegistryUnauthorized, nil, "%s refused blob %s (401) after serving the manifest", ep.rep.Host, short(d.Digest.String()))
	}
	defer resp.Body.Close()
	return 0, at.statusFailure(resp, "GET blob "+short(d.Digest.String()))
}

// readBlob reads one blob answer in three phases: what the answer says
// before any byte (the digest's algorithm, the announced length), the
// body streamed through the hash, and the bytes checked against the
// descriptor.
func (s *session) readBlob(cancel context.CancelFunc, resp *http.Response, ep *endpoint, d Descriptor, buf []byte, done *atomic.Int64) (int64, *Error) {
	defer resp.Body.Close()
	at := ep.in(verdict.StageBlob)
	h, f := s.blobStart(resp, at, d)
	if f != nil {
		return 0, f
	}
	n, f := s.streamBlob(cancel, resp.Body, at, d, h, buf, done)
	if f != nil || s.w.opts.Quick {
		return n, f
	}
	if n != d.Size {
		return n, at.fail(verdict.BlobSizeMismatch, nil, "blob %s from %s is %d bytes, the manifest says %d", short(d.Digest.String()), at.host, n, d.Size)
	}
	if got := fmt.Sprintf("%s:%x", d.Digest.Algorithm(), h.Sum(nil)); got != d.Digest.String() {
		return n, at.fail(verdict.BlobDigestMismatch, nil, "blob %s from %s hashes to %s: the bytes are not what the manifest names", short(d.Digest.String()), at.host, short(got))
	}
	return n, nil
}

// blobStart checks what an answer says before its first byte and returns
// the hash to verify it with (nil for --quick).
func (s *session) blobStart(resp *http.Response, at site, d Descriptor) (hash.Hash, *Error) {
	if s.w.opts.Quick {
		return nil, nil
	}
	if !d.Digest.Algorithm().Available() {
		return nil, at.fail(verdict.ManifestInvalid, nil, "blob %s uses an unsupported digest algorithm", d.Digest)
	}
	// A length the server announces that contradicts the descriptor is a
	// finding before any byte is read: containerd would fail the blob
	// either way (core/content/helpers.go: a short read, or a commit of
	// the wrong size).
	if resp.StatusCode == http.StatusOK && resp.ContentLength >= 0 && resp.ContentLength != d.Size {
		return nil, at.fail(verdict.BlobSizeMismatch, nil, "blob %s from %s announces Content-Length %d, the manifest says %d", short(d.Digest.String()), at.host, resp.ContentLength, d.Size)
	}
	return d.Digest.Algorithm().Hash(), nil
}

// streamBlob reads body through h, watching for a stall: StallTimeout
// without a byte cancels the request.
func (s *session) streamBlob(cancel context.CancelFunc, body io.Reader, at site, d Descriptor, h hash.Hash, buf []byte, done *atomic.Int64) (int64, *Error) {
	var stalled atomic.Bool
	timer := time.AfterFunc(s.w.opts.StallTimeout, func() { stalled.Store(true); cancel() })
	defer timer.Stop()
	limit := d.Size + 1
	if s.w.opts.Quick {
		limit = quickBytes
	}
	r := io.LimitReader(body, limit)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			timer.Reset(s.w.opts.StallTimeout)
			s.pace.arrived(at.host, k)
			n += int64(k)
			done.Add(int64(k))
			if h != nil {
				h.Write(buf[:k])
			}
			if s.progress != nil {
				s.progress(done.Load())
			}
		}
		switch {
		case err == io.EOF:
			return n, nil
		case err == nil:
		case stalled.Load():
			return n, at.fail(verdict.BlobStalled, err, "blob %s from %s stalled: no bytes for %s after %s of %s", short(d.Digest.String()), at.host, s.w.opts.StallTimeout, units.Bytes(n), units.Bytes(d.Size))
		case truncated(err):
			return n, at.fail(verdict.BlobSizeMismatch, err, "blob %s from %s ended after %s of %s: the server closed the connection cleanly before the whole blob (truncated, not reset)", short(d.Digest.String()), at.host, units.Bytes(n), units.Bytes(d.Size))
		default:
			return n, at.requestFailure(err, "reading blob "+short(d.Digest.String()))
		}
	}
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
