package sweep

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/klog/v2"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/probesummary"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Options configure a run.
type Options struct {
	Image       string
	ProbeImage  string
	Canary      bool
	CanaryImage string
	Namespace   string
	Selector    string // --nodes
	Plan        PlanOptions
	Parallel    int           // Pods in flight; default 20
	Timeout     time.Duration // the whole run, and every Pod's activeDeadlineSeconds; default 10m
	// StartTimeout bounds how long a Pod may stay unstarted (Pending, its
	// image not pulled) before its node is "no answer". Default 3m.
	StartTimeout time.Duration
	ProbeArgs    []string
	// CheckUpstream makes each node's probe also walk the upstream
	// registry when a hosts.toml mirror or cache served
	// (--check-upstream): a cache hiding a broken upstream is a warning of
	// the node (MIRROR_HIDES_UPSTREAM). On in sweep and diagnose.
	CheckUpstream bool
	PullSecrets   []string // imagePullSecrets of the canary and the probe Pods; the probe's credentials, in order
	// ServiceAccount is the canary's serviceAccountName (a workload's own
	// identity, when the walk runs in the workload's namespace).
	ServiceAccount string
	CertsDir       string // node path of containerd's certs.d
	DockerCerts    string // node path of docker's certs.d
	DryRun         bool
	RunID          string // default: random
	PageSize       int64
	// Progress, when set, is told each time a node's answer is in.
	Progress func(done, total int)
	// Workers is how many API calls run at once; default min(Parallel, 16).
	Workers int
}

// ErrNoNode is wrapped when no node can run the walk.
var ErrNoNode = errors.New("no node can run the walk")

// Run plans, then walks the pull from every chosen node as Pods, and
// returns the report. Whatever happens (success, failure, ctx cancelled by
// Ctrl-C or SIGTERM), every object it made is deleted before it returns;
// if the process dies instead, the owner's deadline and the garbage
// collector remove them.
//
//  1. List the nodes (the --nodes selector), read the cluster-autoscaler's
//     status if allowed, and plan.
//  2. Create the run's owner (a Job that never runs a Pod).
//  3. One watch on the run's label; create Pods up to Parallel in flight.
//  4. Read each Pod as it changes: the termination message (or the log, or
//     the Events when its image could not be pulled); delete it at once.
//  5. Delete what is left and the owner; judge.
func Run(ctx context.Context, c kubernetes.Interface, o Options) (*report.SweepReport, error) {
	o.defaults()
	began := time.Now()
	r := &report.SweepReport{
		APIVersion: report.APIVersion, Kind: report.SweepKind, Image: o.Image, ProbeImage: o.ProbeImage,
		Namespace: o.Namespace, RunID: o.RunID, DryRun: o.DryRun, StartedAt: began.UTC(),
	}
	if o.Canary {
		r.CanaryImage = o.CanaryImage
		if r.CanaryImage == "" {
			r.CanaryImage = o.Image
		}
	}

	// 1. Nodes and the plan.
	nodes, err := listNodes(ctx, c, o.Selector, o.PageSize)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		if o.Selector != "" {
			return nil, fmt.Errorf("--nodes %q matches no node", o.Selector)
		}
		return nil, fmt.Errorf("%w: the cluster has no node", ErrNoNode)
	}
	po := o.Plan
	po.Selector, po.Image = o.Selector, o.Image
	if po.AutoscalerPools == nil {
		po.AutoscalerPools = autoscalerPools(ctx, c)
	}
	r.Plan = Plan(nodes, po)
	pods := o.podOptions()
	r.Plan.Parallel, r.Plan.Canary, r.Plan.Mounts = o.Parallel, o.Canary, pods.Mounts()
	if len(r.Plan.Chosen) == 0 {
		return r, fmt.Errorf("%w: %s", ErrNoNode, skippedLine(r.Plan))
	}
	if o.DryRun {
		r.Verdict = report.SweepVerdict{Status: verdict.StatusOK, Pattern: "none", Summary: fmt.Sprintf("dry run: %d node(s) would be walked from", len(r.Plan.Chosen))}
		r.DurationMS = units.MS(time.Since(began))
		return r, nil
	}

	// 2. The owner. From here on, everything is deleted on the way out.
	owner, err := createOwner(ctx, c, pods)
	if err != nil {
		return nil, err
	}
	pods.Owner = owner
	e := &engine{c: c, o: o, pods: pods, r: r, classifier: explain.NewClassifier(), byName: map[string]*podState{}}
	runErr := e.run(ctx, owner.ResourceVersion)
	cleanErr := e.cleanup(owner.Name)
	judge(r)
	r.DurationMS = units.MS(time.Since(began))
	if runErr != nil {
		return r, runErr
	}
	if IsForbidden(cleanErr) {
		return r, cleanErr
	}
	if cleanErr != nil {
		r.Warnings = append(r.Warnings, "clean-up: "+cleanErr.Error()+" (run `pullpath sweep --cleanup -n "+o.Namespace+"`)")
	}
	return r, nil
}

