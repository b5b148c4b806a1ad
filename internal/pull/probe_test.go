//go:build !fuzzonly

package pull

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/printers"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

// probeStack starts a real private registry (reference registry, token
// host, blob redirect host, authoritative DNS) on loopback and probes its
// image the way a node would: through the stack's nameserver, hosts file,
// certs.d and docker config.
func probeStack(t *testing.T, cfg labsvc.StackConfig, mut func(*Options, *labsvc.Stack)) (*report.ProbeReport, *labsvc.Stack) {
	t.Helper()
	st := testenv.StartStack(t, cfg)
	return probeStackOn(t, st, func(o *Options) {
		if mut != nil {
			mut(o, st)
		}
	})
}

// probeStackOn probes the image of a running stack with its node files,
// mut applied to the options.
func probeStackOn(t *testing.T, st *labsvc.Stack, mut func(*Options)) (*report.ProbeReport, *labsvc.Stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := Options{
		Image:        st.Ref(),
		Platform:     "linux/amd64",
		Node:         "test-node",
		CertsDir:     st.Files.CertsDir,
		DockerConfig: st.Files.DockerConfig,
		Net: netcheck.Config{
			HostsFile:      st.Files.Hosts,
			Nameservers:    []string{st.Nameserver()},
			DNSTimeout:     500 * time.Millisecond,
			ConnectTimeout: 2 * time.Second,
			TLSTimeout:     2 * time.Second,
		},
		HTTPTimeout:  3 * time.Second,
		StallTimeout: 1 * time.Second,
	}
	if mut != nil {
		mut(&o)
	}
	rep, err := Probe(ctx, o)
	if err != nil {
		t.Fatalf("Probe(%s) error: %v", o.Image, err)
	}
	return rep, st
}

