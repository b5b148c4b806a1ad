package labsvc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// DNSBehaviour is how the DNS server treats one name.
type DNSBehaviour string

// Per-name behaviours. The empty behaviour answers from the records.
const (
	DNSAnswer   DNSBehaviour = ""
	DNSNXDomain DNSBehaviour = "nxdomain"
	DNSServFail DNSBehaviour = "servfail"
	DNSRefused  DNSBehaviour = "refused"
	DNSDrop     DNSBehaviour = "drop" // never answer
	DNSNoData   DNSBehaviour = "nodata"
)

// DNSRecord is one resource record of a name.
type DNSRecord struct {
	Type  string `json:"type"`  // "A", "AAAA" or "CNAME"
	Value string `json:"value"` // an address, or the CNAME target
	TTL   uint32 `json:"ttl"`   // seconds; 0 means 30
}

// DNSConfig configures the authoritative DNS server.
type DNSConfig struct {
	// Addr is IP:PORT for both UDP and TCP; port 0 picks one free on both.
	Addr string `json:"addr"`
	// Zones the server is authoritative for; empty means "lab.test".
	Zones []string `json:"zones,omitempty"`
	// Records per name ("registry.lab.test").
	Records map[string][]DNSRecord `json:"records,omitempty"`
	// Behaviours per name override the records.
	Behaviours map[string]DNSBehaviour `json:"behaviours,omitempty"`
	// OutOfZone is DNSRefused (default) or DNSNXDomain, for names outside
	// every zone.
	OutOfZone DNSBehaviour `json:"outOfZone,omitempty"`
}

// DNSQuery is one query the server received.
type DNSQuery struct {
	Time  time.Time `json:"time"`
	Net   string    `json:"net"` // "udp" or "tcp"
	Name  string    `json:"name"`
	Type  string    `json:"type"`
	Rcode string    `json:"rcode"` // "" when dropped
}

// DNSServer is a running authoritative DNS server.
type DNSServer struct {
	udp, tcp *dns.Server
	addr     string
	mu       sync.Mutex
	zones    []string
	records  map[string][]DNSRecord
	behave   map[string]DNSBehaviour
	outZone  DNSBehaviour
	queries  []DNSQuery
	once     sync.Once
}

// StartDNS starts the server on UDP and TCP at cfg.Addr until Close or ctx
// ends.
func StartDNS(ctx context.Context, cfg DNSConfig) (*DNSServer, error) {
	if err := checkListenAddr("dns", cfg.Addr); err != nil {
		return nil, err
	}
	s := &DNSServer{records: map[string][]DNSRecord{}, behave: map[string]DNSBehaviour{}}
	zones := cfg.Zones
	if len(zones) == 0 {
		zones = []string{"lab.test"}
	}
	for _, z := range zones {
		if _, ok := dns.IsDomainName(z); !ok || z == "" {
			return nil, fmt.Errorf("dns: zone %q is not a domain name", z)
		}
		s.zones = append(s.zones, canon(z))
	}
	switch cfg.OutOfZone {
	case "":
		s.outZone = DNSRefused
	case DNSRefused, DNSNXDomain:
		s.outZone = cfg.OutOfZone
	default:
		return nil, fmt.Errorf("dns: out-of-zone behaviour %q, want %q or %q", cfg.OutOfZone, DNSRefused, DNSNXDomain)
	}
	for name, recs := range cfg.Records {
		if err := s.SetRecords(name, recs...); err != nil {
			return nil, err
		}
	}
	for name, b := range cfg.Behaviours {
		if err := s.SetBehaviour(name, b); err != nil {
			return nil, err
		}
	}
	pc, ln, err := listenBoth(cfg.Addr)
	if err != nil {
		return nil, err
	}
	s.addr = ln.Addr().String()
	h := dns.HandlerFunc(s.serveDNS)
	s.udp = &dns.Server{PacketConn: pc, Handler: h}
	s.tcp = &dns.Server{Listener: ln, Handler: h, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	started := make(chan struct{}, 2)
	s.udp.NotifyStartedFunc = func() { started <- struct{}{} }
	s.tcp.NotifyStartedFunc = func() { started <- struct{}{} }
	go func() { _ = s.udp.ActivateAndServe() }()
	go func() { _ = s.tcp.ActivateAndServe() }()
	for i := 0; i < 2; i++ {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			_ = s.Close()
			return nil, fmt.Errorf("dns: server on %s did not start within 5s", s.addr)
		}
	}
	if ctx != nil {
		go func() {
			<-ctx.Done()
			_ = s.Close()
		}()
	}
	return s, nil
}

