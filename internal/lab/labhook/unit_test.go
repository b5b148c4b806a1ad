package labhook

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

func TestCompare(t *testing.T) {
	failDNS := &verdict.Verdict{Status: verdict.StatusFail, Condition: verdict.ConditionDNS}
	okV := &verdict.Verdict{Status: verdict.StatusOK}
	readDNS := explain.Classification{Condition: verdict.ConditionDNS, Cause: verdict.CauseDNS, Code: verdict.DNSNXDomain, Rule: "dns-nxdomain"}
	readRoute := explain.Classification{Condition: verdict.ConditionRoute, Cause: verdict.CauseUnreachable, Code: verdict.ConnectUnreachable, Rule: "connect-unreachable"}
	tests := []struct {
		name        string
		ok          bool
		cl          explain.Classification
		probe       *verdict.Verdict
		want        *report.LabRuntimeExpect
		wantAgainst string
		wantN       int    // mismatches
		wantPart    string // in the first mismatch
	}{
		{"both-ok", true, explain.Classification{}, okV, nil, "probe", 0, ""},
		{"same-condition", false, readDNS, failDNS, nil, "probe", 0, ""},
		{"runtime-ok-probe-fails", true, explain.Classification{}, failDNS, nil, "probe", 1, "the probe says fail, the runtime's pull was ok"},
		{"runtime-fails-probe-ok", false, readDNS, okV, nil, "probe", 1, "the probe says ok, the runtime's pull was fail"},
		{"other-condition", false, readRoute, failDNS, nil, "probe", 1, "the probe found dns, explain read route"},
		{"unread", false, explain.Classification{}, failDNS, nil, "probe", 1, "explain read nothing"},
		{"no-probe", false, readDNS, nil, nil, "probe", 1, "no probe verdict"},
		{"scenario-agrees", false, readRoute, failDNS, &report.LabRuntimeExpect{Status: "fail", Condition: "route", Code: "CONNECT_UNREACHABLE"}, "scenario", 0, ""},
		{"scenario-code-differs", false, readRoute, failDNS, &report.LabRuntimeExpect{Code: "CONNECT_TIMEOUT"}, "scenario", 1, "code: want CONNECT_TIMEOUT, explain read CONNECT_UNREACHABLE"},
		{"scenario-outcome-differs", true, explain.Classification{}, failDNS, &report.LabRuntimeExpect{Status: "fail"}, "scenario", 1, "outcome: want fail"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			against, mm := Compare(tc.ok, tc.cl, tc.probe, tc.want)
			if against != tc.wantAgainst || len(mm) != tc.wantN || (tc.wantN > 0 && !strings.Contains(mm[0], tc.wantPart)) {
				t.Errorf("Compare(%s) = %q, %q, want %q with %d mismatches containing %q", tc.name, against, mm, tc.wantAgainst, tc.wantN, tc.wantPart)
			}
		})
	}
}

func TestShorten(t *testing.T) {
	ref := "r.lab.test/a/b:1"
	msg := `failed to pull and unpack image "r.lab.test/a/b:1": failed to resolve reference "r.lab.test/a/b:1": r.lab.test/a/b:1: not found`
	if got, want := Shorten(msg, ref), "r.lab.test/a/b:1: not found"; got != want {
		t.Errorf("Shorten(%q) = %q, want %q", msg, got, want)
	}
	for in, want := range map[string]string{
		`failed to pull and unpack image "r.lab.test/a/b:1": failed to resolve reference "r.lab.test/a/b:1": failed to do request: Head "https://r.lab.test/v2/a/b/manifests/1": dial tcp: lookup r.lab.test on 10.0.0.2:53: no such host`:                               "r.lab.test: dial tcp: lookup r.lab.test on 10.0.0.2:53: no such host",
		`failed to pull and unpack image "r.lab.test/a/b:1": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://blob.lab.test/docker/registry/v2/blobs/sha256/e1/e1c6/data?X-Amz-Signature=REDACTED": dial tcp 10.0.20.10:443: i/o timeout`: "failed to copy: httpReadSeeker: failed open: blob.lab.test: dial tcp 10.0.20.10:443: i/o timeout",
	} {
		if got := Shorten(in, ref); got != want {
			t.Errorf("Shorten(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("x", 500) + "END"
	if got := Shorten(long, ref); len(got) != 183 || !strings.HasSuffix(got, "END") || !strings.HasPrefix(got, "...") {
		t.Errorf("Shorten(500 chars) = %q (%d), want the last 180 after ...", got, len(got))
	}
}

func TestImageHost(t *testing.T) {
	tests := map[string]string{
		"123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/checkout:1.4.2": "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com",
		"registry.lab.test:5000/a:1": "registry.lab.test:5000",
		"localhost/a:1":              "localhost",
		"library/busybox:1":          "",
		"busybox":                    "",
	}
	for in, want := range tests {
		if got := imageHost(in); got != want {
			t.Errorf("imageHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlatformNote(t *testing.T) {
	for _, tc := range []struct {
		platform string
		want     bool
	}{{"", false}, {"plan9/mips", true}} {
		topo := &scenario.Scenario{}
		topo.Probe.Platform = tc.platform
		if got := platformNote(topo) != ""; got != tc.want {
			t.Errorf("platformNote(platform %q) given = %v, want %v", tc.platform, got, tc.want)
		}
	}
}

func TestExpectLine(t *testing.T) {
	probe := &verdict.Verdict{Status: verdict.StatusFail, Condition: verdict.ConditionRoute, Code: verdict.ConnectTimeout}
	if got, want := expectLine(probe, nil), "condition=route"; got != want {
		t.Errorf("expectLine(probe) = %q, want %q", got, want)
	}
	w := &report.LabRuntimeExpect{Condition: "route", Cause: "unreachable", Code: "CONNECT_UNREACHABLE"}
	if got, want := expectLine(probe, w), "cause=unreachable code=CONNECT_UNREACHABLE condition=route"; got != want {
		t.Errorf("expectLine(scenario) = %q, want %q", got, want)
	}
}

func TestForRuntime(t *testing.T) {
	if hooks, err := ForRuntime(context.Background(), ""); err != nil || hooks != nil {
		t.Errorf(`ForRuntime("") = %v, %v, want no hooks`, hooks, err)
	}
	_, err := ForRuntime(context.Background(), "cri-o")
	if err == nil || !strings.Contains(err.Error(), `--runtime "cri-o": want one of containerd`) {
		t.Errorf(`ForRuntime("cri-o") error = %v, want one naming the allowed values`, err)
	}
}

func TestDetail(t *testing.T) {
	rt := &report.RuntimePull{Runtime: "containerd 1.6.20", Image: "r/a:1", GRPCCode: "Unknown", Message: `failed to pull and unpack image "r/a:1": boom`, DurationMS: 20,
		Explain: &report.RuntimeReading{Cause: "dns", Code: "DNS_NXDOMAIN", Condition: "dns"}, Against: "probe"}
	got := detail(rt)
	want := "containerd 1.6.20: Unknown in 0.02s: boom; explain: dns DNS_NXDOMAIN (dns); agrees with the probe"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("detail (-want +got):\n%s", d)
	}
}
