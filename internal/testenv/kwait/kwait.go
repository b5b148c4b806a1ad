// Package kwait waits, in tests, for Kubernetes objects to reach a state:
// it watches them (client-go's informer-backed watch.UntilWithSync: a list,
// then a watch, re-listing if the watch breaks) instead of polling with
// sleeps, and it is always bounded by a timeout. On timeout the error names
// what was awaited and shows each object's status as last seen, so a
// failure says what the cluster looked like rather than only "timed out".
//
// It is imported only by tests; nothing in the pullpath binary links it.
package kwait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Until waits up to timeout until cond holds for the set of objects lw
// lists (sorted by namespace/name; empty when there are none), and returns
// that set. cond is evaluated once the first list is in, then after every
// watch event. On timeout it fails t with what and the objects' last
// status.
func Until[T runtime.Object](ctx context.Context, t testing.TB, timeout time.Duration, what string, lw cache.ListerWatcher, cond func([]T) bool) []T {
	t.Helper()
	objs, err := Wait(ctx, timeout, what, lw, cond)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// One waits up to timeout until the one object lw lists exists and cond
// holds for it, and returns it. On timeout it fails t with what and the
// object's last status.
func One[T runtime.Object](ctx context.Context, t testing.TB, timeout time.Duration, what string, lw cache.ListerWatcher, cond func(T) bool) T {
	t.Helper()
	objs := Until(ctx, t, timeout, what, lw, func(objs []T) bool { return len(objs) == 1 && cond(objs[0]) })
	return objs[0]
}

// Wait is Until returning an error instead of failing a test: on timeout
// (or ctx's end) the error says "<what>: not within <timeout>", the last
// list error if any, and each object's status as last seen.
func Wait[T runtime.Object](ctx context.Context, timeout time.Duration, what string, lw cache.ListerWatcher, cond func([]T) bool) ([]T, error) {
	var zero T
	rt := reflect.TypeOf(zero)
	if rt == nil || rt.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("kwait: %s: the object type must be a pointer to an API type (*corev1.Pod), not %v", what, rt)
	}
	objType := reflect.New(rt.Elem()).Interface().(runtime.Object)
	rec := &recorder{lw: lw}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var (
		store   cache.Store
		last    []T
		typeErr error
	)
	check := func() (bool, error) {
		items := store.List()
		objs := make([]T, 0, len(items))
		for _, it := range items {
			o, ok := it.(T)
			if !ok {
				typeErr = fmt.Errorf("kwait: %s: the list holds a %T, want %T", what, it, zero)
				return false, typeErr
			}
			objs = append(objs, o)
		}
		sort.Slice(objs, func(i, j int) bool { return key(objs[i]) < key(objs[j]) })
		last = objs
		return cond(objs), nil
	}
	_, err := watchtools.UntilWithSync(ctx, rec, objType,
		func(s cache.Store) (bool, error) { store = s; return check() },
		func(watch.Event) (bool, error) { return check() })
	if err == nil {
		return last, nil
	}
	if typeErr != nil {
		return nil, typeErr
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: not within %s", what, timeout)
	switch cerr := ctx.Err(); {
	case cerr == nil: // the watch ended early
		fmt.Fprintf(&b, " (%v)", err)
	case !errors.Is(cerr, context.DeadlineExceeded):
		fmt.Fprintf(&b, " (%v)", cerr)
	}
	if e := rec.err(); e != nil {
		fmt.Fprintf(&b, "; last list/watch error: %v", e)
	}
	switch {
	case store == nil:
		b.WriteString("; the first list never completed")
	case len(last) == 0:
		b.WriteString("; no object matched")
	default:
		b.WriteString("; last seen:")
		for _, o := range last {
			fmt.Fprintf(&b, "\n  %s %s status: %s", kind(o), key(o), status(o))
		}
	}
	return last, errors.New(b.String())
}

// Pods lists and watches the Pods in ns (all namespaces: "") that match the
// label selector (everything: "").
func Pods(c kubernetes.Interface, ns, selector string) cache.ListerWatcher {
	mod := func(o metav1.ListOptions) metav1.ListOptions { o.LabelSelector = selector; return o }
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.CoreV1().Pods(ns).List(ctx, mod(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.CoreV1().Pods(ns).Watch(ctx, mod(o))
		},
	}
}

// Jobs lists and watches the Jobs in ns that match the label selector.
func Jobs(c kubernetes.Interface, ns, selector string) cache.ListerWatcher {
	mod := func(o metav1.ListOptions) metav1.ListOptions { o.LabelSelector = selector; return o }
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.BatchV1().Jobs(ns).List(ctx, mod(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.BatchV1().Jobs(ns).Watch(ctx, mod(o))
		},
	}
}

// Node lists and watches the one Node called name (a metadata.name field
// selector).
func Node(c kubernetes.Interface, name string) cache.ListerWatcher {
	mod := func(o metav1.ListOptions) metav1.ListOptions {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		return o
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.CoreV1().Nodes().List(ctx, mod(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.CoreV1().Nodes().Watch(ctx, mod(o))
		},
	}
}

// DaemonSet lists and watches the one DaemonSet ns/name (a metadata.name
// field selector).
func DaemonSet(c kubernetes.Interface, ns, name string) cache.ListerWatcher {
	mod := func(o metav1.ListOptions) metav1.ListOptions {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		return o
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.AppsV1().DaemonSets(ns).List(ctx, mod(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.AppsV1().DaemonSets(ns).Watch(ctx, mod(o))
		},
	}
}

// Events lists and watches the Events in ns that match the field selector
// (involvedObject.name=node-a, for instance).
func Events(c kubernetes.Interface, ns, fieldSelector string) cache.ListerWatcher {
	mod := func(o metav1.ListOptions) metav1.ListOptions { o.FieldSelector = fieldSelector; return o }
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.CoreV1().Events(ns).List(ctx, mod(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.CoreV1().Events(ns).Watch(ctx, mod(o))
		},
	}
}

// NodeReady reports the status of a Node's Ready condition ("" when the
// node reports none).
func NodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// recorder passes list and watch calls through and keeps the last error:
// the informer only logs them, and a timeout should say why nothing came.
type recorder struct {
	lw      cache.ListerWatcher
	mu      sync.Mutex
	lastErr error
}

func (r *recorder) note(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr = err
}

func (r *recorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

func (r *recorder) List(o metav1.ListOptions) (runtime.Object, error) {
	obj, err := r.lw.List(o)
	r.note(err)
	return obj, err
}

func (r *recorder) Watch(o metav1.ListOptions) (watch.Interface, error) {
	w, err := r.lw.Watch(o)
	if err != nil {
		r.note(err)
	}
	return w, err
}

func (r *recorder) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	obj, err := cache.ToListerWatcherWithContext(r.lw).ListWithContext(ctx, o)
	r.note(err)
	return obj, err
}

func (r *recorder) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := cache.ToListerWatcherWithContext(r.lw).WatchWithContext(ctx, o)
	if err != nil {
		r.note(err)
	}
	return w, err
}

func key(o runtime.Object) string {
	m, err := meta.Accessor(o)
	if err != nil {
		return fmt.Sprintf("%T", o)
	}
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

func kind(o runtime.Object) string {
	return reflect.TypeOf(o).Elem().Name()
}

// status is the object's .status as compact JSON (the whole object when it
// has none), without the node's image list, which can run to pages.
func status(o runtime.Object) string {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	var v any = u
	if s, ok := u["status"].(map[string]any); ok {
		if imgs, ok := s["images"].([]any); ok {
			names := []string{}
			for _, im := range imgs {
				if m, ok := im.(map[string]any); ok {
					if ns, ok := m["names"].([]any); ok {
						for _, n := range ns {
							names = append(names, fmt.Sprint(n))
						}
					}
				}
			}
			s = maps.Clone(s)
			s["images"] = names // names only
		}
		v = s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	return string(b)
}