// listenBoth opens UDP and TCP on the same IP and port.
func listenBoth(addr string) (net.PacketConn, net.Listener, error) {
	var lastErr error
	for try := 0; try < 20; try++ {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("dns: listen udp %s: %w", addr, err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln, nil
		}
		pc.Close()
		lastErr = err
		if _, port, _ := net.SplitHostPort(addr); port != "0" {
			break
		}
	}
	return nil, nil, fmt.Errorf("dns: listen tcp on %s: %w", addr, lastErr)
}

func canon(name string) string { return dns.CanonicalName(name) }

// SetRecords replaces the records of name.
func (s *DNSServer) SetRecords(name string, recs ...DNSRecord) error {
	if _, ok := dns.IsDomainName(name); !ok || name == "" {
		return fmt.Errorf("dns: record name %q is not a domain name", name)
	}
	for _, r := range recs {
		switch strings.ToUpper(r.Type) {
		case "A":
			if ip := net.ParseIP(r.Value); ip == nil || ip.To4() == nil {
				return fmt.Errorf("dns: A record of %q: %q is not an IPv4 address", name, r.Value)
			}
		case "AAAA":
			if ip := net.ParseIP(r.Value); ip == nil || ip.To4() != nil {
				return fmt.Errorf("dns: AAAA record of %q: %q is not an IPv6 address", name, r.Value)
			}
		case "CNAME":
			if _, ok := dns.IsDomainName(r.Value); !ok || r.Value == "" {
				return fmt.Errorf("dns: CNAME record of %q: target %q is not a domain name", name, r.Value)
			}
		default:
			return fmt.Errorf("dns: record type %q of %q, want A, AAAA or CNAME", r.Type, name)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[canon(name)] = append([]DNSRecord(nil), recs...)
	return nil
}

// SetBehaviour sets how name is answered (DNSAnswer clears it).
func (s *DNSServer) SetBehaviour(name string, b DNSBehaviour) error {
	switch b {
	case DNSAnswer, DNSNXDomain, DNSServFail, DNSRefused, DNSDrop, DNSNoData:
	default:
		return fmt.Errorf("dns: behaviour %q of %q, want one of nxdomain, servfail, refused, drop, nodata", b, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b == DNSAnswer {
		delete(s.behave, canon(name))
	} else {
		s.behave[canon(name)] = b
	}
	return nil
}

// Addr is the real listening address (the same port on UDP and TCP).
func (s *DNSServer) Addr() string { return s.addr }

// Queries returns a copy of every query received so far.
func (s *DNSServer) Queries() []DNSQuery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]DNSQuery(nil), s.queries...)
}

// Close stops both listeners.
func (s *DNSServer) Close() error {
	s.once.Do(func() {
		if s.udp != nil {
			_ = s.udp.Shutdown()
		}
		if s.tcp != nil {
			_ = s.tcp.Shutdown()
		}
	})
	return nil
}

func (s *DNSServer) zoneOf(name string) string {
	best := ""
	for _, z := range s.zones {
		if dns.IsSubDomain(z, name) && len(z) > len(best) {
			best = z
		}
	}
	return best
}

func (s *DNSServer) soa(zone string) dns.RR {
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 30},
		Ns:      "ns." + zone,
		Mbox:    "hostmaster." + zone,
		Serial:  1,
		Refresh: 3600, Retry: 600, Expire: 86400, Minttl: 30,
	}
}

func (s *DNSServer) serveDNS(w dns.ResponseWriter, req *dns.Msg) {
	netw := "udp"
	if _, ok := w.RemoteAddr().(*net.TCPAddr); ok {
		netw = "tcp"
	}
	q := DNSQuery{Time: time.Now(), Net: netw}
	if len(req.Question) > 0 {
		q.Name, q.Type = canon(req.Question[0].Name), dns.TypeToString[req.Question[0].Qtype]
	}
	s.mu.Lock()
	m, drop := s.answer(req)
	if !drop {
		q.Rcode = dns.RcodeToString[m.Rcode]
	}
	if len(s.queries) < maxRecorded {
		s.queries = append(s.queries, q)
	}
	s.mu.Unlock()
	if drop {
		return
	}
	_ = w.WriteMsg(m)
}

