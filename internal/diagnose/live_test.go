package diagnose

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	"github.com/pullpath/pullpath/internal/audit/aws/fakeaws"
	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
)

// awsEnv puts the fake account's credentials in the environment, as an
// on-call engineer's shell has its own (fakeaws.Environ).
func awsEnv(t *testing.T, srv *fakeaws.Server) { setenv(t, srv.Environ()) }

// noAWSEnv leaves the default chain nothing to find, fast.
func noAWSEnv(t *testing.T) { setenv(t, fakeaws.NoCredentials()) }

func setenv(t *testing.T, env []string) {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Live AWS from diagnose, through the SDK's default chain and real
// clients against the loopback fake of the scale-up account: with the
// credentials in the environment and no folder, the answer names the same
// objects as with the folder, and the audit step says who it read as and
// which cluster (found from the nodes' instances); without credentials the
// answer comes from the events, and one line names the collect command
// and the permissions; a denied call names its permission.
func TestDiagnoseLiveAWS(t *testing.T) {
	cp := controlplane.Require(t)
	admin, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	seedScaleUp(t, admin, "shop")
	srv := fakeaws.New("testdata/aws-scale-up-new-subnet")
	defer srv.Close()
	oncall := reader(t, cp, admin)
	diag := func(t *testing.T, o Options) (*report.DiagnoseReport, report.DiagnoseStep) {
		t.Helper()
		return auditStep(t, oncall, o)
	}

	t.Run("credentials in the environment", func(t *testing.T) {
		awsEnv(t, srv)
		r, step := diag(t, Options{Live: &Live{}})
		folder, _ := diag(t, Options{Auditors: map[nodeplace.Cloud]Auditor{nodeplace.AWS: awsaudit.Provider.Folder("testdata/aws-scale-up-new-subnet")}})
		if step.Status != report.DiagnoseRan || !strings.Contains(step.Summary, "live as arn:aws:iam::123456789012:user/pullpath-fake, cluster prod in ap-northeast-2") {
			t.Fatalf("audit step = %+v, want it ran live, naming the identity, the cluster and the region", step)
		}
		if len(r.Answer.Changes) == 0 || len(folder.Answer.Changes) == 0 || !reflect.DeepEqual(r.Answer.Changes[0], folder.Answer.Changes[0]) {
			t.Errorf("live first change = %+v, folder's = %+v: want the same", r.Answer.Changes, folder.Answer.Changes)
		}
		if c := r.Answer.Changes[0]; c.Resource != "vpce-05335335335335335" {
			t.Errorf("first change %+v, want the S3 gateway endpoint", c)
		}
		var found bool
		for _, c := range srv.Calls() {
			found = found || (c.Action == "DescribeInstances" && c.Params.Get("InstanceId.1") == "i-0c0e8cd69b234a89")
		}
		if !found {
			t.Errorf("no describe-instances of the failing node's instance (from its providerID)")
		}
	})

	t.Run("no credentials", func(t *testing.T) {
		noAWSEnv(t)
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "")
		r, step := diag(t, Options{Live: &Live{}})
		if step.Status != report.DiagnoseSkipped || !strings.Contains(step.Reason, "no usable aws credentials") {
			t.Errorf("audit step = %+v, want skipped for want of credentials", step)
		}
		a := r.Answer
		if a.Status != report.AnswerBroken || a.Source != "read" || len(a.Changes) != 0 {
			t.Errorf("answer = %s from %s, %d changes: want broken from the events, nothing named", a.Status, a.Source, len(a.Changes))
		}
		var lines []string
		for _, l := range a.Look {
			if strings.Contains(l, "pullpath aws collect") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 || !strings.Contains(lines[0], "--region ap-northeast-2") || !strings.Contains(lines[0], "eks:DescribeCluster") {
			t.Errorf("look %q: want one line with the collect command, the region and the permissions", a.Look)
		}
	})

	t.Run("a denied call it can go without", func(t *testing.T) {
		awsEnv(t, srv)
		srv.Deny("DescribeNetworkAcls")
		_, step := diag(t, Options{Live: &Live{}})
		if step.Status != report.DiagnoseRan || !strings.Contains(step.Summary, "1 call denied, the checks that read them warn: ec2:DescribeNetworkAcls") {
			t.Errorf("audit step = %+v, want it ran, naming the denied permission from the audit's warning", step)
		}
	})

	t.Run("a denied call", func(t *testing.T) {
		awsEnv(t, srv)
		srv.Deny("DescribeInstances")
		r, step := diag(t, Options{Live: &Live{}})
		if step.Status != report.DiagnoseFailed || !strings.Contains(step.Next, "ec2:DescribeInstances (denied to arn:aws:iam::123456789012:user/pullpath-fake)") {
			t.Errorf("audit step = %+v, want failed, naming the permission and who lacks it", step)
		}
		if r.Answer.Status != report.AnswerBroken {
			t.Errorf("answer = %+v, want broken from the events", r.Answer)
		}
	})
}

// auditStep runs a no-walk diagnose of namespace shop as oncall and
// returns its report and audit step.
func auditStep(t *testing.T, oncall kubernetes.Interface, o Options) (*report.DiagnoseReport, report.DiagnoseStep) {
	t.Helper()
	o.Client, o.Target, o.Budget, o.Sweep, o.NoWalk = oncall, cluster.Target{Namespace: "shop"}, 30*time.Second, sweepOptions(), true
	r, err := Run(t.Context(), o)
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	for _, s := range r.Steps {
		if s.Name == "audit" {
			return r, s
		}
	}
	t.Fatalf("no audit step: %+v", r.Steps)
	return nil, report.DiagnoseStep{}
}
