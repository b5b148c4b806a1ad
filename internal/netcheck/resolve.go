package netcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/addrscope"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// kind is the outcome of a lookup. Failures are ordered from least to most
// telling: when A and AAAA disagree, the greater one is reported.
type kind int

const (
	kindOK       kind = iota
	kindNXDomain      // NXDOMAIN
	kindNoData        // NOERROR, no address
	kindError         // transport error, malformed reply, other rcode
	kindRefused       // REFUSED from every nameserver that answered
	kindServFail      // SERVFAIL from every nameserver that answered
	kindTimeout       // no nameserver answered in time
)

var kindCode = map[kind]verdict.Code{
	kindNXDomain: verdict.DNSNXDomain,
	kindNoData:   verdict.DNSNoAnswer,
	kindError:    verdict.DNSError,
	kindRefused:  verdict.DNSRefused,
	kindServFail: verdict.DNSServFail,
	kindTimeout:  verdict.DNSTimeout,
}

// lookup is what resolving one name (or one type of one name) gave.
type lookup struct {
	name    string
	kind    kind
	rcode   string // NOERROR, NXDOMAIN, SERVFAIL, REFUSED, TIMEOUT, ERROR, ...
	ns      string // the nameserver whose reply decided
	cnames  []string
	addrs   []netip.Addr
	err     string // why it failed, one line
	queries []report.DNSQuery
}

// Resolve resolves host like the node: an IP literal as itself (source
// "literal"), then the hosts file (source "hosts"), then A and AAAA queries to
// each nameserver in order (search and ndots honoured) until one answers.
// On failure Code is one of DNS_NXDOMAIN, DNS_SERVFAIL, DNS_REFUSED,
// DNS_TIMEOUT, DNS_NO_ANSWER, DNS_NO_NAMESERVER, DNS_ERROR. Every query
// sent is in Queries; every answer carries its Scope.
func (c *Checker) Resolve(ctx context.Context, host string) *report.Resolution {
	start := time.Now()
	res := &report.Resolution{Name: host}
	defer func() { res.DurationMS = units.MS(time.Since(start)) }()

	// 1. An IP literal is its own answer.
	if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		res.Source, res.Answers = "literal", answers([]netip.Addr{ip})
		return res
	}
	// 2. The hosts file.
	if addrs := c.hosts.lookup(host); len(addrs) > 0 {
		res.Source, res.Answers = "hosts", answers(addrs)
		return res
	}
	// 3. The nameservers, with search and ndots.
	res.Source = "dns"
	if _, ok := dns.IsDomainName(host); !ok || host == "" || host == "." {
		res.Code, res.Error = verdict.DNSError, fmt.Sprintf("%q is not a valid host name", host)
		return res
	}
	if len(c.rc.nameservers) == 0 {
		res.Code = verdict.DNSNoNameserver
		res.Error = "no nameserver to ask: resolv.conf " + c.cfg.ResolvConf + " names none"
		if c.cfg.ResolvConf == "" {
			res.Error = "no nameserver to ask: no resolv.conf and no nameserver given"
		}
		return res
	}
	l := c.search(ctx, host, res)
	res.Name, res.Nameserver, res.Rcode, res.CNAMEs = l.name, l.ns, l.rcode, l.cnames
	if l.kind == kindOK {
		res.Answers = answers(l.addrs)
	} else {
		res.Code, res.Error = kindCode[l.kind], l.err
	}
	return res
}