// answer builds the reply; s.mu is held.
func (s *DNSServer) answer(req *dns.Msg) (*dns.Msg, bool) {
	m := new(dns.Msg)
	m.SetReply(req)
	if req.Opcode != dns.OpcodeQuery || len(req.Question) != 1 {
		m.Rcode = dns.RcodeNotImplemented
		return m, false
	}
	qn, qt := canon(req.Question[0].Name), req.Question[0].Qtype
	zone := s.zoneOf(qn)
	if zone == "" {
		if s.outZone == DNSNXDomain {
			m.Rcode = dns.RcodeNameError
		} else {
			m.Rcode = dns.RcodeRefused
		}
		return m, false
	}
	m.Authoritative = true
	name := qn
	for depth := 0; depth < 8; depth++ {
		switch s.behave[name] {
		case DNSDrop:
			return nil, true
		case DNSNXDomain:
			m.Rcode = dns.RcodeNameError
			m.Ns = append(m.Ns, s.soa(zone))
			return m, false
		case DNSServFail:
			m.Rcode = dns.RcodeServerFailure
			m.Answer = nil
			return m, false
		case DNSRefused:
			m.Rcode = dns.RcodeRefused
			m.Answer = nil
			return m, false
		case DNSNoData:
			m.Ns = append(m.Ns, s.soa(zone))
			return m, false
		}
		recs, exists := s.records[name]
		if name == zone {
			exists = true
			if qt == dns.TypeSOA {
				m.Answer = append(m.Answer, s.soa(zone))
				return m, false
			}
		}
		if !exists {
			m.Rcode = dns.RcodeNameError
			m.Ns = append(m.Ns, s.soa(zone))
			return m, false
		}
		var cname string
		for _, r := range recs {
			if strings.EqualFold(r.Type, "CNAME") {
				cname = canon(r.Value)
				m.Answer = append(m.Answer, rr(name, r))
			}
		}
		if cname != "" && qt != dns.TypeCNAME {
			// Follow the chain inside our zones; outside them the
			// resolver must chase it.
			z := s.zoneOf(cname)
			if z == "" {
				return m, false
			}
			zone, name = z, cname
			continue
		}
		if cname != "" {
			return m, false
		}
		for _, r := range recs {
			if dns.StringToType[strings.ToUpper(r.Type)] == qt || qt == dns.TypeANY {
				m.Answer = append(m.Answer, rr(name, r))
			}
		}
		if len(m.Answer) == 0 {
			m.Ns = append(m.Ns, s.soa(zone))
		}
		return m, false
	}
	m.Rcode = dns.RcodeServerFailure // CNAME chain too long
	return m, false
}

func rr(name string, r DNSRecord) dns.RR {
	ttl := r.TTL
	if ttl == 0 {
		ttl = 30
	}
	hdr := dns.RR_Header{Name: name, Class: dns.ClassINET, Ttl: ttl}
	switch strings.ToUpper(r.Type) {
	case "A":
		hdr.Rrtype = dns.TypeA
		return &dns.A{Hdr: hdr, A: net.ParseIP(r.Value).To4()}
	case "AAAA":
		hdr.Rrtype = dns.TypeAAAA
		return &dns.AAAA{Hdr: hdr, AAAA: net.ParseIP(r.Value)}
	default:
		hdr.Rrtype = dns.TypeCNAME
		return &dns.CNAME{Hdr: hdr, Target: canon(r.Value)}
	}
}

// ErrDNSNoAddress is returned by LookupIP when the name has no address.
var ErrDNSNoAddress = errors.New("no address")

// LookupIP asks the DNS server at nameserver (IP:PORT) for the A records
// of host (following CNAMEs in the answer) over UDP, with the context's
// deadline or 3 s. It is what tests and lab clients use to reach lab names
// without touching the machine's resolver.
func LookupIP(ctx context.Context, nameserver, host string) ([]net.IP, error) {
	c := &dns.Client{Net: "udp", Timeout: 3 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion(canon(host), dns.TypeA)
	r, _, err := c.ExchangeContext(ctx, m, nameserver)
	if err != nil {
		return nil, fmt.Errorf("lookup %s via %s: %w", host, nameserver, err)
	}
	if r.Rcode != dns.RcodeSuccess {
		return nil, fmt.Errorf("lookup %s via %s: rcode %s", host, nameserver, dns.RcodeToString[r.Rcode])
	}
	var ips []net.IP
	for _, a := range r.Answer {
		if a, ok := a.(*dns.A); ok {
			ips = append(ips, a.A)
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("lookup %s via %s: %w", host, nameserver, ErrDNSNoAddress)
	}
	return ips, nil
}

// DialContextVia returns a dial function that resolves host names through
// the DNS server at nameserver (IP literals are dialled as they are).
func DialContextVia(nameserver string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if net.ParseIP(host) == nil {
			ips, err := LookupIP(ctx, nameserver, host)
			if err != nil {
				return nil, err
			}
			host = ips[0].String()
		}
		return d.DialContext(ctx, network, net.JoinHostPort(host, port))
	}
}
