package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/api/option"

	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/audit/gcp/gcpfake"
	"github.com/pullpath/pullpath/internal/report"
)

const (
	gcpFixtures = "../audit/gcp/testdata/"
	gcpImage    = "us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2"
)

func TestGCPAuditExitCodes(t *testing.T) {
	tests := []struct {
		dir, image string
		exit       int
	}{
		{"valid-healthy", gcpImage, 0},
		{"valid-shared-vpc", "europe-west1-docker.pkg.dev/shared-artifacts/base/runtime:3.2", 0},
		{"invalid-pga-off", gcpImage, 3},
		{"invalid-route-no-vip-route", gcpImage, 3},
		{"invalid-firewall-deny-443", gcpImage, 3},
		{"invalid-nat-ports", gcpImage, 3},
		{"invalid-dns-zone-no-wildcard", gcpImage, 4},
		{"invalid-access-scopes", gcpImage, 6},
		{"invalid-identity-no-reader", gcpImage, 6},
		{"invalid-vpc-sc-outside-perimeter", "us-central1-docker.pkg.dev/shop-artifacts/apps/web:1.4.2", 6},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "gcp", "audit", tt.image, "--from", gcpFixtures+tt.dir, "-o", "json")
			if code != tt.exit {
				t.Fatalf("exit = %d, want %d; stderr %s", code, tt.exit, errOut)
			}
			var r report.AuditReport
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("-o json: %v", err)
			}
			if r.Kind != report.GCPAuditKind || r.APIVersion != "pullpath/v1" || len(r.Subnets) != 2 || r.Target.Cloud != "gcp" {
				t.Fatalf("report kind %q apiVersion %q subnets %d cloud %q", r.Kind, r.APIVersion, len(r.Subnets), r.Target.Cloud)
			}
			if tt.exit != 0 && (len(r.Changes) == 0 || !strings.HasPrefix(r.Changes[0].Command, "gcloud ")) {
				t.Errorf("a failing audit lists no gcloud change: %+v", r.Changes)
			}
		})
	}
}

func TestGCPUsage(t *testing.T) {
	t.Setenv("CLOUDSDK_CORE_PROJECT", "")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gcp", "audit"}, "want --cluster NAME and --location REGION|ZONE (live) or --from DIR (offline)"},
		{[]string{"gcp", "audit", "--cluster", "prod", "--location", "us-central1"}, "want --project PROJECT"},
		{[]string{"gcp", "audit", "--from", gcpFixtures + "valid-healthy", "--cluster", "prod"}, "takes no --cluster or --location"},
		{[]string{"gcp", "audit", "nginx:1.27", "--from", gcpFixtures + "valid-healthy"}, "is not Artifact Registry (LOCATION-docker.pkg.dev) or Container Registry (gcr.io)"},
		{[]string{"gcp", "audit", gcpImage, "--from", "/nonexistent/folder"}, "--from /nonexistent/folder: not a folder"},
		{[]string{"gcp", "audit", gcpImage, "--from", gcpFixtures}, "container-clusters-describe.json: missing"},
		{[]string{"gcp", "collect", "--project", "p", "--location", "l", "--cluster", "c"}, "want --out DIR"},
		{[]string{"gcp", "audit", gcpImage, "--from", gcpFixtures + "valid-healthy", "-o", "xml"}, "xml"},
	} {
		code, _, errOut := runCLI(t, "", tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 1 and one line with %q", tc.args, code, errOut, tc.want)
		}
	}
}

// collect (live, through the real clients against the loopback REST
// server) writes the folder audit --from reads, with the same verdict as
// the fixture it serves.
func TestGCPCollectThenAudit(t *testing.T) {
	m, err := gcpaudit.Load(os.DirFS(gcpFixtures + "invalid-nat-not-covering"))
	if err != nil {
		t.Fatal(err)
	}
	srv := gcpfake.New(m)
	defer srv.Close()
	gcpAPI.endpoint, gcpAPI.options = srv.URL, srv.Options()
	defer func() { gcpAPI.endpoint, gcpAPI.options = "", []option.ClientOption(nil) }()

	dir := filepath.Join(t.TempDir(), "bundle")
	code, out, errOut := runCLI(t, "", "gcp", "collect", gcpImage, "--project", "shop-prod", "--location", "us-central1", "--cluster", "prod", "--out", dir)
	if code != 0 || !strings.Contains(out, "audit them with: pullpath gcp audit "+gcpImage+" --from "+dir) {
		t.Fatalf("collect: exit %d, out %q, stderr %q", code, out, errOut)
	}
	code, live, _ := runCLI(t, "", "gcp", "audit", gcpImage, "--project", "shop-prod", "--location", "us-central1", "--cluster", "prod", "-o", "json")
	if code != 3 {
		t.Fatalf("live audit exit %d, want 3", code)
	}
	code, offline, _ := runCLI(t, "", "gcp", "audit", gcpImage, "--from", dir, "-o", "json")
	if code != 3 {
		t.Fatalf("audit --from exit %d, want 3", code)
	}
	var a, b report.AuditReport
	if json.Unmarshal([]byte(live), &a) != nil || json.Unmarshal([]byte(offline), &b) != nil {
		t.Fatal("not JSON")
	}
	if a.Source != "live" || a.Verdict.Summary != b.Verdict.Summary || len(a.Changes) != 1 || a.Changes[0].Command != b.Changes[0].Command {
		t.Errorf("live %s %q %+v\n--from %q %+v", a.Source, a.Verdict.Summary, a.Changes, b.Verdict.Summary, b.Changes)
	}
}
