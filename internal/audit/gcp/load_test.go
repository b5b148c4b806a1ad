package gcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/report"
)

func folder(t *testing.T, dir string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	entries, err := os.ReadDir(filepath.Join("testdata", dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata", dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = &fstest.MapFile{Data: data}
	}
	return out
}

// Bad input is one line naming the file and what was expected.
func TestLoadBadInput(t *testing.T) {
	cases := []struct {
		name, file, data, want string
	}{
		{"cluster missing", gcpaudit.FileCluster, "", "container-clusters-describe.json: missing: the audit starts from the cluster (gcloud container clusters describe CLUSTER --location L --format=json)"},
		{"cluster not JSON", gcpaudit.FileCluster, "name: prod\n", "container-clusters-describe.json: not a JSON object: want the output of gcloud container clusters describe"},
		{"routes an object", gcpaudit.FileRoutes, `{"name": "r"}`, "compute-routes-list.json: not a JSON array nor a list page: an object holding name: want the output of gcloud compute routes list --project shop-prod --filter=\"network:prod-vpc\" --format=json"},
		{"firewall wrong type", gcpaudit.FileFirewalls, `[{"priority": "high"}]`, "compute-firewall-rules-list.json: json: cannot unmarshal string"},
		{"subnet without selfLink", gcpaudit.FileSubnet("nodes-a"), `{"name": "nodes-a"}`, "compute-networks-subnets-describe-nodes-a.json: no selfLink"},
		{"records truncated", gcpaudit.FileRecords("pkg-dev"), `[{"name": "pkg.dev."`, "dns-record-sets-list-pkg-dev.json: not JSON (unexpected EOF): want the output of gcloud dns record-sets list --zone pkg-dev"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := folder(t, "valid-healthy")
			if c.data == "" {
				delete(fsys, c.file)
			} else {
				fsys[c.file] = &fstest.MapFile{Data: []byte(c.data)}
			}
			_, err := gcpaudit.Load(fsys)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Load = %v, want one line starting %q", err, c.want)
			}
		})
	}
}

// A missing optional file is a warning naming the command that writes it,
// and the checks that needed it warn; nothing crashes.
func TestLoadMissingOptionalFiles(t *testing.T) {
	for _, file := range []string{gcpaudit.FileInstances, gcpaudit.FileNetwork, gcpaudit.FileRoutes, gcpaudit.FileFirewalls, gcpaudit.FileRouters,
		gcpaudit.FileZones, gcpaudit.FileDNSPolicies, gcpaudit.FileRecords("pkg-dev"), gcpaudit.FileSubnet("nodes-b"),
		gcpaudit.FileRepoPolicy("apps"), gcpaudit.FileProjectPolicy, gcpaudit.FileProject, gcpaudit.FilePerimeters} {
		t.Run(file, func(t *testing.T) {
			fsys := folder(t, "valid-healthy")
			delete(fsys, file)
			m, err := gcpaudit.Load(fsys)
			if err != nil {
				t.Fatalf("Load = %v", err)
			}
			r, err := gcpaudit.Audit(m, "", audit.Focus{Image: imageAR})
			if err != nil {
				t.Fatalf("Audit = %v", err)
			}
			named := false
			for _, w := range r.Warnings {
				named = named || w.File == file && strings.HasPrefix(w.Command, "gcloud ")
			}
			for _, s := range r.Subnets {
				for _, c := range s.Checks {
					if c.Status == report.StepFail {
						t.Errorf("%s %s fails without %s: %s", s.ID, c.ID, file, c.Summary)
					}
					named = named || c.Status == report.StepWarn && strings.Contains(c.Summary, file)
				}
			}
			if file == gcpaudit.FileNetwork {
				return // the cluster names the network; nothing needs its describe
			}
			if !named {
				t.Errorf("no warning names %s and its command; warnings %+v", file, r.Warnings)
			}
		})
	}
}

func TestParseImage(t *testing.T) {
	cases := []struct{ image, host, kind, project, location, repo, err string }{
		{"us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2", "us-central1-docker.pkg.dev", gcpaudit.KindArtifactRegistry, "shop-prod", "us-central1", "apps", ""},
		{"europe-docker.pkg.dev/p/r/a/b/c@sha256:" + strings.Repeat("a", 64), "europe-docker.pkg.dev", gcpaudit.KindArtifactRegistry, "p", "europe", "r", ""},
		{"gcr.io/shop-prod/web:1", "gcr.io", gcpaudit.KindGCR, "shop-prod", "us", "gcr.io", ""},
		{"eu.gcr.io/shop-prod/team/web", "eu.gcr.io", gcpaudit.KindGCR, "shop-prod", "eu", "eu.gcr.io", ""},
		{"nginx:1.27", "", "", "", "", "", "docker.io is not Artifact Registry"},
		{"us-docker.pkg.dev/only-project", "", "", "", "", "", "want LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE"},
		{"Bad Image", "", "", "", "", "", "invalid reference format"},
	}
	for _, c := range cases {
		got, err := gcpaudit.ParseImage(c.image)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseImage(%q) = %v, want error with %q", c.image, err, c.err)
			}
			continue
		}
		if err != nil || got.Host != c.host || got.Kind != c.kind || got.Project != c.project || got.Location != c.location || got.Repo != c.repo {
			t.Errorf("ParseImage(%q) = %+v, %v", c.image, got, err)
		}
	}
}
