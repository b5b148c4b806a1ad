package cluster

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
	"github.com/pullpath/pullpath/internal/verdict"
)

// One real etcd + kube-apiserver for every test of the package.
var shared controlplane.Shared

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

func need(t *testing.T) kubernetes.Interface { return shared.Client(t) }

// fixture writes what a kubelet and the scheduler would have written.
type fixture struct {
	t  *testing.T
	c  kubernetes.Interface
	ns string
}

func newFixture(t *testing.T, ns string) *fixture {
	c := need(t)
	ctx := t.Context()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	return &fixture{t: t, c: c, ns: ns}
}

type nodeSpec struct {
	name   string
	labels map[string]string
	ip     string
	images []string
}

func (f *fixture) node(n nodeSpec) {
	f.t.Helper()
	ctx := f.t.Context()
	node, err := f.c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create node %s: %v", n.name, err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.ip}}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	for _, img := range n.images {
		node.Status.Images = append(node.Status.Images, corev1.ContainerImage{Names: []string{img, strings.SplitN(img, ":", 2)[0] + "@sha256:" + strings.Repeat("a", 64)}, SizeBytes: 1 << 20})
	}
	if len(node.Status.Images) == 0 {
		node.Status.Images = []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 1 << 10}}
	}
	if _, err := f.c.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		f.t.Fatalf("update node status %s: %v", n.name, err)
	}
}

// pod creates a pod on node; failMsg != "" makes it wait in ErrImagePull
// with that message (and a Failed event); else it runs.
func (f *fixture) pod(name, node, image, failMsg string, pulled string) {
	f.t.Helper()
	ctx := f.t.Context()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "web", Image: image}},
		},
	}
	p, err := f.c.CoreV1().Pods(f.ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create pod %s: %v", name, err)
	}
	cs := corev1.ContainerStatus{Name: "web", Image: image}
	if failMsg != "" {
		p.Status.Phase = corev1.PodPending
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: fmt.Sprintf("Back-off pulling image %q", image)}
	} else {
		p.Status.Phase = corev1.PodRunning
		cs.Ready = true
		cs.ImageID = image + "@sha256:" + strings.Repeat("b", 64)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	if _, err := f.c.CoreV1().Pods(f.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatalf("update pod status %s: %v", name, err)
	}
	switch {
	case failMsg != "":
		f.event(name, node, "Failed", "Warning", fmt.Sprintf("Failed to pull image %q: %s", image, failMsg))
		f.event(name, node, "BackOff", "Normal", fmt.Sprintf("Back-off pulling image %q", image))
	case pulled == "fresh":
		f.event(name, node, "Pulled", "Normal", fmt.Sprintf("Successfully pulled image %q in 1.2s (1.2s including waiting)", image))
	case pulled == "cached":
		f.event(name, node, "Pulled", "Normal", fmt.Sprintf("Container image %q already present on machine", image))
	}
}

func (f *fixture) event(pod, node, reason, typ, msg string) {
	f.t.Helper()
	f.eventAt(pod, node, reason, typ, msg, time.Now())
}

func (f *fixture) eventAt(pod, node, reason, typ, msg string, at time.Time) {
	f.t.Helper()
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%s.%d", pod, strings.ToLower(reason), time.Now().UnixNano()), Namespace: f.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pod, Namespace: f.ns, APIVersion: "v1"},
		Reason:         reason, Type: typ, Message: msg, Count: 3,
		Source:         corev1.EventSource{Component: "kubelet", Host: node},
		FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
	}
	if _, err := f.c.CoreV1().Events(f.ns).Create(f.t.Context(), e, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("create event: %v", err)
	}
}

func (f *fixture) explain(t Target, page int64) *report.ExplainReport {
	f.t.Helper()
	if t.Namespace == "" {
		t.Namespace = f.ns
	}
	r, err := Explain(f.t.Context(), f.c, t, Options{PageSize: page})
	if err != nil {
		f.t.Fatalf("Explain(%+v): %v", t, err)
	}
	return r
}

