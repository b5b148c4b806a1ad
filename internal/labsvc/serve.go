package labsvc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// listenTCP listens on addr, which must name an IP literal and a port
// ("127.0.0.2:5443", "[fd00::2]:5443", "127.0.0.1:0"), or several of them
// comma separated (listen.go): a lab service never listens on a wildcard
// or a name.
func listenTCP(what, addr string) (net.Listener, error) {
	if err := checkListenAddr(what, addr); err != nil {
		return nil, err
	}
	return listenAll(what, splitAddrs(addr))
}

// checkListenAddr checks a listen address (or a comma-separated list).
func checkListenAddr(what, addr string) error {
	as := splitAddrs(addr)
	if len(as) == 0 {
		return fmt.Errorf("%s: listen address %q, want IP:PORT such as 127.0.0.1:0", what, addr)
	}
	for _, a := range as {
		if err := checkOneListenAddr(what, a); err != nil {
			return err
		}
	}
	return nil
}

func checkOneListenAddr(what, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: listen address %q, want IP:PORT such as 127.0.0.1:0", what, addr)
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsUnspecified() {
		return fmt.Errorf("%s: listen address %q, want a specific IP literal (not a name or wildcard) such as 127.0.0.1:0", what, addr)
	}
	if port == "" {
		return fmt.Errorf("%s: listen address %q has no port, want IP:PORT (port 0 picks one)", what, addr)
	}
	return nil
}

// httpService is one running HTTP(S) server.
type httpService struct {
	ln     net.Listener
	srv    *http.Server
	scheme string
	done   chan struct{}
	once   sync.Once
	err    error
}

// startHTTP serves h on addr (TLS when tlsConf is set) until Close or ctx ends.
func startHTTP(ctx context.Context, what, addr string, tlsConf *tls.Config, h http.Handler) (*httpService, error) {
	ln, err := listenTCP(what, addr)
	if err != nil {
		return nil, err
	}
	s := &httpService{
		ln:     ln,
		scheme: "http",
		done:   make(chan struct{}),
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          discardLogger(),
		},
	}
	if tlsConf != nil {
		s.scheme = "https"
		ln = tls.NewListener(ln, tlsConf)
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	if ctx != nil {
		go func() {
			select {
			case <-ctx.Done():
				_ = s.Close()
			case <-s.done:
			}
		}()
	}
	return s, nil
}

// Addr is the real listening address, IP:PORT.
func (s *httpService) Addr() string { return s.ln.Addr().String() }

// Close stops the server and its connections, and waits for it.
func (s *httpService) Close() error {
	s.once.Do(func() {
		_ = s.srv.Close()
		<-s.done
	})
	return nil
}
