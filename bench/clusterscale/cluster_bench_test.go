package clusterscale

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pullpath/pullpath/internal/explain/cluster"
)

// BenchmarkExplainCluster is explain -A in-process against a loaded
// apiserver named by PULLBENCH_KUBECONFIG (for example one kept up by
// `pullbench explain`), for CPU profiles of the cluster path:
//
//	PULLBENCH_KUBECONFIG=/path/kubeconfig go test -run '^$' -bench ExplainCluster \
//	  -benchtime 1x -cpuprofile /tmp/cluster.cpu ./bench/clusterscale/
func BenchmarkExplainCluster(b *testing.B) {
	kc := os.Getenv("PULLBENCH_KUBECONFIG")
	if kc == "" {
		b.Skip("PULLBENCH_KUBECONFIG is not set: it names the kubeconfig of a loaded apiserver")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		b.Fatalf("kubeconfig %s: %v", kc, err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for range b.N {
		r, err := cluster.Explain(ctx, c, cluster.Target{AllNamespaces: true}, cluster.Options{})
		if err != nil {
			b.Fatalf("Explain(-A): %v", err)
		}
		if r.Summary.Failures == 0 {
			b.Fatal("Explain(-A) found no failure")
		}
	}
}
