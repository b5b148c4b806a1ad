package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/report"
)

// lists are the Lists of a plan, running: pods (nil when one pod was
// read), events, and every node (nil unless the plan lists them).
type lists struct {
	pods   <-chan page[corev1.Pod]
	events <-chan page[corev1.Event]
	nodes  <-chan page[corev1.Node]
}

// startLists starts the Lists of a plan, each in its own goroutine.
func startLists(ctx context.Context, c kubernetes.Interface, p plan) lists {
	var l lists
	if p.podOpts != nil {
		l.pods = fetchPages(ctx, *p.podOpts, func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Pod, string, error) {
			pl, err := c.CoreV1().Pods(p.podNS).List(ctx, opts)
			if err != nil {
				return nil, "", fmt.Errorf("list pods: %v", err)
			}
			return pl.Items, pl.Continue, nil
		})
	}
	l.events = fetchPages(ctx, p.evOpts, func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Event, string, error) {
		el, err := c.CoreV1().Events(p.evNS).List(ctx, opts)
		if err != nil {
			return nil, "", fmt.Errorf("list events: %v", err)
		}
		return el.Items, el.Continue, nil
	})
	if p.allNodes {
		l.nodes = fetchPages(ctx, metav1.ListOptions{Limit: p.pageSize}, func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Node, string, error) {
			nl, err := c.CoreV1().Nodes().List(ctx, opts)
			if err != nil {
				return nil, "", fmt.Errorf("list nodes: %v", err)
			}
			return nl.Items, nl.Continue, nil
		})
	}
	return l
}

// read consumes the Lists as their pages come: pods into s, events into r
// in their order (an event that needs the pods, in a scoped plan or
// without a node, waits until every pod is read), and the facts of every
// node when they are listed, which it returns (nil when not listed, or
// when listing them was refused: step 4 then asks for the few it needs).
// Errors come in the order the Lists in series would meet them: pods,
// then events.
func (s *state) read(ctx context.Context, r *report.ExplainReport, p plan, l lists) (map[string]explain.NodeInfo, error) {
	var (
		podCh, evCh, nodeCh = l.pods, l.events, l.nodes
		podsDone            = podCh == nil
		held                []corev1.Event // the rest of an event page that waits for the pods
		evErr               error
		evDone              bool
		allNodes            map[string]explain.NodeInfo // every node, when listed early
		nodesDone           = nodeCh == nil
	)
	addEvent := func(e *corev1.Event) {
		key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		if p.scoped {
			if _, ok := s.pods[key]; !ok {
				return
			}
		}
		s.addEvent(r, e)
	}
	// readEvents reads events in order until one needs the pods.
	readEvents := func(items []corev1.Event) []corev1.Event {
		for i := range items {
			if !podsDone && (p.scoped || eventNode(&items[i]) == "") {
				return items[i:]
			}
			addEvent(&items[i])
		}
		return nil
	}
	for {
		if podsDone && evErr != nil {
			return nil, evErr
		}
		if podsDone && evDone && nodesDone {
			return allNodes, nil
		}
		var evIn <-chan page[corev1.Event]
		if len(held) == 0 && evErr == nil && !evDone {
			evIn = evCh // nil (paused) while events wait for the pods
		}
		select {
		case pg, ok := <-podCh:
			if !ok {
				podsDone, podCh = true, nil
				held = readEvents(held) // podsDone: reads them all
				continue
			}
			if pg.err != nil {
				return nil, pg.err
			}
			for i := range pg.items {
				s.addPod(&pg.items[i])
			}
		case pg, ok := <-evIn:
			if !ok {
				evDone = true
				continue
			}
			if pg.err != nil {
				evErr = pg.err
				continue
			}
			held = readEvents(pg.items)
		case pg, ok := <-nodeCh:
			if !ok {
				nodesDone, nodeCh = true, nil
				if allNodes == nil { // listed: there are none
					allNodes = map[string]explain.NodeInfo{}
				}
				continue
			}
			if pg.err != nil {
				// Listing every node may be refused where getting
				// the few named is allowed: step 4 asks for those.
				nodesDone, nodeCh, allNodes = true, nil, nil
				continue
			}
			if allNodes == nil {
				allNodes = map[string]explain.NodeInfo{}
			}
			for i := range pg.items {
				allNodes[pg.items[i].Name] = FactsOf(&pg.items[i])
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// page is one page of a List, or the error that ended the listing.
type page[T any] struct {
	items []T
	err   error
}

// pageDepth is how many pages a fetcher may read ahead of its reader.
const pageDepth = 4

// fetchPages lists page after page in a goroutine, up to pageDepth pages
// ahead of the reader; the channel closes after the last page or after
// the first error (sent as a page). Cancelling ctx stops it.
func fetchPages[T any](ctx context.Context, opts metav1.ListOptions, list func(context.Context, metav1.ListOptions) ([]T, string, error)) <-chan page[T] {
	ch := make(chan page[T], pageDepth)
	go func() {
		defer close(ch)
		for {
			items, cont, err := list(ctx, opts)
			select {
			case ch <- page[T]{items: items, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil || cont == "" {
				return
			}
			opts.Continue = cont
		}
	}()
	return ch
}
