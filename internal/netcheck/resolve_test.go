package netcheck

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// zone is the test nameserver's data: what it answers for each name.
// Names not listed are NXDOMAIN.
var zone = map[string][]string{
	"a.example.test.":        {"A 198.51.100.7", "AAAA 2001:db8::7"},
	"v4.example.test.":       {"A 10.1.2.3"},
	"v6.example.test.":       {"AAAA fd00::10"},
	"alias.example.test.":    {"CNAME mid.example.test.", "CNAME a.example.test."},
	"dangling.example.test.": {"CNAME registry.privatelink.test."},
	"reg.example.test.":      {"A 10.9.9.9"},
	"nodata.corp.test.":      {},
	"cgnat.example.test.":    {"A 100.64.1.1"},
}

// dnsHandler answers from zone, with special names for the failures.
func dnsHandler(w dns.ResponseWriter, req *dns.Msg) {
	q := req.Question[0]
	m := new(dns.Msg)
	m.SetReply(req)
	udp := w.LocalAddr().Network() == "udp"
	switch name := strings.ToLower(q.Name); {
	case strings.HasPrefix(name, "silent."):
		return // never answers
	case strings.HasPrefix(name, "servfail."):
		m.Rcode = dns.RcodeServerFailure
	case strings.HasPrefix(name, "refused."):
		m.Rcode = dns.RcodeRefused
	case strings.HasPrefix(name, "big.") && udp:
		m.Truncated = true
	case strings.HasPrefix(name, "big."):
		for i := 1; i <= 40 && q.Qtype == dns.TypeA; i++ {
			m.Answer = append(m.Answer, rr(name, fmt.Sprintf("A 10.0.1.%d", i)))
		}
	default:
		recs, ok := zone[name]
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		owner := name
		for _, r := range recs {
			if t, target, _ := strings.Cut(r, " "); t == "CNAME" || t == dns.TypeToString[q.Qtype] {
				m.Answer = append(m.Answer, rr(owner, r))
				if t == "CNAME" {
					owner = target
					for _, r2 := range zone[target] {
						if t2, _, _ := strings.Cut(r2, " "); t2 == dns.TypeToString[q.Qtype] {
							m.Answer = append(m.Answer, rr(target, r2))
						}
					}
				}
			}
		}
	}
	w.WriteMsg(m)
}

func rr(owner, data string) dns.RR {
	r, err := dns.NewRR(owner + " 60 IN " + data)
	if err != nil {
		panic(err)
	}
	return r
}

// startDNS runs handler on UDP and TCP on the same loopback port and
// returns HOST:PORT.
func startDNS(t *testing.T, handler dns.HandlerFunc) string {
	t.Helper()
	for range 10 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err != nil {
			pc.Close()
			continue // the TCP port is taken; try another
		}
		for _, s := range []*dns.Server{{PacketConn: pc, Handler: handler}, {Listener: l, Handler: handler}} {
			started := make(chan struct{})
			s.NotifyStartedFunc = func() { close(started) }
			go s.ActivateAndServe()
			<-started
			t.Cleanup(func() { s.Shutdown() })
		}
		return pc.LocalAddr().String()
	}
	t.Fatal("no loopback port free for both UDP and TCP")
	return ""
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const testDNSTimeout = 300 * time.Millisecond