func groupFor(t *testing.T, r *report.ExplainReport, image string) report.ExplainGroup {
	t.Helper()
	for _, g := range r.Groups {
		if g.Image == image {
			return g
		}
	}
	t.Fatalf("no group for %s in %+v", image, r.Groups)
	return report.ExplainGroup{}
}

const (
	ecrImage = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/shop/web:2.3.1"
	acrImage = "myacr.azurecr.io/shop/web:2.3.1"
	s3Fail   = `rpc error: code = Unknown desc = failed to pull and unpack image "` + ecrImage + `": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://prod-eu-west-1-starport-layer-bucket.s3.eu-west-1.amazonaws.com/a1/b2?X-Amz-Signature=SECRET": dial tcp 52.218.36.10:443: i/o timeout`
	dnsFail  = `failed to pull and unpack image "` + acrImage + `": failed to resolve reference "` + acrImage + `": failed to do request: Head "https://myacr.azurecr.io/v2/shop/web/manifests/2.3.1": dial tcp: lookup myacr.azurecr.io on 168.63.129.16:53: no such host`
	authFail = `failed to pull and unpack image "` + acrImage + `": failed to resolve reference "` + acrImage + `": pulling from host myacr.azurecr.io failed with status code [manifests 2.3.1]: 401 Unauthorized`
)

// The ECR subnet scenario: only nodes in one subnet fail; the layers come from S3.
func TestSubnetOnlyFailure(t *testing.T) {
	f := newFixture(t, "subnet-only")
	pool := map[string]string{"eks.amazonaws.com/nodegroup": "ng-1", "topology.kubernetes.io/zone": "eu-west-1a"}
	with := func(subnet string) map[string]string {
		m := map[string]string{"pullpath.io/subnet": subnet}
		for k, v := range pool {
			m[k] = v
		}
		return m
	}
	// Failing nodes first, so that node age does not separate them.
	f.node(nodeSpec{name: "sub-a1", labels: with("subnet-0aaa"), ip: "10.0.3.11"})
	f.node(nodeSpec{name: "sub-a2", labels: with("subnet-0aaa"), ip: "10.0.3.12"})
	f.node(nodeSpec{name: "sub-b1", labels: with("subnet-0bbb"), ip: "10.0.4.11", images: []string{ecrImage}})
	f.node(nodeSpec{name: "sub-b2", labels: with("subnet-0bbb"), ip: "10.0.4.12", images: []string{ecrImage}})
	f.pod("web-1", "sub-a1", ecrImage, s3Fail, "")
	f.pod("web-2", "sub-a2", ecrImage, s3Fail, "")
	f.pod("web-3", "sub-b1", ecrImage, "", "fresh")
	f.pod("web-4", "sub-b2", ecrImage, "", "fresh")

	// Through the namespace, and through the Deployment's selector, with
	// pages of 2 so that Continue is used.
	if _, err := f.c.AppsV1().Deployments(f.ns).Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: ecrImage}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	for _, tgt := range []Target{{}, {Kind: "deployment", Name: "web"}} {
		r := f.explain(tgt, 2)
		g := groupFor(t, r, ecrImage)
		if g.Pattern != "subnet" || len(g.SeparatedBy) != 1 || g.SeparatedBy[0] != "subnet" {
			t.Errorf("%s: pattern %q separated by %v, want subnet only; verdict %q", r.Scope, g.Pattern, g.SeparatedBy, g.Verdict)
		}
		if g.Code != verdict.ConnectTimeout || g.Stage != verdict.StageBlob || g.Condition != verdict.ConditionEndpointSet {
			t.Errorf("%s: group %s/%s/%s, want CONNECT_TIMEOUT/blob/endpoint-set", r.Scope, g.Code, g.Stage, g.Condition)
		}
		if !strings.Contains(g.Where, " failing node(s), ") || !strings.Contains(g.Where, "only nodes in subnet subnet-0aaa fail") || !strings.HasSuffix(g.Where, ".") || strings.Contains(g.Where, "Failing with") || !strings.HasPrefix(g.Verdict, g.Where+" ") {
			t.Errorf("%s: where %q, want the verdict's first sentence (the subnet split) alone; verdict %q", r.Scope, g.Where, g.Verdict)
		}
		if !strings.Contains(g.Verdict, "only nodes in subnet subnet-0aaa fail") {
			t.Errorf("%s: verdict %q does not name the failing subnet", r.Scope, g.Verdict)
		}
		for _, n := range g.Nodes {
			if n.Status == report.NodeStatusOK && n.Evidence != report.EvidenceFresh {
				t.Errorf("%s: healthy node %s evidence %q, want %q", r.Scope, n.Name, n.Evidence, report.EvidenceFresh)
			}
			if n.Pool != "ng-1" || n.SubnetSource != "label pullpath.io/subnet" {
				t.Errorf("%s: node %s pool %q subnet source %q", r.Scope, n.Name, n.Pool, n.SubnetSource)
			}
		}
		if r.Summary.DominantCondition != verdict.ConditionEndpointSet {
			t.Errorf("%s: dominant condition %q, want endpoint-set", r.Scope, r.Summary.DominantCondition)
		}
		for _, fd := range r.Findings {
			if strings.Contains(fd.Message, "SECRET") || strings.Contains(fd.URL, "SECRET") {
				t.Errorf("finding leaks the signature: %+v", fd)
			}
		}
	}
}

