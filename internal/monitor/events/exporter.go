// Package events is `pullpath monitor events`: one small exporter that
// watches the cluster's Events, Pods and Nodes (get, list and watch only;
// it posts nothing back), classifies every pull failure the kubelets
// report with explain's classifier, and exports them as Prometheus series
// with bounded labels only: the image's registry host, the cause and
// condition, and the pool and zone of the node (from its labels, read as
// explain reads them). No Pod, node, image or message is ever a label.
//
// It is cluster-side code (client-go); the node agent never links it.
package events

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/pullpath/pullpath/internal/explain"
)

// Options configure the exporter.
type Options struct {
	// Listen is the address of /metrics, /healthz and /readyz (default
	// ":9090"; "127.0.0.1:0" picks a free port, see Addr).
	Listen string
	// MaxHosts bounds the image_host label: the first MaxHosts registry
	// hosts seen keep their name, the rest are "other" (default 50).
	MaxHosts int
	// PageSize is the objects per List page (default 500).
	PageSize int64
	// WatchTimeout asks the server to end each watch after about this
	// long (it picks between it and twice it); the next one resumes from
	// the last version seen (default 5 minutes).
	WatchTimeout time.Duration
	// Log receives one line per start, List failure and watch error.
	Log io.Writer
}

func (o *Options) defaults() {
	if o.Listen == "" {
		o.Listen = ":9090"
	}
	if o.MaxHosts <= 0 {
		o.MaxHosts = 50
	}
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	if o.WatchTimeout <= 0 {
		o.WatchTimeout = 5 * time.Minute
	}
}

// Exporter follows Events, Pods and Nodes and serves the metrics.
type Exporter struct {
	o    Options
	c    kubernetes.Interface
	meta metadata.Interface
	m    *metrics
	ln   net.Listener
	srv  *http.Server

	ready atomic.Bool

	mu         sync.Mutex // guards everything below, and the handlers
	classifier *explain.Classifier
	nodes      map[string]nodeState  // node name -> its group
	groups     map[group]int         // nodes per group
	failures   map[types.UID]counted // pull-failure Events counted so far
	pods       map[types.UID]podState
	backoff    map[series]int // pods per backoff series
}

// group is a pool and a zone.
type group struct{ Pool, Zone string }

type nodeState struct {
	g   group
	gen int
}

// series is the label set of the failure counter and the backoff gauge.
type series struct {
	Host, Cause, Condition string
	group
}

func (s series) values() []string { return []string{s.Host, s.Cause, s.Condition, s.Pool, s.Zone} }

// counted is one Event's count already added to the counter.
type counted struct {
	count int32
	gen   int
}

type podState struct {
	s   series
	c   explain.Classification // the last classification with a cause
	gen int
}

