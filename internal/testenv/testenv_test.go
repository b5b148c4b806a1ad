package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
)

// recorder is a testing.TB that records Skip and Fatalf instead of
// stopping the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

type stopped struct{}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	panic(stopped{})
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(stopped{})
}

func call(r *recorder, reason string) {
	defer func() {
		if v := recover(); v != nil && v != (stopped{}) {
			panic(v)
		}
	}()
	Unavailable(r, reason)
}

func TestUnavailable(t *testing.T) {
	tests := []struct {
		ci, reason        string
		wantSkip, wantErr string
	}{
		{"", "", "", ""},
		{"true", "", "", ""},
		{"", "needs root", "needs root", ""},
		{"false", "needs root", "needs root", ""},
		{"true", "needs root", "", "CI=true and needs root"},
	}
	for _, tt := range tests {
		t.Run(tt.ci+"/"+tt.reason, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			r := &recorder{TB: t}
			call(r, tt.reason)
			if r.skipped != tt.wantSkip || r.failed != tt.wantErr {
				t.Errorf("Unavailable(CI=%q, %q): skipped %q, failed %q; want skipped %q, failed %q",
					tt.ci, tt.reason, r.skipped, r.failed, tt.wantSkip, tt.wantErr)
			}
		})
	}
}

func TestInNetns(t *testing.T) {
	RequireNetns(t)
	ns := fmt.Sprintf("pptestenv-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })

	self, err := os.Readlink("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	var inside string
	var ifaces []string
	err = InNetns(ns, func() error {
		var err error
		if inside, err = os.Readlink("/proc/thread-self/ns/net"); err != nil {
			return err
		}
		list, err := net.Interfaces()
		for _, i := range list {
			ifaces = append(ifaces, i.Name)
		}
		return err
	})
	if err != nil {
		t.Fatalf("InNetns(%s): %v", ns, err)
	}
	if inside == self {
		t.Errorf("InNetns(%s) ran in the caller's namespace %s", ns, self)
	}
	if strings.Join(ifaces, ",") != "lo" {
		t.Errorf("InNetns(%s) saw interfaces %v, want [lo]", ns, ifaces)
	}
	if after, _ := os.Readlink("/proc/thread-self/ns/net"); after != self {
		t.Errorf("after InNetns the caller is in %s, want %s", after, self)
	}
	if err := InNetns("pptestenv-missing", func() error { return nil }); err == nil || !strings.Contains(err.Error(), "pptestenv-missing") {
		t.Errorf("InNetns(missing) = %v, want an error naming the namespace", err)
	}
}

func TestStartStack(t *testing.T) {
	st := StartStack(t, labsvc.StackConfig{})
	addrs, err := labsvc.LookupIP(t.Context(), st.Nameserver(), labsvc.RegistryHostName)
	if err != nil || len(addrs) == 0 {
		t.Fatalf("LookupIP(%s) via the stack's DNS = %v, %v; want an address", labsvc.RegistryHostName, addrs, err)
	}
}
