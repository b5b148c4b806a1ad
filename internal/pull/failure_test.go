package pull

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// An Error is built by its site, keeps its cause, and is found by
// errors.As and errors.Is through any wrapping.
func TestErrorKeepsItsCause(t *testing.T) {
	at := site{stage: verdict.StageBlob, role: verdict.RoleBlob, host: "blob.example"}
	cause := &url.Error{Op: "Get", URL: "https://blob.example/x", Err: context.DeadlineExceeded}
	e := at.requestFailure(cause, "GET blob")
	if e.Code != verdict.HTTPTimeout || e.Stage != verdict.StageBlob || e.Role != verdict.RoleBlob || e.Host != "blob.example" {
		t.Fatalf("requestFailure = %+v, want HTTP_TIMEOUT at blob/blob on blob.example", e)
	}
	wrapped := fmt.Errorf("walk: %w", e)
	var got *Error
	if !errors.As(wrapped, &got) || got != e {
		t.Fatalf("errors.As did not find the *Error through wrapping")
	}
	if !errors.Is(wrapped, context.DeadlineExceeded) {
		t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false: the cause is lost", wrapped)
	}
	if e.Error() != "HTTP_TIMEOUT: "+e.Summary {
		t.Errorf("Error() = %q", e.Error())
	}
}

// Bad input comes back as the error it is: a hosts.toml the runtime cannot
// read is still a *runtimecfg.ConfigError, not a verdict and not a string.
func TestProbeConfigErrorKeepsItsType(t *testing.T) {
	dir := t.TempDir()
	host := "registry.example.com"
	os.MkdirAll(filepath.Join(dir, host), 0o755)
	os.WriteFile(filepath.Join(dir, host, "hosts.toml"), []byte("server = \"https://registry.example.com\"\n[host.\"https://m\"\ncapabilities = [\n"), 0o644)
	_, err := Probe(context.Background(), Options{
		Image: host + "/app:v1", CertsDir: dir, Platform: "linux/amd64",
		Net: netcheck.Config{Nameservers: []string{"127.0.0.1:1"}, DNSTimeout: 200 * time.Millisecond},
	})
	var ce *runtimecfg.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Probe error = %v (%T), want a *runtimecfg.ConfigError", err, err)
	}
	var we *Error
	if errors.As(err, &we) {
		t.Errorf("bad input came back as a walk failure: %v", we)
	}
}

// TestConnectFailCode: a connect step where nothing connected carries the
// code the walk stops with. An IPv6-only node dialing an A-only host gets
// network is unreachable (CONNECT_UNREACHABLE) from every dial, and the
// verdict is the family finding: the step must say the same.
func TestConnectFailCode(t *testing.T) {
	for _, tt := range []struct {
		dial, family verdict.Code
		public       bool
		want         verdict.Code
	}{
		{verdict.ConnectUnreachable, verdict.AddressFamilyUnusable, false, verdict.AddressFamilyUnusable},
		{verdict.ConnectUnreachable, "", false, verdict.ConnectUnreachable},
		{verdict.ConnectRefused, "", false, verdict.ConnectRefused},
		{verdict.ConnectTimeout, verdict.AddressFamilyUnusable, true, verdict.DNSPublicAnswer},
		{verdict.ConnectTimeout, "", true, verdict.DNSPublicAnswer},
	} {
		if got := connectFailCode(tt.dial, tt.family, tt.public); got != tt.want {
			t.Errorf("connectFailCode(%s, %q, public %v) = %s, want %s", tt.dial, tt.family, tt.public, got, tt.want)
		}
	}
}

// TestUsableFamily: an IPv6-only node behind DNS64 sees the registry's A
// record beside the synthesized AAAA; the A address, of a family the node
// has neither an address nor a route of, is not an unreachable address.
func TestUsableFamily(t *testing.T) {
	rs := []report.AddrResult{{Address: "10.61.10.20:443", Result: "unreachable"}, {Address: "[2001:db8:64::a3d:a14]:443", Result: "refused"}}
	v6only := &report.Families{IPv6: report.FamilyPath{NodeAddress: "2001:db8:61:1::10", Source: "2001:db8:61:1::10"}}
	if got := usableFamily(rs, v6only); len(got) != 1 || got[0].Address != rs[1].Address {
		t.Errorf("usableFamily(IPv6-only node) = %+v, want only the IPv6 address", got)
	}
	// an IPv4 address the node has a route for stays (a real unreachable address)
	dual := &report.Families{IPv4: report.FamilyPath{Source: "10.61.1.10"}, IPv6: v6only.IPv6}
	if got := usableFamily(rs, dual); len(got) != 2 {
		t.Errorf("usableFamily(dual-stack node) = %+v, want both", got)
	}
	if got := usableFamily(rs, nil); len(got) != 2 {
		t.Errorf("usableFamily(no family facts) = %+v, want both", got)
	}
}
