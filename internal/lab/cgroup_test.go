package lab_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/testenv"
)

// TestNodeCgroupBesideTeardown creates node cgroups while other runs end
// as fast as they can (each Session's Close removes the shared parent when
// it is empty): every creation must succeed. Each node's cgroup is removed
// again at once, so the parent is empty between creations, as when two
// lab packages' clusters start and stop side by side.
func TestNodeCgroupBesideTeardown(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Unavailable(t, "needs root: cgroups")
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpuset/cpuset.cpus"); err != nil {
		testenv.Unavailable(t, "needs the cgroup v1 cpuset hierarchy (the lab's kubelets do)")
	}
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*/")
	own, err := lab.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close() })

	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				lab.RemoveCgroupParentAsSessionsDo([]string{"/sys/fs/cgroup/cpuset"})
			}
		}
	}()
	failed := 0
	for i := 0; i < 300 && failed < 3; i++ {
		name := own.Prefix + "n" + strconv.Itoa(i)
		if err := lab.MakeNodeCgroup(name); err != nil {
			t.Errorf("MakeNodeCgroup(%s) beside other runs' teardowns: %v", name, err)
			failed++
			continue
		}
		for _, h := range hierarchies {
			syscall.Rmdir(filepath.Join(h, lab.CgroupParent, name))
		}
	}
	close(stop)
	<-done
}
