// Package clusterscale measures `pullpath explain` at cluster scale: it
// starts the real kube-apiserver and etcd (internal/testenv/controlplane),
// loads Nodes, Pods (with their status) and Events with concurrent
// creates, then times `pullpath explain -A` (wall, peak RSS) against it and
// `pullpath explain --from events.json` over the same events, as
// `kubectl get events -A -o json` would have written them.
//
// The peer figure beside explain -A is the floor of any tool that reads
// the same objects: the same paged Lists (pods, pod events, nodes) done
// in-process with client-go and nothing else.
package clusterscale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
)

// DefaultShape is the cluster: 5,000 nodes, 50,000 pods, 50,000 events.
var DefaultShape = Shape{Nodes: 5000, Pods: 50000, Events: 50000, Namespaces: 50, Pools: 10, Workers: 48}

// Config says what to run.
type Config struct {
	PullpathBin string
	Shape       Shape
	LoadBudget  time.Duration // default 8 minutes
	Rounds      int
	PageSize    int // explain's --page-size; 0 keeps its default (500)
	Log         io.Writer
}

// Run is one timed command.
type Run struct {
	What       string  `json:"what"`
	Round      int     `json:"round"`
	WallSec    float64 `json:"wallSec"`
	PeakRSSMiB float64 `json:"peakRssMiB"`
	PeakAnon   float64 `json:"peakAnonMiB"`
	CPUSec     float64 `json:"cpuSec"`
	Messages   int     `json:"messages"`
	Failures   int     `json:"failures"`
	Groups     int     `json:"groups"`
	Dominant   string  `json:"dominantCondition"`
}

// What of each Run.
const (
	WhatCluster = "explain -A (kube-apiserver)"
	WhatOffline = "explain --from events.json"
	WhatFloor   = "paged Lists only (client-go, in-process)"
)

// Result is the whole benchmark.
type Result struct {
	Date        time.Time       `json:"date"`
	Machine     measure.Machine `json:"machine"`
	Wanted      Shape           `json:"wanted"`
	Loaded      Loaded          `json:"loaded"`
	EventsBytes int64           `json:"eventsJsonBytes"`
	Runs        []Run           `json:"runs"`
	ClusterSec  float64         `json:"clusterMedianSec"`
	OfflineSec  float64         `json:"offlineMedianSec"`
	FloorSec    float64         `json:"floorMedianSec"`
	ClusterRSS  float64         `json:"clusterMaxRssMiB"`
	OfflineRSS  float64         `json:"offlineMaxRssMiB"`
}

