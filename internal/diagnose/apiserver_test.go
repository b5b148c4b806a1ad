package diagnose

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The message containerd 1.6 gives when the S3 layer host is black-holed
// (recorded in the lab: internal/explain/testdata/runtime).
const blobTimeout = `failed to pull and unpack image "` + ecrImage + `": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://` + s3Host + `/docker/registry/v2/blobs/sha256/e1/e1aa/data?X-Amz-Signature=abc": dial tcp 10.0.20.10:443: i/o timeout`

// seedScaleUp writes what the kubelets of a scale-up would have written:
// node-a and node-b run the image from their cache, node-c (new, subnet C)
// fails to pull its layers.
func seedScaleUp(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	eks := map[string]string{"eks.amazonaws.com/nodegroup": "ng-general", "topology.kubernetes.io/zone": "ap-northeast-2a"}
	seedPull(t, c, ns, ecrImage, []seedNode{
		{name: "node-a", pod: "web-a", ip: "10.0.1.10", provider: "aws:///ap-northeast-2a/i-0c0e8ad69b234723", labels: eks, cached: true},
		{name: "node-c", pod: "web-c", ip: "10.0.3.10", provider: "aws:///ap-northeast-2a/i-0c0e8cd69b234a89", labels: eks, fail: blobTimeout},
	})
}

// seedNode is a node as its kubelet registers it, with one Pod of the
// image: running from the node's cache, or failing with the kubelet's words.
type seedNode struct {
	name, pod, ip, provider string
	labels                  map[string]string
	cached                  bool
	fail                    string
}

