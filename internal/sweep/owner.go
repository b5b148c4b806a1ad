package sweep

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/report"
)

// ownerGrace is how long after the run's deadline the owner ends by itself.
const ownerGrace = 30

// newOwner is the run's one owner: a Job that never runs a Pod
// (parallelism 0), fails at its activeDeadlineSeconds, and is deleted by the
// TTL-after-finished controller at once (ttlSecondsAfterFinished 0); the
// garbage collector then deletes every Pod that names it in its
// ownerReferences. So a CLI that dies, even by kill -9, leaves nothing
// behind past the deadline, without any agent of pullpath's own.
func newOwner(o PodOptions) *batchv1.Job {
	zero32 := int32(0)
	deadline := o.Deadline + ownerGrace
	return &batchv1.Job{
		ObjectMeta: o.meta("pullpath-sweep-"+o.RunID, RoleOwner, report.PlannedNode{}),
		Spec: batchv1.JobSpec{
			Parallelism:             &zero32,
			BackoffLimit:            &zero32,
			ActiveDeadlineSeconds:   &deadline,
			TTLSecondsAfterFinished: &zero32,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelName: "pullpath", LabelComponent: "sweep-owner"}},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: &falseVal,
					Containers:                   []corev1.Container{{Name: "owner", Image: o.ProbeImage, Args: []string{"version"}}},
				},
			},
		},
	}
}

func createOwner(ctx context.Context, c kubernetes.Interface, o PodOptions) (*batchv1.Job, error) {
	j := newOwner(o)
	j.Annotations = nil
	out, err := c.BatchV1().Jobs(o.Namespace).Create(ctx, j, metav1.CreateOptions{})
	if err != nil {
		return nil, apiError(err, "create", "jobs", o.Namespace)
	}
	return out, nil
}

// deleteNow deletes one Pod with grace 0 (a NotReady node's kubelet is not
// waited for). A Pod already gone is fine.
func deleteNow(ctx context.Context, c kubernetes.Interface, ns, name string) error {
	err := c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return apiError(err, "delete", "pods", ns)
	}
	return nil
}

func deleteOwner(ctx context.Context, c kubernetes.Interface, ns, name string) error {
	bg := metav1.DeletePropagationBackground
	err := c.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		return apiError(err, "delete", "jobs", ns)
	}
	return nil
}

// Cleaned is what Cleanup removed.
type Cleaned struct {
	Pods, Owners int
}

// Cleanup deletes every object a sweep left in ns (any run), by label: Pods
// with grace 0, owners with background propagation.
func Cleanup(ctx context.Context, c kubernetes.Interface, ns string) (Cleaned, error) {
	var out Cleaned
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: CleanupSelector})
	if err != nil {
		return out, apiError(err, "list", "pods", ns)
	}
	for _, p := range pods.Items {
		if err := deleteNow(ctx, c, ns, p.Name); err != nil {
			return out, err
		}
		out.Pods++
	}
	jobs, err := c.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: CleanupSelector})
	if err != nil {
		return out, apiError(err, "list", "jobs", ns)
	}
	for _, j := range jobs.Items {
		if err := deleteOwner(ctx, c, ns, j.Name); err != nil {
			return out, err
		}
		out.Owners++
	}
	return out, nil
}

// Leftovers counts what a sweep left in ns (for tests and --cleanup's
// report).
func Leftovers(ctx context.Context, c kubernetes.Interface, ns string) (pods, owners int, err error) {
	pl, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: CleanupSelector})
	if err != nil {
		return 0, 0, fmt.Errorf("list pods: %w", err)
	}
	jl, err := c.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: CleanupSelector})
	if err != nil {
		return 0, 0, fmt.Errorf("list jobs: %w", err)
	}
	return len(pl.Items), len(jl.Items), nil
}
