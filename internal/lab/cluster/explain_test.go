package cluster_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/lab/cluster"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestClusterKubeletStatuses is the twin, on real kubelets, of explain's
// cluster tests that write Pod statuses and Events by hand
// (internal/explain/cluster): it lets the kubelet's back-off run until the
// containers wait in ImagePullBackOff, checks the shape of what the kubelet
// wrote, then deletes every Event (they expire after an hour on a real
// cluster) and checks that explain still reads the cause from the
// container statuses alone.
func TestClusterKubeletStatuses(t *testing.T) {
	requireCluster(t)
	t.Parallel() // the cluster tests overlap: about 1 GB each, CPU mostly idle once Ready
	topo, err := scenario.LoadBuiltin("every-node-no-pull-scope")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c, err := cluster.Start(ctx, topo, cluster.Options{})
	if err != nil {
		t.Fatalf("StartCluster: %v", err)
	}
	defer c.Close()
	if err := c.Deploy(ctx, 2); err != nil {
		t.Fatal(err)
	}
	ns, name := c.WorkloadName()
	image := c.WorkloadImage()
	// the kubelet's back-off: ErrImagePull, then ImagePullBackOff (watched, bounded)
	backoff := func(p *corev1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == "ImagePullBackOff" {
				return true
			}
		}
		return false
	}
	pods, err := kwait.Wait(ctx, 90*time.Second, "both workload containers in ImagePullBackOff", kwait.Pods(c.Client, ns, "app="+name),
		func(ps []*corev1.Pod) bool { return len(ps) == 2 && backoff(ps[0]) && backoff(ps[1]) })
	if err != nil {
		c.SaveLogs("")
		t.Fatal(err)
	}
	for _, p := range pods {
		w := p.Status.ContainerStatuses[0].State.Waiting
		t.Logf("pod %s waiting %s: %s", p.Name, w.Reason, w.Message)
		if want := "Back-off pulling image \"" + image + "\""; !strings.HasPrefix(w.Message, want) {
			t.Errorf("waiting message %q, want it to start with %q", w.Message, want)
		}
		cl := explain.Classify(w.Message)
		if cl.Code != verdict.AuthForbidden {
			t.Errorf("Classify(the kubelet's ImagePullBackOff message) = %s (rule %q), want %s: %q", cl.Code, cl.Rule, verdict.AuthForbidden, w.Message)
		}
		if dir := os.Getenv("PULLPATH_RECORD_FIXTURES"); dir != "" {
			os.WriteFile(filepath.Join(dir, "kubelet-imagepullbackoff-status.txt"), []byte(w.Message+"\n"), 0o644)
		}
	}
	// no Events left: explain reads the container statuses
	if err := c.Client.CoreV1().Events(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Explain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Code != verdict.AuthForbidden || rep.Groups[0].Pattern != "all-nodes" {
		t.Errorf("explain without Events: groups %+v, want one all-nodes group with AUTH_FORBIDDEN", rep.Groups)
	}
}