// seedPull writes the nodes, their Pods and the failing Pods' Events.
func seedPull(t *testing.T, c kubernetes.Interface, ns, image string, nodes []seedNode) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels}, Spec: corev1.NodeSpec{ProviderID: n.provider}}
		node, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.ip}}
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		if n.cached {
			node.Status.Images = []corev1.ContainerImage{{Names: []string{image}, SizeBytes: 1 << 20}}
		}
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range nodes {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.pod, Namespace: ns, Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: p.name, Containers: []corev1.Container{{Name: "web", Image: image}}}}
		pod, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st := corev1.ContainerStatus{Name: "web", Image: image}
		if p.fail == "" {
			pod.Status.Phase = corev1.PodRunning
			st.Ready = true
			st.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
		} else {
			pod.Status.Phase = corev1.PodPending
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "` + image + `"`}
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{st}
		if _, err := c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if p.fail == "" {
			continue
		}
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: p.pod + ".failed", Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.pod, UID: pod.UID, FieldPath: "spec.containers{web}"},
			Reason:         "Failed", Type: corev1.EventTypeWarning, Count: 3,
			Message: "Failed to pull image \"" + image + "\": " + p.fail,
			Source:  corev1.EventSource{Component: "kubelet", Host: p.name},
		}
		if _, err := c.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// reader is a client that may read pods, events and nodes, and nothing else:
// an on-call engineer without the right to create Pods.
func reader(t *testing.T, cp *controlplane.ControlPlane, admin kubernetes.Interface) kubernetes.Interface {
	t.Helper()
	ctx := t.Context()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "diagnose-reader"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "events", "nodes"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "diagnose-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "diagnose-reader"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "oncall"}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// RBAC learns new rules a moment after they are written: wait
	// (bounded) until the authorizer allows what the role grants.
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: "oncall", ResourceAttributes: &authzv1.ResourceAttributes{Verb: "list", Resource: "pods"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader role is not in force after 15s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "oncall"}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Without the right to create Pods, the diagnosis says so, answers from
// the events, names the probe to run on the failing node and the audit to
// collect, and leaves nothing behind.
func TestDiagnoseWithoutPodRights(t *testing.T) {
	cp := controlplane.Require(t)
	admin, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	seedScaleUp(t, admin, "shop")
	if _, err := admin.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pullpath-sweep"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), Options{
		Client: reader(t, cp, admin),
		Target: cluster.Target{Namespace: "shop"},
		Budget: 30 * time.Second,
		Sweep:  sweepOptions(),
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	a := r.Answer
	if a.Status != report.AnswerBroken || a.Source != "read" || a.Code != verdict.ConnectTimeout || a.Condition != verdict.ConditionEndpointSet {
		t.Fatalf("Answer = %s from %s: %s %s, want broken from read: CONNECT_TIMEOUT endpoint-set", a.Status, a.Source, a.Code, a.Condition)
	}
	if a.Link == nil || a.Link.Host != s3Host || len(a.Link.Nodes) != 1 || a.Link.Nodes[0] != "node-c" {
		t.Errorf("Link = %+v, want %s failing on node-c", a.Link, s3Host)
	}
	steps := map[string]report.DiagnoseStep{}
	for _, s := range r.Steps {
		steps[s.Name] = s
	}
	if w := steps["walk"]; w.Status != report.DiagnoseFailed || !strings.Contains(w.Reason, "create") || !strings.Contains(w.Next, "kubectl debug node/node-c") || !strings.Contains(w.Next, "pullpath probe "+ecrImage) {
		t.Errorf("walk step = %+v, want failed for want of create on pods, with the probe to run on node-c", w)
	}
	if au := steps["audit"]; au.Status != report.DiagnoseSkipped || !strings.Contains(au.Next, "pullpath aws collect") {
		t.Errorf("audit step = %+v, want skipped naming pullpath aws collect (the nodes are aws:///)", au)
	}
	pods, err := admin.CoreV1().Pods("pullpath-sweep").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods left in pullpath-sweep: %d (err %v), want none", len(pods.Items), err)
	}
}

// Without the sweep namespace, the API's NotFound for it (not its message)
// makes the walk step name deploy/sweep/, which creates it.
func TestDiagnoseWithoutTheSweepNamespace(t *testing.T) {
	cp := controlplane.Require(t)
	admin, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	seedScaleUp(t, admin, "shop")
	r, err := Run(t.Context(), Options{Client: admin, Target: cluster.Target{Namespace: "shop"}, Budget: 30 * time.Second, Sweep: sweepOptions()})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var walk report.DiagnoseStep
	for _, s := range r.Steps {
		if s.Name == "walk" {
			walk = s
		}
	}
	if walk.Status != report.DiagnoseFailed || !strings.HasPrefix(walk.Next, "kubectl apply -f deploy/sweep/") || !strings.Contains(walk.Next, "kubectl debug node/node-c") {
		t.Errorf("walk step = %+v, want failed, naming deploy/sweep/ and then the probe by hand", walk)
	}
	if r.Answer.Status != report.AnswerBroken || r.Answer.Source != "read" {
		t.Errorf("Answer = %s from %s, want broken from the read", r.Answer.Status, r.Answer.Source)
	}
}

// Nothing failing: the answer says so, skips the walk without an image,
// and offers the sweep that would prove the path.
func TestDiagnoseNothingFailing(t *testing.T) {
	cp := controlplane.Require(t)
	admin, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "quiet"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), Options{Client: admin, Target: cluster.Target{Namespace: "quiet"}, Budget: 30 * time.Second, Sweep: sweepOptions()})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	if r.Answer.Status != report.AnswerNothing || r.Scope != "namespace quiet" {
		t.Errorf("Answer = %+v (scope %q), want nothing-failing in namespace quiet", r.Answer, r.Scope)
	}
	if len(r.Steps) != 3 || r.Steps[1].Name != "walk" || r.Steps[1].Status != report.DiagnoseSkipped || r.Steps[1].Reason == "" {
		t.Errorf("Steps = %+v, want read ran, walk skipped with a reason, audit", r.Steps)
	}
}

// record writes r as DIR/valid-NAME.json when PULLPATH_DIAGNOSE_RECORD=DIR:
// a real report for internal/printers' golden files.
func record(t *testing.T, name string, r *report.DiagnoseReport) {
	t.Helper()
	dir := os.Getenv("PULLPATH_DIAGNOSE_RECORD")
	if dir == "" {
		return
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "valid-"+name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sweepOptions() sweep.Options {
	return sweep.Options{ProbeImage: "registry.lab.test/pullpath:test", Namespace: "pullpath-sweep", RunID: "difftest"}
}

// With the AWS configuration of the cluster at hand (a folder the AWS CLI
// wrote), the answer names the objects to change: the S3 gateway endpoint
// and the route table of the failing node's subnet, with the command.
func TestDiagnoseNamesTheAWSObject(t *testing.T) {
	cp := controlplane.Require(t)
	admin, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	seedScaleUp(t, admin, "shop")
	r, err := Run(t.Context(), Options{
		Client:   reader(t, cp, admin),
		Target:   cluster.Target{Namespace: "shop"},
		Budget:   30 * time.Second,
		Sweep:    sweepOptions(),
		Auditors: map[nodeplace.Cloud]Auditor{nodeplace.AWS: awsaudit.Provider.Folder("testdata/aws-scale-up-new-subnet")},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	record(t, "diagnose-read-audit", r)
	a := r.Answer
	if a.Status != report.AnswerBroken || r.Audit == nil {
		t.Fatalf("Answer = %+v, audit %v: want broken with the audit's report", a, r.Audit != nil)
	}
	if len(a.Changes) == 0 {
		t.Fatalf("Answer has no change; audit verdict: %s", r.Audit.Verdict.Summary)
	}
	c := a.Changes[0]
	if c.Resource != "vpce-05335335335335335" || !strings.Contains(c.Command, "--add-route-table-ids rtb-0c0c0c0c0c0c0c0c0") {
		t.Errorf("first change = %+v, want the S3 gateway endpoint vpce-05335335335335335 to take rtb-0c0c0c0c0c0c0c0c0", c)
	}
	for _, ch := range a.Changes {
		for _, sn := range ch.Subnets {
			if sn != "subnet-0c3a5b7d9e1f40003" {
				t.Errorf("change %s is for subnet %s: want only subnet C's (node-c, 10.0.3.10)", ch.Resource, sn)
			}
		}
	}
	var audited bool
	for _, s := range r.Steps {
		audited = audited || (s.Name == "audit" && s.Status == report.DiagnoseRan)
	}
	if !audited || strings.Contains(strings.Join(a.Look, " "), "pullpath aws collect") {
		t.Errorf("steps %+v / look %q: want the audit ran, and not named as still to run", r.Steps, a.Look)
	}
}

// The failing Pods' pull identity, read as the kubelet builds it: their
// imagePullSecrets in order (here their ServiceAccount's list), the one
// the kubelet said it could not read, by name only; the answer names the
// missing secret. Without the right to read ServiceAccounts the identity
// is still read, without saying where it came from.
func TestDiagnoseReadsThePullIdentity(t *testing.T) {
	cp := controlplane.Require(t)
	admin, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const ns = "shop"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secrets := []corev1.LocalObjectReference{{Name: "web-pull"}, {Name: "web-pull-old"}}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "web"}, ImagePullSecrets: secrets}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const unauthorized = `failed to pull and unpack image "` + ecrImage + `": failed to resolve reference "` + ecrImage + `": pulling from host 123456789012.dkr.ecr.ap-northeast-2.amazonaws.com failed with status code [manifests 1.0]: 401 Unauthorized`
	for _, p := range []struct{ name, node string }{{"web-a", "node-a"}, {"web-b", "node-b"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns, Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: p.node, ServiceAccountName: "web", ImagePullSecrets: secrets, Containers: []corev1.Container{{Name: "web", Image: ecrImage}}}}
		pod, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = corev1.PodPending
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", Image: ecrImage,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "` + ecrImage + `"`}}}}
		if _, err := admin.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i, e := range []struct{ reason, msg string }{
			{"Failed", "Failed to pull image \"" + ecrImage + "\": " + unauthorized},
			{missingSecretReason, "Unable to retrieve some image pull secrets (web-pull-old); attempting to pull the image may not succeed."},
		} {
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", p.name, i), Namespace: ns},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.name, UID: pod.UID},
				Reason:         e.reason, Type: corev1.EventTypeWarning, Count: 2, Message: e.msg,
				Source: corev1.EventSource{Component: "kubelet", Host: p.node},
			}
			if _, err := admin.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		client kubernetes.Interface
		from   string
	}{{"admin", admin, "serviceaccount"}, {"no serviceaccounts get", reader(t, cp, admin), ""}} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Run(ctx, Options{Client: tc.client, Target: cluster.Target{Namespace: ns}, Budget: 30 * time.Second, NoWalk: true, Sweep: sweepOptions()})
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
			id := r.Identity
			if id == nil {
				t.Fatalf("no identity; steps %+v", r.Steps)
			}
			if id.Namespace != ns || id.ServiceAccount != "web" || len(id.Pods) != 2 || id.From != tc.from {
				t.Errorf("identity = %+v, want shop, ServiceAccount web, 2 pods, from %q", id, tc.from)
			}
			if len(id.Secrets) != 2 || id.Secrets[0] != (report.PullSecretRef{Name: "web-pull"}) || id.Secrets[1] != (report.PullSecretRef{Name: "web-pull-old", Missing: true}) {
				t.Errorf("secrets = %+v, want web-pull, then web-pull-old missing", id.Secrets)
			}
			var step report.DiagnoseStep
			for _, s := range r.Steps {
				if s.Name == "identity" {
					step = s
				}
			}
			if step.Status != report.DiagnoseRan || !strings.Contains(step.Summary, "secret shop/web-pull,") || !strings.Contains(step.Summary, "shop/web-pull-old (missing") {
				t.Errorf("identity step = %+v, want both secrets named, the old one missing", step)
			}
			if a := r.Answer; a.Condition != verdict.ConditionTLSIdentity || !strings.Contains(strings.Join(a.Look, " "), "Secret shop/web-pull-old named by the Pods' imagePullSecrets cannot be read") {
				t.Errorf("answer = %s, look %q: want tls-identity naming the secret the kubelet cannot read", a.Condition, a.Look)
			}
		})
	}
}