func newChecker(t *testing.T, cfg Config) *Checker {
	t.Helper()
	if cfg.DNSTimeout == 0 {
		cfg.DNSTimeout = testDNSTimeout
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return c
}

// resolution is the part of a Resolution a test compares.
type resolution struct {
	Source, Name, Rcode string
	Code                verdict.Code
	CNAMEs              []string
	Answers             []report.Answer
	Queried             []string // NAME TYPE RCODE of each query
}

func summarize(r *report.Resolution) resolution {
	s := resolution{Source: r.Source, Name: r.Name, Rcode: r.Rcode, Code: r.Code, CNAMEs: r.CNAMEs, Answers: r.Answers}
	for _, q := range r.Queries {
		s.Queried = append(s.Queried, q.Name+" "+q.Type+" "+q.Rcode)
	}
	return s
}

func TestResolve(t *testing.T) {
	ns := startDNS(t, dnsHandler)
	c := newChecker(t, Config{Nameservers: []string{ns}})
	ok := func(name string) []string { return []string{name + " A NOERROR", name + " AAAA NOERROR"} }
	tests := []struct {
		host string
		want resolution
	}{
		{"a.example.test", resolution{Source: "dns", Name: "a.example.test", Rcode: "NOERROR",
			Answers: []report.Answer{{Address: "198.51.100.7", Scope: "public"}, {Address: "2001:db8::7", Scope: "documentation"}},
			Queried: ok("a.example.test")}},
		{"A.Example.Test.", resolution{Source: "dns", Name: "A.Example.Test", Rcode: "NOERROR",
			Answers: []report.Answer{{Address: "198.51.100.7", Scope: "public"}, {Address: "2001:db8::7", Scope: "documentation"}},
			Queried: ok("A.Example.Test")}},
		{"v4.example.test", resolution{Source: "dns", Name: "v4.example.test", Rcode: "NOERROR",
			Answers: []report.Answer{{Address: "10.1.2.3", Scope: "private"}}, Queried: ok("v4.example.test")}},
		{"v6.example.test", resolution{Source: "dns", Name: "v6.example.test", Rcode: "NOERROR",
			Answers: []report.Answer{{Address: "fd00::10", Scope: "private"}}, Queried: ok("v6.example.test")}},
		{"cgnat.example.test", resolution{Source: "dns", Name: "cgnat.example.test", Rcode: "NOERROR",
			Answers: []report.Answer{{Address: "100.64.1.1", Scope: "cgnat"}}, Queried: ok("cgnat.example.test")}},
		{"alias.example.test", resolution{Source: "dns", Name: "alias.example.test", Rcode: "NOERROR",
			CNAMEs:  []string{"mid.example.test", "a.example.test"},
			Answers: []report.Answer{{Address: "198.51.100.7", Scope: "public"}, {Address: "2001:db8::7", Scope: "documentation"}},
			Queried: ok("alias.example.test")}},
		{"dangling.example.test", resolution{Source: "dns", Name: "dangling.example.test", Rcode: "NOERROR", Code: verdict.DNSNoAnswer,
			CNAMEs: []string{"registry.privatelink.test"}, Queried: ok("dangling.example.test")}},
		{"nx.example.test", resolution{Source: "dns", Name: "nx.example.test", Rcode: "NXDOMAIN", Code: verdict.DNSNXDomain,
			Queried: []string{"nx.example.test A NXDOMAIN", "nx.example.test AAAA NXDOMAIN"}}},
		{"servfail.example.test", resolution{Source: "dns", Name: "servfail.example.test", Rcode: "SERVFAIL", Code: verdict.DNSServFail,
			Queried: []string{"servfail.example.test A SERVFAIL", "servfail.example.test AAAA SERVFAIL"}}},
		{"refused.example.test", resolution{Source: "dns", Name: "refused.example.test", Rcode: "REFUSED", Code: verdict.DNSRefused,
			Queried: []string{"refused.example.test A REFUSED", "refused.example.test AAAA REFUSED"}}},
		{"silent.example.test", resolution{Source: "dns", Name: "silent.example.test", Rcode: "TIMEOUT", Code: verdict.DNSTimeout,
			Queried: []string{"silent.example.test A TIMEOUT", "silent.example.test AAAA TIMEOUT"}}},
		{"big.example.test", resolution{Source: "dns", Name: "big.example.test", Rcode: "NOERROR",
			Answers: func() (as []report.Answer) {
				for i := 1; i <= 40; i++ {
					as = append(as, report.Answer{Address: fmt.Sprintf("10.0.1.%d", i), Scope: "private"})
				}
				return as
			}(),
			Queried: []string{"big.example.test A NOERROR", "big.example.test A NOERROR", "big.example.test AAAA NOERROR", "big.example.test AAAA NOERROR"}}},
		{"192.0.2.1", resolution{Source: "literal", Name: "192.0.2.1", Answers: []report.Answer{{Address: "192.0.2.1", Scope: "public"}}}},
		{"[::1]", resolution{Source: "literal", Name: "[::1]", Answers: []report.Answer{{Address: "::1", Scope: "loopback"}}}},
		{"bad..name", resolution{Source: "dns", Name: "bad..name", Code: verdict.DNSError}},
		{"", resolution{Source: "dns", Code: verdict.DNSError}},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got := c.Resolve(context.Background(), tt.host)
			if d := cmp.Diff(tt.want, summarize(got)); d != "" {
				t.Errorf("Resolve(%q) mismatch (-want +got):\n%s", tt.host, d)
			}
			if (got.Code == "") != (got.Error == "") {
				t.Errorf("Resolve(%q): Code %q with Error %q, want both or neither", tt.host, got.Code, got.Error)
			}
			if got.Source == "dns" && got.Code == "" && got.Nameserver != ns {
				t.Errorf("Resolve(%q).Nameserver = %q, want %q", tt.host, got.Nameserver, ns)
			}
			for _, q := range got.Queries {
				if q.Nameserver != ns || q.DurationMS < 0 {
					t.Errorf("Resolve(%q) query %+v: want nameserver %s and a duration", tt.host, q, ns)
				}
			}
		})
	}
}

