package diagnose

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/audit/gcp/gcpfake"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
)

const gkeImage = "us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2"

// gkeTimeout is containerd's words for a manifest request that never
// connects (a private subnet without Private Google Access or NAT).
const gkeTimeout = `failed to pull and unpack image "` + gkeImage + `": failed to resolve reference "` + gkeImage + `": failed to do request: Head "https://us-central1-docker.pkg.dev/v2/shop-prod/apps/web/manifests/1.4.2": dial tcp 142.250.1.82:443: i/o timeout`

const gkeEmail = "pullpath-audit@shop-prod.iam.gserviceaccount.com"

// Live GCP from diagnose, through Application Default Credentials and
// Google's own clients against the loopback fake of the invalid-pga-off
// cluster: ADC finds the metadata server (GCE_METADATA_HOST, as on a
// bastion VM) and its service account; the cluster and its location come
// from the failing node's instance labels; the answer names the same
// objects as with the folder. Without a service account the answer comes
// from the events and one line names the collect command and the
// permissions; a denied call names its permission and who lacks it.
func TestDiagnoseLiveGCP(t *testing.T) {
	cp := controlplane.Require(t)
	admin, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	seedPull(t, admin, "shop", gkeImage, []seedNode{
		{name: "gke-prod-default-pool-1a2b3c4d-x001", pod: "web-a", ip: "10.10.0.2", provider: "gce://shop-prod/us-central1-a/gke-prod-default-pool-1a2b3c4d-x001",
			labels: map[string]string{"cloud.google.com/gke-nodepool": "default-pool", "topology.kubernetes.io/zone": "us-central1-a"}, cached: true},
		{name: "gke-prod-batch-1a2b3c4d-k005", pod: "web-b", ip: "10.10.16.3", provider: "gce://shop-prod/us-central1-b/gke-prod-batch-1a2b3c4d-k005",
			labels: map[string]string{"cloud.google.com/gke-nodepool": "batch", "topology.kubernetes.io/zone": "us-central1-b"}, fail: gkeTimeout},
	})
	const dir = "../audit/gcp/testdata/invalid-pga-off"
	m, err := gcpaudit.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	srv := gcpfake.New(m)
	defer srv.Close()
	oncall := reader(t, cp, admin)
	diag := func(t *testing.T, o Options) (*report.DiagnoseReport, report.DiagnoseStep) {
		t.Helper()
		return auditStep(t, oncall, o)
	}
	// ADC: no key file, no gcloud login (an empty HOME), the metadata
	// server on loopback.
	adc := func(t *testing.T, email string) {
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
		t.Setenv("HOME", t.TempDir())
		t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(srv.URL, "http://"))
		srv.MetadataEmail = email
	}
	live := func() *Live {
		return &Live{Options: map[nodeplace.Cloud]audit.Live{nodeplace.GCP: gcpaudit.LiveOptions{Endpoint: srv.URL}}}
	}

	t.Run("the metadata server's service account", func(t *testing.T) {
		adc(t, gkeEmail)
		before := srv.Calls()["compute instance"]
		r, step := diag(t, Options{Live: live()})
		folder, _ := diag(t, Options{Auditors: map[nodeplace.Cloud]Auditor{nodeplace.GCP: gcpaudit.Provider.Folder(dir)}})
		if step.Status != report.DiagnoseRan || !strings.Contains(step.Summary, "live as "+gkeEmail+", cluster prod in us-central1, project shop-prod") {
			t.Fatalf("audit step = %+v, want it ran live, naming the service account, the cluster, its location and project", step)
		}
		if len(r.Answer.Changes) == 0 || len(folder.Answer.Changes) == 0 || !reflect.DeepEqual(r.Answer.Changes[0], folder.Answer.Changes[0]) {
			t.Fatalf("live first change = %+v, folder's = %+v: want the same", r.Answer.Changes, folder.Answer.Changes)
		}
		if c := r.Answer.Changes[0]; c.Resource != "projects/shop-prod/regions/us-central1/subnetworks/nodes-b" || c.Check != "private-google-access" {
			t.Errorf("first change %+v, want Private Google Access on nodes-b", c)
		}
		if srv.Calls()["compute instance"] != before+1 {
			t.Errorf("want one instances.get of the failing node's instance (from its providerID), calls %v", srv.Calls())
		}
	})

	t.Run("no service account", func(t *testing.T) {
		adc(t, "")
		r, step := diag(t, Options{Live: live()})
		if step.Status != report.DiagnoseSkipped || !strings.Contains(step.Reason, "no usable gcp credentials") {
			t.Errorf("audit step = %+v, want skipped for want of credentials", step)
		}
		a := r.Answer
		if a.Status != report.AnswerBroken || a.Source != "read" || len(a.Changes) != 0 {
			t.Errorf("answer = %s from %s, %d changes: want broken from the events, nothing named", a.Status, a.Source, len(a.Changes))
		}
		var lines []string
		for _, l := range a.Look {
			if strings.Contains(l, "pullpath gcp collect") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 || !strings.Contains(lines[0], "--project shop-prod") || !strings.Contains(lines[0], "container.clusters.get") {
			t.Errorf("look %q: want one line with the collect command, the project and the permissions", a.Look)
		}
	})

	t.Run("a denied call", func(t *testing.T) {
		adc(t, gkeEmail)
		srv.Deny("/clusters/prod", "container.clusters.get")
		r, step := diag(t, Options{Live: live()})
		if step.Status != report.DiagnoseFailed || !strings.Contains(step.Next, "container.clusters.get (denied to "+gkeEmail+")") {
			t.Errorf("audit step = %+v, want failed, naming the permission and who lacks it", step)
		}
		if r.Answer.Status != report.AnswerBroken {
			t.Errorf("answer = %+v, want broken from the events", r.Answer)
		}
	})
}
