package pull

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// cutBlob answers 200 with the whole Content-Length, sends half the body,
// then ends the connection the way how says, on the socket itself.
func cutBlob(t *testing.T, w http.ResponseWriter, body []byte, how string) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", len(body))
	buf.Write(body[:len(body)/2])
	buf.Flush()
	tc := conn.(*tls.Conn)
	switch how {
	case "close_notify": // TLS close_notify, then FIN
		tc.Close()
	case "fin": // FIN without close_notify
		tc.NetConn().Close()
	case "rst": // a real reset: SO_LINGER 0
		tc.NetConn().(*net.TCPConn).SetLinger(0)
		tc.NetConn().Close()
	}
}

// Blobs that end early, announce the wrong length, or redirect past
// containerd's limit, from a real TLS registry on loopback. A truncation
// (clean close) is the registry's content (BLOB_SIZE_MISMATCH); a reset is
// the path's (CONNECT_RESET).
func TestProbeBlobEnds(t *testing.T) {
	img := newTestImage()
	layerPath := "/v2/app/blobs/" + sha(img.layer)
	hops := func(n int) func(*testing.T, http.ResponseWriter, *http.Request) {
		return func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			var i int
			fmt.Sscanf(r.URL.Query().Get("hop"), "%d", &i)
			if i < n {
				http.Redirect(w, r, fmt.Sprintf("%s?hop=%d", layerPath, i+1), http.StatusTemporaryRedirect)
				return
			}
			w.Write(img.layer)
		}
	}
	tests := []struct {
		name     string
		layer    func(*testing.T, http.ResponseWriter, *http.Request)
		wantCode verdict.Code
		wantCond verdict.Condition
		wantSum  string
	}{
		{"truncated, TLS close_notify", func(t *testing.T, w http.ResponseWriter, r *http.Request) { cutBlob(t, w, img.layer, "close_notify") },
			verdict.BlobSizeMismatch, verdict.ConditionRegistry, "truncated, not reset"},
		{"truncated, FIN", func(t *testing.T, w http.ResponseWriter, r *http.Request) { cutBlob(t, w, img.layer, "fin") },
			verdict.BlobSizeMismatch, verdict.ConditionRegistry, "truncated, not reset"},
		{"reset mid-body", func(t *testing.T, w http.ResponseWriter, r *http.Request) { cutBlob(t, w, img.layer, "rst") },
			verdict.ConnectReset, "", "reset"},
		{"Content-Length contradicts the descriptor, before any byte", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", itoa(len(img.layer)+100))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // no byte follows: only the header can give the verdict
		}, verdict.BlobSizeMismatch, verdict.ConditionRegistry, fmt.Sprintf("announces Content-Length %d, the manifest says %d", len(img.layer)+100, len(img.layer))},
		{"9 redirects are followed", hops(9), verdict.OK, "", ""},
		{"the 10th redirect stops, containerd's limit", hops(10), verdict.RedirectLoop, verdict.ConditionRegistry, "after 9 redirects, containerd's limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/v2/":
				case r.URL.Path == layerPath:
					tt.layer(t, w, r)
				case img.serve(w, r):
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			start := time.Now()
			rep := probeLoopback(t, strings.TrimPrefix(srv.URL, "https://"), func(o *Options) { o.StallTimeout = 10 * time.Second })
			v := rep.Verdict
			if v.Code != tt.wantCode {
				t.Fatalf("verdict = %s (%s), want %s", v.Code, v.Summary, tt.wantCode)
			}
			if tt.wantCond != "" && v.Condition != tt.wantCond {
				t.Errorf("condition = %s, want %s", v.Condition, tt.wantCond)
			}
			if !strings.Contains(v.Summary, tt.wantSum) {
				t.Errorf("summary = %q, want it to say %q", v.Summary, tt.wantSum)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("the verdict took %s: it waited for bytes (stall budget 10s)", el)
			}
		})
	}
}

// A registry whose every TLS handshake is reset after the ClientHello,
// as an SNI-filtering firewall does: CONNECT_RESET, condition route.
func TestProbeHandshakeReset(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				c.SetReadDeadline(time.Now().Add(3 * time.Second))
				hdr := make([]byte, 5)
				if _, err := io.ReadFull(c, hdr); err == nil {
					io.ReadFull(c, make([]byte, int(hdr[3])<<8|int(hdr[4])))
				}
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}()
		}
	}()
	rep := probeLoopback(t, l.Addr().String(), nil)
	v := rep.Verdict
	if v.Code != verdict.ConnectReset || v.Condition != verdict.ConditionRoute {
		t.Fatalf("verdict = %s/%s (%s), want CONNECT_RESET/route", v.Code, v.Condition, v.Summary)
	}
	if !strings.Contains(v.Summary, "during the TLS handshake") {
		t.Errorf("summary = %q, want it to say the reset came during the TLS handshake", v.Summary)
	}
}