func TestResolveErrorText(t *testing.T) {
	ns := startDNS(t, dnsHandler)
	c := newChecker(t, Config{Nameservers: []string{ns}})
	tests := []struct{ host, want string }{
		{"nx.example.test", "nx.example.test does not exist (NXDOMAIN from " + ns + ")"},
		{"dangling.example.test", "dangling.example.test has no A or AAAA record (NOERROR from " + ns + "); CNAME chain dangling.example.test -> registry.privatelink.test"},
		{"servfail.example.test", "SERVFAIL for servfail.example.test from " + ns},
		{"silent.example.test", "no nameserver answered silent.example.test within 300ms (tried " + ns + ")"},
	}
	for _, tt := range tests {
		if got := c.Resolve(context.Background(), tt.host).Error; got != tt.want {
			t.Errorf("Resolve(%q).Error = %q, want %q", tt.host, got, tt.want)
		}
	}
}

func TestResolveTimeoutWithinBudget(t *testing.T) {
	ns := startDNS(t, dnsHandler)
	c := newChecker(t, Config{Nameservers: []string{ns}})
	start := time.Now()
	got := c.Resolve(context.Background(), "silent.example.test")
	elapsed := time.Since(start)
	if got.Code != verdict.DNSTimeout {
		t.Fatalf("Resolve(silent) code = %q, want %q", got.Code, verdict.DNSTimeout)
	}
	// A and AAAA go out together: one DNSTimeout, not two.
	if elapsed < testDNSTimeout || elapsed > 2*testDNSTimeout {
		t.Errorf("Resolve(silent) took %v, want between %v and %v", elapsed, testDNSTimeout, 2*testDNSTimeout)
	}

	// A cancelled context stops at once.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start = time.Now()
	got = c.Resolve(ctx, "silent.example.test")
	if elapsed := time.Since(start); elapsed > testDNSTimeout/2 || got.Code != verdict.DNSError {
		t.Errorf("Resolve(silent) with cancelled context = %q after %v, want %q well before %v", got.Code, elapsed, verdict.DNSError, testDNSTimeout)
	}
}