// New checks the options, opens the listener and returns an exporter
// that reads the API server with cfg. Nothing is read until Run.
func New(cfg *rest.Config, o Options) (*Exporter, error) {
	o.defaults()
	pc := rest.CopyConfig(cfg)
	// Events and Pods are core types: protobuf costs the API server and
	// the exporter less than JSON.
	pc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	pc.ContentType = "application/vnd.kubernetes.protobuf"
	c, err := kubernetes.NewForConfig(pc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %v", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes metadata client: %v", err)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %v", o.Listen, err)
	}
	x := &Exporter{
		o: o, c: c, meta: mc, m: newMetrics(o.MaxHosts), ln: ln,
		classifier: explain.NewClassifier(),
		nodes:      map[string]nodeState{},
		groups:     map[group]int{},
		failures:   map[types.UID]counted{},
		pods:       map[types.UID]podState{},
		backoff:    map[series]int{},
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(x.m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if !x.ready.Load() {
			http.Error(w, "listing nodes, events and pods", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	x.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return x, nil
}

// Addr is the address the metrics are served on.
func (x *Exporter) Addr() string { return x.ln.Addr().String() }

// Ready reports whether the first Lists of nodes, events and pods are done.
func (x *Exporter) Ready() bool { return x.ready.Load() }

func (x *Exporter) logf(format string, a ...any) {
	if x.o.Log != nil {
		fmt.Fprintf(x.o.Log, "pullpath monitor events: "+format+"\n", a...)
	}
}

// Run serves the metrics and follows the cluster until ctx ends. The
// nodes are listed first, so that the first failures already have their
// pool and zone.
func (x *Exporter) Run(ctx context.Context) error {
	srvErr := make(chan error, 1)
	go func() { srvErr <- x.srv.Serve(x.ln) }()
	x.logf("serving /metrics on %s", x.Addr())

	var wg sync.WaitGroup
	start := func(s source) <-chan struct{} {
		listed := make(chan struct{})
		wg.Add(1)
		go func() { defer wg.Done(); x.run(ctx, s, listed) }()
		return listed
	}
	nodesListed := start(x.nodeSource())
	select {
	case <-nodesListed:
	case <-ctx.Done():
	}
	evListed, podsListed := start(x.eventSource()), start(x.podSource())
	go func() {
		for _, ch := range []<-chan struct{}{evListed, podsListed} {
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
		x.ready.Store(true)
		n, f, p := x.count()
		x.logf("listed %d nodes, %d pull-failure events, %d pods waiting on a pull", n, f, p)
	}()

	var err error
	select {
	case <-ctx.Done():
	case err = <-srvErr:
		err = fmt.Errorf("serve metrics: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = x.srv.Shutdown(sctx)
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (x *Exporter) count() (nodes, failures, pods int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.nodes), len(x.failures), len(x.pods)
}

// Close releases the listener of an exporter that never ran.
func (x *Exporter) Close() error { return x.ln.Close() }

// nodeSource follows node metadata: labels are all the exporter reads, and
// a Node's status (its image list) is most of its size.
func (x *Exporter) nodeSource() source {
	gvr := corev1.SchemeGroupVersion.WithResource("nodes")
	return source{
		name: "nodes",
		list: func(ctx context.Context, o metav1.ListOptions) ([]runtime.Object, metav1.ListMeta, error) {
			l, err := x.meta.Resource(gvr).List(ctx, o)
			if err != nil {
				return nil, metav1.ListMeta{}, err
			}
			return objects(l.Items), l.ListMeta, nil
		},
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return x.meta.Resource(gvr).Watch(ctx, o)
		},
		upsert: func(obj runtime.Object, _ bool, gen int) {
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
				x.setNode(m.Name, groupOf(m.Labels), gen)
			}
		},
		remove: func(obj runtime.Object) {
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
				x.dropNode(m.Name)
			}
		},
		sweep: func(gen int) {
			for n, st := range x.nodes {
				if st.gen != gen {
					x.dropNode(n)
				}
			}
		},
	}
}

// eventSource follows the Warning Events of Pods: the kubelet's Failed
// event carries the runtime's message for every failed pull.
func (x *Exporter) eventSource() source {
	sel := fields.Set{"involvedObject.kind": "Pod", "type": corev1.EventTypeWarning}.AsSelector().String()
	return source{
		name: "events",
		list: func(ctx context.Context, o metav1.ListOptions) ([]runtime.Object, metav1.ListMeta, error) {
			o.FieldSelector = sel
			l, err := x.c.CoreV1().Events("").List(ctx, o)
			if err != nil {
				return nil, metav1.ListMeta{}, err
			}
			return objects(l.Items), l.ListMeta, nil
		},
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return x.c.CoreV1().Events("").Watch(ctx, o)
		},
		upsert: func(obj runtime.Object, first bool, gen int) {
			if e, ok := obj.(*corev1.Event); ok {
				x.event(e, first, gen)
			}
		},
		remove: func(obj runtime.Object) {
			if e, ok := obj.(*corev1.Event); ok {
				delete(x.failures, e.UID)
			}
		},
		sweep: func(gen int) {
			for uid, c := range x.failures {
				if c.gen != gen {
					delete(x.failures, uid)
				}
			}
		},
	}
}

// podSource follows Pending Pods: a Pod that cannot pull its image stays
// Pending, and one that leaves Pending is deleted from the watch's view.
func (x *Exporter) podSource() source {
	sel := fields.Set{"status.phase": string(corev1.PodPending)}.AsSelector().String()
	return source{
		name: "pods",
		list: func(ctx context.Context, o metav1.ListOptions) ([]runtime.Object, metav1.ListMeta, error) {
			o.FieldSelector = sel
			l, err := x.c.CoreV1().Pods("").List(ctx, o)
			if err != nil {
				return nil, metav1.ListMeta{}, err
			}
			return objects(l.Items), l.ListMeta, nil
		},
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return x.c.CoreV1().Pods("").Watch(ctx, o)
		},
		upsert: func(obj runtime.Object, _ bool, gen int) {
			if p, ok := obj.(*corev1.Pod); ok {
				x.pod(p, gen)
			}
		},
		remove: func(obj runtime.Object) {
			if p, ok := obj.(*corev1.Pod); ok {
				x.dropPod(p.UID)
			}
		},
		sweep: func(gen int) {
			for uid, st := range x.pods {
				if st.gen != gen {
					x.dropPod(uid)
				}
			}
		},
	}
}

// objects is a List's items as the runtime.Objects a source hands on
// (pointers into the list, no copies).
func objects[T any, P interface {
	*T
	runtime.Object
}](items []T) []runtime.Object {
	out := make([]runtime.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}
