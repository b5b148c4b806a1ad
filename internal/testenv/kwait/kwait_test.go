package kwait_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/pullpath/pullpath/internal/testenv/controlplane"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
)

// TestWait runs on a real apiserver: a wait returns on the watch event that
// makes its condition true (not on a poll), counts a deletion, and on
// timeout says what it waited for and what the object last looked like.
func TestWait(t *testing.T) {
	cp := controlplane.Require(t)
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwait-a"}}
	if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("event", func(t *testing.T) {
		// a condition false at the first list, made true by a status write
		// while the wait runs
		lw := afterList(kwait.Node(c, "kwait-a"), func() { setReady(t, c, "kwait-a", corev1.ConditionFalse) })
		start := time.Now()
		n := kwait.One(ctx, t, 30*time.Second, "node kwait-a NotReady", lw,
			func(n *corev1.Node) bool { return kwait.NodeReady(n) == corev1.ConditionFalse })
		if kwait.NodeReady(n) != corev1.ConditionFalse || n.Name != "kwait-a" {
			t.Errorf("One returned %s with Ready=%q, want kwait-a with Ready=False", n.Name, kwait.NodeReady(n))
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the wait took %s after a write right after its first list", d)
		}
	})

	t.Run("already-true", func(t *testing.T) {
		n := kwait.One(ctx, t, 10*time.Second, "node kwait-a NotReady", kwait.Node(c, "kwait-a"),
			func(n *corev1.Node) bool { return kwait.NodeReady(n) == corev1.ConditionFalse })
		if n.Name != "kwait-a" {
			t.Errorf("One = %s, want kwait-a", n.Name)
		}
	})

	t.Run("field-selector", func(t *testing.T) {
		// another node's writes do not reach a wait on kwait-a
		other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwait-b"}}
		if _, err := c.CoreV1().Nodes().Create(ctx, other, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		setReady(t, c, "kwait-b", corev1.ConditionTrue)
		_, err := kwait.Wait(ctx, 2*time.Second, "node kwait-a Ready", kwait.Node(c, "kwait-a"),
			func(ns []*corev1.Node) bool { return len(ns) == 1 && kwait.NodeReady(ns[0]) == corev1.ConditionTrue })
		if err == nil {
			t.Fatal("a wait for kwait-a Ready returned though only kwait-b is Ready")
		}
	})

	t.Run("timeout-says-last-state", func(t *testing.T) {
		start := time.Now()
		objs, err := kwait.Wait(ctx, 2*time.Second, "node kwait-a Ready", kwait.Node(c, "kwait-a"),
			func(ns []*corev1.Node) bool { return len(ns) == 1 && kwait.NodeReady(ns[0]) == corev1.ConditionTrue })
		if err == nil {
			t.Fatal("Wait for a condition that never holds returned no error")
		}
		if d := time.Since(start); d < 2*time.Second || d > 10*time.Second {
			t.Errorf("Wait(timeout 2s) returned after %s", d)
		}
		msg := err.Error()
		for _, want := range []string{"node kwait-a Ready: not within 2s", "Node kwait-a status:", `"type":"Ready"`, `"status":"False"`, `"reason":"KwaitTest"`} {
			if !strings.Contains(msg, want) {
				t.Errorf("timeout error %q does not contain %q", msg, want)
			}
		}
		if len(objs) != 1 || objs[0].Name != "kwait-a" {
			t.Errorf("Wait returned %d objects on timeout, want the last-seen kwait-a", len(objs))
		}
	})

	t.Run("deletion", func(t *testing.T) {
		lw := afterList(kwait.Node(c, "kwait-b"), func() {
			if err := c.CoreV1().Nodes().Delete(context.Background(), "kwait-b", metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
		})
		objs := kwait.Until(ctx, t, 30*time.Second, "node kwait-b gone", lw,
			func(ns []*corev1.Node) bool { return len(ns) == 0 })
		if len(objs) != 0 {
			t.Errorf("Until(gone) = %d objects", len(objs))
		}
	})

	t.Run("list-error-is-said", func(t *testing.T) {
		// a Pod list with a malformed label selector: the apiserver refuses
		// every list, and the timeout says so
		_, err := kwait.Wait(ctx, 2*time.Second, "pods", kwait.Pods(c, "default", "app in ("),
			func([]*corev1.Pod) bool { return true })
		if err == nil || !strings.Contains(err.Error(), "last list/watch error") || !strings.Contains(err.Error(), "the first list never completed") {
			t.Errorf("Wait with a refused list = %v, want the list error and that no list completed", err)
		}
	})
}

// afterList runs f (in its own goroutine) once the first list or watch of
// lw has returned (client-go's reflector starts with a watch-list where the
// apiserver serves one), so that f's write reaches the wait as a watch
// event after the initial state.
func afterList(lw cache.ListerWatcher, f func()) cache.ListerWatcher {
	var once sync.Once
	l := cache.ToListerWatcherWithContext(lw)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			obj, err := l.ListWithContext(ctx, o)
			if err == nil {
				once.Do(func() { go f() })
			}
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := l.WatchWithContext(ctx, o)
			if err == nil {
				once.Do(func() { go f() })
			}
			return w, err
		},
	}
}

func setReady(t *testing.T, c kubernetes.Interface, name string, s corev1.ConditionStatus) {
	n, err := c.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: s, Reason: "KwaitTest", LastHeartbeatTime: now, LastTransitionTime: now}}
	if _, err := c.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Error(err)
	}
}
