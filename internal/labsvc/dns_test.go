package labsvc

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func startDNS(t *testing.T, cfg DNSConfig) *DNSServer {
	t.Helper()
	cfg.Addr = "127.0.0.53:0"
	s, err := StartDNS(context.Background(), cfg)
	if err != nil {
		t.Fatalf("StartDNS: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestDNSAnswers(t *testing.T) {
	t.Parallel()
	s := startDNS(t, DNSConfig{
		Records: map[string][]DNSRecord{
			"registry.lab.test": {{Type: "A", Value: "127.0.0.10", TTL: 60}, {Type: "AAAA", Value: "::1"}},
			"alias.lab.test":    {{Type: "CNAME", Value: "registry.lab.test"}},
			"dangling.lab.test": {{Type: "CNAME", Value: "gone.lab.test"}},
			"outside.lab.test":  {{Type: "CNAME", Value: "elsewhere.example."}},
			"v4only.lab.test":   {{Type: "A", Value: "198.51.100.7"}},
			"nxdomain.lab.test": {{Type: "A", Value: "127.0.0.1"}},
			"nodata.lab.test":   {{Type: "A", Value: "127.0.0.1"}},
			"to-fail.lab.test":  {{Type: "CNAME", Value: "servfail.lab.test"}},
			"servfail.lab.test": {{Type: "A", Value: "127.0.0.1"}},
			"refused.lab.test":  {{Type: "A", Value: "127.0.0.1"}},
		},
		Behaviours: map[string]DNSBehaviour{
			"nxdomain.lab.test": DNSNXDomain,
			"servfail.lab.test": DNSServFail,
			"refused.lab.test":  DNSRefused,
			"nodata.lab.test":   DNSNoData,
			"drop.lab.test":     DNSDrop,
		},
	})
	tests := []struct {
		name      string
		qtype     uint16
		wantRcode int
		wantAns   []string // "TYPE value" in order
	}{
		{"registry.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"A 127.0.0.10"}},
		{"REGISTRY.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"A 127.0.0.10"}},
		{"registry.lab.test", dns.TypeAAAA, dns.RcodeSuccess, []string{"AAAA ::1"}},
		{"alias.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"CNAME registry.lab.test.", "A 127.0.0.10"}},
		{"dangling.lab.test", dns.TypeA, dns.RcodeNameError, []string{"CNAME gone.lab.test."}},
		{"outside.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"CNAME elsewhere.example."}},
		{"v4only.lab.test", dns.TypeAAAA, dns.RcodeSuccess, nil},
		{"missing.lab.test", dns.TypeA, dns.RcodeNameError, nil},
		{"nxdomain.lab.test", dns.TypeA, dns.RcodeNameError, nil},
		{"nodata.lab.test", dns.TypeA, dns.RcodeSuccess, nil},
		{"servfail.lab.test", dns.TypeA, dns.RcodeServerFailure, nil},
		{"to-fail.lab.test", dns.TypeA, dns.RcodeServerFailure, nil},
		{"refused.lab.test", dns.TypeA, dns.RcodeRefused, nil},
		{"example.com", dns.TypeA, dns.RcodeRefused, nil},
		{"lab.test", dns.TypeSOA, dns.RcodeSuccess, []string{"SOA ns.lab.test."}},
	}
	for _, netw := range []string{"udp", "tcp"} {
		for _, tt := range tests {
			t.Run(netw+"/"+tt.name+"/"+dns.TypeToString[tt.qtype], func(t *testing.T) {
				c := &dns.Client{Net: netw, Timeout: 2 * time.Second}
				m := new(dns.Msg)
				m.SetQuestion(dns.Fqdn(tt.name), tt.qtype)
				r, _, err := c.Exchange(m, s.Addr())
				if err != nil {
					t.Fatalf("Exchange(%s %s): %v", tt.name, dns.TypeToString[tt.qtype], err)
				}
				var got []string
				for _, a := range r.Answer {
					switch a := a.(type) {
					case *dns.A:
						got = append(got, "A "+a.A.String())
					case *dns.AAAA:
						got = append(got, "AAAA "+a.AAAA.String())
					case *dns.CNAME:
						got = append(got, "CNAME "+a.Target)
					case *dns.SOA:
						got = append(got, "SOA "+a.Ns)
					}
				}
				if r.Rcode != tt.wantRcode || strings.Join(got, ",") != strings.Join(tt.wantAns, ",") {
					t.Errorf("query %s %s = %s %v, want %s %v", tt.name, dns.TypeToString[tt.qtype], dns.RcodeToString[r.Rcode], got, dns.RcodeToString[tt.wantRcode], tt.wantAns)
				}
			})
		}
	}
	t.Run("ttl", func(t *testing.T) {
		m := new(dns.Msg)
		m.SetQuestion("registry.lab.test.", dns.TypeA)
		r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, s.Addr())
		if err != nil || len(r.Answer) != 1 || r.Answer[0].Header().Ttl != 60 || !r.Authoritative {
			t.Errorf("A registry.lab.test = %v %v, want one authoritative answer with TTL 60", r, err)
		}
	})
	t.Run("drop", func(t *testing.T) {
		m := new(dns.Msg)
		m.SetQuestion("drop.lab.test.", dns.TypeA)
		start := time.Now()
		_, _, err := (&dns.Client{Timeout: 300 * time.Millisecond}).Exchange(m, s.Addr())
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("query drop.lab.test = %v after %v, want a timeout", err, time.Since(start))
		}
	})
}

func TestDNSOutOfZoneNXDomainAndChanges(t *testing.T) {
	t.Parallel()
	s := startDNS(t, DNSConfig{Zones: []string{"corp.internal"}, OutOfZone: DNSNXDomain})
	ctx := context.Background()
	if _, err := LookupIP(ctx, s.Addr(), "example.com"); err == nil || !strings.Contains(err.Error(), "NXDOMAIN") {
		t.Errorf("LookupIP(example.com) = %v, want NXDOMAIN", err)
	}
	if err := s.SetRecords("reg.corp.internal", DNSRecord{Type: "A", Value: "127.0.0.10"}); err != nil {
		t.Fatalf("SetRecords: %v", err)
	}
	ips, err := LookupIP(ctx, s.Addr(), "reg.corp.internal")
	if err != nil || len(ips) != 1 || !ips[0].Equal(net.ParseIP("127.0.0.10")) {
		t.Errorf("LookupIP(reg.corp.internal) = %v, %v, want [127.0.0.10]", ips, err)
	}
	if err := s.SetBehaviour("reg.corp.internal", DNSServFail); err != nil {
		t.Fatalf("SetBehaviour: %v", err)
	}
	if _, err := LookupIP(ctx, s.Addr(), "reg.corp.internal"); err == nil || !strings.Contains(err.Error(), "SERVFAIL") {
		t.Errorf("LookupIP after servfail = %v, want SERVFAIL", err)
	}
	q := s.Queries()
	if len(q) != 3 || q[2].Name != "reg.corp.internal." || q[2].Rcode != "SERVFAIL" || q[0].Net != "udp" {
		t.Errorf("queries = %+v, want 3 with the last SERVFAIL for reg.corp.internal.", q)
	}
}

func TestDNSRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]DNSConfig{
		"invalid-addr":      {Addr: "127.0.0.53"},
		"invalid-wildcard":  {Addr: "[::]:0"},
		"invalid-record":    {Addr: "127.0.0.53:0", Records: map[string][]DNSRecord{"a.lab.test": {{Type: "A", Value: "::1"}}}},
		"invalid-type":      {Addr: "127.0.0.53:0", Records: map[string][]DNSRecord{"a.lab.test": {{Type: "MX", Value: "x"}}}},
		"invalid-behaviour": {Addr: "127.0.0.53:0", Behaviours: map[string]DNSBehaviour{"a.lab.test": "explode"}},
		"invalid-outofzone": {Addr: "127.0.0.53:0", OutOfZone: DNSServFail},
	} {
		if s, err := StartDNS(context.Background(), cfg); err == nil {
			s.Close()
			t.Errorf("StartDNS(%s) = nil error, want an error", name)
		}
	}
}
