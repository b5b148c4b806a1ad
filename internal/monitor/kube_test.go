package monitor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/monitor/fleet"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
	"github.com/pullpath/pullpath/internal/verdict"
)

// manifests decodes every object of the deploy/monitor files named.
func manifests(t *testing.T, files ...string) []runtime.Object {
	t.Helper()
	var out []runtime.Object
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("../../deploy/monitor", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("deploy/monitor/%s: %v", f, err)
			}
			out = append(out, obj)
		}
	}
	return out
}

// applyCore creates the Namespace, ServiceAccount and RBAC of deploy/monitor
// as they are.
func applyCore(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	for _, obj := range manifests(t, "namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "configmap.yaml", "daemonset.yaml") {
		var err error
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = cs.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.DaemonSet:
			// accepted as is by the API (nothing runs it here)
			_, err = cs.AppsV1().DaemonSets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("deploy/monitor: unexpected %T", obj)
		}
		if err != nil {
			t.Fatalf("create %T from deploy/monitor: %v", obj, err)
		}
	}
}

// saToken is a real bound token of the agent's ServiceAccount, written to a
// file like the kubelet's projected volume.
func saToken(ctx context.Context, t *testing.T, cs kubernetes.Interface, dir string) string {
	t.Helper()
	exp := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts("pullpath-monitor").CreateToken(ctx, "pullpath-monitor",
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for pullpath-monitor: %v", err)
	}
	p := filepath.Join(dir, "token")
	if err := os.WriteFile(p, []byte(tr.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func labelsNode(name string, labels map[string]string, ip string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:   corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
}

func deployment(name string, replicas int32, sel map[string]string, tol []corev1.Toleration, images ...string) *appsv1.Deployment {
	var cs []corev1.Container
	for i, img := range images {
		cs = append(cs, corev1.Container{Name: "c" + string(rune('a'+i)), Image: img})
	}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{NodeSelector: sel, Tolerations: tol, Containers: cs}}}}
}

