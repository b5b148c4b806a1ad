package labsvc

import (
	"context"
	"net"
	"sync"
)

// connServer is the listener of the lab's small TCP fault services
// (BadProxy, SNIFilter): each connection is served in its own goroutine,
// and Close ends every open connection and waits for them.
type connServer struct {
	ln     net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex // conns, closed, and the embedding service's records
	conns  map[net.Conn]bool
	closed bool
}

// serveAll accepts on ln and runs serve for each connection until Close,
// or until ctx ends.
func (s *connServer) serveAll(ctx context.Context, ln net.Listener, serve func(net.Conn)) {
	s.ln, s.conns = ln, map[net.Conn]bool{}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			if !s.track(conn, true) {
				conn.Close()
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer s.track(conn, false)
				serve(conn)
			}()
		}
	}()
	go func() {
		<-ctx.Done()
		s.Close()
	}()
}

func (s *connServer) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.closed {
			return false
		}
		s.conns[c] = true
		return true
	}
	delete(s.conns, c)
	return true
}

// Close stops listening and ends every open connection.
func (s *connServer) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}
