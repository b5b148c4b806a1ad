package cluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/verdict"
)

// An image that pulled and then dies with exec format error is a platform
// finding naming the node's architecture (the pull "worked").
func TestExecFormatErrorNamesNodeArch(t *testing.T) {
	f := newFixture(t, "exec-format")
	f.node(nodeSpec{name: "arm-1", ip: "10.9.0.4", labels: map[string]string{"agentpool": "arm"}})
	ctx := t.Context()
	n, err := f.c.CoreV1().Nodes().Get(ctx, "arm-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.NodeInfo.Architecture, n.Status.NodeInfo.OperatingSystem = "arm64", "linux"
	if _, err := f.c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := f.c.CoreV1().Pods(f.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: f.ns},
		Spec:       corev1.PodSpec{NodeName: "arm-1", Containers: []corev1.Container{{Name: "web", Image: acrImage}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "web", Image: acrImage, ImageID: acrImage + "@sha256:" + strings.Repeat("c", 64), RestartCount: 4,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 255, Reason: "Error", Message: "exec /usr/local/bin/web: exec format error\n"}},
	}}
	if _, err := f.c.CoreV1().Pods(f.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := f.explain(Target{}, 0)
	var found bool
	for _, fd := range r.Findings {
		if fd.Rule != "exec-format-error" {
			continue
		}
		found = true
		if fd.Code != verdict.PlatformNotFound || fd.Condition != verdict.ConditionImage || !strings.Contains(fd.Summary, "node arm-1 is linux/arm64") {
			t.Errorf("finding %s %s %q", fd.Code, fd.Condition, fd.Summary)
		}
	}
	if !found {
		t.Fatalf("no exec-format-error finding in %+v", r.Findings)
	}
}
