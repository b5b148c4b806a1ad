package verdict

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestCodesWellFormed(t *testing.T) {
	seen := map[Code]bool{}
	valid := regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	for _, i := range Codes {
		if seen[i.Code] {
			t.Errorf("code %s listed twice", i.Code)
		}
		seen[i.Code] = true
		if !valid.MatchString(string(i.Code)) {
			t.Errorf("code %q is not UPPER_SNAKE", i.Code)
		}
		if i.Meaning == "" || i.Where == "" || i.Cause == "" {
			t.Errorf("code %s lacks meaning, where or cause", i.Code)
		}
	}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name       string
		code       Code
		role       Role
		registryOK bool
		wantCond   Condition
	}{
		{"registry timeout is route", ConnectTimeout, RoleRegistry, false, ConditionRoute},
		{"blob timeout after registry worked is endpoint-set", ConnectTimeout, RoleBlob, true, ConditionEndpointSet},
		{"blob nxdomain after registry worked is endpoint-set", DNSNXDomain, RoleBlob, true, ConditionEndpointSet},
		{"auth tls stays tls-identity", TLSUnknownAuthority, RoleAuth, true, ConditionTLSIdentity},
		{"registry nxdomain is dns", DNSNXDomain, RoleRegistry, false, ConditionDNS},
		{"not found is image", ManifestNotFound, RoleRegistry, true, ConditionImage},
		{"rate limit is registry", RateLimited, RoleRegistry, true, ConditionRegistry},
		{"unknown code fits no direction", Code("NOPE"), RoleRegistry, true, ConditionNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Decide(Outcome{Code: tt.code, Stage: StageRegistry, Role: tt.role, Host: "h", RegistryOK: tt.registryOK, Summary: "s"})
			if v.Condition != tt.wantCond || v.Status != StatusFail {
				t.Errorf("Decide(%s, %s, registryOK=%v) = %s condition %q, want fail condition %q", tt.code, tt.role, tt.registryOK, v.Status, v.Condition, tt.wantCond)
			}
		})
	}
	if v := Decide(Outcome{Code: OK, RegistryOK: true, Summary: "fine"}); v.Status != StatusOK || v.Condition != ConditionNone {
		t.Errorf("Decide(OK) = %+v, want status ok, no condition", v)
	}
}

func TestDetectPlatformAndAdvice(t *testing.T) {
	tests := []struct {
		host string
		want Platform
	}{
		{"123456789012.dkr.ecr.ap-northeast-2.amazonaws.com", PlatformECR},
		{"prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com", PlatformS3},
		{"myacr.azurecr.io", PlatformACR},
		{"myacr.koreacentral.data.azurecr.io", PlatformACRData},
		{"registry-1.docker.io", PlatformDockerHub},
		{"registry.example.com:5000", PlatformGeneric},
	}
	for _, tt := range tests {
		if got := DetectPlatform(tt.host); got != tt.want {
			t.Errorf("DetectPlatform(%q) = %s, want %s", tt.host, got, tt.want)
		}
	}
	adv := Advise(ConnectTimeout, "prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com", RoleBlob)
	if !containsAny(adv, "prefix-list") {
		t.Errorf("Advise(CONNECT_TIMEOUT, s3 blob) = %q, want the S3 gateway prefix-list route", adv)
	}
	if !containsAny(Advise(ConnectTimeout, "registry.example.com", RoleRegistry), "imagePullSecret") {
		t.Errorf("Advise(CONNECT_TIMEOUT) does not say that credentials are not the lever")
	}
	if containsAny(Advise(RegistryUnauthorized, "registry.example.com", RoleRegistry), "not the lever") {
		t.Errorf("Advise(REGISTRY_UNAUTHORIZED) says credentials are not the lever")
	}
	adv = Advise(DNSNXDomain, "myacr.azurecr.io", RoleRegistry)
	if !containsAny(adv, "privatelink.azurecr.io") {
		t.Errorf("Advise(DNS_NXDOMAIN, acr) = %q, want the privatelink zone", adv)
	}
	for _, tc := range []struct {
		code Code
		host string
		role Role
	}{{DNSPublicAnswer, "myacr.koreacentral.data.azurecr.io", RoleBlob}, {ConnectTimeout, "myacr.azurecr.io", RoleRegistry}, {AuthForbidden, "myacr.azurecr.io", RoleAuth}} {
		if adv := Advise(tc.code, tc.host, tc.role); !containsAny(adv, "pullpath azure audit") {
			t.Errorf("Advise(%s, %s) = %q, want the next step `pullpath azure audit`", tc.code, tc.host, adv)
		}
	}
	if containsAny(Advise(ConnectTimeout, "registry.example.com", RoleRegistry), "pullpath azure audit") {
		t.Errorf("Advise(CONNECT_TIMEOUT, a generic host) names the Azure audit")
	}
	adv = Advise(AuthForbidden, "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com", RoleAuth)
	if !containsAny(adv, "ecr:BatchGetImage") {
		t.Errorf("Advise(AUTH_FORBIDDEN, ecr) = %q, want the node role's ECR actions", adv)
	}
}