func TestResolveNameserverOrder(t *testing.T) {
	good := startDNS(t, dnsHandler)
	silent := startDNS(t, func(dns.ResponseWriter, *dns.Msg) {})
	refusing := startDNS(t, func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		w.WriteMsg(m.SetRcode(r, dns.RcodeRefused))
	})
	nxdomain := startDNS(t, func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		w.WriteMsg(m.SetRcode(r, dns.RcodeNameError))
	})
	tests := []struct {
		name        string
		nameservers []string
		code        verdict.Code
		answeredBy  string
		queried     []string // NAMESERVER RCODE of the A queries
	}{
		{"first silent", []string{silent, good}, "", good, []string{silent + " TIMEOUT", good + " NOERROR"}},
		{"first refuses", []string{refusing, good}, "", good, []string{refusing + " REFUSED", good + " NOERROR"}},
		{"first says NXDOMAIN", []string{nxdomain, good}, verdict.DNSNXDomain, nxdomain, []string{nxdomain + " NXDOMAIN"}},
		{"reply beats silence", []string{silent, refusing}, verdict.DNSRefused, refusing, []string{silent + " TIMEOUT", refusing + " REFUSED"}},
		{"all silent", []string{silent, silent}, verdict.DNSTimeout, silent, []string{silent + " TIMEOUT", silent + " TIMEOUT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChecker(t, Config{Nameservers: tt.nameservers})
			got := c.Resolve(context.Background(), "v4.example.test")
			var queried []string
			for _, q := range got.Queries {
				if q.Type == "A" {
					queried = append(queried, q.Nameserver+" "+q.Rcode)
				}
			}
			if got.Code != tt.code || got.Nameserver != tt.answeredBy || !cmp.Equal(queried, tt.queried) {
				t.Errorf("Resolve(v4.example.test) via %v = code %q from %q after %v, want code %q from %q after %v",
					tt.nameservers, got.Code, got.Nameserver, queried, tt.code, tt.answeredBy, tt.queried)
			}
		})
	}
}

func TestResolveSearch(t *testing.T) {
	ns := startDNS(t, dnsHandler)
	q := func(names ...string) (out []string) {
		for _, n := range names {
			rc := "NXDOMAIN"
			if _, ok := zone[strings.ToLower(n)+"."]; ok {
				rc = "NOERROR"
			}
			out = append(out, n+" A "+rc, n+" AAAA "+rc)
		}
		return out
	}
	tests := []struct {
		name, resolv, host string
		want               resolution
	}{
		{"short name walks the search list", "search corp.test example.test\n", "reg",
			resolution{Source: "dns", Name: "reg.example.test", Rcode: "NOERROR",
				Answers: []report.Answer{{Address: "10.9.9.9", Scope: "private"}}, Queried: q("reg.corp.test", "reg.example.test")}},
		{"enough dots: as is first", "search corp.test example.test\n", "v4.example.test",
			resolution{Source: "dns", Name: "v4.example.test", Rcode: "NOERROR",
				Answers: []report.Answer{{Address: "10.1.2.3", Scope: "private"}}, Queried: q("v4.example.test")}},
		{"ndots:5 searches first", "search corp.test\noptions ndots:5\n", "v4.example.test",
			resolution{Source: "dns", Name: "v4.example.test", Rcode: "NOERROR",
				Answers: []report.Answer{{Address: "10.1.2.3", Scope: "private"}}, Queried: q("v4.example.test.corp.test", "v4.example.test")}},
		{"trailing dot: as is only", "search corp.test\noptions ndots:5\n", "nx.example.test.",
			resolution{Source: "dns", Name: "nx.example.test", Rcode: "NXDOMAIN", Code: verdict.DNSNXDomain, Queried: q("nx.example.test")}},
		{"as-is failure is the one reported", "search corp.test example.test\n", "nx.example.test",
			resolution{Source: "dns", Name: "nx.example.test", Rcode: "NXDOMAIN", Code: verdict.DNSNXDomain,
				Queried: q("nx.example.test", "nx.example.test.corp.test", "nx.example.test.example.test")}},
		{"no data beats NXDOMAIN", "search corp.test example.test\n", "nodata",
			resolution{Source: "dns", Name: "nodata.corp.test", Rcode: "NOERROR", Code: verdict.DNSNoAnswer,
				Queried: q("nodata.corp.test", "nodata.example.test", "nodata")}},
		{"domain is a one-entry search list", "domain example.test\n", "reg",
			resolution{Source: "dns", Name: "reg.example.test", Rcode: "NOERROR",
				Answers: []report.Answer{{Address: "10.9.9.9", Scope: "private"}}, Queried: q("reg.example.test")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChecker(t, Config{ResolvConf: writeFile(t, "resolv.conf", tt.resolv), Nameservers: []string{ns}})
			if d := cmp.Diff(tt.want, summarize(c.Resolve(context.Background(), tt.host))); d != "" {
				t.Errorf("Resolve(%q) with %q mismatch (-want +got):\n%s", tt.host, tt.resolv, d)
			}
		})
	}
}

