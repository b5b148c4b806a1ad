package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/pullpath/pullpath/internal/printers"
	"github.com/pullpath/pullpath/internal/probesummary"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep/simkubelet"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
	"github.com/pullpath/pullpath/internal/verdict"
)

// One real etcd + kube-apiserver for the package. Nothing runs Pods here:
// the tests write what a kubelet would (internal/sweep/simkubelet); the lab
// cluster's tests (internal/sweep/sweeplab) run real kubelets.
var shared controlplane.Shared

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

func need(t *testing.T) kubernetes.Interface { return shared.Client(t) }

// world is one test's nodes (their names carry the test's prefix) and
// namespace.
type world struct {
	t      *testing.T
	c      kubernetes.Interface
	ns     string
	prefix string
}

func newWorld(t *testing.T, prefix string) *world {
	c := need(t)
	ns := "sweep-" + prefix
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	return &world{t: t, c: c, ns: ns, prefix: prefix}
}

type nodeSpec struct {
	name, pool, zone, subnet, providerID string
	images                               []string
	opts                                 []nodeOpt
}

func (w *world) node(s nodeSpec) string {
	w.t.Helper()
	n := mkNode(w.prefix+"-"+s.name, s.pool, s.zone, s.subnet, 0, s.opts...)
	n.Labels["sweep-test"] = w.prefix
	n.Spec.ProviderID = s.providerID
	n.CreationTimestamp = metav1.Time{}
	created, err := w.c.CoreV1().Nodes().Create(w.t.Context(), &n, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("create node %s: %v", n.Name, err)
	}
	created.Status = n.Status
	created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
	for _, img := range s.images {
		created.Status.Images = append(created.Status.Images, corev1.ContainerImage{Names: []string{img}, SizeBytes: 1 << 20})
	}
	if len(created.Status.Images) == 0 {
		created.Status.Images = []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 1 << 10}}
	}
	if _, err := w.c.CoreV1().Nodes().UpdateStatus(w.t.Context(), created, metav1.UpdateOptions{}); err != nil {
		w.t.Fatalf("update node status %s: %v", n.Name, err)
	}
	w.t.Cleanup(func() {
		_ = w.c.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
	})
	return n.Name
}

func (w *world) sim(do simkubelet.Behavior) *simkubelet.Sim {
	w.t.Helper()
	s, err := simkubelet.Start(w.t.Context(), w.c, w.ns, CleanupSelector, 4, do)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			w.t.Errorf("simulated kubelet: %v", err)
		}
	})
	return s
}

func (w *world) options() Options {
	return Options{
		Image: "registry.lab.test/shop/app:1.0", ProbeImage: "registry.lab.test/tools/pullpath:test",
		Namespace: w.ns, Selector: "sweep-test=" + w.prefix, Timeout: 60 * time.Second, StartTimeout: 20 * time.Second,
	}
}

// noLeftovers asserts the run left no Pod and no owner.
func (w *world) noLeftovers() {
	w.t.Helper()
	pods, owners, err := Leftovers(context.Background(), w.c, w.ns)
	if err != nil {
		w.t.Fatal(err)
	}
	if pods != 0 || owners != 0 {
		w.t.Errorf("left behind: %d Pod(s), %d owner(s); want none", pods, owners)
	}
}

// A probe verdict as `probe --verdict-file` writes it.
func probeMsg(status verdict.Status, code verdict.Code, cond verdict.Condition, failHost string, failRole verdict.Role) simkubelet.Action {
	r := &report.ProbeReport{Image: "registry.lab.test/shop/app:1.0"}
	r.Verdict = verdict.Verdict{Status: status, Code: code, Condition: cond, Endpoint: failHost, Role: failRole, Cause: verdict.CauseTimeout, Summary: "test"}
	hosts := []struct {
		h string
		r verdict.Role
	}{{"registry.lab.test", verdict.RoleRegistry}, {"auth.lab.test", verdict.RoleAuth}, {"blob.lab.test", verdict.RoleBlob}}
	for _, h := range hosts {
		e := &report.Endpoint{Host: h.h, Role: h.r, Status: report.StepPass}
		if h.h == failHost {
			e.Status, e.Code = report.StepFail, code
			r.Steps = append(r.Steps, report.Step{Name: "connect", Endpoint: h.h, Status: report.StepFail, Code: code})
		}
		r.Endpoints = append(r.Endpoints, e)
	}
	exit := int32(0)
	if status != verdict.StatusOK {
		exit = 5 // any non-zero: the message decides
	}
	return simkubelet.Action{Terminated: true, ExitCode: exit, Message: string(probesummary.Of(r).Marshal())}
}

