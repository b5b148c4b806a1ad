package synth_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/audit/gcp/gcpfake"
	"github.com/pullpath/pullpath/internal/audit/gcp/synth"
	"github.com/pullpath/pullpath/internal/report"
)

const base = "../testdata/valid-healthy"
const image = "us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2"

// The grown cluster stays healthy, and writing it back and loading it
// gives the same audit.
func TestGrownClusterPasses(t *testing.T) {
	m, err := synth.Cluster(os.DirFS(base), synth.Size{Subnets: 30, Rules: 500, Routes: 200, Records: 2000})
	if err != nil {
		t.Fatal(err)
	}
	files, err := m.Files()
	if err != nil {
		t.Fatal(err)
	}
	lm, err := gcpaudit.Load(files.FS())
	if err != nil {
		t.Fatal(err)
	}
	r, err := gcpaudit.Audit(lm, "", audit.Focus{Image: image})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Subnets) != 30 || r.Verdict.Status != report.StepPass {
		t.Fatalf("%d subnets, verdict %s: %s", len(r.Subnets), r.Verdict.Status, r.Verdict.Summary)
	}
	if len(lm.Firewalls) != 500 || len(lm.Routes) != 200 || len(lm.Records["pkg-dev"]) != 2000 {
		t.Fatalf("%d rules, %d routes, %d records", len(lm.Firewalls), len(lm.Routes), len(lm.Records["pkg-dev"]))
	}
}

// Live API calls grow with node subnets, never with firewall rules, routes
// or zone records (lists in pages of 500, Compute's maximum; records by
// name).
func TestLiveCallsDoNotGrowWithRulesRoutesRecords(t *testing.T) {
	count := func(s synth.Size) int {
		m, err := synth.Cluster(os.DirFS(base), s)
		if err != nil {
			t.Fatal(err)
		}
		srv := gcpfake.New(m)
		srv.PageSize = 500
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		c, err := gcpaudit.Collect(ctx, gcpaudit.LiveOptions{Project: "shop-prod", Location: "us-central1", Cluster: "prod", Image: image,
			Endpoint: srv.URL, ClientOptions: srv.Options()})
		if err != nil || len(c.Warnings) != 0 {
			t.Fatalf("Collect(%+v) = %v, %v", s, err, c)
		}
		return srv.Requests
	}
	small := count(synth.Size{Subnets: 4, Rules: 2, Routes: 2, Records: 2})
	big := count(synth.Size{Subnets: 4, Rules: 500, Routes: 200, Records: 2000})
	more := count(synth.Size{Subnets: 8, Rules: 2, Routes: 2, Records: 2})
	if small != big {
		t.Errorf("requests: %d with 2 rules/routes/records, %d with 500/200/2000; want equal", small, big)
	}
	if more != small+4 {
		t.Errorf("requests: %d for 4 subnets, %d for 8; want one more per subnet (its describe)", small, more)
	}
}