// search walks the names glibc's res_search would try for host, appending
// every query sent to res.Queries, and returns the lookup that decides:
//
//  1. A name with a trailing dot is tried as is, and only as is.
//  2. A name with at least ndots dots is tried as is first; the search list
//     follows if that fails.
//  3. Each search domain is appended in turn; NXDOMAIN, no data and SERVFAIL
//     move on to the next, anything else ends the search.
//  4. A name not yet tried as is is tried last.
//  5. On failure glibc reports the first as-is attempt if there was one,
//     else a no-data answer, else a SERVFAIL, else the last attempt.
//
// Unlike glibc, a timeout ends the walk: every further name would wait on
// the same silent nameservers, and the verdict would not change.
func (c *Checker) search(ctx context.Context, host string, res *report.Resolution) lookup {
	try := func(name string) lookup {
		l := c.lookupName(ctx, name)
		res.Queries = append(res.Queries, l.queries...)
		return l
	}
	name := strings.TrimSuffix(host, ".")
	if name != host {
		return try(name)
	}
	var first, nodata, servfail *lookup
	var last lookup
	asIsFirst := strings.Count(name, ".") >= c.rc.ndots
	if asIsFirst {
		l := try(name)
		if l.kind == kindOK || l.kind == kindTimeout {
			return l
		}
		first = &l
	}
search:
	for _, d := range c.rc.search {
		l := try(name + "." + d)
		switch l.kind {
		case kindOK:
			return l
		case kindNoData:
			if nodata == nil {
				nodata = &l
			}
		case kindServFail:
			if servfail == nil {
				servfail = &l
			}
		case kindTimeout:
			return pick(first, &l)
		case kindNXDomain: // keep going
		default:
			last = l
			break search
		}
		last = l
	}
	if !asIsFirst {
		if last = try(name); last.kind == kindOK {
			return last
		}
	}
	return pick(first, nodata, servfail, &last)
}

// pick returns the first non-nil lookup.
func pick(ls ...*lookup) lookup {
	for _, l := range ls {
		if l != nil {
			return *l
		}
	}
	return lookup{}
}

// lookupName asks for the A and AAAA records of name at once, as
// getaddrinfo does; the name resolves if either has an address.
func (c *Checker) lookupName(ctx context.Context, name string) lookup {
	var a, aaaa lookup
	var wg sync.WaitGroup
	wg.Go(func() { a = c.query(ctx, name, dns.TypeA) })
	wg.Go(func() { aaaa = c.query(ctx, name, dns.TypeAAAA) })
	wg.Wait()

	l := a
	switch {
	case len(a.addrs) > 0:
		l.addrs = append(a.addrs, aaaa.addrs...)
	case len(aaaa.addrs) > 0:
		l = aaaa
	case aaaa.kind > a.kind:
		l = aaaa
	}
	if l.kind == kindNoData {
		l.err = fmt.Sprintf("%s has no A or AAAA record (NOERROR from %s)", name, l.ns)
		if len(l.cnames) > 0 {
			l.err += "; CNAME chain " + name + " -> " + strings.Join(l.cnames, " -> ")
		}
	}
	l.queries = append(a.queries, aaaa.queries...)
	return l
}

// query asks each nameserver in order for one type of name until one gives
// a definitive answer (NOERROR or NXDOMAIN). Otherwise a reply (SERVFAIL,
// REFUSED, ...) tells more than silence: the first reply is reported, else
// the first error.
func (c *Checker) query(ctx context.Context, name string, qtype uint16) lookup {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	var queries []report.DNSQuery
	var failed []lookup
	for _, ns := range c.rc.nameservers {
		r, qs, err := c.exchange(ctx, ns, m)
		queries = append(queries, qs...)
		l := lookup{name: name, ns: ns}
		switch {
		case err != nil:
			q := qs[len(qs)-1]
			l.kind, l.rcode, l.err = kindError, q.Rcode, fmt.Sprintf("%s %s to %s: %s", name, q.Type, ns, q.Error)
			if q.Rcode == "TIMEOUT" {
				l.kind = kindTimeout
				l.err = fmt.Sprintf("no nameserver answered %s within %s (tried %s)", name, c.cfg.DNSTimeout, strings.Join(c.rc.nameservers, ", "))
			}
		case r.Rcode == dns.RcodeSuccess, r.Rcode == dns.RcodeNameError:
			l.rcode = rcodeString(r.Rcode)
			l.cnames, l.addrs = readAnswer(m.Question[0].Name, qtype, r)
			switch {
			case len(l.addrs) > 0:
				l.kind = kindOK
			case r.Rcode == dns.RcodeNameError:
				l.kind, l.err = kindNXDomain, fmt.Sprintf("%s does not exist (NXDOMAIN from %s)", name, ns)
			default:
				l.kind = kindNoData // the message is set by lookupName, which sees both types
			}
			l.queries = queries
			return l
		default:
			l.rcode = rcodeString(r.Rcode)
			l.kind, l.err = kindError, fmt.Sprintf("%s for %s from %s", l.rcode, name, ns)
			switch r.Rcode {
			case dns.RcodeServerFailure:
				l.kind = kindServFail
			case dns.RcodeRefused:
				l.kind = kindRefused
			}
		}
		failed = append(failed, l)
		if ctx.Err() != nil {
			break
		}
	}
	out := failed[0]
	for _, l := range failed {
		if l.kind != kindTimeout && l.rcode != "ERROR" {
			out = l
			break
		}
	}
	out.queries = queries
	return out
}