// TestAgentWithRealAPIServer runs agents against a real kube-apiserver
// with the ServiceAccount token and RBAC of deploy/monitor as shipped: the
// Node's labels give pool/zone/subnet, --from-cluster picks the images of
// the workloads that could land on each node, the verdict goes to an Event
// on the Node when it changes, and `monitor status` groups the fleet.
// SubjectAccessReviews prove the RBAC grants nothing more.
func TestAgentWithRealAPIServer(t *testing.T) {
	cp := controlplane.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	applyCore(ctx, t, cs)
	dir := t.TempDir()
	tokenFile := saToken(ctx, t, cs, dir)
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, cp.Config.TLSClientConfig.CAData, 0o644); err != nil {
		t.Fatal(err)
	}

	// Least privilege, asked of the real authorizer.
	sa := "system:serviceaccount:pullpath-monitor:pullpath-monitor"
	for _, c := range []struct {
		ns, verb, group, resource string
		allowed                   bool
	}{
		{"", "get", "", "nodes", true},
		{"", "list", "apps", "deployments", true},
		{"", "list", "apps", "daemonsets", true},
		{"", "list", "apps", "statefulsets", true},
		{"default", "create", "", "events", true},
		{"", "list", "", "nodes", false},
		{"", "update", "", "nodes", false},
		{"", "patch", "", "nodes", false},
		{"kube-system", "create", "", "events", false},
		{"default", "list", "", "events", false},
		{"default", "get", "", "secrets", false},
		{"", "list", "", "pods", false},
		{"default", "delete", "apps", "deployments", false},
	} {
		r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:pullpath-monitor", "system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Namespace: c.ns, Verb: c.verb, Group: c.group, Resource: c.resource}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed != c.allowed {
			t.Errorf("can %s %s %s/%s in %q: %v, want %v", sa, c.verb, c.group, c.resource, c.ns, r.Status.Allowed, c.allowed)
		}
	}

	// The lab's registry, and a name its DNS does not know.
	image := labsvc.ImageSpec{Repository: "shop/web", Tag: "1.0", LayerSizes: []int64{16 << 10}, Seed: 5}
	st := testenv.StartStack(t, labsvc.StackConfig{Image: image,
		Addrs: labsvc.StackAddrs{DNS: "127.0.43.53", Registry: "127.0.43.10", Token: "127.0.43.11", Blob: "127.0.43.12", Blob2: "127.0.43.13"}})
	good := st.Ref()
	missing := "nope.lab.test:5000/shop/api:2.0"

	// Two nodes in two pools; a GPU taint on the second.
	gpuTaint := corev1.Taint{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	for _, n := range []*corev1.Node{
		labelsNode("node-a", map[string]string{"eks.amazonaws.com/nodegroup": "general", "topology.kubernetes.io/zone": "zone-a"}, "10.0.1.5"),
		labelsNode("node-g", map[string]string{"eks.amazonaws.com/nodegroup": "gpu", "topology.kubernetes.io/zone": "zone-b", "pullpath.io/subnet": "subnet-0abc"}, "10.0.2.7", gpuTaint),
	} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Workloads: web runs anywhere untainted; api only on general; train
	// only on gpu and tolerates its taint; the DaemonSet everywhere
	// untainted (its implicit tolerations do not cover the GPU taint).
	for _, d := range []*appsv1.Deployment{
		deployment("web", 3, nil, nil, good),
		deployment("api", 2, map[string]string{"eks.amazonaws.com/nodegroup": "general"}, nil, missing),
		deployment("train", 1, map[string]string{"eks.amazonaws.com/nodegroup": "gpu"}, []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}, good, "train:latest"),
	} {
		if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dsImage := "registry.lab.test:1/agent/logs:3"
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "logs", Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "logs"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "logs"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: dsImage}}}}}}
	if _, err := cs.AppsV1().DaemonSets("default").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	run := func(node string) *monitor.Agent {
		o := monitor.LabOptionsT(t, node, st)
		o.Images = nil
		o.Pool, o.Zone, o.Subnet = "", "", ""
		o.FromCluster, o.MaxTargets = true, 5
		o.KubeAPI, o.KubeTokenFile, o.KubeCAFile = cp.Server, tokenFile, caFile
		o.Once = true
		logs := monitor.NewLogBuffer()
		a, err := monitor.New(o, logs)
		if err != nil {
			t.Fatalf("New(%s) = %v", node, err)
		}
		if err := a.Run(ctx); err != nil {
			t.Fatalf("Run(%s) = %v", node, err)
		}
		t.Logf("agent %s:\n%s", node, logs.String())
		return a
	}
	a := run("node-a")
	g := run("node-g")

	images := func(a *monitor.Agent) []string {
		var out []string
		for _, t := range a.Status().Targets {
			out = append(out, t.Image)
		}
		return out
	}
	// most used first: web (3 replicas), then api (2), then the two
	// DaemonSets (1 each, by name): the agent's own image counts too, a
	// new node pulls it first
	agentImage := "ghcr.io/pullpath/pullpath-agent:v0.1.0"
	if got, want := images(a), []string{good, missing, agentImage, dsImage}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("node-a targets = %v, want %v", got, want)
	}
	wantG := []string{agentImage, good, "train:latest"}
	gotG := images(g)
	sort.Strings(gotG)
	sort.Strings(wantG)
	if strings.Join(gotG, " ") != strings.Join(wantG, " ") {
		t.Errorf("node-g targets = %v, want %v (web is kept off by the taint, api by its selector, the DaemonSet by the taint)", gotG, wantG)
	}
	sa1 := a.Status()
	if sa1.Pool != "general" || sa1.Zone != "zone-a" || sa1.Subnet != "10.0.1.0/24" {
		t.Errorf("node-a place = %s/%s/%s, want general/zone-a/10.0.1.0/24", sa1.Pool, sa1.Zone, sa1.Subnet)
	}
	if sa1.Status != verdict.StatusFail {
		t.Errorf("node-a status = %q, want fail (%s does not resolve)", sa1.Status, missing)
	}

	// The Events on the Nodes, and the fleet view built from them.
	r, err := fleet.Status(ctx, cs, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, grp := range r.Groups {
		for _, n := range grp.Nodes {
			got[n.Node] = grp.Pool + "/" + grp.Zone + "/" + grp.Subnet + " " + string(n.Status) + " " + n.Code
		}
	}
	wantF := map[string]string{
		"node-a": "general/zone-a/10.0.1.0/24 fail DNS_NXDOMAIN",
		"node-g": "gpu/zone-b/subnet-0abc fail DNS_REFUSED", // the lab's DNS refuses ghcr.io
	}
	for n, w := range wantF {
		if got[n] != w {
			t.Errorf("fleet %s = %q, want %q", n, got[n], w)
		}
	}
	if r.Summary.Failing != 2 || r.Summary.DominantCondition != verdict.ConditionDNS || r.Summary.ExitCode != 4 {
		t.Errorf("fleet summary = %+v, want 2 failing, condition dns, exit 4", r.Summary)
	}

	// ok -> fail -> ok on one node: one Event per change, none for the
	// rounds in between.
	if _, err := cs.CoreV1().Nodes().Create(ctx, labelsNode("node-t", map[string]string{"eks.amazonaws.com/nodegroup": "general"}, "10.0.1.9"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(dir, "hosts")
	healthy := "127.0.0.1 localhost\n"
	if err := os.WriteFile(hosts, []byte(healthy), 0o644); err != nil {
		t.Fatal(err)
	}
	o := monitor.LabOptionsT(t, "node-t", st)
	o.Pool, o.Zone, o.Subnet = "", "", ""
	o.HostsFile = hosts
	o.KubeAPI, o.KubeTokenFile, o.KubeCAFile = cp.Server, tokenFile, caFile
	o.Interval, o.ProbeTimeout = time.Second, time.Second
	logs := monitor.NewLogBuffer()
	ag, err := monitor.New(o, logs)
	if err != nil {
		t.Fatal(err)
	}
	actx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ag.Run(actx) }()
	defer func() {
		stop()
		<-done
		ag.Close()
		if t.Failed() {
			t.Logf("agent node-t:\n%s", logs.String())
		}
	}()
	events := func() []corev1.Event {
		l, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=node-t"})
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
		return l.Items
	}
	waitEvents := func(n int, reason string) {
		t.Helper()
		// watched, bounded: the n-th Event on node-t, then exactly n
		ev := kwait.Until(ctx, t, 30*time.Second, fmt.Sprintf("event %d (%s) on node-t", n, reason),
			kwait.Events(cs, "default", "involvedObject.name=node-t"), func(ev []*corev1.Event) bool { return len(ev) >= n })
		if len(ev) != n || ev[n-1].Reason != reason {
			t.Fatalf("events on node-t = %d, last %q, want %d, last %s", len(ev), ev[len(ev)-1].Reason, n, reason)
		}
	}
	waitEvents(1, monitor.ReasonOK)
	if err := os.WriteFile(hosts, []byte(healthy+"127.0.43.99 blob.lab.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitEvents(2, monitor.ReasonBroken)
	if err := os.WriteFile(hosts, []byte(healthy), 0o644); err != nil {
		t.Fatal(err)
	}
	waitEvents(3, monitor.ReasonOK)
	roundsAtRestore := ag.Status().Rounds
	// two more rounds with the same verdict: no new Event
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for ag.Status().Rounds < roundsAtRestore+2 {
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not run two more rounds in 20s")
		}
		<-tick.C
	}
	ev := events()
	if len(ev) != 3 {
		t.Fatalf("events on node-t after unchanged rounds = %d, want 3", len(ev))
	}
	e := ev[1]
	if e.Type != "Warning" || e.Annotations[monitor.AnnotationCode] != string(verdict.ConnectRefused) || e.Annotations[monitor.AnnotationCondition] != string(verdict.ConditionEndpointSet) ||
		e.InvolvedObject.Kind != "Node" || e.InvolvedObject.UID == "" || e.Source.Component != monitor.EventComponent {
		t.Errorf("the Broken event = %+v", e)
	}
	if !strings.HasPrefix(ev[2].Message, "restored: ") {
		t.Errorf("the third event's message = %q, want it to start with \"restored: \"", ev[2].Message)
	}

	// The fleet view now: node-t restored beside the two failing nodes.
	// PULLPATH_MONITOR_RECORD=FILE writes it for internal/printers' golden
	// files.
	r, err = fleet.Status(ctx, cs, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Summary; s.Nodes != 3 || s.OK != 1 || s.Failing != 2 || s.ExitCode != 4 {
		t.Errorf("fleet summary after node-t's restore = %+v, want 3 nodes, 1 ok, 2 failing, exit 4", s)
	}
	if f := os.Getenv("PULLPATH_MONITOR_RECORD"); f != "" {
		b, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(f, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