// The scale-up case: only nodes created after the others fail; the
// old nodes' replicas run from cache.
func TestNewNodesOnlyFailure(t *testing.T) {
	f := newFixture(t, "new-nodes")
	pool := map[string]string{"kubernetes.azure.com/agentpool": "apps", "topology.kubernetes.io/zone": "westeurope-1"}
	f.node(nodeSpec{name: "age-old1", labels: pool, ip: "10.1.0.4", images: []string{acrImage}})
	f.node(nodeSpec{name: "age-old2", labels: pool, ip: "10.1.0.5", images: []string{acrImage}})
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution
	f.node(nodeSpec{name: "age-new1", labels: pool, ip: "10.1.0.6"})
	f.node(nodeSpec{name: "age-new2", labels: pool, ip: "10.1.0.7"})
	f.pod("web-1", "age-old1", acrImage, "", "")
	f.pod("web-2", "age-old2", acrImage, "", "")
	f.pod("web-3", "age-new1", acrImage, dnsFail, "")
	f.pod("web-4", "age-new2", acrImage, dnsFail, "")

	r := f.explain(Target{}, 500)
	g := groupFor(t, r, acrImage)
	if g.Pattern != "node-age" {
		t.Errorf("pattern %q (separated by %v), want node-age; verdict %q", g.Pattern, g.SeparatedBy, g.Verdict)
	}
	if !strings.Contains(g.Verdict, "only nodes created after") || !strings.Contains(g.Verdict, "prove nothing") {
		t.Errorf("verdict %q: want the cutoff and the cache note", g.Verdict)
	}
	if g.Code != verdict.DNSNXDomain || g.Condition != verdict.ConditionDNS {
		t.Errorf("group %s/%s, want DNS_NXDOMAIN/dns", g.Code, g.Condition)
	}
	for _, n := range g.Nodes {
		if n.Status == report.NodeStatusOK {
			if n.Evidence != report.EvidenceCached || n.HasImage == nil || !*n.HasImage {
				t.Errorf("healthy old node %s: evidence %q hasImage %v, want cached", n.Name, n.Evidence, n.HasImage)
			}
			if !strings.HasPrefix(n.SubnetSource, "InternalIP /24") || n.Subnet != "10.1.0.0/24" {
				t.Errorf("node %s subnet %q from %q, want the /24 guess", n.Name, n.Subnet, n.SubnetSource)
			}
		}
	}
	if r.Summary.DominantCondition != verdict.ConditionDNS {
		t.Errorf("dominant condition %q, want dns", r.Summary.DominantCondition)
	}
}