var okProbe = probeMsg(verdict.StatusOK, verdict.OK, "", "", "")

func role(p *corev1.Pod) string { return p.Labels[LabelRole] }

func TestSweepFindsTheFailingSubnet(t *testing.T) {
	w := newWorld(t, "subnet")
	w.node(nodeSpec{name: "a1", pool: "web", zone: "z1", subnet: "subnet-old1", providerID: "aws:///eu-west-1a/i-a1"})
	w.node(nodeSpec{name: "a2", pool: "web", zone: "z1", subnet: "subnet-old1", providerID: "aws:///eu-west-1a/i-a2"}) // same group: not chosen
	w.node(nodeSpec{name: "b1", pool: "web", zone: "z2", subnet: "subnet-old2", providerID: "aws:///eu-west-1b/i-b1"})
	newNode := w.node(nodeSpec{name: "c1", pool: "web", zone: "z2", subnet: "subnet-new", providerID: "aws:///eu-west-1b/i-c1"})
	w.node(nodeSpec{name: "down", pool: "web", zone: "z1", subnet: "subnet-old1", opts: []nodeOpt{notReady}})
	sim := w.sim(func(p *corev1.Pod) simkubelet.Action {
		if p.Spec.NodeName == newNode {
			return probeMsg(verdict.StatusFail, "BLOB_CONNECT_TIMEOUT", verdict.ConditionEndpointSet, "blob.lab.test", verdict.RoleBlob)
		}
		return okProbe
	})
	r, err := Run(t.Context(), w.c, w.options())
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	w.noLeftovers()
	if got := len(r.Nodes); got != 3 {
		t.Fatalf("walked from %d node(s), want 3 (one per group)", got)
	}
	v := r.Verdict
	if v.Pattern != "subnet" || v.Code != "BLOB_CONNECT_TIMEOUT" || v.Endpoint != "blob.lab.test" || v.Condition != verdict.ConditionEndpointSet {
		t.Errorf("verdict = pattern %q code %s endpoint %q condition %s, want subnet BLOB_CONNECT_TIMEOUT blob.lab.test endpoint-set", v.Pattern, v.Code, v.Endpoint, v.Condition)
	}
	if !strings.Contains(v.Summary, "subnet subnet-new") || !strings.Contains(v.Summary, "pull fully") {
		t.Errorf("summary = %q, want it to name subnet-new and the others pulling fully", v.Summary)
	}
	if v.OK != 2 || v.Failed != 1 {
		t.Errorf("ok/failed = %d/%d, want 2/1", v.OK, v.Failed)
	}
	if sk := skipped(r.Plan.Skipped); sk[w.prefix+"-down"] != report.SkipNotReady {
		t.Errorf("skipped = %v, want the NotReady node named", sk)
	}
	if !containsPrefix(v.Next, "pullpath aws audit --cluster CLUSTER --region eu-west-1   # the cloud's configuration: subnet subnet-new (failing)") {
		t.Errorf("next = %q, want the aws audit of subnet-new", v.Next)
	}
	cols := map[string]bool{}
	for _, c := range r.Endpoints {
		cols[c.Host] = true
	}
	if !cols["registry.lab.test"] || !cols["blob.lab.test"] || !cols["auth.lab.test"] {
		t.Errorf("matrix columns = %v, want registry, auth and blob hosts", r.Endpoints)
	}
	if n := sim.Seen.Load(); n != 3 {
		t.Errorf("the kubelet saw %d Pod(s), want 3", n)
	}
	var text strings.Builder
	if err := printers.Print(&text, "text", r, printers.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "connect BLOB_CONNECT_TIMEOUT") {
		t.Errorf("text matrix lacks the failing cell:\n%s", text.String())
	}
}

