package monitor

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/pull"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestMTUTestOncePerInterval: the agent's walk runs the path MTU test when
// the handshake stalls (the registry's name points at a server that
// accepts and never speaks TLS), at most once per interval: the next walk
// within it keeps the plain verdict, and the metrics count one test.
func TestMTUTestOncePerInterval(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.46.10:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // silent: never a TLS byte
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	st := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.46.53", Registry: "127.0.46.11", Token: "127.0.46.12", Blob: "127.0.46.13", Blob2: "127.0.46.14"},
		DNSRecords: map[string][]labsvc.DNSRecord{"silent.lab.test": {{Type: "A", Value: "127.0.46.10"}}}})
	o := labOptions(t, labNode{name: "n1", stack: st})
	o.Images = []string{"silent.lab.test:" + port + "/app:1"}
	o.Net.TLSTimeout = 500 * time.Millisecond
	o.Once = true
	a, err := New(o, &syncWriter{b: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	var reps []*report.ProbeReport
	probe := a.probe
	a.probe = func(ctx context.Context, po pull.Options) (*report.ProbeReport, error) {
		rep, err := probe(ctx, po)
		reps = append(reps, rep)
		return rep, err
	}
	tg := a.targets()[0]
	ctx := context.Background()
	a.walk(ctx, tg, true)
	a.walk(ctx, tg, true)
	if len(reps) != 2 || reps[0] == nil || reps[1] == nil {
		t.Fatalf("walks %d, want 2 reports", len(reps))
	}
	first, second := reps[0].Endpoints[0], reps[1].Endpoints[0]
	if first.MTU == nil || first.MTU.Result != report.MTUNotMTU || !strings.Contains(reps[0].Verdict.Summary, "the MTU test was done") {
		t.Errorf("first walk: MTU %+v, summary %q; want the test run (not-mtu: the server never speaks)", first.MTU, reps[0].Verdict.Summary)
	}
	if second.MTU != nil || reps[1].Verdict.Code != verdict.TLSHandshakeTimeout {
		t.Errorf("second walk within the interval: MTU %+v, verdict %s; want no test, TLS_HANDSHAKE_TIMEOUT", second.MTU, reps[1].Verdict.Code)
	}
	s := series(t, a.Metrics)
	for _, m := range s[mMTUTests] {
		want := 0.0
		if labelValue(m, "result") == report.MTUNotMTU {
			want = 1
		}
		if got := m.GetCounter().GetValue(); got != want {
			t.Errorf("%s{result=%s} = %v, want %v", mMTUTests, labelValue(m, "result"), got, want)
		}
	}
	if len(s[mPathMTU]) != 0 {
		t.Errorf("%s has %d series, want none: nothing was proved", mPathMTU, len(s[mPathMTU]))
	}
	// after the interval, a stall may run the test again
	a.now = func() time.Time { return time.Now().Add(2 * o.Interval) }
	a.walk(ctx, tg, true)
	if reps[2].Endpoints[0].MTU == nil {
		t.Errorf("a walk after the interval ran no MTU test")
	}
}

// TestPathMetrics: a walk that proved a black hole publishes the path MTU
// and its rate by mode; a passing walk of the host deletes the MTU series
// (the tunnel was mended); a failing walk without a test keeps it; a host
// no target uses leaves no path series.
func TestPathMetrics(t *testing.T) {
	m := NewMetrics()
	const host = "harbor.corp.example"
	hole := &report.ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusFail, Code: verdict.PathMTUBlackHole},
		Endpoints: []*report.Endpoint{{Host: host, Role: verdict.RoleRegistry, MTU: &report.MTUTest{Result: report.MTUBlackHole, PathMTU: 1400, WorkingMSS: 1360, FailingMSS: 1361}}},
		Transfer:  &report.Transfer{Bytes: 2 << 20, DurationMS: 500}}
	m.observePath(host, "full", hole)
	s := series(t, m)
	if len(s[mPathMTU]) != 1 || s[mPathMTU][0].GetGauge().GetValue() != 1400 || labelValue(s[mPathMTU][0], "image_host") != host {
		t.Fatalf("%s = %v, want one series of 1400 for %s", mPathMTU, s[mPathMTU], host)
	}
	if len(s[mRate]) != 1 || labelValue(s[mRate][0], "mode") != "full" || s[mRate][0].GetGauge().GetValue() != 4<<20 {
		t.Errorf("%s = %v, want one full series of %d bytes/s", mRate, s[mRate], 4<<20)
	}
	for _, c := range s[mMTUTests] {
		want := 0.0
		if labelValue(c, "result") == report.MTUBlackHole {
			want = 1
		}
		if c.GetCounter().GetValue() != want {
			t.Errorf("%s{result=%s} = %v, want %v", mMTUTests, labelValue(c, "result"), c.GetCounter().GetValue(), want)
		}
	}
	// a later stall within the interval runs no test: the proved MTU stays
	m.observePath(host, "quick", &report.ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusFail, Code: verdict.TLSHandshakeTimeout},
		Endpoints: []*report.Endpoint{{Host: host, Role: verdict.RoleRegistry}}})
	if n := len(series(t, m)[mPathMTU]); n != 1 {
		t.Errorf("after a failing walk with no test: %d %s series, want the proved one kept", n, mPathMTU)
	}
	m.observePath(host, "quick", &report.ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusOK, Code: verdict.OK},
		Endpoints: []*report.Endpoint{{Host: host, Role: verdict.RoleRegistry}}, Transfer: &report.Transfer{Bytes: 1000, DurationMS: 10}})
	s = series(t, m)
	if len(s[mPathMTU]) != 0 {
		t.Errorf("after a passing walk: %d %s series, want none", len(s[mPathMTU]), mPathMTU)
	}
	if len(s[mRate]) != 2 {
		t.Errorf("%s has %d series, want quick and full", mRate, len(s[mRate]))
	}
	m.observePath(host, "full", hole)
	m.dropHost(host)
	s = series(t, m)
	if len(s[mPathMTU])+len(s[mRate]) != 0 {
		t.Errorf("after dropping the host: %d %s and %d %s series, want none", len(s[mPathMTU]), mPathMTU, len(s[mRate]), mRate)
	}
}
