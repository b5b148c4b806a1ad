package lab

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Forwarder listens on a loopback address of the root namespace and copies
// each connection to target inside namespace ns.
type Forwarder struct {
	Addr string // 127.0.0.1:PORT
	l    net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	cs   map[net.Conn]bool
}

// Forward starts a forwarder on listen (e.g. "127.0.0.1:0") to target
// (e.g. "10.0.30.10:6443") in ns. Only loopback listen addresses are
// accepted.
func Forward(ns, listen, target string) (*Forwarder, error) {
	if err := needLinux(); err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("forward: listen address %q: want 127.0.0.1:PORT", listen)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("forward: listen address %q is not loopback: the lab opens nothing else in the root namespace", listen)
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("forward: %v", err)
	}
	f := &Forwarder{Addr: l.Addr().String(), l: l, cs: map[net.Conn]bool{}}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.pipe(c, ns, target)
			}()
		}
	}()
	return f, nil
}

func (f *Forwarder) track(c net.Conn, on bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cs == nil {
		return false
	}
	if on {
		f.cs[c] = true
	} else {
		delete(f.cs, c)
	}
	return true
}

func (f *Forwarder) pipe(c net.Conn, ns, target string) {
	defer c.Close()
	if !f.track(c, true) {
		return
	}
	defer f.track(c, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	u, err := DialInNamespace(ctx, ns, "tcp", target)
	cancel()
	if err != nil {
		return
	}
	defer u.Close()
	if !f.track(u, true) {
		return
	}
	defer f.track(u, false)
	done := make(chan struct{}, 2)
	go func() { io.Copy(u, c); u.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(c, u); done <- struct{}{} }()
	<-done
	<-done
}

// Close stops listening and cuts every open connection.
func (f *Forwarder) Close() error {
	err := f.l.Close()
	f.mu.Lock()
	for c := range f.cs {
		c.Close()
	}
	f.cs = nil
	f.mu.Unlock()
	f.wg.Wait()
	return err
}