// Every node fails the same way: identity, not the network.
func TestAllNodesFailure(t *testing.T) {
	f := newFixture(t, "all-nodes")
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("all-%d", i)
		f.node(nodeSpec{name: name, labels: map[string]string{"pullpath.io/subnet": fmt.Sprintf("subnet-%d", i)}, ip: fmt.Sprintf("10.2.%d.4", i)})
		f.pod(fmt.Sprintf("web-%d", i), name, acrImage, authFail, "")
	}
	r := f.explain(Target{}, 1)
	g := groupFor(t, r, acrImage)
	if g.Pattern != "all-nodes" || !strings.Contains(g.Verdict, "identity or image") {
		t.Errorf("pattern %q verdict %q, want all-nodes / identity or image", g.Pattern, g.Verdict)
	}
	if g.Where != "All 3 nodes fail alike with "+string(g.Code)+" ("+string(g.Condition)+"): identity or image, not the network." {
		t.Errorf("where %q, want the verdict's first sentence", g.Where)
	}
	if len(g.FailingPods) != 3 || len(g.HealthyPods) != 0 {
		t.Errorf("failing pods %v healthy %v, want 3 and 0", g.FailingPods, g.HealthyPods)
	}
	if r.Summary.DominantCondition != verdict.ConditionTLSIdentity {
		t.Errorf("dominant condition %q, want tls-identity", r.Summary.DominantCondition)
	}
	// One pod alone: its event and its node.
	rp := f.explain(Target{Kind: "pod", Name: "web-2"}, 500)
	if rp.Scope != "pod all-nodes/web-2" || len(rp.Groups) != 1 || len(rp.Groups[0].Nodes) != 1 || rp.Groups[0].Nodes[0].Name != "all-2" {
		t.Errorf("explain pod web-2: scope %q groups %+v, want one group on node all-2", rp.Scope, rp.Groups)
	}
	if rp.Groups[0].Pattern != "single-node" {
		t.Errorf("explain pod web-2: pattern %q, want single-node", rp.Groups[0].Pattern)
	}
}

// Healthy replicas on nodes that have the image cached prove nothing: every
// node that had to pull failed, though they share subnet, pool and zone.
func TestCachedHealthyReplicas(t *testing.T) {
	f := newFixture(t, "cached")
	same := map[string]string{"cloud.google.com/gke-nodepool": "default-pool", "topology.kubernetes.io/zone": "europe-west1-b", "pullpath.io/subnet": "default"}
	f.node(nodeSpec{name: "cache-fail1", labels: same, ip: "10.3.0.4"})
	f.node(nodeSpec{name: "cache-ok1", labels: same, ip: "10.3.0.5", images: []string{acrImage}})
	f.node(nodeSpec{name: "cache-ok2", labels: same, ip: "10.3.0.6", images: []string{acrImage}})
	f.pod("web-1", "cache-fail1", acrImage, dnsFail, "")
	f.pod("web-2", "cache-ok1", acrImage, "", "cached")
	f.pod("web-3", "cache-ok2", acrImage, "", "") // no event: node.status.images tells

	r := f.explain(Target{}, 500)
	g := groupFor(t, r, acrImage)
	if g.Pattern != "cache-only" {
		t.Errorf("pattern %q, want cache-only; verdict %q", g.Pattern, g.Verdict)
	}
	if !strings.Contains(g.Verdict, "prove nothing") {
		t.Errorf("verdict %q does not say the healthy replicas prove nothing", g.Verdict)
	}
	healthy := 0
	for _, n := range g.Nodes {
		if n.Status == report.NodeStatusOK {
			healthy++
			if n.Evidence != report.EvidenceCached {
				t.Errorf("healthy node %s evidence %q, want %q", n.Name, n.Evidence, report.EvidenceCached)
			}
		}
	}
	if healthy != 2 {
		t.Errorf("%d healthy nodes, want 2", healthy)
	}
}

// No pull failure: exit 0 and nothing grouped.
func TestNoFailure(t *testing.T) {
	f := newFixture(t, "healthy")
	f.node(nodeSpec{name: "ok-1", ip: "10.4.0.4", images: []string{acrImage}})
	f.pod("web-1", "ok-1", acrImage, "", "fresh")
	r := f.explain(Target{}, 500)
	if r.Summary.Failures != 0 || r.Summary.DominantCondition != verdict.ConditionNone || len(r.Groups) != 0 {
		t.Errorf("healthy namespace: failures %d dominant %q groups %d, want 0, none, 0", r.Summary.Failures, r.Summary.DominantCondition, len(r.Groups))
	}
}