func (o *Options) defaults() {
	if o.Parallel <= 0 {
		o.Parallel = 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 3 * time.Minute
	}
	if o.StartTimeout > o.Timeout {
		o.StartTimeout = o.Timeout
	}
	if o.RunID == "" {
		o.RunID = NewRunID()
	}
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	if o.Workers <= 0 {
		o.Workers = min(o.Parallel, 16)
	}
}

// NewRunID is a fresh run id: 8 hex digits, part of every object's name
// and label.
func NewRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (o *Options) podOptions() PodOptions {
	return PodOptions{
		RunID: o.RunID, Namespace: o.Namespace, Image: o.Image, ProbeImage: o.ProbeImage,
		CanaryImage: o.CanaryImage, Deadline: int64(o.Timeout / time.Second), ProbeArgs: o.ProbeArgs,
		CheckUpstream: o.CheckUpstream, CertsDir: o.CertsDir, DockerCertsDir: o.DockerCerts, PullSecrets: o.PullSecrets, ServiceAccount: o.ServiceAccount,
	}
}

func listNodes(ctx context.Context, c kubernetes.Interface, selector string, page int64) ([]corev1.Node, error) {
	var out []corev1.Node
	opts := metav1.ListOptions{LabelSelector: selector, Limit: page}
	for {
		l, err := c.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			if apierrors.IsBadRequest(err) && selector != "" {
				return nil, wrapLine(err, "--nodes %q", selector)
			}
			return nil, apiError(err, "list", "nodes", "")
		}
		out = append(out, l.Items...)
		if l.Continue == "" {
			return out, nil
		}
		opts.Continue = l.Continue
	}
}

func skippedLine(p report.SweepPlan) string {
	by := map[string]int{}
	var order []string
	for _, s := range p.Skipped {
		if by[s.Reason] == 0 {
			order = append(order, s.Reason)
		}
		by[s.Reason]++
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d %s", by[k], k))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d node(s), none eligible", p.TotalNodes)
	}
	return fmt.Sprintf("%d node(s): %s (see --dry-run)", p.TotalNodes, strings.Join(parts, ", "))
}

// podState is one Pod of the run: where its API object stands, and how far
// it has answered.
type podState struct {
	name       string
	node       int // index in r.Nodes
	role       string
	object     podObject
	phase      podPhase
	eventReads int // reads of its Events (a back-off without a cause waits for the next)
}

// podObject is where a Pod's API object stands. It moves forward only.
type podObject int

const (
	podUnsent   podObject = iota // waiting for a free slot
	podCreating                  // its create is sent: it may exist from here on, and holds a slot until answered
	podExists                    // the API made it: a delete is owed
	podDeleting                  // its delete is asked
	podDeleted                   // deleted, or vanished (with its node)
)

// podPhase is how far a Pod has answered.
type podPhase int

const (
	podWaiting       podPhase = iota // the kubelet has not started it (the start timeout runs)
	podStarted                       // its container ran, or its image failed
	podReadingEvents                 // a read of its Events is under way
	podAnswered                      // its result is recorded and its slot freed
)

// start marks p started, unless it is further on.
func (p *podState) start() {
	if p.phase < podStarted {
		p.phase = podStarted
	}
}

type engine struct {
	c          kubernetes.Interface
	o          Options
	pods       PodOptions
	r          *report.SweepReport
	classifier *explain.Classifier
	byName     map[string]*podState
	queue      []*podState
	inFlight   int
	doneNodes  int
	finished   int
	results    chan func() error // from API workers, run on the loop
	calls      chan func()       // to API workers
}

