package gcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/report"
)

// Issue 42: for every file of the contract, removed from each healthy
// account, no subnet fails and a warning names the file with its command;
// the cluster (required) is a one-line error naming it.
func TestMissingFileNeverFailsASubnet(t *testing.T) {
	for _, f := range fixtures {
		if !strings.HasPrefix(f.dir, "valid-") {
			continue
		}
		dir := filepath.Join("testdata", f.dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".json") {
				continue
			}
			t.Run(f.dir+"/"+name, func(t *testing.T) {
				d := t.TempDir()
				for _, o := range entries {
					if o.Name() == name || o.IsDir() {
						continue
					}
					data, _ := os.ReadFile(filepath.Join(dir, o.Name()))
					os.WriteFile(filepath.Join(d, o.Name()), data, 0o644)
				}
				r, err := gcpaudit.FromFolder(d, audit.Focus{Image: f.image})
				if name == gcpaudit.FileCluster {
					if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n") {
						t.Fatalf("FromFolder without %s = %v, want one line naming it", name, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("FromFolder without %s = %v", name, err)
				}
				for _, s := range r.Subnets {
					for _, c := range s.Checks {
						if c.Status == report.CheckFail {
							t.Errorf("%s %s fails without %s: %s", s.ID, c.ID, name, c.Summary)
						}
					}
				}
				named := false
				for _, w := range r.Warnings {
					named = named || w.File == name && w.Command != ""
				}
				if !named {
					t.Errorf("no warning names %s with its command: %+v", name, r.Warnings)
				}
			})
		}
	}
}

// The REST API's list pages read as gcloud's arrays: each list file of
// the healthy account rewritten as two pages ({"kind", "items" or the DNS
// member, "nextPageToken"}) audits the same.
func TestListPagesReadAsTheCLIsArrays(t *testing.T) {
	member := map[string]string{
		gcpaudit.FileRoutes: "items", gcpaudit.FileFirewalls: "items", gcpaudit.FileRouters: "items", gcpaudit.FileInstances: "items",
		gcpaudit.FileZones: "managedZones", gcpaudit.FileDNSPolicies: "policies", gcpaudit.FilePerimeters: "servicePerimeters",
		gcpaudit.FileRecords("pkg-dev"): "rrsets",
	}
	want, err := gcpaudit.FromFolder("testdata/valid-healthy", audit.Focus{Image: imageAR})
	if err != nil {
		t.Fatal(err)
	}
	d := t.TempDir()
	entries, _ := os.ReadDir("testdata/valid-healthy")
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join("testdata/valid-healthy", e.Name()))
		if m, ok := member[e.Name()]; ok {
			data = pages(t, data, m)
		}
		os.WriteFile(filepath.Join(d, e.Name()), data, 0o644)
	}
	got, err := gcpaudit.FromFolder(d, audit.Focus{Image: imageAR})
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict.Status != want.Verdict.Status || got.Verdict.Summary != want.Verdict.Summary || len(got.Warnings) != len(want.Warnings) {
		t.Errorf("pages: verdict %+v, %d warnings; arrays: %+v, %d warnings", got.Verdict, len(got.Warnings), want.Verdict, len(want.Warnings))
	}
}

// pages rewrites a gcloud array as the REST API's pages: the first half in
// one page with a nextPageToken, the rest in a second, one after the
// other in the file (as a paging script saves them).
func pages(t *testing.T, data []byte, member string) []byte {
	t.Helper()
	var arr []json.RawMessage
	if err := json.Unmarshal(data, &arr); err != nil {
		t.Fatal(err)
	}
	half := len(arr) / 2
	p1, _ := json.Marshal(map[string]any{"kind": "list", member: arr[:half], "nextPageToken": "t1"})
	p2, _ := json.Marshal(map[string]any{"kind": "list", member: arr[half:]})
	return append(append(p1, '\n'), p2...)
}
