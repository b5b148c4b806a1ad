// Package labtest gives tests in any package a real lab cluster: a real
// control plane and real kubelets in network namespaces, built from a lab
// scenario (internal/lab/scenario, cluster section; docs/lab.md), run by
// internal/lab/cluster.
//
//	func TestMain(m *testing.M) { labtest.Main(m) } // the test binary is pullpath for the lab
//
//	func TestSomething(t *testing.T) {
//		c := labtest.Require(t, "scale-up-new-subnet") // nodes Ready; torn down when t ends
//		pods, _ := c.Client.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
//		_ = c.ImportImage(t.Context(), "my-image.tar")    // into every node's containerd
//		_ = c.AddNode(t.Context(), "node-c")              // a `later` node: the scale-up
//		_ = c.StopKubelet(t.Context(), "node-a")          // NotReady about 16 s later
//		_ = c.Route(t.Context(), "node-c", "add", scenario.Route{To: "10.9.0.0/16", Via: "10.0.3.1"})
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
	"syscall"
	"testing"

	"github.com/pullpath/pullpath/internal/lab/cluster"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/testenv"
)

// Main runs the tests, or, when the lab re-executes the test binary as
// pullpath (`lab serve` inside a host's namespace, `probe` in the node's,
// `lab credential-provider` as the node's plugin, `lab run|up|down` from a
// test, `diagnose` from a test that gives it its own environment), becomes
// the built pullpath with the same arguments (exec: the same process,
// streams and exit code). Call it from TestMain.
//
// The test binary links no CLI: before the tests, Main builds ./cmd/pullpath
// (testenv.PullpathBinary, shared by every test binary) and leaves its path
// beside the test binary, where the re-executed children find it whatever
// environment the lab gives them.
func Main(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "lab" || os.Args[1] == "probe" || os.Args[1] == "diagnose") {
		becomePullpath()
	}
	if err := buildPullpath(); err != nil {
		fmt.Fprintf(os.Stderr, "labtest: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	removeTempDirs()
	os.Remove(pullpathLink())
	os.Exit(code)
}

// Pullpath is the pullpath binary Main built, for a test that runs a
// command as a user would.
func Pullpath(t testing.TB) string {
	t.Helper()
	p, err := os.Readlink(pullpathLink())
	if err != nil {
		t.Fatalf("labtest: no pullpath binary (is labtest.Main the package's TestMain?): %v", err)
	}
	return p
}

// pullpathLink is the symbolic link beside the test binary that names the
// pullpath binary Main built.
func pullpathLink() string {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return self + ".pullpath"
}

// buildPullpath builds pullpath into a TempDir and links it beside the
// test binary.
func buildPullpath() error {
	dir, err := TempDir("pullpath-labtest-bin-")
	if err != nil {
		return err
	}
	bin, err := testenv.PullpathBinary(context.Background(), dir)
	if err != nil {
		return err
	}
	link := pullpathLink()
	os.Remove(link)
	return os.Symlink(bin, link)
}

// becomePullpath execs the pullpath binary Main built with this process's
// arguments; it returns only by exiting when it cannot.
func becomePullpath() {
	bin, err := os.Readlink(pullpathLink())
	if err == nil {
		err = syscall.Exec(bin, append([]string{"pullpath"}, os.Args[1:]...), os.Environ())
	}
	fmt.Fprintf(os.Stderr, "labtest: run the pullpath binary beside %s: %v\n", os.Args[0], err)
	os.Exit(1)
}

// Require starts the cluster of a built-in scenario (or a scenario file)
// and stops it when t ends, logging where the logs are if t failed.
func Require(t testing.TB, name string) *cluster.Cluster {
	t.Helper()
	s, err := scenario.Load(name)
	if err != nil {
		t.Fatalf("labtest: %v", err)
	}
	return RequireScenario(t, s, cluster.Options{})
}

// RequireScenario is Require for a scenario the test built or changed.
func RequireScenario(t testing.TB, s *scenario.Scenario, o cluster.Options) *cluster.Cluster {
	t.Helper()
	testenv.RequireNetns(t, "nft")
	c, err := cluster.Start(t.Context(), s, o)
	if errors.Is(err, cluster.ErrBinaries) {
		testenv.Unavailable(t, "labtest: "+err.Error())
	}
	if err != nil {
		t.Fatalf("labtest: start cluster %s: %v", s.Name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("labtest: cluster %s failed; its logs (kubelets, containerd, control plane) are in %s", s.Name, c.SaveLogs(""))
		}
		if err := c.Close(); err != nil {
			t.Errorf("labtest: teardown of %s: %v", s.Name, err)
		}
	})
	return c
}
