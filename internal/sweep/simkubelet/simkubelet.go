// Package simkubelet writes, for sweep's tests and scale benchmark against a
// real kube-apiserver without kubelets, the Pod statuses and Events a
// kubelet would write for sweep's Pods: a probe that ran and left its
// verdict in the termination message, an image that could not be pulled
// (ErrImagePull with the runtime's message, and the kubelet's Failed
// Event), a canary whose container got past the pull. It is a simulation
// and says so: the lab cluster's tests use real kubelets.
package simkubelet

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Action is what the simulated kubelet does with one Pod.
type Action struct {
	// Message, with Terminated, is the termination message; ExitCode its
	// exit code.
	Terminated bool
	Message    string
	ExitCode   int32
	// PullError makes the container wait in ErrImagePull with this
	// runtime message, with a Failed Event "Failed to pull image ...".
	PullError string
	// Pulled makes the container end with StartError (the canary's
	// command does not exist in the image): the pull worked.
	Pulled bool
	// Ignore leaves the Pod Pending (a kubelet that never runs it).
	Ignore bool
	// DeleteNode deletes the Pod's node and then the Pod (the node was
	// scaled in mid-run; the pod GC would delete its Pods).
	DeleteNode bool
}

// Behavior decides the action for a Pod (its node is pod.Spec.NodeName).
type Behavior func(pod *corev1.Pod) Action

// Sim is a running simulated kubelet for one namespace.
type Sim struct {
	c      kubernetes.Interface
	ns     string
	do     Behavior
	cancel context.CancelFunc
	done   chan struct{}
	// Requests counts the API requests the simulator made (so that a
	// benchmark can take them out of the apiserver's count).
	Requests atomic.Int64
	Seen     atomic.Int64
	errMu    sync.Mutex
	err      error
}

// Start watches Pods labelled by sweep in ns and acts on each new one.
// Workers bounds concurrent status writes.
func Start(ctx context.Context, c kubernetes.Interface, ns, selector string, workers int, do Behavior) (*Sim, error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &Sim{c: c, ns: ns, do: do, cancel: cancel, done: make(chan struct{})}
	w, err := c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("simkubelet: watch pods: %v", err)
	}
	if workers <= 0 {
		workers = 8
	}
	work := make(chan *corev1.Pod, 1024)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if err := s.act(ctx, p); err != nil && ctx.Err() == nil {
					s.setErr(err)
				}
			}
		}()
	}
	go func() {
		defer close(s.done)
		defer wg.Wait()
		defer close(work)
		defer w.Stop()
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if ev.Type != watch.Added {
					continue
				}
				if p, ok := ev.Object.(*corev1.Pod); ok {
					s.Seen.Add(1)
					select {
					case work <- p:
					case <-ctx.Done():
						return
					}
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return s, nil
}

// Stop stops the simulator and returns the first error it met.
func (s *Sim) Stop() error {
	s.cancel()
	<-s.done
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

func (s *Sim) setErr(err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

func (s *Sim) act(ctx context.Context, p *corev1.Pod) error {
	a := s.do(p)
	if a.Ignore {
		return nil
	}
	if a.DeleteNode {
		s.Requests.Add(2)
		if err := s.c.CoreV1().Nodes().Delete(ctx, p.Spec.NodeName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		zero := int64(0)
		err := s.c.CoreV1().Pods(s.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	c := p.Spec.Containers[0]
	now := metav1.Now()
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
	st := corev1.PodStatus{Phase: corev1.PodPending, StartTime: &now, HostIP: "10.0.0.1"}
	switch {
	case a.Terminated:
		cs.ImageID = c.Image + "@sha256:" + fmt.Sprintf("%064x", 1)
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: a.ExitCode, Reason: "Completed", Message: a.Message, StartedAt: now, FinishedAt: now}
		st.Phase = corev1.PodSucceeded
		if a.ExitCode != 0 {
			cs.State.Terminated.Reason = "Error"
			st.Phase = corev1.PodFailed
		}
	case a.Pulled:
		cs.ImageID = c.Image + "@sha256:" + fmt.Sprintf("%064x", 2)
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError",
			Message: `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/pullpath-canary-exits-at-once": stat /pullpath-canary-exits-at-once: no such file or directory: unknown`}
		st.Phase = corev1.PodFailed
	case a.PullError != "":
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: a.PullError}
		if err := s.event(ctx, p, "Failed", "Warning", fmt.Sprintf("Failed to pull image %q: %s", c.Image, a.PullError)); err != nil {
			return err
		}
		if err := s.event(ctx, p, "Failed", "Warning", "Error: ErrImagePull"); err != nil {
			return err
		}
	}
	st.ContainerStatuses = []corev1.ContainerStatus{cs}
	p = p.DeepCopy()
	p.Status = st
	s.Requests.Add(1)
	_, err := s.c.CoreV1().Pods(s.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // deleted meanwhile
	}
	return err
}

func (s *Sim) event(ctx context.Context, p *corev1.Pod, reason, typ, msg string) error {
	now := metav1.NewTime(time.Now())
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: p.Name + ".", Namespace: s.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: s.ns, Name: p.Name, UID: p.UID, APIVersion: "v1"},
		Reason:         reason, Message: msg, Type: typ, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: p.Spec.NodeName},
	}
	s.Requests.Add(1)
	_, err := s.c.CoreV1().Events(s.ns).Create(ctx, e, metav1.CreateOptions{})
	return err
}