// run is the loop: one watch, Pods up to Parallel in flight, every API call
// on a small worker pool so that the loop only reads.
func (e *engine) run(parent context.Context, fromRV string) error {
	ctx, cancel := context.WithTimeout(parent, e.o.Timeout)
	defer cancel()
	for i, pn := range e.r.Plan.Chosen {
		e.r.Nodes = append(e.r.Nodes, report.SweepNode{PlannedNode: pn, Status: report.SweepNoAnswer})
		idx := len(e.r.Nodes) - 1
		e.queue = append(e.queue, &podState{name: fmt.Sprintf("pullpath-sweep-%s-%04d", e.o.RunID, i), node: idx, role: RoleProbe})
		if e.o.Canary {
			e.queue = append(e.queue, &podState{name: fmt.Sprintf("pullpath-sweep-%s-%04d-canary", e.o.RunID, i), node: idx, role: RoleCanary})
		}
	}
	for _, p := range e.queue {
		e.byName[p.name] = p
	}
	total := len(e.queue)

	// 3. One watch on the run's label, from the owner's resourceVersion.
	sel := RunSelector(e.o.RunID)
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		opts.LabelSelector = sel
		return e.c.CoreV1().Pods(e.o.Namespace).Watch(ctx, opts)
	}}
	// The watcher logs its retries through klog; the run reports them
	// itself (a 403 comes back as an Error event).
	w, err := watchtools.NewRetryWatcherWithContext(klog.NewContext(ctx, logr.Discard()), fromRV, lw)
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	defer w.Stop()

	e.results = make(chan func() error, 4*e.o.Workers)
	e.calls = make(chan func(), 4*e.o.Workers)
	workCtx, stopWork := context.WithCancel(context.Background())
	defer stopWork()
	for i := 0; i < e.o.Workers; i++ {
		go func() {
			for {
				select {
				case f := <-e.calls:
					f()
				case <-workCtx.Done():
					return
				}
			}
		}()
	}
	timeouts := make(chan string, total)
	var fatal error
	next := 0
	for e.finished < total && fatal == nil {
		// Start Pods while there is room.
		for next < len(e.queue) && e.inFlight < e.o.Parallel {
			p := e.queue[next]
			next++
			e.inFlight++
			p.object = podCreating
			e.create(ctx, p, timeouts)
		}
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				if ctx.Err() != nil {
					return e.ended(ctx, parent)
				}
				return errors.New("the watch of the run's Pods ended")
			}
			fatal = e.onEvent(ctx, ev)
		case f := <-e.results:
			fatal = f()
		case name := <-timeouts:
			if p := e.byName[name]; p != nil && p.phase == podWaiting {
				e.finish(ctx, p, &report.SweepResult{Pod: p.name, Source: report.SourceNone, Status: report.SweepNoAnswer,
					Message: fmt.Sprintf("the kubelet did not start the Pod within %s (node not ready, or the probe image slow to pull)", e.o.StartTimeout),
					Verdict: verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "no answer from the node"}})
			}
		case <-ctx.Done():
			return e.ended(ctx, parent)
		}
	}
	return fatal
}

// ended: the run's context is done. Ctrl-C or SIGTERM (the parent) stop
// the run; the run's own --timeout makes every node still out "no answer".
func (e *engine) ended(ctx, parent context.Context) error {
	if parent.Err() != nil {
		return parent.Err()
	}
	for _, p := range e.queue {
		if p.phase != podAnswered {
			e.finish(ctx, p, &report.SweepResult{Pod: p.name, Source: report.SourceNone, Status: report.SweepNoAnswer,
				Message: fmt.Sprintf("no answer within --timeout %s", e.o.Timeout),
				Verdict: verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "no answer from the node"}})
		}
	}
	return nil
}

// call runs f on a worker; its result function runs on the loop.
func (e *engine) call(ctx context.Context, f func(context.Context) func() error) {
	go func() {
		select {
		case e.calls <- func() {
			res := f(ctx)
			select {
			case e.results <- res:
			case <-ctx.Done():
			}
		}:
		case <-ctx.Done():
		}
	}()
}

