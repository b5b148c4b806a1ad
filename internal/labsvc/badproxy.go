package labsvc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// BadProxy is a forward proxy that misbehaves on demand, the way squid
// will not: it reads each CONNECT like a proxy and then breaks the tunnel
// (or refuses it with a challenge no Go client can answer). It stands in
// for a corporate proxy whose far side is broken, a captive portal, or an
// NTLM-only proxy.
type BadProxy struct {
	Addr  string // IP:PORT it listens on
	Fault string

	connServer
	// Targets records every CONNECT target, in order.
	targets []string
}

// BadProxy faults.
const (
	// TunnelReset answers CONNECT 200, reads the client's first bytes
	// (its TLS ClientHello) and resets the connection (RST).
	TunnelReset = "reset"
	// TunnelClose answers CONNECT 200, reads the first bytes and closes
	// the connection cleanly (FIN): the tunnel ends before any answer.
	TunnelClose = "close"
	// TunnelHTML answers CONNECT 200, reads the first bytes and sends an
	// HTML page in place of the server's TLS (a captive portal, a
	// proxy's block page written into the tunnel).
	TunnelHTML = "html"
	// AuthNTLMOnly answers every CONNECT 407 with Proxy-Authenticate NTLM
	// and Negotiate only, whatever Proxy-Authorization came.
	AuthNTLMOnly = "ntlm-only"
)

// BadProxyFaults are the faults StartBadProxy takes.
var BadProxyFaults = []string{TunnelReset, TunnelClose, TunnelHTML, AuthNTLMOnly}

// BadProxyConfig is where the proxy listens and how it misbehaves.
type BadProxyConfig struct {
	Listen string `json:"listen"` // IP:PORT (port 0 picks one)
	Fault  string `json:"fault"`  // one of BadProxyFaults
}

// CaptivePortalPage is what TunnelHTML writes into the tunnel.
const CaptivePortalPage = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n" +
	"<html><head><title>Network access</title></head><body>Sign in to continue to the internet.</body></html>\n"

// StartBadProxy listens on c.Listen and serves until ctx ends or Close.
func StartBadProxy(ctx context.Context, c BadProxyConfig) (*BadProxy, error) {
	known := false
	for _, f := range BadProxyFaults {
		known = known || f == c.Fault
	}
	if !known {
		return nil, fmt.Errorf("bad proxy: fault %q, want one of %v", c.Fault, BadProxyFaults)
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return nil, fmt.Errorf("bad proxy: listen on %s: %w", c.Listen, err)
	}
	p := &BadProxy{Addr: ln.Addr().String(), Fault: c.Fault}
	p.serveAll(ctx, ln, p.serve)
	return p, nil
}

// Targets are the CONNECT targets asked so far.
func (p *BadProxy) Targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

// serve answers one client connection: one CONNECT, then the fault.
func (p *BadProxy) serve(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	io.Copy(io.Discard, req.Body)
	p.mu.Lock()
	p.targets = append(p.targets, req.Method+" "+req.Host)
	p.mu.Unlock()
	if req.Method != http.MethodConnect {
		fmt.Fprintf(conn, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	if p.Fault == AuthNTLMOnly {
		// What an NTLM-only corporate proxy (ISA/TMG, some Bluecoat
		// setups) answers: two challenges, neither of them Basic.
		fmt.Fprintf(conn, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: NTLM\r\nProxy-Authenticate: Negotiate\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	fmt.Fprintf(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
	// the client's first flight (its ClientHello) arrives before the fault
	buf := make([]byte, 4096)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.Read(buf); err != nil {
		return
	}
	switch p.Fault {
	case TunnelReset:
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // close sends RST
		}
	case TunnelHTML:
		io.WriteString(conn, CaptivePortalPage)
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		// let the client read the page before the close
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, br)
	}
}
