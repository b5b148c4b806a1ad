package clusterscale

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
	"github.com/pullpath/pullpath/internal/verdict"
)

func TestShapeIsConsistent(t *testing.T) {
	s := Shape{Nodes: 100, Pods: 1000, Events: 3000, Namespaces: 5, Pools: 4, Workers: 1}
	names := map[string]bool{}
	for i := 0; i < s.Nodes; i++ {
		n := s.node(i)
		if names[n.Name] {
			t.Fatalf("node(%d) name %q repeats", i, n.Name)
		}
		names[n.Name] = true
	}
	failing := 0
	for p := 0; p < s.Pods; p++ {
		if s.podFailing(p) {
			failing++
		}
		if !names[s.pod(p).Spec.NodeName] {
			t.Fatalf("pod(%d) is on node %q, which is not in the shape", p, s.pod(p).Spec.NodeName)
		}
	}
	if lo, hi := s.Pods/s.Pools/2, 2*s.Pods/s.Pools; failing < lo || failing > hi {
		t.Errorf("failing pods = %d of %d, want about 1/%d of them (%d..%d)", failing, s.Pods, s.Pools, lo, hi)
	}
	events := map[string]bool{}
	failed := 0
	for j := 0; j < s.Events; j++ {
		e := s.event(j)
		key := e.Namespace + "/" + e.Name
		if events[key] {
			t.Fatalf("event(%d) name %q repeats", j, key)
		}
		events[key] = true
		if e.Reason == "Failed" && strings.Contains(e.Message, "i/o timeout") {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("no event carries the runtime's timeout message: explain would have nothing to read")
	}
}

// TestRuntimeMessageReadsAsBlobTimeout checks that the message the load
// puts in events is one explain reads as the seeds' endpoint-set case, so
// the benchmark measures real classification work.
func TestRuntimeMessageReadsAsBlobTimeout(t *testing.T) {
	s := DefaultShape
	for p := 0; p < 50; p++ {
		if !s.podFailing(p) {
			continue
		}
		c := explain.Classify("Failed to pull image \"" + s.image(p) + "\": " + s.runtimeError(p))
		if c.Condition != verdict.ConditionEndpointSet && c.Condition != verdict.ConditionRoute {
			t.Errorf("Classify(runtime error of pod %d) condition = %q (rule %q), want endpoint-set or route", p, c.Condition, c.Rule)
		}
		return
	}
	t.Fatal("no failing pod among the first 50")
}

// TestLoadAndExplainSmall loads a small cluster into the real apiserver
// and checks that explain finds what was loaded.
func TestLoadAndExplainSmall(t *testing.T) {
	cp := controlplane.Require(t)
	c, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := Shape{Nodes: 20, Pods: 100, Events: 300, Namespaces: 3, Pools: 4, Workers: 8}
	got, err := Load(ctx, c, s, time.Minute, t.Logf)
	if err != nil {
		t.Fatalf("Load(%+v) error: %v", s, err)
	}
	if !got.Complete || got.Nodes != 20 || got.Pods != 100 || got.Events != 300 {
		t.Fatalf("Load(%+v) = %+v, want everything loaded", s, got)
	}
	rep, err := cluster.Explain(ctx, c, cluster.Target{AllNamespaces: true}, cluster.Options{})
	if err != nil {
		t.Fatalf("Explain(-A) error: %v", err)
	}
	if rep.Summary.Failures == 0 {
		t.Errorf("Explain(-A) failures = 0, want the failing pods' pull failures")
	}
	if len(rep.Groups) == 0 {
		t.Errorf("Explain(-A) groups = 0, want the failing pool grouped")
	}
}
