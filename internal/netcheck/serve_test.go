package netcheck

import (
	"net"
	"testing"
)

// serve accepts connections on a loopback port and hands each to handle.
func serve(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acceptEach(t, l, handle)
	return l.Addr().String()
}

// acceptEach hands every connection l accepts to handle (in its own
// goroutine) until the test ends and closes l.
func acceptEach(t *testing.T, l net.Listener, handle func(net.Conn)) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
}