func TestProbeVerdicts(t *testing.T) {
	two := labsvc.ImageSpec{Repository: "lab/app", Tag: "v1", LayerSizes: []int64{64 << 10, 300 << 10}, Seed: 7}
	tests := []struct {
		name     string
		cfg      labsvc.StackConfig
		mut      func(*Options, *labsvc.Stack)
		wantCode verdict.Code
		wantCond verdict.Condition
		wantRole verdict.Role
		wantWarn verdict.Code
	}{
		{name: "healthy pull through token host and blob redirect host", cfg: labsvc.StackConfig{Image: two}, wantCode: verdict.OK},
		{name: "healthy basic auth, ECR style", cfg: labsvc.StackConfig{Image: two, Auth: labsvc.AuthBasic}, wantCode: verdict.OK},
		{name: "registry NXDOMAIN", cfg: labsvc.StackConfig{DNSBehaviours: map[string]labsvc.DNSBehaviour{labsvc.RegistryHostName: labsvc.DNSNXDomain}},
			wantCode: verdict.DNSNXDomain, wantCond: verdict.ConditionDNS, wantRole: verdict.RoleRegistry},
		{name: "registry SERVFAIL", cfg: labsvc.StackConfig{DNSBehaviours: map[string]labsvc.DNSBehaviour{labsvc.RegistryHostName: labsvc.DNSServFail}},
			wantCode: verdict.DNSServFail, wantCond: verdict.ConditionDNS, wantRole: verdict.RoleRegistry},
		// 203.0.113.10 is never dialled: --expect-private stops the walk at the answer
		{name: "public answer with --expect-private", cfg: labsvc.StackConfig{DNSRecords: map[string][]labsvc.DNSRecord{labsvc.RegistryHostName: {{Type: "A", Value: "203.0.113.10"}}}}, mut: func(o *Options, _ *labsvc.Stack) { o.ExpectPrivate = true },
			wantCode: verdict.DNSPublicAnswer, wantCond: verdict.ConditionDNS, wantRole: verdict.RoleRegistry},
		{name: "blob host refused while the registry answers", cfg: labsvc.StackConfig{BlobHostDown: true},
			wantCode: verdict.ConnectRefused, wantCond: verdict.ConditionEndpointSet, wantRole: verdict.RoleBlob},
		{name: "blob host name does not resolve", cfg: labsvc.StackConfig{DNSBehaviours: map[string]labsvc.DNSBehaviour{labsvc.BlobHostName: labsvc.DNSNXDomain}},
			wantCode: verdict.DNSNXDomain, wantCond: verdict.ConditionEndpointSet, wantRole: verdict.RoleBlob},
		{name: "token host does not resolve", cfg: labsvc.StackConfig{DNSBehaviours: map[string]labsvc.DNSBehaviour{labsvc.AuthHostName: labsvc.DNSNXDomain}},
			wantCode: verdict.DNSNXDomain, wantCond: verdict.ConditionEndpointSet, wantRole: verdict.RoleAuth},
		{name: "TLS unknown authority", cfg: labsvc.StackConfig{RegistryTLS: labsvc.TLSUntrustedCA},
			wantCode: verdict.TLSUnknownAuthority, wantCond: verdict.ConditionTLSIdentity, wantRole: verdict.RoleRegistry},
		{name: "TLS name mismatch", cfg: labsvc.StackConfig{RegistryTLS: labsvc.TLSWrongName},
			wantCode: verdict.TLSNameMismatch, wantCond: verdict.ConditionTLSIdentity, wantRole: verdict.RoleRegistry},
		{name: "TLS expired", cfg: labsvc.StackConfig{RegistryTLS: labsvc.TLSExpired},
			wantCode: verdict.TLSExpired, wantCond: verdict.ConditionTLSIdentity, wantRole: verdict.RoleRegistry},
		{name: "TLS not yet valid", cfg: labsvc.StackConfig{RegistryTLS: labsvc.TLSNotYetValid},
			wantCode: verdict.TLSNotYetValid, wantCond: verdict.ConditionTLSIdentity, wantRole: verdict.RoleRegistry},
		{name: "401 wrong password at the token service", cfg: labsvc.StackConfig{WrongPassword: true},
			wantCode: verdict.AuthUnauthorized, wantCond: verdict.ConditionTLSIdentity, wantRole: verdict.RoleAuth},
		{name: "401 no credentials, basic auth", cfg: labsvc.StackConfig{Auth: labsvc.AuthBasic}, mut: func(o *Options, _ *labsvc.Stack) { o.DockerConfig = "" },
			wantCode: verdict.RegistryUnauthorized, wantCond: verdict.ConditionTLSIdentity, wantRole: verdict.RoleRegistry},
		{name: "403 identity without read, ACR style", cfg: labsvc.StackConfig{UserCannotRead: true, DenyMode: labsvc.DenyForbidden},
			wantCode: verdict.AuthForbidden, wantCond: verdict.ConditionTLSIdentity, wantRole: verdict.RoleAuth},
		{name: "empty grant to accepted credentials, Docker Hub style, is the identity's scope", cfg: labsvc.StackConfig{UserCannotRead: true, DenyMode: labsvc.DenyEmpty},
			wantCode: verdict.AuthForbidden, wantCond: verdict.ConditionTLSIdentity, wantRole: verdict.RoleRegistry},
		{name: "manifest not found", cfg: labsvc.StackConfig{}, mut: func(o *Options, _ *labsvc.Stack) { o.Image = strings.Replace(o.Image, ":v1", ":v9", 1) },
			wantCode: verdict.ManifestNotFound, wantCond: verdict.ConditionImage, wantRole: verdict.RoleRegistry},
		{name: "platform missing from the index", cfg: labsvc.StackConfig{Image: labsvc.ImageSpec{Repository: "lab/app", Tag: "v1", Platforms: []string{"linux/amd64", "linux/arm64"}}},
			mut:      func(o *Options, _ *labsvc.Stack) { o.Platform = "linux/s390x" },
			wantCode: verdict.PlatformNotFound, wantCond: verdict.ConditionImage, wantRole: verdict.RoleRegistry},
		{name: "digest mismatch on the blob host", cfg: labsvc.StackConfig{Image: two}, mut: nil, wantCode: verdict.BlobDigestMismatch, wantCond: verdict.ConditionRegistry, wantRole: verdict.RoleBlob},
		{name: "blob body cut short (a clean close: truncated, not reset)", cfg: labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{Truncate: "*"}},
			wantCode: verdict.BlobSizeMismatch, wantCond: verdict.ConditionRegistry, wantRole: verdict.RoleBlob},
		{name: "redirect loop", cfg: labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{RedirectLoop: true}},
			wantCode: verdict.RedirectLoop, wantCond: verdict.ConditionRegistry, wantRole: verdict.RoleBlob},
		{name: "blob storage 403 AccessDenied", cfg: labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{Forbidden: true}},
			wantCode: verdict.BlobForbidden, wantCond: verdict.ConditionEndpointSet, wantRole: verdict.RoleBlob},
		{name: "hosts-file entry works, with a warning", cfg: labsvc.StackConfig{HostsEntries: map[string]string{labsvc.RegistryHostName: "127.0.0.10"}},
			wantCode: verdict.OK, wantWarn: verdict.HostsFileEntry},
		{name: "second redirect hop", cfg: labsvc.StackConfig{SecondHop: true}, wantCode: verdict.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if tt.wantCode == verdict.BlobDigestMismatch {
				cfg.BlobFaults.CorruptDigest = "*"
			}
			rep, st := probeStack(t, cfg, tt.mut)
			v := rep.Verdict
			if v.Code != tt.wantCode || v.Condition != tt.wantCond || v.Role != tt.wantRole {
				b, _ := json.MarshalIndent(rep, "", "  ")
				t.Fatalf("verdict = %s/%s/%s (%s), want %s/%s/%s\n%s", v.Code, v.Condition, v.Role, v.Summary, tt.wantCode, tt.wantCond, tt.wantRole, b)
			}
			if tt.wantWarn != "" && !hasWarning(rep, tt.wantWarn) {
				t.Errorf("warnings = %+v, want %s", rep.Warnings, tt.wantWarn)
			}
			if v.Status == verdict.StatusFail && len(v.Advice) == 0 {
				t.Errorf("failure %s has no advice", v.Code)
			}
			assertNoSecrets(t, rep, st)
			if st.Blob != nil {
				for _, r := range st.Blob.Requests() {
					if r.HasAuthorization {
						t.Errorf("blob host got an Authorization header on %s %s", r.Method, r.Path)
					}
				}
			}
		})
	}
}

