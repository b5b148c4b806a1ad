package gcp_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/audit/gcp/gcpfake"
	"github.com/pullpath/pullpath/internal/verdict"
)

// A focus node named by its gce:// providerID (or its node name) puts its
// subnet first, and the probe's code on the registry host is explained by
// the check that fails there.
func TestFocusPlacesGKENodes(t *testing.T) {
	m := loadDir(t, "invalid-pga-off")
	var batch string
	for _, in := range m.Instances {
		if in.Labels["goog-k8s-node-pool-name"] == "batch" {
			batch = in.Name
		}
	}
	for _, n := range []audit.Node{
		{ProviderID: "gce://shop-prod/us-central1-b/" + batch},
		{Name: batch},
		{Name: "gke-prod-batch-00000000-zzzz"}, // a node the list does not have yet: its pool by name
	} {
		r, err := gcpaudit.FromFolder(filepath.Join("testdata", "invalid-pga-off"), audit.Focus{Image: imageAR, Nodes: []audit.Node{n},
			Host: "us-central1-docker.pkg.dev", Role: verdict.RoleRegistry, Code: verdict.ConnectTimeout})
		if err != nil {
			t.Fatal(err)
		}
		if r.Subnets[0].ID != "nodes-b" || r.Target.FocusSubnet != "nodes-b" {
			t.Errorf("%+v: first subnet %s, focus %q; want nodes-b", n, r.Subnets[0].ID, r.Target.FocusSubnet)
		}
		if !strings.Contains(r.Verdict.Summary, gcpaudit.CheckPGA) && !strings.Contains(r.Verdict.Summary, "Private Google Access") {
			t.Errorf("%+v: verdict %q does not name Private Google Access", n, r.Verdict.Summary)
		}
	}
	// --subnet keeps one subnet; an unknown one is a warning
	r, err := gcpaudit.FromFolder(filepath.Join("testdata", "invalid-pga-off"), audit.Focus{Image: imageAR, Subnets: []string{"nodes-a", "nodes-z"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Subnets) != 1 || r.Subnets[0].ID != "nodes-a" || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].Message, "nodes-z") {
		t.Errorf("--subnet nodes-a,nodes-z: %d subnets, warnings %+v", len(r.Subnets), r.Warnings)
	}
	if _, err := gcpaudit.FromFolder(filepath.Join("testdata", "nope"), audit.Focus{}); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("FromFolder(missing) = %v", err)
	}
}

// Live is FromFolder over what Collect read.
func TestLiveEntryPoint(t *testing.T) {
	m := loadDir(t, "invalid-firewall-deny-443")
	srv := gcpfake.New(m)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := gcpaudit.Live(ctx, gcpaudit.LiveOptions{Project: "shop-prod", Location: "us-central1", Cluster: "prod", Endpoint: srv.URL, ClientOptions: srv.Options()},
		audit.Focus{Image: imageAR})
	if err != nil {
		t.Fatal(err)
	}
	want, err := gcpaudit.FromFolder(filepath.Join("testdata", "invalid-firewall-deny-443"), audit.Focus{Image: imageAR})
	if err != nil {
		t.Fatal(err)
	}
	if r.Source != "live" || r.Verdict.Summary != want.Verdict.Summary || len(r.Changes) != len(want.Changes) {
		t.Errorf("Live: %s %q (%d changes); FromFolder: %q (%d changes)", r.Source, r.Verdict.Summary, len(r.Changes), want.Verdict.Summary, len(want.Changes))
	}
}
