package labsvc

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// BlobFaults makes the blob host misbehave. Digest fields take a blob
// digest ("sha256:HEX") or "*" for every blob; empty means off.
type BlobFaults struct {
	// CorruptDigest: serve the blob with one byte flipped (digest mismatch).
	CorruptDigest string `json:"corruptDigest,omitempty"`
	// Truncate: announce the full Content-Length, send half, then cut the
	// connection.
	Truncate string `json:"truncate,omitempty"`
	// Trickle: send TrickleBytes bytes (default 16), then stall until the
	// client gives up or the host closes.
	Trickle      string `json:"trickle,omitempty"`
	TrickleBytes int    `json:"trickleBytes,omitempty"`
	// RedirectLoop: every blob request answers 307 to itself.
	RedirectLoop bool `json:"redirectLoop,omitempty"`
	// Forbidden: every blob request answers 403 with an S3 AccessDenied body.
	Forbidden bool `json:"forbidden,omitempty"`
	// ExtraRedirectHost: a base URL ("https://blob2.lab.test:PORT"); a blob
	// request answers 307 to the same path there (a second hop).
	ExtraRedirectHost string `json:"extraRedirectHost,omitempty"`
	// Pause: send half the blob, send nothing for PauseMS milliseconds
	// (default 8000), then the rest: a transfer that stops and goes on,
	// what a progress timeout measures.
	Pause   string `json:"pause,omitempty"`
	PauseMS int    `json:"pauseMs,omitempty"`
}

// BlobHostConfig configures the blob host (the registry's redirect target).
type BlobHostConfig struct {
	Addr string `json:"addr"`
	// RootDir is the registry's storage root; the host serves
	// RootDir/docker/registry/v2/blobs/sha256/XX/HEX/data.
	RootDir  string           `json:"rootDir"`
	Cert     *tls.Certificate `json:"-"`
	CertFile string           `json:"certFile,omitempty"`
	KeyFile  string           `json:"keyFile,omitempty"`
	Faults   BlobFaults       `json:"faults"`
}

// BlobRequest is one request the blob host received.
type BlobRequest struct {
	Time             time.Time `json:"time"`
	Method           string    `json:"method"`
	Path             string    `json:"path"`
	Host             string    `json:"host"`
	HasAuthorization bool      `json:"hasAuthorization"`
	Range            string    `json:"range,omitempty"`
	Status           int       `json:"status"`
}

// BlobHost is a running blob host.
type BlobHost struct {
	svc  *httpService
	cfg  BlobHostConfig
	mu   sync.Mutex
	reqs []BlobRequest
	stop chan struct{}
	once sync.Once
}

// maxRecorded bounds each service's request log.
const maxRecorded = 100000

var blobPathRE = regexp.MustCompile(`^/docker/registry/v2/blobs/sha256/([0-9a-f]{2})/([0-9a-f]{64})/data$`)

// StartBlobHost serves blobs from cfg.RootDir on cfg.Addr until Close or
// ctx ends.
func StartBlobHost(ctx context.Context, cfg BlobHostConfig) (*BlobHost, error) {
	if cfg.RootDir == "" {
		return nil, fmt.Errorf("blob host: storage root directory is empty")
	}
	if st, err := os.Stat(cfg.RootDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("blob host: storage root %q is not a directory", cfg.RootDir)
	}
	if h := cfg.Faults.ExtraRedirectHost; h != "" {
		u, err := url.Parse(h)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("blob host: ExtraRedirectHost %q, want http(s)://HOST[:PORT]", h)
		}
	}
	tlsConf, err := loadTLS(cfg.Cert, cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("blob host: %w", err)
	}
	b := &BlobHost{cfg: cfg, stop: make(chan struct{})}
	svc, err := startHTTP(ctx, "blob host", cfg.Addr, tlsConf, http.HandlerFunc(b.serve))
	if err != nil {
		return nil, err
	}
	b.svc = svc
	return b, nil
}

// Addr is the real listening address, IP:PORT.
func (b *BlobHost) Addr() string { return b.svc.Addr() }

// URL is scheme://IP:PORT of the host.
func (b *BlobHost) URL() string { return b.svc.scheme + "://" + b.svc.Addr() }

// Requests returns a copy of the requests received so far (the first
// maxRecorded of them). A request still being answered has Status 0.
func (b *BlobHost) Requests() []BlobRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]BlobRequest(nil), b.reqs...)
}

// Close stops the host, releasing stalled (trickle) responses.
func (b *BlobHost) Close() error {
	b.once.Do(func() { close(b.stop) })
	return b.svc.Close()
}