func TestProbeHealthyReportShape(t *testing.T) {
	spec := labsvc.ImageSpec{Repository: "lab/app", Tag: "v1", LayerSizes: []int64{1 << 20, 2 << 20, 512 << 10}, Seed: 3}
	rep, st := probeStack(t, labsvc.StackConfig{Image: spec}, nil)
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("verdict = %s: %s", rep.Verdict.Code, rep.Verdict.Summary)
	}
	roles := map[verdict.Role]bool{}
	for _, e := range rep.Endpoints {
		roles[e.Role] = true
	}
	for _, r := range []verdict.Role{verdict.RoleRegistry, verdict.RoleAuth, verdict.RoleBlob} {
		if !roles[r] {
			t.Errorf("endpoints have no role %s: %+v", r, rep.Endpoints)
		}
	}
	tr := rep.Transfer
	var want int64
	for _, p := range st.Image.Platforms {
		want += p.Config.Size
		for _, l := range p.Layers {
			want += l.Size
		}
	}
	if tr == nil || !tr.Verified || tr.Bytes != want || tr.Layers != 3 {
		t.Errorf("transfer = %+v, want %d bytes verified over 3 layers", tr, want)
	}
	// every blob came from the blob host, none from the registry itself
	if got := len(st.Blob.Requests()); got != 4 {
		t.Errorf("blob host served %d requests, want 4 (config + 3 layers)", got)
	}
}

func TestProbeQuick(t *testing.T) {
	spec := labsvc.ImageSpec{Repository: "lab/app", Tag: "v1", LayerSizes: []int64{4 << 20}, Seed: 5}
	rep, _ := probeStack(t, labsvc.StackConfig{Image: spec}, func(o *Options, _ *labsvc.Stack) { o.Quick = true })
	if rep.Verdict.Code != verdict.OK || !hasWarning(rep, verdict.QuickCheck) {
		t.Fatalf("verdict = %s, warnings %+v; want OK with QUICK_CHECK", rep.Verdict.Code, rep.Warnings)
	}
	if rep.Transfer.Bytes > 2*quickBytes {
		t.Errorf("quick probe read %d bytes, want at most %d", rep.Transfer.Bytes, 2*quickBytes)
	}
}

