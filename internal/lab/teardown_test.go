package lab_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
)

// TestTeardownLeavesNothing runs a scenario to the end, one whose services
// cannot start (a failure after the namespaces exist), and one cancelled
// mid-probe (Ctrl-C), and checks that each left nothing behind.
func TestTeardownLeavesNothing(t *testing.T) {
	testenv.RequireNetns(t, "nft")
	topo, err := scenario.LoadBuiltin("ecr-sg-drops-443")
	if err != nil {
		t.Fatal(err)
	}
	before := labtest.MachineState(t)

	t.Run("success", func(t *testing.T) {
		r := lab.Run(context.Background(), topo, lab.Options{})
		if r.Result != report.LabPass {
			t.Errorf("Run(%s) = %s (%s), want pass", topo.Name, r.Result, r.Error)
		}
		labtest.CheckClean(t, "a finished run", labtest.RunPrefix(r), before)
	})

	t.Run("failure", func(t *testing.T) {
		r := lab.Run(context.Background(), topo, lab.Options{Self: "/nonexistent/pullpath"})
		if r.Result != report.LabError || r.Timings.BuildMS == 0 {
			t.Errorf("Run with a missing binary = %s after build %.0fms (%s), want error after the build", r.Result, r.Timings.BuildMS, r.Error)
		}
		labtest.CheckClean(t, "a failed run", labtest.RunPrefix(r), before)
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *report.LabRun)
		go func() { done <- lab.Run(ctx, topo, lab.Options{}) }()
		// The probe waits 2s on the dropped SYN: cancel while it waits.
		waitFor(t, probeChildOf(os.Getpid()), 20*time.Second)
		cancel()
		r := <-done
		if r.Result != report.LabError || !strings.Contains(r.Error, "interrupt") {
			t.Errorf("cancelled Run = %s (%q), want error \"interrupted\"", r.Result, r.Error)
		}
		labtest.CheckClean(t, "a cancelled run", labtest.RunPrefix(r), before)
	})
}

// TestSweepAfterKill kills a `lab run` process with SIGKILL in the middle of
// its probe (no teardown runs) and checks that its services died with it
// and that the next sweep removes everything it left.
func TestSweepAfterKill(t *testing.T) {
	testenv.RequireNetns(t, "nft")
	before := labtest.MachineState(t)
	cmd := exec.Command(os.Args[0], "lab", "run", "ecr-sg-drops-443")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, probeChildOf(cmd.Process.Pid), 20*time.Second)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	prefix := labtest.KilledPrefix(cmd.Process.Pid)
	if prefix == "" || len(lab.Leftovers(prefix)) == 0 {
		t.Fatalf("Leftovers after SIGKILL = none; want the killed run's namespaces (the test proves nothing)")
	}
	swept, err := lab.Sweep(context.Background())
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if !slices.Contains(swept, prefix) {
		t.Errorf("Sweep() = %v, want it to hold the killed run's prefix %s", swept, prefix)
	}
	labtest.CheckClean(t, "a sweep of a killed run", prefix, before)
}

// probeChildOf reports whether a lab probe runs as a child of pid.
func probeChildOf(pid int) func() bool {
	return func() bool { return hasProbeProcess(pid) }
}

func ppid(p string) int {
	b, err := os.ReadFile("/proc/" + p + "/stat")
	if err != nil {
		return -1
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return -1
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// hasProbeProcess reports whether a lab probe runs as a child of parent.
func hasProbeProcess(parent int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 2 && args[1] == "probe" && strings.Contains(string(b), "ppl") && ppid(e.Name()) == parent {
			return true
		}
	}
	return false
}

func waitFor(t *testing.T, cond func() bool, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
