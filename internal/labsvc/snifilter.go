package labsvc

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"
)

// SNIFilter is a middlebox that filters TLS by server name, as a
// firewall's DPI does: the router sends the TCP connections it forwards
// to a port into the filter (an nft dnat to Listen), the filter reads
// each ClientHello, and drops the connections whose server name it
// blocks without a word (it keeps reading and never answers, so the
// client's handshake times out whatever its packet sizes); the others it
// relays to their original destination.
type SNIFilter struct {
	Addr string

	connServer
	block []string
	seen  []string // "blocked NAME" or "passed NAME", in order
}

// SNIFilterConfig is where the filter listens and what it blocks.
type SNIFilterConfig struct {
	Listen string   `json:"listen"` // IP:PORT the router's dnat sends connections to
	Block  []string `json:"block"`  // server names to drop (case-insensitive)
}

// errHelloRead stops the server-side handshake once the ClientHello is
// read.
var errHelloRead = errors.New("client hello read")

// StartSNIFilter listens on c.Listen and filters until ctx ends or Close.
func StartSNIFilter(ctx context.Context, c SNIFilterConfig) (*SNIFilter, error) {
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return nil, fmt.Errorf("SNI filter: listen on %s: %w", c.Listen, err)
	}
	f := &SNIFilter{Addr: ln.Addr().String()}
	for _, b := range c.Block {
		f.block = append(f.block, strings.ToLower(strings.TrimSuffix(b, ".")))
	}
	f.serveAll(ctx, ln, f.serve)
	return f, nil
}

// Seen lists what the filter did, in order: "blocked NAME", "passed NAME".
func (f *SNIFilter) Seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// serve reads one connection's ClientHello and drops or relays it.
func (f *SNIFilter) serve(conn net.Conn) {
	defer conn.Close()
	dst, err := originalDst(conn)
	if err != nil {
		return
	}
	var hello bytes.Buffer
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	name := ""
	tls.Server(helloConn{Conn: conn, r: io.TeeReader(conn, &hello)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			name = strings.ToLower(h.ServerName)
			return nil, errHelloRead
		},
	}).Handshake()
	if name == "" && hello.Len() == 0 {
		return
	}
	blocked := slices.Contains(f.block, name)
	f.mu.Lock()
	if blocked {
		f.seen = append(f.seen, "blocked "+name)
	} else {
		f.seen = append(f.seen, "passed "+name)
	}
	f.mu.Unlock()
	if blocked {
		// silence: read whatever comes, answer nothing
		conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
		io.Copy(io.Discard, conn)
		return
	}
	conn.SetReadDeadline(time.Time{})
	// the upstream connection leaves from the filter's own address, as a
	// proxying firewall's does (the far side routes back to it)
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: conn.LocalAddr().(*net.TCPAddr).IP}}
	up, err := d.Dial("tcp", dst)
	if err != nil {
		return
	}
	defer up.Close()
	if _, err := up.Write(hello.Bytes()); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, conn); up.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(conn, up); conn.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}

// helloConn reads through r and refuses writes: the server side of a
// handshake that only reads the ClientHello.
type helloConn struct {
	net.Conn
	r io.Reader
}

func (c helloConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c helloConn) Write(b []byte) (int, error) { return 0, errHelloRead }
