package labsvc

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestListenBothFamilies: a service given an IPv4 and an IPv6 address
// answers on both (a dual-stack host), and refuses a wildcard in the list.
func TestListenBothFamilies(t *testing.T) {
	svc, err := startHTTP(context.Background(), "test", "127.0.0.1:0,[::1]:0", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Host)
	}))
	if err != nil {
		t.Fatalf("startHTTP(127.0.0.1:0,[::1]:0) = %v", err)
	}
	defer svc.Close()
	m, ok := svc.ln.(*multiListener)
	if !ok || len(m.lns) != 2 {
		t.Fatalf("listener = %T, want a multiListener of 2", svc.ln)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	for _, ln := range m.lns {
		addr := ln.Addr().String()
		resp, err := c.Get("http://" + addr + "/")
		if err != nil {
			t.Errorf("GET on %s: %v", addr, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != addr {
			t.Errorf("GET on %s answered %q, want its own address", addr, b)
		}
	}
	if _, err := startHTTP(context.Background(), "test", "127.0.0.1:0,[::]:0", nil, http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), "wildcard") {
		t.Errorf("startHTTP with [::]:0 in the list = %v, want the wildcard refused", err)
	}
	svc.Close()
	for _, ln := range m.lns {
		if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
			c.Close()
			t.Errorf("dial %s after Close connected, want refused", ln.Addr())
		}
	}
}
