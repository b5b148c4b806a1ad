package cli

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/testenv/controlplane"
)

func TestSweepUsageErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no image", []string{"sweep"}, "sweep takes one IMAGE argument"},
		{"unparsable image", []string{"sweep", "Registry.Example/UPPER:tag"}, `IMAGE "Registry.Example/UPPER:tag": `},
		{"unparsable probe image", []string{"sweep", "nginx:1", "--image-for-probe", "a b"}, `--image-for-probe "a b"`},
		{"bad per", []string{"sweep", "nginx:1", "--per", "rack"}, `--per "rack": want one of node, pool, zone, subnet`},
		{"all with per", []string{"sweep", "nginx:1", "--all", "--per", "zone"}, "--all walks every node"},
		{"canary image without canary", []string{"sweep", "nginx:1", "--canary-image", "nginx:2"}, "--canary-image needs --canary"},
		{"bad selector", []string{"sweep", "nginx:1", "--nodes", "a==b==c"}, `--nodes "a==b==c"`},
		{"cleanup with image", []string{"sweep", "--cleanup", "nginx:1"}, "--cleanup takes no IMAGE"},
		{"bad parallel", []string{"sweep", "nginx:1", "--parallel", "0"}, "--parallel 0: want 1 to 500"},
		{"bad output", []string{"sweep", "nginx:1", "-o", "xml"}, `unknown output format "xml"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tc.args...)
			if code != 1 || !strings.Contains(errOut, tc.wantErr) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("%v = exit %d, stderr %q; want exit 1 and one line with %q", tc.args, code, errOut, tc.wantErr)
			}
		})
	}
}

func TestSweepDryRunAgainstAPIServer(t *testing.T) {
	cp := controlplane.Require(t)
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct{ name, pool string }{{"dry-a", "web"}, {"dry-b", "batch"}} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{"eks.amazonaws.com/nodegroup": n.pool, "dry": "yes"}}}
		created, err := c.CoreV1().Nodes().Create(t.Context(), node, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if _, err := c.CoreV1().Nodes().UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCLI(t, "", "sweep", "nginx:1.27", "--dry-run", "--kubeconfig", cp.Kubeconfig, "--nodes", "dry=yes", "--expect-pool", "gpu")
	if code != 0 {
		t.Fatalf("sweep --dry-run = exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"2 of 2 node(s) in 2 group(s)", "dry-a", "dry-b", "empty pool  gpu", "namespace pullpath-sweep"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, out)
		}
	}
	pods, err := c.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("dry run created %d Pod(s) (err %v), want none", len(pods.Items), err)
	}
	code, _, errOut = runCLI(t, "", "sweep", "nginx:1.27", "--kubeconfig", cp.Kubeconfig, "--nodes", "dry=nothing")
	if code != 1 || !strings.Contains(errOut, `--nodes "dry=nothing" matches no node`) {
		t.Errorf("empty selector = exit %d, stderr %q", code, errOut)
	}
}

func TestSweepCleanupCommand(t *testing.T) {
	cp := controlplane.Require(t)
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "left"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app.kubernetes.io/name": "pullpath", "app.kubernetes.io/component": "sweep", "pullpath.io/sweep-run": "dead0001"}
	for _, name := range []string{"pullpath-sweep-dead0001-0000", "pullpath-sweep-dead0001-0001"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "x/y:1"}}}}
		if _, err := c.CoreV1().Pods("left").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "not-ours", Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "x/y:1"}}}}
	if _, err := c.CoreV1().Pods("left").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "sweep", "--cleanup", "-n", "left", "--kubeconfig", cp.Kubeconfig)
	if code != 0 || !strings.Contains(out, "deleted 2 Pod(s) and 0 owner(s) left by sweeps in namespace left") {
		t.Fatalf("sweep --cleanup = exit %d, out %q, err %q", code, out, errOut)
	}
	l, err := c.CoreV1().Pods("left").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "not-ours" {
		t.Errorf("after --cleanup: %d pod(s) (%v), want only not-ours", len(l.Items), err)
	}
}