func (e *engine) create(ctx context.Context, p *podState, timeouts chan<- string) {
	n := e.r.Nodes[p.node].PlannedNode
	var pod *corev1.Pod
	if p.role == RoleCanary {
		pod = e.pods.CanaryPod(p.name, n)
	} else {
		pod = e.pods.ProbePod(p.name, n)
	}
	e.call(ctx, func(ctx context.Context) func() error {
		_, err := e.c.CoreV1().Pods(e.o.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		return func() error {
			if err != nil {
				err = apiError(err, "create", "pods", e.o.Namespace)
				var ae *AdmissionError
				if IsForbidden(err) || errors.As(err, &ae) {
					return err // no Pod can be made: the run stops, and says why
				}
				e.finish(ctx, p, &report.SweepResult{Pod: p.name, Source: report.SourceNone, Status: report.SweepNoAnswer, Message: err.Error(),
					Verdict: verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "the Pod could not be created"}})
				return nil
			}
			if p.object == podCreating {
				p.object = podExists
			}
			if p.phase == podAnswered {
				e.remove(ctx, p) // answered (or timed out) before the create returned
				return nil
			}
			time.AfterFunc(e.o.StartTimeout, func() { timeouts <- p.name })
			return nil
		}
	})
}

func (e *engine) onEvent(ctx context.Context, ev watch.Event) error {
	switch ev.Type {
	case watch.Error:
		return apiError(apierrors.FromObject(ev.Object), "watch", "pods", e.o.Namespace)
	case watch.Bookmark:
		return nil
	}
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	p := e.byName[pod.Name]
	if p == nil || p.phase == podAnswered {
		return nil
	}
	if ev.Type == watch.Deleted {
		e.vanished(ctx, p, pod)
		return nil
	}
	var out outcome
	var res *report.SweepResult
	if p.role == RoleCanary {
		out, res = readCanary(pod)
	} else {
		out, res = readProbe(pod)
	}
	if cs := containerStatus(pod, p.role); cs != nil && (cs.State.Running != nil || cs.State.Terminated != nil) {
		p.start()
	}
	switch out {
	case finished, gone:
		e.finish(ctx, p, res)
	case needLogs:
		p.start()
		e.readLogs(ctx, p, pod, res)
	case imageFailed:
		e.readEvents(ctx, p, pod, res)
	}
	return nil
}

// vanished: the Pod was deleted by someone else, or with its node.
func (e *engine) vanished(ctx context.Context, p *podState, pod *corev1.Pod) {
	node := pod.Spec.NodeName
	e.call(ctx, func(ctx context.Context) func() error {
		_, err := e.c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return func() error {
			msg := "the Pod was deleted before it answered"
			if apierrors.IsNotFound(err) {
				msg = fmt.Sprintf("node %s disappeared mid-run (scaled in or replaced): its Pod went with it", node)
			}
			p.object = podDeleted
			e.finish(ctx, p, &report.SweepResult{Pod: p.name, Source: report.SourceNone, Status: report.SweepNoAnswer, Message: msg,
				Verdict: verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: msg}})
			return nil
		}
	})
}

// readLogs: the termination message was not the verdict JSON; the log
// holds the whole report.
func (e *engine) readLogs(ctx context.Context, p *podState, pod *corev1.Pod, res *report.SweepResult) {
	limit := int64(4 << 20)
	e.call(ctx, func(ctx context.Context) func() error {
		rc, err := e.c.CoreV1().Pods(e.o.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "probe", LimitBytes: &limit}).Stream(ctx)
		var body []byte
		if err == nil {
			body, err = io.ReadAll(rc)
			rc.Close()
		}
		return func() error {
			if p.phase == podAnswered {
				return nil
			}
			if err != nil {
				res.Status = report.SweepNoAnswer
				res.Message += "; the log could not be read: " + units.OneLine(apiError(err, "get", "pods/log", e.o.Namespace).Error())
				res.Verdict = verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "no verdict from the probe: " + res.Message}
				e.finish(ctx, p, res)
				return nil
			}
			pr, perr := ParseProbeLog(body)
			if perr != nil {
				res.Status = report.SweepNoAnswer
				res.Message += "; " + perr.Error()
				res.Verdict = verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "no verdict from the probe: " + res.Message}
				e.finish(ctx, p, res)
				return nil
			}
			res.Source = report.SourceProbeLogs
			msg := res.Message
			fillFromSummary(res, probesummary.Of(pr))
			res.Message = msg
			e.finish(ctx, p, res)
			return nil
		}
	})
}

