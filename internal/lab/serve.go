package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pullpath/pullpath/internal/labsvc"
)

// ServeConfig is what one `pullpath lab serve --config FILE` process runs
// inside one lab namespace: the services of one host.
type ServeConfig struct {
	Host     string                 `json:"host"`
	Registry *labsvc.RegistryConfig `json:"registry,omitempty"`
	Blob     *labsvc.BlobHostConfig `json:"blob,omitempty"`
	Token    *labsvc.TokenConfig    `json:"token,omitempty"`
	DNS      []*labsvc.DNSConfig    `json:"dns,omitempty"`
	Proxy    *ProxyServeConfig      `json:"proxy,omitempty"`
	BadProxy *labsvc.BadProxyConfig `json:"badProxy,omitempty"`
	Mirrors  []*MirrorServe         `json:"mirrors,omitempty"`
	NAT64    *NAT64ServeConfig      `json:"nat64,omitempty"`
	DNS64    *DNS64ServeConfig      `json:"dns64,omitempty"`
	// SNIFilter is a router's TLS filter (path.go).
	SNIFilter *labsvc.SNIFilterConfig `json:"sniFilter,omitempty"`
}

// ReadServeConfig reads a serve config file.
func ReadServeConfig(file string) (*ServeConfig, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("serve config %s: %v", file, errors.Unwrap(err))
	}
	var c ServeConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("serve config %s: %v", file, err)
	}
	return &c, nil
}

// Serve starts the services of c, writes "ready" to readyFile (when set)
// once all of them listen, and serves until ctx ends. Logs go to log.
func Serve(ctx context.Context, c *ServeConfig, readyFile string, log io.Writer) error {
	if err := needLinux(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var closers []io.Closer
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i].Close()
		}
	}()
	for _, d := range c.DNS {
		s, err := labsvc.StartDNS(ctx, *d)
		if err != nil {
			return err
		}
		closers = append(closers, s)
		fmt.Fprintf(log, "%s: dns on %s\n", c.Host, s.Addr())
	}
	if c.NAT64 != nil {
		p, err := startNAT64(ctx, c.NAT64)
		if err != nil {
			return err
		}
		closers = append(closers, p)
		fmt.Fprintf(log, "%s: nat64 (tayga) %s to pool %s\n", c.Host, c.NAT64.Prefix, c.NAT64.Pool)
	}
	if c.DNS64 != nil {
		p, err := startDNS64(ctx, c.DNS64)
		if err != nil {
			return err
		}
		closers = append(closers, p)
		fmt.Fprintf(log, "%s: dns64 (unbound) on %s, %s, forwarding to %s\n", c.Host, c.DNS64.Address, c.DNS64.Prefix, c.DNS64.Upstream)
	}
	if c.Token != nil {
		s, err := labsvc.StartTokenServer(ctx, *c.Token)
		if err != nil {
			return err
		}
		closers = append(closers, s)
		fmt.Fprintf(log, "%s: token service on %s\n", c.Host, s.Addr())
	}
	if c.Blob != nil {
		s, err := labsvc.StartBlobHost(ctx, *c.Blob)
		if err != nil {
			return err
		}
		closers = append(closers, s)
		fmt.Fprintf(log, "%s: blob host on %s\n", c.Host, s.Addr())
	}
	if c.Registry != nil {
		s, err := labsvc.StartRegistry(ctx, *c.Registry)
		if err != nil {
			return err
		}
		closers = append(closers, s)
		fmt.Fprintf(log, "%s: registry on %s\n", c.Host, s.Addr())
	}
	if c.Proxy != nil {
		s, err := startProxy(ctx, c.Proxy)
		if err != nil {
			return err
		}
		closers = append(closers, s)
		fmt.Fprintf(log, "%s: proxy (squid) on %s\n", c.Host, s.Addr)
	}
	if c.BadProxy != nil {
		s, err := labsvc.StartBadProxy(ctx, *c.BadProxy)
		if err != nil {
			return err
		}
		closers = append(closers, s)
		fmt.Fprintf(log, "%s: proxy (the lab's, fault %s) on %s\n", c.Host, s.Fault, s.Addr)
	}
	if c.SNIFilter != nil {
		s, err := labsvc.StartSNIFilter(ctx, *c.SNIFilter)
		if err != nil {
			return err
		}
		closers = append(closers, s)
		fmt.Fprintf(log, "%s: SNI filter on %s blocking %s\n", c.Host, s.Addr, strings.Join(c.SNIFilter.Block, ", "))
	}
	ms, err := startMirrors(ctx, c.Host, c.Mirrors, log)
	closers = append(closers, ms...)
	if err != nil {
		return err
	}
	if readyFile != "" {
		if err := os.WriteFile(readyFile, []byte("ready\n"), 0o644); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}
