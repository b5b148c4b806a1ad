package cluster

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestExplainSameAsSeries: with its Lists overlapped (and small pages, so
// that events arrive while pods are still being read), Explain concludes
// exactly what the same Lists in series concluded (refExplain), for every
// kind of target: events with a node and without one (which wait for the
// pods), a workload's scope, and failing containers without an event.
func TestExplainSameAsSeries(t *testing.T) {
	f := newFixture(t, "equiv")
	ctx := t.Context()
	for i := 0; i < 3; i++ {
		f.node(nodeSpec{name: fmt.Sprintf("eqv-a%d", i), labels: map[string]string{"pullpath.io/subnet": "subnet-a", "topology.kubernetes.io/zone": "z1"}, ip: fmt.Sprintf("10.7.1.%d", i+1), images: []string{ecrImage}})
		f.node(nodeSpec{name: fmt.Sprintf("eqv-b%d", i), labels: map[string]string{"pullpath.io/subnet": "subnet-b", "topology.kubernetes.io/zone": "z1"}, ip: fmt.Sprintf("10.7.2.%d", i+1)})
	}
	for i := 0; i < 6; i++ {
		f.pod(fmt.Sprintf("eqv-fail-%d", i), fmt.Sprintf("eqv-b%d", i%3), ecrImage, s3Fail, "")
		f.pod(fmt.Sprintf("eqv-ok-%d", i), fmt.Sprintf("eqv-a%d", i%3), ecrImage, "", []string{"fresh", "cached"}[i%2])
	}
	// Events that name no node: their node comes from the pod.
	for i := 0; i < 4; i++ {
		f.event(fmt.Sprintf("eqv-dns-%d", i), "", "Failed", "Warning", fmt.Sprintf("Failed to pull image %q: %s", acrImage, dnsFail))
		f.pod(fmt.Sprintf("eqv-dns-%d", i), fmt.Sprintf("eqv-a%d", i%3), acrImage, "", "")
		f.event(fmt.Sprintf("eqv-fail-%d", i), "", "Failed", "Warning", fmt.Sprintf("Failed to pull image %q: %s", ecrImage, s3Fail))
	}
	// A pod outside the workload's selector, with a failure event.
	other := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "eqv-other", Namespace: f.ns, Labels: map[string]string{"app": "other"}},
		Spec:       corev1.PodSpec{NodeName: "eqv-a0", Containers: []corev1.Container{{Name: "web", Image: acrImage}}},
	}
	if _, err := f.c.CoreV1().Pods(f.ns).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod eqv-other: %v", err)
	}
	f.event("eqv-other", "eqv-a0", "Failed", "Warning", fmt.Sprintf("Failed to pull image %q: %s", acrImage, authFail))
	// A failing container whose events are gone.
	quiet := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "eqv-quiet", Namespace: f.ns, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "eqv-b1", Containers: []corev1.Container{{Name: "web", Image: acrImage}}},
	}
	quiet, err := f.c.CoreV1().Pods(f.ns).Create(ctx, quiet, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod eqv-quiet: %v", err)
	}
	quiet.Status.Phase = corev1.PodPending
	quiet.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", Image: acrImage, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: dnsFail}}}}
	if _, err := f.c.CoreV1().Pods(f.ns).UpdateStatus(ctx, quiet, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update pod status eqv-quiet: %v", err)
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: ecrImage}}},
			},
		},
	}
	if _, err := f.c.AppsV1().Deployments(f.ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment web: %v", err)
	}

	for _, tc := range []struct {
		name   string
		target Target
	}{
		{"all-namespaces", Target{AllNamespaces: true}},
		{"namespace", Target{Namespace: f.ns}},
		{"deployment", Target{Kind: "deployment", Name: "web", Namespace: f.ns}},
		{"pod", Target{Kind: "pod", Name: "eqv-dns-1", Namespace: f.ns}},
	} {
		for _, page := range []int64{2, 500} {
			t.Run(fmt.Sprintf("%s/page-%d", tc.name, page), func(t *testing.T) {
				want, err := refExplain(ctx, f.c, tc.target, Options{PageSize: page})
				if err != nil {
					t.Fatalf("refExplain(%+v): %v", tc.target, err)
				}
				got, err := Explain(ctx, f.c, tc.target, Options{PageSize: page})
				if err != nil {
					t.Fatalf("Explain(%+v): %v", tc.target, err)
				}
				if want.Summary.Failures == 0 {
					t.Fatalf("refExplain(%+v) found no failure: the fixture is wrong", tc.target)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("Explain(%+v) differs from the Lists in series (-want +got):\n%s", tc.target, d)
				}
			})
		}
	}
}