// Measure starts the control plane, loads it and times explain. It fails
// if the control plane cannot start, a create fails, or explain gives no
// report.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.PullpathBin == "" {
		return nil, errors.New("clusterscale: PullpathBin is required")
	}
	if cfg.Rounds < 1 {
		return nil, fmt.Errorf("clusterscale: Rounds %d, want at least 1", cfg.Rounds)
	}
	if cfg.Shape.Nodes == 0 {
		cfg.Shape = DefaultShape
	}
	if cfg.Shape.Nodes < 1 || cfg.Shape.Pods < 1 || cfg.Shape.Events < 1 || cfg.Shape.Namespaces < 1 || cfg.Shape.Pools < 2 || cfg.Shape.Workers < 1 {
		return nil, fmt.Errorf("clusterscale: shape %+v: want at least one node, pod, event, namespace and worker, and two pools", cfg.Shape)
	}
	if cfg.LoadBudget == 0 {
		cfg.LoadBudget = 8 * time.Minute
	}
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "clusterscale: "+format+"\n", a...)
		}
	}
	res := &Result{Date: time.Now().UTC(), Machine: measure.DescribeMachine(), Wanted: cfg.Shape}

	dir, err := os.MkdirTemp("", "pullbench-cluster-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	logf("starting etcd and kube-apiserver")
	cp, err := controlplane.Start(ctx, controlplane.Options{WorkDir: dir, APIServerArgs: []string{"--max-requests-inflight=800", "--max-mutating-requests-inflight=400"}})
	if err != nil {
		return nil, fmt.Errorf("clusterscale: %w", err)
	}
	defer cp.Stop()
	rc := *cp.Config
	rc.QPS, rc.Burst = -1, 0 // no client-side rate limit
	client, err := kubernetes.NewForConfig(&rc)
	if err != nil {
		return nil, fmt.Errorf("clusterscale: client: %v", err)
	}

	lctx, cancel := context.WithTimeout(ctx, cfg.LoadBudget+time.Minute)
	res.Loaded, err = Load(lctx, client, cfg.Shape, cfg.LoadBudget, logf)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("clusterscale: load: %w", err)
	}
	logf("loaded %d nodes, %d pods, %d events in %.0fs", res.Loaded.Nodes, res.Loaded.Pods, res.Loaded.Events, res.Loaded.Seconds)

	eventsFile := filepath.Join(dir, "events.json")
	if res.EventsBytes, err = writeEvents(ctx, client, eventsFile); err != nil {
		return nil, fmt.Errorf("clusterscale: events.json: %w", err)
	}
	logf("wrote events.json, %d MB", res.EventsBytes/1e6)

	page := []string{}
	if cfg.PageSize > 0 {
		page = []string{"--page-size", fmt.Sprint(cfg.PageSize)}
	}
	clusterArgv := append([]string{cfg.PullpathBin, "explain", "-A", "--kubeconfig", cp.Kubeconfig, "-o", "json"}, page...)
	offlineArgv := []string{cfg.PullpathBin, "explain", "--from", eventsFile, "-o", "json"}
	pageSize := int64(500)
	if cfg.PageSize > 0 {
		pageSize = int64(cfg.PageSize)
	}
	for round := 1; round <= cfg.Rounds; round++ {
		for _, what := range []string{WhatCluster, WhatFloor, WhatOffline} {
			var run Run
			switch what {
			case WhatFloor:
				run, err = listFloor(ctx, client, pageSize)
			case WhatCluster:
				run, err = runExplain(ctx, clusterArgv)
			default:
				run, err = runExplain(ctx, offlineArgv)
			}
			if err != nil {
				return nil, fmt.Errorf("clusterscale: %s round %d: %w", what, round, err)
			}
			run.What, run.Round = what, round
			logf("round %d %-42s %6.2fs  peak RSS %6.1f MiB  %d messages, %d failures, %d groups", round, what, run.WallSec, run.PeakRSSMiB, run.Messages, run.Failures, run.Groups)
			res.Runs = append(res.Runs, run)
		}
	}
	res.summarize()
	return res, nil
}

func (r *Result) summarize() {
	by := map[string][]float64{}
	for _, run := range r.Runs {
		by[run.What] = append(by[run.What], run.WallSec)
		switch run.What {
		case WhatCluster:
			r.ClusterRSS = max(r.ClusterRSS, run.PeakRSSMiB)
		case WhatOffline:
			r.OfflineRSS = max(r.OfflineRSS, run.PeakRSSMiB)
		}
	}
	r.ClusterSec, r.OfflineSec, r.FloorSec = measure.Median(by[WhatCluster]), measure.Median(by[WhatOffline]), measure.Median(by[WhatFloor])
}

func runExplain(ctx context.Context, argv []string) (Run, error) {
	res, err := measure.Run(ctx, measure.Cmd{Argv: argv, Timeout: 5 * time.Minute})
	if err != nil {
		return Run{}, err
	}
	var rep report.ExplainReport
	if err := json.Unmarshal(res.Stdout, &rep); err != nil || rep.Kind != report.ExplainKind {
		return Run{}, fmt.Errorf("exit %d and no report (%v); stderr: %s", res.ExitCode, err, strings.TrimSpace(string(res.Stderr)))
	}
	return Run{
		WallSec: res.Wall.Seconds(), PeakRSSMiB: res.PeakRSSMiB(), PeakAnon: float64(res.PeakAnonKB) / 1024, CPUSec: res.CPUSec(),
		Messages: rep.Summary.Messages, Failures: rep.Summary.Failures, Groups: len(rep.Groups), Dominant: string(rep.Summary.DominantCondition),
	}, nil
}