func containsPrefix(ss []string, p string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func TestSweepEveryNodeAlikeSaysIdentity(t *testing.T) {
	w := newWorld(t, "identity")
	w.node(nodeSpec{name: "a", pool: "web", zone: "z1", subnet: "s1"})
	w.node(nodeSpec{name: "b", pool: "batch", zone: "z2", subnet: "s2"})
	w.sim(func(p *corev1.Pod) simkubelet.Action {
		return probeMsg(verdict.StatusFail, "AUTH_UNAUTHORIZED", verdict.ConditionTLSIdentity, "auth.lab.test", verdict.RoleAuth)
	})
	r, err := Run(t.Context(), w.c, w.options())
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	w.noLeftovers()
	v := r.Verdict
	if v.Pattern != "all-nodes" || v.Condition != verdict.ConditionTLSIdentity || !strings.Contains(v.Summary, "Identity or the registry, not the network") {
		t.Errorf("verdict = %q %q condition %s, want all-nodes, identity not network, tls-identity", v.Pattern, v.Summary, v.Condition)
	}
}

// containerd 1.6's message for a refused registry (recorded with a real
// kubelet: shared/notes/real-kubelet.md).
const refusedPull = `failed to pull and unpack image "registry.lab.test/tools/pullpath:test": failed to resolve reference "registry.lab.test/tools/pullpath:test": failed to do request: Head "https://registry.lab.test/v2/tools/pullpath/manifests/test": dial tcp 10.77.0.1:443: connect: connection refused`

func TestProbeImageUnpullableIsTheNodesVerdict(t *testing.T) {
	w := newWorld(t, "probeimage")
	w.node(nodeSpec{name: "ok", pool: "web", zone: "z1", subnet: "s1"})
	bad := w.node(nodeSpec{name: "cut", pool: "web", zone: "z1", subnet: "s2"})
	w.sim(func(p *corev1.Pod) simkubelet.Action {
		if p.Spec.NodeName == bad {
			return simkubelet.Action{PullError: refusedPull}
		}
		return okProbe
	})
	r, err := Run(t.Context(), w.c, w.options())
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	w.noLeftovers()
	for _, n := range r.Nodes {
		if n.Name != bad {
			continue
		}
		if n.Probe == nil || n.Probe.Source != report.SourceProbeEvents || n.Verdict.Code == "" || n.Verdict.Code == verdict.Other || n.Status != report.SweepFail {
			t.Fatalf("node %s = %+v, want its verdict from the kubelet's Events", bad, n.Probe)
		}
		if n.Verdict.Cause != verdict.CauseRefused {
			t.Errorf("cause = %s, want refused (from containerd's message)", n.Verdict.Cause)
		}
		if !strings.Contains(strings.Join(r.Verdict.Advice, "\n"), "could not pull pullpath's own image") {
			t.Errorf("advice = %q, want the probe image's failure said", r.Verdict.Advice)
		}
		return
	}
	t.Fatalf("node %s not in the report", bad)
}

func TestCanaryReconciledAndCached(t *testing.T) {
	w := newWorld(t, "canary")
	const image = "registry.lab.test/shop/app:1.0"
	w.node(nodeSpec{name: "old", pool: "web", zone: "z1", subnet: "s-old", images: []string{image}})
	newNode := w.node(nodeSpec{name: "new", pool: "web", zone: "z1", subnet: "s-new"})
	blobTimeout := `failed to pull and unpack image "registry.lab.test/shop/app:1.0": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://blob.lab.test/docker/registry/v2/blobs/sha256/4f/4f1c/data": dial tcp 10.0.20.10:443: i/o timeout`
	w.sim(func(p *corev1.Pod) simkubelet.Action {
		switch {
		case role(p) == RoleCanary && p.Spec.NodeName == newNode:
			return simkubelet.Action{PullError: blobTimeout}
		case role(p) == RoleCanary:
			return simkubelet.Action{Pulled: true}
		case p.Spec.NodeName == newNode:
			return probeMsg(verdict.StatusFail, "BLOB_CONNECT_TIMEOUT", verdict.ConditionEndpointSet, "blob.lab.test", verdict.RoleBlob)
		}
		return okProbe
	})
	o := w.options()
	o.Canary = true
	r, err := Run(t.Context(), w.c, o)
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	w.noLeftovers()
	for _, n := range r.Nodes {
		switch n.Name {
		case newNode:
			if n.Agreement != "agree-fail" || n.Canary == nil || n.Canary.Verdict.Endpoint != "blob.lab.test" {
				t.Errorf("new node: agreement %q canary %+v, want agree-fail on blob.lab.test", n.Agreement, n.Canary)
			}
		default:
			if n.Agreement != "agree-ok" || n.Canary == nil || n.Canary.Cached == nil || !*n.Canary.Cached {
				t.Errorf("old node: agreement %q canary %+v, want agree-ok and cached", n.Agreement, n.Canary)
			}
		}
	}
}

func TestBadInputGoesOn(t *testing.T) {
	w := newWorld(t, "badinput")
	w.node(nodeSpec{name: "good", pool: "web", zone: "z1", subnet: "s1"})
	garbled := w.node(nodeSpec{name: "garbled", pool: "web", zone: "z1", subnet: "s2"})
	vanishing := w.node(nodeSpec{name: "vanishing", pool: "web", zone: "z1", subnet: "s3"})
	silent := w.node(nodeSpec{name: "silent", pool: "web", zone: "z1", subnet: "s4"})
	w.sim(func(p *corev1.Pod) simkubelet.Action {
		switch p.Spec.NodeName {
		case garbled:
			return simkubelet.Action{Terminated: true, ExitCode: 2, Message: "panic: something else entirely"}
		case vanishing:
			return simkubelet.Action{DeleteNode: true}
		case silent:
			return simkubelet.Action{Ignore: true}
		}
		return okProbe
	})
	o := w.options()
	o.StartTimeout = 3 * time.Second
	r, err := Run(t.Context(), w.c, o)
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	w.noLeftovers()
	want := map[string]string{
		garbled:   "termination message is not the probe's verdict JSON",
		vanishing: "disappeared mid-run",
		silent:    "did not start the Pod within 3s",
	}
	for _, n := range r.Nodes {
		if n.Name == w.prefix+"-good" {
			if n.Status != report.SweepOK {
				t.Errorf("good node = %s, want ok: the rest of the run goes on", n.Status)
			}
			continue
		}
		if n.Status != report.SweepNoAnswer || n.Probe == nil || !strings.Contains(n.Probe.Message, want[n.Name]) {
			t.Errorf("%s: status %s probe %+v, want no-answer saying %q", n.Name, n.Status, n.Probe, want[n.Name])
		}
		if strings.Contains(n.Probe.Message, "\n") {
			t.Errorf("%s: message has a newline: %q", n.Name, n.Probe.Message)
		}
	}
	if r.Verdict.Status != verdict.StatusFail || r.Verdict.Pattern != "no-answer" {
		t.Errorf("verdict = %s %q, want fail no-answer", r.Verdict.Status, r.Verdict.Pattern)
	}
}

func TestNothingToWalk(t *testing.T) {
	w := newWorld(t, "nolinux")
	w.node(nodeSpec{name: "win1", pool: "w", opts: []nodeOpt{windows}})
	w.node(nodeSpec{name: "win2", pool: "w", opts: []nodeOpt{windows}})
	_, err := Run(t.Context(), w.c, w.options())
	if !errors.Is(err, ErrNoNode) || !strings.Contains(err.Error(), "2 Windows") {
		t.Errorf("Run on Windows only = %v, want %v naming 2 Windows", err, ErrNoNode)
	}
	o := w.options()
	o.Selector = "sweep-test=nothing-has-this"
	if _, err := Run(t.Context(), w.c, o); err == nil || !strings.Contains(err.Error(), "matches no node") {
		t.Errorf("Run with an empty selector = %v, want 'matches no node'", err)
	}
	w.noLeftovers()
}

func TestCancelLeavesNothing(t *testing.T) {
	w := newWorld(t, "cancel")
	for i := 0; i < 6; i++ {
		w.node(nodeSpec{name: fmt.Sprintf("n%d", i), pool: "web", zone: "z1", subnet: fmt.Sprintf("s%d", i)})
	}
	started := make(chan struct{}, 16)
	w.sim(func(p *corev1.Pod) simkubelet.Action {
		started <- struct{}{}
		return simkubelet.Action{Ignore: true} // never answers: the run waits
	})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for i := 0; i < 3; i++ {
			<-started
		}
		cancel() // as Ctrl-C / SIGTERM do through the signal context
	}()
	o := w.options()
	o.Parallel = 4
	_, err := Run(ctx, w.c, o)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run cancelled = %v, want context.Canceled", err)
	}
	w.noLeftovers()
}