func TestResolveHostsAndNoNameserver(t *testing.T) {
	ns := startDNS(t, dnsHandler)
	hosts := filepath.Join("testdata", "valid-hosts")
	c := newChecker(t, Config{HostsFile: hosts, ResolvConf: writeFile(t, "resolv.conf", "nameserver "+strings.Split(ns, ":")[0]+"\n"), Nameservers: []string{ns}})
	got := c.Resolve(context.Background(), "Registry.corp.example")
	want := resolution{Source: "hosts", Name: "Registry.corp.example", Answers: []report.Answer{
		{Address: "10.20.30.40", Scope: "private"}, {Address: "10.20.30.41", Scope: "private"}, {Address: "fd00::40", Scope: "private"}}}
	if d := cmp.Diff(want, summarize(got)); d != "" {
		t.Errorf("Resolve(Registry.corp.example) mismatch (-want +got):\n%s", d)
	}
	if got := c.Resolve(context.Background(), "a.example.test"); got.Source != "dns" || got.Code != "" {
		t.Errorf("Resolve(a.example.test) = source %q code %q, want dns and no failure (not in the hosts file)", got.Source, got.Code)
	}

	empty := filepath.Join("testdata", "valid-resolv-empty.conf")
	c = newChecker(t, Config{ResolvConf: empty})
	if got := c.Resolve(context.Background(), "a.example.test"); got.Code != verdict.DNSNoNameserver || !strings.Contains(got.Error, empty) {
		t.Errorf("Resolve with %s = %q %q, want %q naming the file", empty, got.Code, got.Error, verdict.DNSNoNameserver)
	}
}

func TestNew(t *testing.T) {
	c := newChecker(t, Config{ResolvConf: filepath.Join("testdata", "valid-resolv.conf"), Nameservers: []string{"127.0.0.1:5353", "::1"}})
	want := report.Resolver{
		ResolvConf:  filepath.Join("testdata", "valid-resolv.conf"),
		Nameservers: []string{"127.0.0.1:5353", "[::1]:53"},
		Search:      []string{"ec2.internal", "corp.example"},
		Ndots:       2,
	}
	if d := cmp.Diff(want, c.Resolver()); d != "" {
		t.Errorf("Resolver() mismatch (-want +got):\n%s", d)
	}
	if c.cfg.ConnectTimeout != DefaultConnectTimeout || c.cfg.TLSTimeout != DefaultTLSTimeout {
		t.Errorf("defaults: connect %v tls %v, want %v %v", c.cfg.ConnectTimeout, c.cfg.TLSTimeout, DefaultConnectTimeout, DefaultTLSTimeout)
	}
	if c, _ := New(Config{}); c.cfg.DNSTimeout != DefaultDNSTimeout || c.Resolver().Ndots != 1 {
		t.Errorf("New(Config{}) = DNSTimeout %v ndots %d, want %v and 1", c.cfg.DNSTimeout, c.Resolver().Ndots, DefaultDNSTimeout)
	}

	if c, err := New(Config{HostsFile: "testdata/junk-hosts-address"}); err != nil {
		t.Errorf("New(junk hosts file) error = %v, want the line skipped", err)
	} else if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0], "line 2 skipped") {
		t.Errorf("New(junk hosts file) warnings = %q, want one naming line 2", w)
	}

	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{ResolvConf: "testdata/invalid-resolv-nameserver.conf"}, `resolv.conf testdata/invalid-resolv-nameserver.conf: line 3: nameserver "abc" is not an IP address`},
		{Config{HostsFile: "testdata/nope"}, `hosts file testdata/nope: cannot open: no such file or directory`},
		{Config{Nameservers: []string{"dns.example"}}, `nameserver "dns.example": want an IP address or IP:PORT`},
	} {
		if _, err := New(tt.cfg); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("New(%+v) error = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}