// listFloor does the Lists explain -A does, and nothing else.
func listFloor(ctx context.Context, c kubernetes.Interface, page int64) (Run, error) {
	start := time.Now()
	var n int
	opts := metav1.ListOptions{Limit: page}
	for {
		l, err := c.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return Run{}, err
		}
		n += len(l.Items)
		if opts.Continue = l.Continue; l.Continue == "" {
			break
		}
	}
	opts = metav1.ListOptions{Limit: page, FieldSelector: fields.Set{"involvedObject.kind": "Pod"}.AsSelector().String()}
	for {
		l, err := c.CoreV1().Events("").List(ctx, opts)
		if err != nil {
			return Run{}, err
		}
		n += len(l.Items)
		if opts.Continue = l.Continue; l.Continue == "" {
			break
		}
	}
	opts = metav1.ListOptions{Limit: page}
	for {
		l, err := c.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return Run{}, err
		}
		n += len(l.Items)
		if opts.Continue = l.Continue; l.Continue == "" {
			break
		}
	}
	return Run{WallSec: time.Since(start).Seconds(), Messages: n}, nil
}

// writeEvents writes every event as `kubectl get events -A -o json` does:
// a v1 List of Events.
func writeEvents(ctx context.Context, c kubernetes.Interface, file string) (int64, error) {
	list := struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Items      []corev1.Event `json:"items"`
		Metadata   map[string]any `json:"metadata"`
	}{APIVersion: "v1", Kind: "List", Metadata: map[string]any{"resourceVersion": ""}}
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := c.CoreV1().Events("").List(ctx, opts)
		if err != nil {
			return 0, err
		}
		for _, e := range l.Items {
			e.APIVersion, e.Kind = "v1", "Event"
			list.Items = append(list.Items, e)
		}
		if opts.Continue = l.Continue; l.Continue == "" {
			break
		}
	}
	b, err := json.MarshalIndent(list, "", "    ")
	if err != nil {
		return 0, err
	}
	return int64(len(b)), os.WriteFile(file, b, 0o644)
}

// Markdown renders the table.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Date: %s. Machine: %d cores, %s, %d MiB memory, load average %s at the start.\n", r.Date.Format("2006-01-02 15:04 UTC"), r.Machine.Cores, r.Machine.CPUModel, r.Machine.MemMiB, r.Machine.LoadAvg)
	fmt.Fprintf(&b, "Loaded: %d nodes, %d pods (with status), %d events (wanted %d / %d / %d; complete: %v) in %.0f s with %d concurrent creates; events.json %.1f MB.\n\n",
		r.Loaded.Nodes, r.Loaded.Pods, r.Loaded.Events, r.Wanted.Nodes, r.Wanted.Pods, r.Wanted.Events, r.Loaded.Complete, r.Loaded.Seconds, r.Wanted.Workers, float64(r.EventsBytes)/1e6)
	b.WriteString("| round | what | wall s | peak RSS MiB | peak anon MiB | CPU s | messages read | failures | groups | dominant condition |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		if run.What == WhatFloor {
			fmt.Fprintf(&b, "| %d | %s | %.2f | | | | %d objects | | | |\n", run.Round, run.What, run.WallSec, run.Messages)
			continue
		}
		fmt.Fprintf(&b, "| %d | %s | %.2f | %.1f | %.1f | %.2f | %d | %d | %d | %s |\n", run.Round, run.What, run.WallSec, run.PeakRSSMiB, run.PeakAnon, run.CPUSec, run.Messages, run.Failures, run.Groups, run.Dominant)
	}
	fmt.Fprintf(&b, "\n| figure | pullpath | beside it | ratio |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| explain -A, median wall s | %.2f | %.2f (the Lists alone) | %.2fx |\n", r.ClusterSec, r.FloorSec, safeDiv(r.ClusterSec, r.FloorSec))
	fmt.Fprintf(&b, "| explain --from events.json, median wall s | %.2f | %.2f (explain -A) | %.2fx |\n", r.OfflineSec, r.ClusterSec, safeDiv(r.OfflineSec, r.ClusterSec))
	fmt.Fprintf(&b, "| peak RSS MiB, -A / --from (max over rounds) | %.1f / %.1f | | |\n", r.ClusterRSS, r.OfflineRSS)
	return b.String()
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