func TestCleanupByLabel(t *testing.T) {
	w := newWorld(t, "cleanup")
	name := w.node(nodeSpec{name: "n", pool: "web"})
	po := PodOptions{RunID: "deadbeef", Namespace: w.ns, Image: "a/b:c", ProbeImage: "a/p:1", Deadline: 60}
	if _, err := w.c.BatchV1().Jobs(w.ns).Create(t.Context(), newOwner(po), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := w.c.CoreV1().Pods(w.ns).Create(t.Context(), po.ProbePod(fmt.Sprintf("left-%d", i), report.PlannedNode{Name: name}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Cleanup(t.Context(), w.c, w.ns)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pods != 3 || got.Owners != 1 {
		t.Errorf("Cleanup = %+v, want 3 Pods and 1 owner", got)
	}
	w.noLeftovers()
}

func TestForbiddenNamesTheVerb(t *testing.T) {
	w := newWorld(t, "rbac")
	w.node(nodeSpec{name: "n", pool: "web"})
	// A user that may do everything sweep needs except create Pods.
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "get", "list", "delete"}},
	}
	c := w.userWithRules(t, "no-create", rules, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list", "get"}}})
	_, err := Run(t.Context(), c, w.options())
	if !IsForbidden(err) {
		t.Fatalf("Run without create pods = %v, want a ForbiddenError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `RBAC verb "create" on "pods" is missing in namespace `+w.ns) || strings.Contains(msg, "\n") {
		t.Errorf("error = %q, want one line naming the verb create on pods", msg)
	}
	w.noLeftovers()
}

// userWithRules binds rules (in the namespace) and clusterRules to a new
// user and returns a client that impersonates it.
func (w *world) userWithRules(t *testing.T, user string, rules, clusterRules []rbacv1.PolicyRule) kubernetes.Interface {
	t.Helper()
	ctx := t.Context()
	name := w.prefix + "-" + user
	if _, err := w.c.RbacV1().Roles(w.ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subj := []rbacv1.Subject{{Kind: "User", Name: name, APIGroup: "rbac.authorization.k8s.io"}}
	if _, err := w.c.RbacV1().RoleBindings(w.ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subj,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: clusterRules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subj,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.c.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = w.c.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	cfg := rest.CopyConfig(shared.CP.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer learns new bindings from its informers, a moment
	// after they are written: wait (bounded) until the cluster-wide one
	// is in force.
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			_, err = c.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{Limit: 1})
		}
		if err == nil || !apierrors.IsForbidden(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("binding for %s not in force after 15s: %v", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c
}

// TestPodSecurityRefusalSaidAsSuch: a namespace whose Pod Security level
// refuses hostNetwork and hostPath is one line saying so, not an RBAC verb.
func TestPodSecurityRefusalSaidAsSuch(t *testing.T) {
	w := newWorld(t, "restricted")
	w.node(nodeSpec{name: "n", pool: "web"})
	ns, err := w.c.CoreV1().Namespaces().Get(t.Context(), w.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = "baseline"
	if _, err := w.c.CoreV1().Namespaces().Update(t.Context(), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), w.c, w.options())
	var ae *AdmissionError
	if !errors.As(err, &ae) || IsForbidden(err) || !strings.Contains(err.Error(), "PodSecurity") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Run in a baseline namespace = %v, want one line: the namespace refuses the Pods (PodSecurity)", err)
	}
	w.noLeftovers()
}