// exchange sends m to ns over UDP, and again over TCP if the reply comes
// back truncated, as a stub resolver does. Each attempt is recorded and
// bounded by DNSTimeout.
func (c *Checker) exchange(ctx context.Context, ns string, m *dns.Msg) (*dns.Msg, []report.DNSQuery, error) {
	var qs []report.DNSQuery
	network := "udp"
	for {
		start := time.Now()
		r, err := c.exchangeOnce(ctx, network, ns, m)
		q := report.DNSQuery{
			Name:       strings.TrimSuffix(m.Question[0].Name, "."),
			Type:       dns.TypeToString[m.Question[0].Qtype],
			Nameserver: ns,
			DurationMS: units.MS(time.Since(start)),
		}
		switch {
		case err != nil && ctx.Err() != nil:
			q.Rcode, q.Error = "ERROR", "stopped: "+ctx.Err().Error()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				q.Rcode = "TIMEOUT"
			}
		case err != nil && isTimeout(err):
			q.Rcode, q.Error = "TIMEOUT", fmt.Sprintf("no answer within %s over %s", c.cfg.DNSTimeout, network)
		case err != nil:
			q.Rcode, q.Error = "ERROR", err.Error()
		default:
			q.Rcode, q.Answers = rcodeString(r.Rcode), len(r.Answer)
			if r.Truncated && network == "udp" {
				q.Error = "truncated over udp; retried over tcp"
				qs = append(qs, q)
				network = "tcp"
				continue
			}
		}
		qs = append(qs, q)
		return r, qs, err
	}
}

// exchangeOnce is one query over one transport, bounded by DNSTimeout and
// stopped as soon as ctx is done.
func (c *Checker) exchangeOnce(ctx context.Context, network, ns string, m *dns.Msg) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.DNSTimeout)
	defer cancel()
	cl := &dns.Client{Net: network, Timeout: c.cfg.DNSTimeout}
	conn, err := cl.DialContext(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	r, _, err := cl.ExchangeWithConnContext(ctx, m, conn)
	if err != nil && ctx.Err() != nil {
		err = ctx.Err() // the conn was closed because ctx ended
	}
	return r, err
}

// readAnswer follows the CNAME chain from qname through the answer section
// and returns it with the addresses of type qtype owned by its end.
func readAnswer(qname string, qtype uint16, r *dns.Msg) (cnames []string, addrs []netip.Addr) {
	owner := qname
	for range len(r.Answer) { // a chain is at most as long as the section; a loop ends too
		next := ""
		for _, rr := range r.Answer {
			if cn, ok := rr.(*dns.CNAME); ok && strings.EqualFold(cn.Hdr.Name, owner) {
				next = cn.Target
				break
			}
		}
		if next == "" {
			break
		}
		cnames = append(cnames, strings.TrimSuffix(next, "."))
		owner = next
	}
	for _, rr := range r.Answer {
		if !strings.EqualFold(rr.Header().Name, owner) || rr.Header().Rrtype != qtype {
			continue
		}
		var ip net.IP
		switch rr := rr.(type) {
		case *dns.A:
			ip = rr.A
		case *dns.AAAA:
			ip = rr.AAAA
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			addrs = append(addrs, a.Unmap())
		}
	}
	return cnames, addrs
}

func rcodeString(rc int) string {
	if s, ok := dns.RcodeToString[rc]; ok {
		return s
	}
	return fmt.Sprintf("RCODE%d", rc)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// answers gives each address its scope.
func answers(addrs []netip.Addr) []report.Answer {
	out := make([]report.Answer, len(addrs))
	for i, a := range addrs {
		out[i] = report.Answer{Address: a.String(), Scope: addrscope.Of(a)}
	}
	return out
}
