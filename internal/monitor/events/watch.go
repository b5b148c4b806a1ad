package events

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// source is one resource the exporter follows: a paged List, then a Watch
// from the List's resourceVersion, resumed from the last version seen
// whenever it ends. Only a watch the server can no longer resume (410
// Gone: the version left its window) or a failed request lists again.
//
// The handlers never see an object twice as new: a resumed watch starts
// after the last version handled, and a List after the first reports
// every object as seen again (relist true), so the handler compares it
// with what it counted before; sweep(gen) then drops what the List no
// longer holds (deleted while no watch ran).
type source struct {
	name  string
	list  func(ctx context.Context, o metav1.ListOptions) (items []runtime.Object, meta metav1.ListMeta, err error)
	watch func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error)
	// upsert handles a listed, added or modified object; first is true
	// during the first List only.
	upsert func(obj runtime.Object, first bool, gen int)
	remove func(obj runtime.Object)
	// sweep drops what a List of generation gen did not show.
	sweep func(gen int)
}

// run follows s until ctx ends. listed is closed after the first List.
func (x *Exporter) run(ctx context.Context, s source, listed chan<- struct{}) {
	var (
		rv       string
		gen      int
		failures int // consecutive failed requests, for the wait before the next
	)
	first := true
	wait := func(err error) {
		x.m.errors.WithLabelValues(s.name).Inc()
		failures++
		d := min(time.Second<<min(failures-1, 5), 30*time.Second)
		x.logf("%s: %v; next attempt in %s", s.name, err, d)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	for ctx.Err() == nil {
		if rv == "" {
			gen++
			if !first {
				x.m.relists.WithLabelValues(s.name).Inc()
			}
			var err error
			rv, err = x.listAll(ctx, s, first, gen)
			if err != nil {
				if ctx.Err() == nil {
					wait(err)
				}
				continue
			}
			x.mu.Lock()
			s.sweep(gen)
			x.mu.Unlock()
			if first {
				first = false
				close(listed)
			}
			failures = 0
		}
		x.m.watches.WithLabelValues(s.name).Inc()
		w, err := s.watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(max(x.o.WatchTimeout/time.Second, 1)))})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if gone(err) {
				rv = ""
				continue
			}
			wait(fmt.Errorf("watch: %w", err))
			continue
		}
		rv = x.follow(ctx, s, w, rv, gen)
		w.Stop()
	}
}

// follow handles a watch's events until it ends and returns the version
// to resume from ("" to list again).
func (x *Exporter) follow(ctx context.Context, s source, w watch.Interface, rv string, gen int) string {
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv
			}
			switch ev.Type {
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if gone(err) {
					return ""
				}
				x.m.errors.WithLabelValues(s.name).Inc()
				x.logf("%s: watch: %v", s.name, err)
				return rv
			case watch.Bookmark:
				if m, err := metaOf(ev.Object); err == nil {
					rv = m.GetResourceVersion()
				}
				continue
			}
			m, err := metaOf(ev.Object)
			if err != nil {
				continue
			}
			x.m.objects.WithLabelValues(s.name).Inc()
			x.mu.Lock()
			if ev.Type == watch.Deleted {
				s.remove(ev.Object)
			} else {
				s.upsert(ev.Object, false, gen)
			}
			x.mu.Unlock()
			rv = m.GetResourceVersion()
		}
	}
}

// listAll lists every page (a consistent snapshot: the first page at the
// latest version, the rest by continue token) and returns its version.
func (x *Exporter) listAll(ctx context.Context, s source, first bool, gen int) (string, error) {
	opts := metav1.ListOptions{Limit: x.o.PageSize}
	for {
		items, meta, err := s.list(ctx, opts)
		if err != nil {
			return "", fmt.Errorf("list: %w", err)
		}
		x.m.objects.WithLabelValues(s.name).Add(float64(len(items)))
		x.mu.Lock()
		for _, it := range items {
			s.upsert(it, first, gen)
		}
		x.mu.Unlock()
		if meta.Continue == "" {
			return meta.ResourceVersion, nil
		}
		opts.Continue = meta.Continue
	}
}

// gone is the server saying a version (or a continue token) is too old.
func gone(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	if m, ok := o.(metav1.Object); ok {
		return m, nil
	}
	return nil, fmt.Errorf("%T has no object metadata", o)
}

func ptr[T any](v T) *T { return &v }
