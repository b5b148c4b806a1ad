// Package netcheck gathers node-context network facts for one host of a pull:
// how the node resolves it (hosts file, then the nameservers of its
// resolv.conf, queried directly so NXDOMAIN, SERVFAIL, REFUSED and silence are
// told apart), whether each address connects, and what TLS shows.
//
// API CONTRACT (internal/pull is written against it; keep it):
//
//	New(cfg Config) (*Checker, error)
//	(*Checker).Resolver() report.Resolver
//	(*Checker).Warnings() []string
//	(*Checker).Resolve(ctx, host string) *report.Resolution
//	(*Checker).ConnectAll(ctx, answers []report.Answer, port int) []report.AddrResult
//	(*Checker).Families(ctx, res *report.Resolution, results []report.AddrResult, port int) *report.Families
//	(*Checker).Handshake(ctx, addr, serverName string, cfg *tls.Config) *report.TLSInfo
//	ClassifyDialError(err error) (result string, code verdict.Code)
//	ClassifyTLSError(err error) verdict.Code
package netcheck

import (
	"slices"
	"time"

	"github.com/pullpath/pullpath/internal/report"
)

// Config says how the node resolves and how long each check may take.
type Config struct {
	HostsFile      string        // the node's hosts file; "" reads none
	ResolvConf     string        // the node's resolv.conf (nameservers, search, ndots); "" reads none
	Nameservers    []string      // HOST:PORT (or HOST, port 53) overriding resolv.conf's nameservers
	DNSTimeout     time.Duration // per query; default 2s
	ConnectTimeout time.Duration // per address; default 5s
	TLSTimeout     time.Duration // per handshake; default 5s
	ProcNet        string        // where the node's route tables are read (route, ipv6_route); "" reads /proc/thread-self/net
}

// Defaults for the zero values of Config's timeouts.
const (
	DefaultDNSTimeout     = 2 * time.Second
	DefaultConnectTimeout = 5 * time.Second
	DefaultTLSTimeout     = 5 * time.Second
)

// Checker checks hosts from the node's point of view. It is safe for
// concurrent use: it is not changed after New.
type Checker struct {
	cfg      Config
	rc       resolvConf
	hosts    hostsFile
	warnings []string
}

// New reads the node's resolver configuration. A missing or malformed
// resolv.conf or hosts file is a one-line error naming the file.
func New(cfg Config) (*Checker, error) {
	if cfg.DNSTimeout <= 0 {
		cfg.DNSTimeout = DefaultDNSTimeout
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.TLSTimeout <= 0 {
		cfg.TLSTimeout = DefaultTLSTimeout
	}
	c := &Checker{cfg: cfg, rc: defaultResolvConf()}
	if cfg.ResolvConf != "" {
		rc, err := readResolvConf(cfg.ResolvConf)
		if err != nil {
			return nil, err
		}
		c.rc = rc
	}
	if len(cfg.Nameservers) > 0 {
		c.rc.nameservers = nil
		for _, s := range cfg.Nameservers {
			ns, err := parseNameserver(s)
			if err != nil {
				return nil, err
			}
			c.rc.nameservers = append(c.rc.nameservers, ns)
		}
	}
	if cfg.HostsFile != "" {
		h, warnings, err := readHosts(cfg.HostsFile)
		if err != nil {
			return nil, err
		}
		c.hosts, c.warnings = h, warnings
	}
	return c, nil
}

// Warnings are what New skipped in the node's files (a hosts-file line
// that is not ADDRESS NAME...), one line each.
func (c *Checker) Warnings() []string { return slices.Clone(c.warnings) }

// Resolver describes the node's resolver as used.
func (c *Checker) Resolver() report.Resolver {
	return report.Resolver{
		HostsFile:   c.cfg.HostsFile,
		ResolvConf:  c.cfg.ResolvConf,
		Nameservers: slices.Clone(c.rc.nameservers),
		Search:      slices.Clone(c.rc.search),
		Ndots:       c.rc.ndots,
	}
}
