// Package netcheck gathers node-context network facts for one host of a pull:
// how the node resolves it (hosts file, then the nameservers of its
// resolv.conf, queried directly so NXDOMAIN, SERVFAIL, REFUSED and silence are
// told apart), whether each address connects, and what TLS shows.
//
// API CONTRACT (internal/pull is written against it; keep it):
//
//	New(cfg Config) (*Checker, error)
//	(*Checker).Resolver() report.Resolver
//	(*Checker).Resolve(ctx, host string) *report.Resolution
//	(*Checker).ConnectAll(ctx, answers []report.Answer, port int) []report.AddrResult
//	(*Checker).Handshake(ctx, addr, serverName string, cfg *tls.Config) *report.TLSInfo
//	Scope(ip netip.Addr) string
//	ClassifyDialError(err error) (result string, code verdict.Code)
//	ClassifyTLSError(err error) verdict.Code
package netcheck

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/pullpath/pullpath/internal/report"
)

// Config says how the node resolves and how long each check may take.
type Config struct {
	HostsFile      string        // the node's hosts file; "" reads none
	ResolvConf     string        // the node's resolv.conf; used unless Nameservers is set
	Nameservers    []string      // HOST:PORT (or HOST, port 53) overriding resolv.conf's nameservers
	DNSTimeout     time.Duration // per query; default 2s
	ConnectTimeout time.Duration // per address; default 5s
	TLSTimeout     time.Duration // per handshake; default 5s
}

// Checker checks hosts from the node's point of view. It is safe for
// concurrent use.
type Checker struct {
	cfg Config
}

// New reads the node's resolver configuration. A missing or malformed
// resolv.conf or hosts file is a one-line error naming the file.
func New(cfg Config) (*Checker, error) { panic("netcheck: not implemented") }

// Resolver describes the node's resolver as used.
func (c *Checker) Resolver() report.Resolver { panic("netcheck: not implemented") }

// Resolve resolves host like the node: an IP literal as itself (source
// "literal"), then the hosts file (source "hosts"), then A and AAAA queries to
// each nameserver in order (search and ndots honoured) until one answers.
// On failure Code is one of DNS_NXDOMAIN, DNS_SERVFAIL, DNS_REFUSED,
// DNS_TIMEOUT, DNS_NO_ANSWER, DNS_NO_NAMESERVER, DNS_ERROR. Every query
// sent is in Queries; every answer carries its Scope.
func (c *Checker) Resolve(ctx context.Context, host string) *report.Resolution {
	panic("netcheck: not implemented")
}

// ConnectAll opens a TCP connection to every answer on port, concurrently,
// each with its own ConnectTimeout, and closes it; results keep the order of
// answers.
func (c *Checker) ConnectAll(ctx context.Context, answers []report.Answer, port int) []report.AddrResult {
	panic("netcheck: not implemented")
}

// Handshake dials addr (ip:port) and runs a TLS handshake with cfg (its
// ServerName set to serverName), bounded by TLSTimeout, and reports what the
// certificate shows, verified or not: on a verification failure the peer
// certificate is still read (a second, unverified handshake) so the report
// names its subject, SANs, issuer and validity.
func (c *Checker) Handshake(ctx context.Context, addr, serverName string, cfg *tls.Config) *report.TLSInfo {
	panic("netcheck: not implemented")
}
