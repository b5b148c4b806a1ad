package gcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/audittest"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
)

// Issue 42: for every file of the contract, removed from each healthy
// account, no subnet fails and a warning names the file with its command;
// the cluster (required) is a one-line error naming it.
func TestMissingFileNeverFailsASubnet(t *testing.T) {
	for _, f := range fixtures {
		if strings.HasPrefix(f.dir, "valid-") {
			audittest.MissingFileNeverFails(t, audittest.Account{Dir: filepath.Join("testdata", f.dir), From: gcpaudit.FromFolder,
				Focus: audit.Focus{Image: f.image}, Required: []string{gcpaudit.FileCluster}})
		}
	}
}

// listMembers are the REST API's list member of each list file.
func listMember(name string) string {
	switch {
	case name == gcpaudit.FileZones:
		return "managedZones"
	case name == gcpaudit.FileDNSPolicies:
		return "policies"
	case name == gcpaudit.FilePerimeters:
		return "servicePerimeters"
	case strings.HasPrefix(name, "dns-record-sets-list-"):
		return "rrsets"
	case strings.HasSuffix(name, "-list.json"):
		return "items"
	}
	return ""
}

// The REST API's list pages read as gcloud's arrays (issue 42, item 4):
// every list file of each healthy account rewritten as two pages ({"kind",
// the list member, "nextPageToken"}), one after the other or in an array,
// and as a recorded answer ({"headers", "body"}, Cloud Custodian's
// flights), audits the same, one file at a time.
func TestListPagesReadAsTheCLIsArrays(t *testing.T) {
	shapes := map[string]audittest.Reshape{
		"pages-one-after-another": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			m := listMember(name)
			if m == "" {
				return nil, false
			}
			p1, p2 := pages(t, data, m)
			return append(append(p1, '\n'), p2...), true
		},
		"pages-in-an-array": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			m := listMember(name)
			if m == "" {
				return nil, false
			}
			p1, p2 := pages(t, data, m)
			return []byte("[" + string(p1) + "," + string(p2) + "]"), true
		},
		"recorded": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			body := json.RawMessage(data)
			if m := listMember(name); m != "" {
				var arr []json.RawMessage
				json.Unmarshal(data, &arr)
				body, _ = json.Marshal(map[string]any{"kind": "list", m: arr})
			}
			out, _ := json.Marshal(map[string]any{"headers": map[string]any{"status": "200", "content-type": "application/json; charset=UTF-8"}, "body": body})
			return out, true
		},
	}
	for _, f := range fixtures {
		if !strings.HasPrefix(f.dir, "valid-") {
			continue
		}
		for shape, reshape := range shapes {
			audittest.ReadsReshaped(t, audittest.Account{Dir: filepath.Join("testdata", f.dir), From: gcpaudit.FromFolder, Focus: audit.Focus{Image: f.image}}, shape, reshape)
		}
	}
}

// pages rewrites a gcloud array as the REST API's pages: the first half in
// one page with a nextPageToken, the rest in a second (as a paging script
// saves them).
func pages(t *testing.T, data []byte, member string) (p1, p2 []byte) {
	t.Helper()
	var arr []json.RawMessage
	if err := json.Unmarshal(data, &arr); err != nil {
		t.Fatal(err)
	}
	half := len(arr) / 2
	p1, _ = json.Marshal(map[string]any{"kind": "list", member: arr[:half], "nextPageToken": "t1"})
	p2, _ = json.Marshal(map[string]any{"kind": "list", member: arr[half:]})
	return p1, p2
}

// Real answers of Google's REST APIs, recorded by Cloud Custodian's GCP
// tests (testdata/real-custodian, README there), each in place of its
// file in the healthy account: the recording's shape is read, and the
// objects are the recording's.
func TestRealRESTRecordings(t *testing.T) {
	entries, err := os.ReadDir("testdata/real-custodian")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			d := t.TempDir()
			src, _ := os.ReadDir("testdata/valid-healthy")
			for _, o := range src {
				data, _ := os.ReadFile(filepath.Join("testdata/valid-healthy", o.Name()))
				os.WriteFile(filepath.Join(d, o.Name()), data, 0o644)
			}
			data, _ := os.ReadFile(filepath.Join("testdata/real-custodian", e.Name()))
			os.WriteFile(filepath.Join(d, e.Name()), data, 0o644)
			m, err := gcpaudit.Load(os.DirFS(d))
			if err != nil {
				t.Fatalf("Load with the recorded %s = %v", e.Name(), err)
			}
			switch e.Name() {
			case gcpaudit.FileInstances: // an aggregated list over three zones
				if len(m.Instances) != 4 {
					t.Errorf("%d instances, want the recording's 4 (us-east1-b 1, us-central1-b 2, us-east1-d 1)", len(m.Instances))
				}
			case gcpaudit.FileFirewalls:
				if len(m.Firewalls) != 1 || m.Firewalls[0].Name != "test" || m.Firewalls[0].Priority != 1000 {
					t.Errorf("firewalls %+v, want the recording's rule test at priority 1000", m.Firewalls)
				}
			case gcpaudit.FileZones:
				if len(m.Zones) != 1 || m.Zones[0].Name != "custodian" {
					t.Errorf("zones %+v, want the recording's custodian zone", m.Zones)
				}
			case gcpaudit.FileDNSPolicies:
				if len(m.Policies) != 1 || m.Policies[0].Name != "custodian" {
					t.Errorf("policies %+v, want the recording's custodian policy", m.Policies)
				}
			case gcpaudit.FileProject:
				if m.Project == nil || m.Project.ProjectNumber != 111111111111 || m.Project.ProjectId != "cloud-custodian" {
					t.Errorf("project %+v, want cloud-custodian 111111111111", m.Project)
				}
			case gcpaudit.FileCluster:
				if m.Cluster.Name != "standard-cluster-1" || m.ClusterProject() != "cloud-custodian" || len(m.Cluster.NodePools) != 1 {
					t.Errorf("cluster %s of %s with %d pools, want standard-cluster-1 of cloud-custodian, default-pool", m.Cluster.Name, m.ClusterProject(), len(m.Cluster.NodePools))
				}
			default:
				t.Fatalf("no assertion for %s", e.Name())
			}
			if _, err := gcpaudit.FromFolder(d, audit.Focus{Image: imageAR}); err != nil {
				t.Errorf("FromFolder = %v", err)
			}
		})
	}
}
