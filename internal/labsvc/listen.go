package labsvc

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
)

// A lab service's listen address may name several addresses, comma
// separated ("10.0.1.20:443,[fd00:0:0:1::20]:443"): a dual-stack host
// listens on one address of each family, as a service behind an A and an
// AAAA record does. Go cannot take both on one socket without a wildcard,
// which a lab service never listens on.

// splitAddrs splits a listen address list.
func splitAddrs(addr string) []string {
	var out []string
	for _, a := range strings.Split(addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// listenAll listens on every address of a list and accepts from all of
// them through one net.Listener (whose Addr is the first's).
func listenAll(what string, addrs []string) (net.Listener, error) {
	if len(addrs) == 1 {
		ln, err := net.Listen("tcp", addrs[0])
		if err != nil {
			return nil, fmt.Errorf("%s: listen on %s: %w", what, addrs[0], err)
		}
		return ln, nil
	}
	m := &multiListener{conns: make(chan acceptResult), closed: make(chan struct{})}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("%s: listen on %s: %w", what, a, err)
		}
		m.lns = append(m.lns, ln)
	}
	for _, ln := range m.lns {
		go m.accept(ln)
	}
	return m, nil
}

type acceptResult struct {
	c   net.Conn
	err error
}

// multiListener accepts from several listeners.
type multiListener struct {
	lns    []net.Listener
	conns  chan acceptResult
	closed chan struct{}
	once   sync.Once
}

func (m *multiListener) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		select {
		case m.conns <- acceptResult{c, err}:
		case <-m.closed:
			if c != nil {
				c.Close()
			}
			return
		}
		if err != nil {
			return
		}
	}
}

func (m *multiListener) Accept() (net.Conn, error) {
	select {
	case r := <-m.conns:
		if r.err != nil {
			return nil, r.err
		}
		return r.c, nil
	case <-m.closed:
		return nil, net.ErrClosed
	}
}

func (m *multiListener) Close() error {
	var errs []error
	m.once.Do(func() {
		close(m.closed)
		for _, ln := range m.lns {
			errs = append(errs, ln.Close())
		}
	})
	return errors.Join(errs...)
}

func (m *multiListener) Addr() net.Addr { return m.lns[0].Addr() }
