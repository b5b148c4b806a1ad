package lab

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/testenv"
)

func TestBuildVerifyTeardown(t *testing.T) {
	testenv.RequireNetns(t, "nft")
	topo, err := scenario.LoadBuiltin("ecr-healthy")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(ctx, topo, s.Prefix)
	if err != nil {
		s.Close()
		t.Fatalf("Build: %v", err)
	}
	t.Logf("built %d namespaces in %v", len(n.NS), n.Timings["build"])
	if err := n.Verify(ctx); err != nil {
		s.Close()
		t.Fatalf("Verify: %v", err)
	}
	// the node reaches the registry address through the router, and the
	// router's own address, but has no route elsewhere.
	if out, err := run(ctx, "", "ip", "-n", n.NS["node"], "route", "get", "10.0.10.20"); err != nil || !strings.Contains(string(out), "via 10.0.1.1") {
		t.Errorf("route get 10.0.10.20 = %q, %v; want via 10.0.1.1", out, err)
	}
	if _, err := run(ctx, "", "ip", "-n", n.NS["node"], "route", "get", "203.0.113.10"); err == nil {
		t.Errorf("node has a route to 203.0.113.10; want none")
	}
	l, err := listenIn(n.NS["s3"], "10.0.20.10:443")
	if err != nil {
		t.Fatalf("listen in s3: %v", err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if err := dialIn(n.NS["node"], "10.0.20.10:443", 2*time.Second); err != nil {
		t.Errorf("dial s3 from node: %v, want connected", err)
	}
	// the firewall changed while the lab runs: the break, then the heal
	rst := []scenario.Rule{{Action: "reject", To: "10.0.20.10", Proto: "tcp", Port: 443, Comment: "break"}}
	if err := n.Firewall(ctx, "vpc", rst); err != nil {
		t.Fatalf("Firewall(vpc, reject): %v", err)
	}
	if err := dialIn(n.NS["node"], "10.0.20.10:443", 2*time.Second); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("dial s3 from node behind the reject rule: %v, want connection refused", err)
	}
	if err := n.Firewall(ctx, "vpc", nil); err != nil {
		t.Fatalf("Firewall(vpc, none): %v", err)
	}
	if err := dialIn(n.NS["node"], "10.0.20.10:443", 2*time.Second); err != nil {
		t.Errorf("dial s3 from node after the heal: %v, want connected", err)
	}
	if err := n.Firewall(ctx, "vpc", []scenario.Rule{{Action: "deny"}}); err == nil || !strings.Contains(err.Error(), `rule.action: want drop, reject or clamp-mss, got "deny"`) {
		t.Errorf("Firewall(vpc, deny) = %v, want the rule's one-line error", err)
	}
	if err := n.Firewall(ctx, "nowhere", nil); err == nil {
		t.Errorf("Firewall(nowhere) = nil, want an error")
	}
	l.Close()
	closeStart := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("teardown in %v", time.Since(closeStart))
	if left := Leftovers(s.Prefix); len(left) > 0 {
		t.Errorf("Leftovers(%q) = %v, want none", s.Prefix, left)
	}
}
