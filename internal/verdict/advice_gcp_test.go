package verdict

import (
	"strings"
	"testing"
)

func TestDetectPlatformGCP(t *testing.T) {
	for host, want := range map[string]Platform{
		"us-central1-docker.pkg.dev":       PlatformGAR,
		"europe-docker.pkg.dev:443":        PlatformGAR,
		"gcr.io":                           PlatformGCR,
		"eu.gcr.io":                        PlatformGCR,
		"storage.googleapis.com":           PlatformGCS,
		"artifacts.storage.googleapis.com": PlatformGCS,
		"pkg.dev.example.com":              PlatformGeneric,
		"notgcr.io":                        PlatformGeneric,
	} {
		if got := DetectPlatform(host); got != want {
			t.Errorf("DetectPlatform(%q) = %s, want %s", host, got, want)
		}
	}
}

func TestAdviseGCP(t *testing.T) {
	cases := []struct {
		code Code
		host string
		role Role
		want []string
	}{
		{DNSNXDomain, "us-central1-docker.pkg.dev", RoleRegistry, []string{"*.pkg.dev CNAME pkg.dev.", "pullpath gcp audit IMAGE"}},
		{ConnectTimeout, "us-central1-docker.pkg.dev", RoleRegistry, []string{"--enable-private-ip-google-access", "default-internet-gateway", "at equal priority a deny wins"}},
		{ConnectTimeout, "storage.googleapis.com", RoleBlob, []string{"Container Registry serves layers from Cloud Storage"}},
		{RegistryForbidden, "gcr.io", RoleRegistry, []string{"roles/artifactregistry.reader", "devstorage.read_only or cloud-platform", "VPC Service Controls"}},
	}
	for _, c := range cases {
		got := strings.Join(Advise(c.code, c.host, c.role), "\n")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("Advise(%s, %s) lacks %q:\n%s", c.code, c.host, w, got)
			}
		}
		if strings.Contains(got, "aws audit") || strings.Contains(got, "azure audit") {
			t.Errorf("Advise(%s, %s) names another cloud's audit:\n%s", c.code, c.host, got)
		}
	}
}
