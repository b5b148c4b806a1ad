package netcheck

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// readHello reads the client's whole first TLS record (its ClientHello):
// closing with unread bytes would make the kernel send a reset.
func readHello(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(c, hdr); err != nil {
		return
	}
	io.ReadFull(c, make([]byte, int(hdr[3])<<8|int(hdr[4])))
}

// A reset during the TLS handshake is a route finding (CONNECT_RESET),
// what an SNI-filtering firewall does; a clean close or a port that does
// not speak TLS is a TLS one. Each is produced at the socket level.
func TestHandshakeResetVersusClose(t *testing.T) {
	tests := []struct {
		name   string
		handle func(net.Conn)
		code   verdict.Code
	}{
		{"RST after the ClientHello (SO_LINGER 0)", func(c net.Conn) {
			readHello(c)
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}, verdict.ConnectReset},
		{"FIN after the ClientHello", func(c net.Conn) {
			readHello(c)
			c.Close()
		}, verdict.TLSHandshakeFailed},
		{"plain HTTP on the port", func(c net.Conn) {
			readHello(c)
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
			c.Close()
		}, verdict.TLSHandshakeFailed},
	}
	c := newChecker(t, Config{TLSTimeout: 3 * time.Second})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := serve(t, tt.handle)
			info := c.Handshake(t.Context(), addr, "registry.example", &tls.Config{})
			if info.Code != tt.code {
				t.Fatalf("Handshake code = %s (%s), want %s", info.Code, info.Error, tt.code)
			}
			if got := ClassifyTLSError(nil); got != "" {
				t.Fatalf("ClassifyTLSError(nil) = %q", got)
			}
		})
	}
}