func TestUnknownTargets(t *testing.T) {
	c := need(t)
	if _, err := Explain(t.Context(), c, Target{Kind: "deployment", Name: "nope", Namespace: "default"}, Options{}); err == nil || !strings.Contains(err.Error(), "deployment default/nope") {
		t.Errorf("Explain(missing deployment) error = %v, want one naming it", err)
	}
	if _, err := Explain(t.Context(), c, Target{Kind: "cronjob", Name: "x", Namespace: "default"}, Options{}); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("Explain(cronjob) error = %v, want unknown kind", err)
	}
}

// The kubelet pulls one image at a time by default: a pod whose Pulling
// event came while another pull of its node was still open waits behind
// it, and a Pulled event's "(D including waiting)" says how long a finished
// pull waited (pkg/kubelet/images: image_manager.go logs Pulling before
// the serial puller's queue).
func TestPullQueue(t *testing.T) {
	f := newFixture(t, "queue")
	f.node(nodeSpec{name: "q-1", ip: "10.5.0.4"})
	f.node(nodeSpec{name: "q-2", ip: "10.5.0.5"})
	big, small, other := "registry.example.com/ml/trainer:7", acrImage, "registry.example.com/shop/api:1"
	t0 := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	f.pod("trainer", "q-1", big, "", "")
	f.eventAt("trainer", "q-1", "Pulling", "Normal", fmt.Sprintf("Pulling image %q", big), t0)
	f.pod("web", "q-1", small, "", "")
	f.eventAt("web", "q-1", "Pulling", "Normal", fmt.Sprintf("Pulling image %q", small), t0.Add(40*time.Second))
	f.pod("api", "q-1", other, "", "")
	f.eventAt("api", "q-1", "Pulled", "Normal", fmt.Sprintf("Successfully pulled image %q in 1.2s (2m5.254s including waiting). Image size: 1234 bytes.", other), t0.Add(-time.Minute))
	// q-2 pulls one image and it finished: nothing waits there.
	f.pod("web-2", "q-2", small, "", "")
	f.eventAt("web-2", "q-2", "Pulling", "Normal", fmt.Sprintf("Pulling image %q", small), t0)
	f.eventAt("web-2", "q-2", "Pulled", "Normal", fmt.Sprintf("Successfully pulled image %q in 3.1s (3.1s including waiting). Image size: 1234 bytes.", small), t0.Add(4*time.Second))

	r := f.explain(Target{}, 2)
	if r.Summary.Failures != 0 {
		t.Errorf("failures = %d, want 0 (waiting is not a pull failure)", r.Summary.Failures)
	}
	if len(r.Waits) != 2 {
		t.Fatalf("waits = %+v, want 2 (api waited, web waits behind trainer)", r.Waits)
	}
	waited, behind := r.Waits[0], r.Waits[1]
	if waited.Pod != f.ns+"/api" || waited.Node != "q-1" || waited.Waited != "2m4.054s" || waited.Pulled != "1.2s" {
		t.Errorf("finished pull's wait = %+v, want api on q-1 waited 2m4.054s, pulled 1.2s", waited)
	}
	if behind.Pod != f.ns+"/web" || behind.Node != "q-1" || len(behind.Behind) != 1 || !strings.Contains(behind.Behind[0], f.ns+"/trainer "+big) ||
		behind.Since == nil || !behind.Since.Equal(t0.Add(40*time.Second)) {
		t.Errorf("open pull's wait = %+v, want web on q-1 behind trainer's %s since %s", behind, big, t0.Add(40*time.Second))
	}
	if !strings.Contains(behind.Summary, "This node's pulls are queued") {
		t.Errorf("summary %q does not cite the node's finished queued pull as evidence", behind.Summary)
	}
}