// readEvents: the Pod's image could not be pulled; the kubelet's Events
// are the node's verdict.
func (e *engine) readEvents(ctx context.Context, p *podState, pod *corev1.Pod, res *report.SweepResult) {
	if p.phase >= podReadingEvents {
		return // a read is under way, or the Pod has answered
	}
	image := pod.Spec.Containers[0].Image
	sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": pod.Name, "involvedObject.uid": string(pod.UID)}.AsSelector().String()
	p.phase = podReadingEvents
	e.call(ctx, func(ctx context.Context) func() error {
		l, err := e.c.CoreV1().Events(e.o.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
		return func() error {
			p.eventReads++
			if p.phase == podAnswered {
				return nil
			}
			p.phase = podStarted
			var evs []corev1.Event
			if err == nil {
				evs = l.Items
			}
			fromEvents(e.classifier, res, pod, image, evs)
			if res.Verdict.Code == verdict.Other && p.eventReads < 3 {
				return nil // only a back-off so far: the next status change brings the cause
			}
			if err != nil {
				res.Message = strings.TrimSpace(res.Message + " (events: " + units.OneLine(apiError(err, "list", "events", e.o.Namespace).Error()) + ")")
			}
			e.finish(ctx, p, res)
			return nil
		}
	})
}

// finish records p's result, frees its slot and deletes it (grace 0).
func (e *engine) finish(ctx context.Context, p *podState, res *report.SweepResult) {
	if p.phase == podAnswered {
		return
	}
	p.phase = podAnswered
	e.finished++
	if p.object != podUnsent {
		e.inFlight-- // its slot, held since its create was sent
	}
	n := &e.r.Nodes[p.node]
	if p.role == RoleCanary {
		n.Canary = res
	} else {
		n.Probe = res
	}
	if e.nodeDone(p.node) {
		e.doneNodes++
		if e.o.Progress != nil {
			e.o.Progress(e.doneNodes, len(e.r.Nodes))
		}
	}
	if p.object == podExists {
		e.remove(ctx, p)
	}
}

// remove deletes p (grace 0) once, when the API made it.
func (e *engine) remove(ctx context.Context, p *podState) {
	if p.object != podExists {
		return
	}
	p.object = podDeleting
	name := p.name
	e.call(ctx, func(ctx context.Context) func() error {
		err := deleteNow(ctx, e.c, e.o.Namespace, name)
		return func() error {
			if err == nil {
				p.object = podDeleted
			}
			if IsForbidden(err) {
				return err // nothing could be cleaned up: say so now
			}
			return nil
		}
	})
}

func (e *engine) nodeDone(i int) bool {
	n := e.r.Nodes[i]
	return n.Probe != nil && (!e.o.Canary || n.Canary != nil)
}

// cleanup deletes every Pod of the run not yet deleted, then the owner,
// on a context of its own: it runs after Ctrl-C too.
func (e *engine) cleanup(owner string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	// Every Pod, deleted or not: a delete still in a worker's queue when
	// the loop ended may not have been sent.
	for _, p := range e.queue {
		if p.object == podUnsent || p.object == podDeleted {
			continue
		}
		if err := deleteNow(ctx, e.c, e.o.Namespace, p.name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := deleteOwner(ctx, e.c, e.o.Namespace, owner); err != nil {
		errs = append(errs, err)
	}
	return firstOf(errs)
}

// firstOf is the first error, with how many more there were (one line).
func firstOf(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return fmt.Errorf("%w (and %d more)", errs[0], len(errs)-1)
}

// autoscalerPools reads node groups from the cluster-autoscaler's status
// ConfigMap (kube-system/cluster-autoscaler-status) when it exists and may
// be read; nil otherwise.
func autoscalerPools(ctx context.Context, c kubernetes.Interface) map[string]int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cm, err := c.CoreV1().ConfigMaps("kube-system").Get(ctx, "cluster-autoscaler-status", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return ParseAutoscalerStatus(cm.Data["status"])
}