func TestProbeStalledBlob(t *testing.T) {
	rep, _ := probeStack(t, labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{Trickle: "*"}}, nil)
	if rep.Verdict.Code != verdict.BlobStalled {
		t.Fatalf("verdict = %s (%s), want BLOB_STALLED", rep.Verdict.Code, rep.Verdict.Summary)
	}
	// a server that stops sending is no path MTU: the clamped connections
	// of the MTU test stall too, and the verdict says the test was done
	ep := endpointOf(rep, labsvc.BlobHostName)
	if ep == nil || ep.MTU == nil || ep.MTU.Result != report.MTUNotMTU || ep.MTU.After != "blob" {
		t.Fatalf("blob host's MTU test = %+v, want not-mtu after the blob", ep)
	}
	if !strings.Contains(rep.Verdict.Summary, "the MTU test was done") {
		t.Errorf("summary %q does not say the MTU test was done", rep.Verdict.Summary)
	}
	var mtuSteps int
	for _, st := range rep.Steps {
		if st.Name == "mtu" {
			mtuSteps++
			if st.Status != report.StepPass || st.Endpoint != labsvc.BlobHostName {
				t.Errorf("mtu step %+v, want pass on the blob host", st)
			}
		}
	}
	if mtuSteps != 1 {
		t.Errorf("%d mtu steps, want one for the blob host however many of its blobs stalled", mtuSteps)
	}
	// --mtu-budget 0 turns the test off
	rep, _ = probeStack(t, labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{Trickle: "*"}}, func(o *Options, _ *labsvc.Stack) { o.NoMTUTest = true })
	if ep := endpointOf(rep, labsvc.BlobHostName); ep == nil || ep.MTU != nil || strings.Contains(rep.Verdict.Summary, "MTU") {
		t.Errorf("with the MTU test off: endpoint %+v, summary %q; want no test", ep, rep.Verdict.Summary)
	}
}

func TestProbeMirrorFallsBack(t *testing.T) {
	rep, _ := probeStack(t, labsvc.StackConfig{}, func(o *Options, st *labsvc.Stack) {
		// a hosts.toml whose first host is a mirror that refuses
		// connections, then the registry itself, as containerd reads it
		dir := filepath.Join(t.TempDir(), "certs.d")
		host := st.RegistryHost
		if err := os.MkdirAll(filepath.Join(dir, host), 0o755); err != nil {
			t.Fatal(err)
		}
		toml := "server = \"https://" + host + "\"\n\n[host.\"https://mirror.lab.test:1\"]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = \"" + st.Files.CAFile + "\"\n\n[host.\"https://" + host + "\"]\n  ca = \"" + st.Files.CAFile + "\"\n"
		if err := os.WriteFile(filepath.Join(dir, host, "hosts.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		o.CertsDir = dir
	})
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("verdict = %s (%s), want OK after falling back from the mirror", rep.Verdict.Code, rep.Verdict.Summary)
	}
	if !hasWarning(rep, verdict.MirrorFailed) {
		t.Errorf("warnings = %+v, want MIRROR_FAILED", rep.Warnings)
	}
	var mirror bool
	for _, e := range rep.Endpoints {
		mirror = mirror || e.Role == verdict.RoleMirror
	}
	if !mirror {
		t.Errorf("no endpoint of role mirror in %+v", rep.Endpoints)
	}
}

func TestProbeBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := Probe(ctx, Options{Image: "x", Platform: "linux"}); err == nil || !strings.Contains(err.Error(), "platform") {
		t.Errorf("Probe(platform linux) error = %v, want a one-line platform error", err)
	}
	if _, err := Probe(ctx, Options{Image: "x", Net: netcheck.Config{ResolvConf: "/nonexistent/resolv.conf"}}); err == nil || !strings.Contains(err.Error(), "/nonexistent/resolv.conf") {
		t.Errorf("Probe(missing resolv.conf) error = %v, want one naming the file", err)
	}
	rep, err := Probe(ctx, Options{Image: "UPPER/Case:bad tag", Net: netcheck.Config{Nameservers: []string{"127.0.0.1:1"}}})
	if err != nil {
		t.Fatalf("Probe(bad reference) error = %v, want a verdict", err)
	}
	if rep.Verdict.Code != verdict.ReferenceInvalid || rep.Verdict.Condition != verdict.ConditionImage {
		t.Errorf("Probe(bad reference) verdict = %s %s, want REFERENCE_INVALID image", rep.Verdict.Code, rep.Verdict.Condition)
	}
}