func matchFault(field, dg string) bool {
	return field != "" && (field == "*" || field == dg)
}

// statusRecorder remembers the status code written.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (b *BlobHost) serve(w http.ResponseWriter, r *http.Request) {
	// The request is recorded before it is answered, so a client that has
	// read the whole answer always finds it in Requests; its status is
	// filled in once the handler returns.
	rec := &statusRecorder{ResponseWriter: w}
	b.mu.Lock()
	i := -1
	if len(b.reqs) < maxRecorded {
		i = len(b.reqs)
		b.reqs = append(b.reqs, BlobRequest{
			Time:             time.Now(),
			Method:           r.Method,
			Path:             r.URL.Path,
			Host:             r.Host,
			HasAuthorization: r.Header.Get("Authorization") != "",
			Range:            r.Header.Get("Range"),
		})
	}
	b.mu.Unlock()
	defer func() {
		if i < 0 {
			return
		}
		b.mu.Lock()
		b.reqs[i].Status = rec.status
		b.mu.Unlock()
	}()
	b.handle(rec, r)
}

func (b *BlobHost) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	m := blobPathRE.FindStringSubmatch(r.URL.Path)
	if m == nil || m[1] != m[2][:2] {
		writeS3Error(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
		return
	}
	dg := "sha256:" + m[2]
	f := b.cfg.Faults
	switch {
	case f.Forbidden:
		writeS3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied")
		return
	case f.RedirectLoop:
		http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
		return
	case f.ExtraRedirectHost != "":
		target := strings.TrimSuffix(f.ExtraRedirectHost, "/") + r.URL.Path
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
		return
	}
	path := filepath.Join(b.cfg.RootDir, filepath.FromSlash(r.URL.Path))
	file, err := os.Open(path)
	if err != nil {
		writeS3Error(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
		return
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil || st.IsDir() {
		writeS3Error(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
		return
	}
	size := st.Size()
	w.Header().Set("ETag", `"`+m[2]+`"`)
	w.Header().Set("Content-Type", "application/octet-stream")
	switch {
	case matchFault(f.CorruptDigest, dg):
		http.ServeContent(w, r, "", time.Unix(0, 0), &flipReader{ReaderAt: file, size: size})
	case matchFault(f.Truncate, dg):
		if !firstHalf(w, r, file, size) {
			return
		}
		panic(http.ErrAbortHandler) // cut the connection mid-body
	case matchFault(f.Pause, dg):
		if !firstHalf(w, r, file, size) {
			return
		}
		pause := time.Duration(f.PauseMS) * time.Millisecond
		if pause <= 0 {
			pause = 8 * time.Second
		}
		select {
		case <-time.After(pause):
		case <-r.Context().Done():
			return
		case <-b.stop:
			panic(http.ErrAbortHandler)
		}
		_, _ = io.Copy(w, file)
	case matchFault(f.Trickle, dg):
		n := int64(f.TrickleBytes)
		if n <= 0 {
			n = 16
		}
		if n > size {
			n = size
		}
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		_, _ = io.CopyN(w, file, n)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
		case <-b.stop:
		}
		panic(http.ErrAbortHandler)
	default:
		http.ServeContent(w, r, "", time.Unix(0, 0), file)
	}
}

// flipReader serves a file with the byte in the middle inverted.
type flipReader struct {
	io.ReaderAt
	size int64
	off  int64
}

func (f *flipReader) Read(p []byte) (int, error) {
	if f.off >= f.size {
		return 0, io.EOF
	}
	if int64(len(p)) > f.size-f.off {
		p = p[:f.size-f.off]
	}
	n, err := f.ReaderAt.ReadAt(p, f.off)
	mid := f.size / 2
	if mid >= f.off && mid < f.off+int64(n) {
		p[mid-f.off] ^= 0xff
	}
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *flipReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.size
	}
	if offset < 0 {
		return 0, fmt.Errorf("seek before start")
	}
	f.off = offset
	return offset, nil
}

func writeS3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>%s</Message><RequestId>LAB0000000000000</RequestId><HostId>pullpath-lab</HostId></Error>", code, msg)
}

// firstHalf answers 200 with the whole blob's Content-Length and sends
// its first half, flushed; false for a HEAD (nothing more to send).
func firstHalf(w http.ResponseWriter, r *http.Request, file io.Reader, size int64) bool {
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return false
	}
	_, _ = io.CopyN(w, file, size/2)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	return true
}