func containsAny(ss []string, sub string) bool {
	for _, s := range ss {
		if regexp.MustCompile(regexp.QuoteMeta(sub)).MatchString(s) {
			return true
		}
	}
	return false
}

// TestDocsMatchCodes keeps docs/verdicts.md equal to this package's
// tables, whichever package's tests run; the exit-code table in it is the
// CLI's (internal/cli checks that one, and -update rewrites the page).
func TestDocsMatchCodes(t *testing.T) {
	b, err := os.ReadFile("../../docs/verdicts.md")
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	start := strings.Index(got, "| exit | condition | meaning |\n")
	end := strings.Index(got[max(start, 0):], "\n\n")
	if start < 0 || end < 0 {
		t.Fatalf("docs/verdicts.md has no exit-code table (run go test ./internal/cli -run TestDocs -update)")
	}
	if want := Markdown(got[start : start+end+1]); got != want {
		t.Errorf("docs/verdicts.md is out of date with internal/verdict: run go test ./internal/cli -run TestDocs -update")
	}
}

func TestInterceptionProduct(t *testing.T) {
	tests := []struct{ issuer, want string }{
		{"CN=Zscaler Intermediate Root CA (zscaler.net),OU=Zscaler Inc.,O=Zscaler Inc.,ST=California,C=US", "Zscaler"},
		{"CN=FortiGate CA,O=Fortinet Ltd.", "Fortinet FortiGate"},
		{"CN=mitmproxy,O=mitmproxy", "mitmproxy"},
		{"CN=pullpath lab Squid inspection CA,O=pullpath lab", "Squid (ssl-bump)"},
		{"CN=Amazon RSA 2048 M02,O=Amazon,C=US", ""},
		{"CN=DigiCert Global G2 TLS RSA SHA256 2020 CA1,O=DigiCert Inc,C=US", ""},
		{"CN=R11,O=Let's Encrypt,C=US", ""},
	}
	for _, tt := range tests {
		if got := InterceptionProduct(tt.issuer); got != tt.want {
			t.Errorf("InterceptionProduct(%q) = %q, want %q", tt.issuer, got, tt.want)
		}
	}
}

func TestConditionExitCode(t *testing.T) {
	want := map[Condition]int{ConditionRoute: 3, ConditionDNS: 4, ConditionEndpointSet: 5, ConditionTLSIdentity: 6, ConditionImage: 7, ConditionRegistry: 8, ConditionProxy: 10, ConditionNone: 2, "no-such-direction": 2}
	for c, code := range want {
		if got := c.ExitCode(); got != code {
			t.Errorf("Condition(%q).ExitCode() = %d, want %d", c, got, code)
		}
	}
}