// assertNoSecrets fails if the password or any token appears in the JSON
// or text rendering of a report.
func assertNoSecrets(t *testing.T, rep *report.ProbeReport, st *labsvc.Stack) {
	t.Helper()
	var b strings.Builder
	if err := printers.Print(&b, "json", rep, printers.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := printers.Print(&b, "wide", rep, printers.Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, secret := range []string{st.Password, "lab-pass-1", "eyJ"} {
		if secret != "" && strings.Contains(out, secret) {
			t.Errorf("report contains a secret %q", secret)
		}
	}
}

func TestProbeCredentialHelperMissing(t *testing.T) {
	rep, _ := probeStack(t, labsvc.StackConfig{}, func(o *Options, st *labsvc.Stack) {
		cfg := filepath.Join(t.TempDir(), "config.json")
		body := `{"credHelpers":{"` + st.RegistryHost + `":"pullpath-no-such-helper"}}`
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		o.DockerConfig = cfg
	})
	if rep.Verdict.Code != verdict.CredentialsError || rep.Verdict.Condition != verdict.ConditionTLSIdentity {
		t.Fatalf("verdict = %s/%s (%s), want CREDENTIALS_ERROR/tls-identity", rep.Verdict.Code, rep.Verdict.Condition, rep.Verdict.Summary)
	}
	if !strings.Contains(rep.Verdict.Summary, "pullpath-no-such-helper") {
		t.Errorf("summary %q does not name the helper", rep.Verdict.Summary)
	}
}

// A name with two addresses, one of which refuses: the pull works through
// the other, with a warning (pulls are slow or fail at random).
func TestProbeOneAddressOfTwoFails(t *testing.T) {
	cfg := labsvc.StackConfig{DNSRecords: map[string][]labsvc.DNSRecord{
		labsvc.RegistryHostName: {{Type: "A", Value: "127.0.0.99"}, {Type: "A", Value: "127.0.0.10"}},
	}}
	rep, _ := probeStack(t, cfg, nil)
	if rep.Verdict.Code != verdict.OK || !hasWarning(rep, verdict.AddressUnreachable) {
		t.Fatalf("verdict = %s, warnings %+v; want OK with ADDRESS_UNREACHABLE", rep.Verdict.Code, rep.Warnings)
	}
	reg := rep.Endpoints[0]
	if len(reg.Addresses) != 2 || reg.Addresses[0].Result != "refused" || reg.Addresses[1].Result != "ok" {
		t.Errorf("registry addresses = %+v, want 127.0.0.99 refused and 127.0.0.10 ok", reg.Addresses)
	}
}

// TestProbeIPv6PathBroken gives the registry's name an AAAA record (::1,
// where nothing listens on its port) beside its A record: the walk still
// pulls over IPv4, the endpoint says per family what happened, and the
// warning names the broken IPv6 path and Go's fallback.
func TestProbeIPv6PathBroken(t *testing.T) {
	cfg := labsvc.StackConfig{DNSRecords: map[string][]labsvc.DNSRecord{
		labsvc.RegistryHostName: {{Type: "A", Value: "127.0.0.10"}, {Type: "AAAA", Value: "::1"}},
	}}
	rep, _ := probeStack(t, cfg, nil)
	if rep.Verdict.Code != verdict.OK || !hasWarning(rep, verdict.IPv6PathBroken) || hasWarning(rep, verdict.AddressUnreachable) {
		t.Fatalf("verdict = %s, warnings %+v; want OK with IPV6_PATH_BROKEN alone", rep.Verdict.Code, rep.Warnings)
	}
	f := rep.Endpoints[0].Families
	if f == nil {
		t.Fatalf("registry endpoint has no families: %+v", rep.Endpoints[0])
	}
	if f.IPv4.HostAddresses != 1 || f.IPv6.HostAddresses != 1 || f.IPv4.Result != "ok" || f.IPv6.Result != "refused" {
		t.Errorf("families = %+v / %+v, want one address each, ipv4 ok, ipv6 refused", f.IPv4, f.IPv6)
	}
	if f.Dial == nil || f.Dial.Primary != netcheck.FamilyIPv6 || f.Dial.Family != netcheck.FamilyIPv4 || !f.Dial.FellBack {
		t.Errorf("dial = %+v, want IPv6 first and a fallback to IPv4", f.Dial)
	}
	if path := os.Getenv("PULLPATH_PROBE_RECORD"); path != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
