package cluster_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/bench/clusterscale"
	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
)

// BenchmarkExplainAllNamespaces is cluster.Explain -A in-process against a
// real kube-apiserver loaded with bench/clusterscale's cluster (default 200
// nodes, 2,000 pods, 2,000 events; PULLBENCH_SCALE=5000,50000,50000 for the
// issue's, which takes minutes to load), beside the same paged Lists in
// series, with a client without client-side rate limit and with
// client-go's default one (5 requests/s, burst 10, what a rest.Config
// gets when QPS is left 0):
//
//	PULLBENCH_SCALE=5000,50000,50000 go test -run '^$' -bench ExplainAllNamespaces \
//	  -benchtime 3x -timeout 30m ./internal/explain/cluster/
func BenchmarkExplainAllNamespaces(b *testing.B) {
	shape := clusterscale.DefaultShape
	shape.Nodes, shape.Pods, shape.Events = 200, 2000, 2000
	if v := os.Getenv("PULLBENCH_SCALE"); v != "" {
		if _, err := fmt.Sscanf(v, "%d,%d,%d", &shape.Nodes, &shape.Pods, &shape.Events); err != nil || shape.Nodes < 1 || shape.Pods < 1 || shape.Events < 1 {
			b.Fatalf("PULLBENCH_SCALE=%q: want NODES,PODS,EVENTS", v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{WorkDir: b.TempDir(), APIServerArgs: []string{"--max-requests-inflight=800", "--max-mutating-requests-inflight=400"}})
	if err != nil {
		if !testenv.CI() {
			b.Skipf("real control plane unavailable, run hack/controlplane.sh: %v", err)
		}
		b.Fatal(err)
	}
	defer cp.Stop()
	unlimited := *cp.Config
	unlimited.QPS, unlimited.Burst = -1, 0
	c, err := kubernetes.NewForConfig(&unlimited)
	if err != nil {
		b.Fatal(err)
	}
	loaded, err := clusterscale.Load(ctx, c, shape, 15*time.Minute, func(string, ...any) {})
	if err != nil || !loaded.Complete {
		b.Fatalf("load %+v: %+v, %v", shape, loaded, err)
	}
	defaultLimit := *cp.Config
	defaultLimit.QPS, defaultLimit.Burst = 0, 0
	throttled, err := kubernetes.NewForConfig(&defaultLimit)
	if err != nil {
		b.Fatal(err)
	}

	explainAll := func(b *testing.B, c kubernetes.Interface) {
		for range b.N {
			r, err := cluster.Explain(ctx, c, cluster.Target{AllNamespaces: true}, cluster.Options{PageSize: 500})
			if err != nil {
				b.Fatalf("Explain(-A): %v", err)
			}
			if r.Summary.Failures == 0 || r.Summary.Messages == 0 {
				b.Fatalf("Explain(-A) read %d messages, %d failures; want both", r.Summary.Messages, r.Summary.Failures)
			}
		}
	}
	b.Run("explain", func(b *testing.B) { explainAll(b, c) })
	b.Run("lists-in-series", func(b *testing.B) {
		for range b.N {
			n := 0
			for _, list := range []func(metav1.ListOptions) (string, int, error){
				func(o metav1.ListOptions) (string, int, error) {
					l, err := c.CoreV1().Pods("").List(ctx, o)
					if err != nil {
						return "", 0, err
					}
					return l.Continue, len(l.Items), nil
				},
				func(o metav1.ListOptions) (string, int, error) {
					l, err := c.CoreV1().Events("").List(ctx, o)
					if err != nil {
						return "", 0, err
					}
					return l.Continue, len(l.Items), nil
				},
				func(o metav1.ListOptions) (string, int, error) {
					l, err := c.CoreV1().Nodes().List(ctx, o)
					if err != nil {
						return "", 0, err
					}
					return l.Continue, len(l.Items), nil
				},
			} {
				o := metav1.ListOptions{Limit: 500}
				for {
					cont, k, err := list(o)
					if err != nil {
						b.Fatal(err)
					}
					n += k
					if cont == "" {
						break
					}
					o.Continue = cont
				}
			}
			if n != shape.Nodes+shape.Pods+shape.Events {
				b.Fatalf("listed %d objects, want %d", n, shape.Nodes+shape.Pods+shape.Events)
			}
		}
	})
	b.Run("explain-client-go-default-qps", func(b *testing.B) { explainAll(b, throttled) })
}
