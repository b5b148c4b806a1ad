// Package labtest gives tests in any package a real lab cluster: a real
// control plane and real kubelets in network namespaces, built from a lab
// scenario (internal/lab, cluster section; docs/lab.md).
//
//	func TestMain(m *testing.M) { labtest.Main(m) } // the test binary serves the lab's services
//
//	func TestSomething(t *testing.T) {
//		c := labtest.Require(t, "scale-up-new-subnet") // nodes Ready; torn down when t ends
//		pods, _ := c.Client.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
//		_ = c.ImportImage(t.Context(), "my-image.tar")    // into every node's containerd
//		_ = c.AddNode(t.Context(), "node-c")              // a `later` node: the scale-up
//		_ = c.StopKubelet(t.Context(), "node-a")          // NotReady about 16 s later
//		_ = c.Route(t.Context(), "node-c", "add", lab.Route{To: "10.9.0.0/16", Via: "10.0.3.1"})
//		cmd, _ := c.Exec(t.Context(), "node-a", "cat", "/etc/resolv.conf")
//	}
//
// Require skips when the test cannot run here (not root, no network
// namespaces, binaries missing) and fails instead when CI=true, saying how
// to build what is missing (bash hack/controlplane.sh).
package labtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/testenv"
)

// Main runs the tests, or, when the lab re-executes the test binary as
// `lab serve --config FILE --ready FILE` inside a namespace, serves that
// host's lab services (DNS, registry, token and blob hosts). Call it from
// TestMain.
func Main(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "lab" && os.Args[2] == "serve" {
		os.Exit(serve(os.Args[3:]))
	}
	os.Exit(m.Run())
}

func serve(args []string) int {
	var config, ready string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--config":
			config = args[i+1]
		case "--ready":
			ready = args[i+1]
		}
	}
	c, err := lab.ReadServeConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := lab.Serve(context.Background(), c, ready, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// Require starts the cluster of a built-in scenario (or a scenario file)
// and stops it when t ends, logging where the logs are if t failed.
func Require(t testing.TB, scenario string) *lab.Cluster {
	t.Helper()
	topo, err := lab.Load(scenario)
	if err != nil {
		t.Fatalf("labtest: %v", err)
	}
	return RequireTopology(t, topo, lab.ClusterOptions{})
}

// RequireTopology is Require for a topology the test built or changed.
func RequireTopology(t testing.TB, topo *lab.Topology, o lab.ClusterOptions) *lab.Cluster {
	t.Helper()
	testenv.RequireNetns(t, "nft")
	c, err := lab.StartCluster(t.Context(), topo, o)
	if err != nil {
		if errors.Is(err, lab.ErrClusterBinaries) && os.Getenv("CI") != "true" {
			t.Skipf("labtest: %v", err)
		}
		t.Fatalf("labtest: start cluster %s: %v", topo.Name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("labtest: cluster %s failed; its logs (kubelets, containerd, control plane) are in %s", topo.Name, c.SaveLogs(""))
		}
		if err := c.Close(); err != nil {
			t.Errorf("labtest: teardown of %s: %v", topo.Name, err)
		}
	})
	return c
}
