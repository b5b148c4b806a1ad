package labtest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/report"
)

// MachineState lists the machine namespace's own veths and nft tables,
// which the lab must never touch at all.
func MachineState(t *testing.T) []string {
	t.Helper()
	var out []string
	b, err := exec.Command("ip", "-o", "link", "show", "type", "veth").Output()
	if err != nil {
		t.Fatalf("ip link show type veth: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			out = append(out, "root veth "+f[1])
		}
	}
	b, err = exec.Command("nft", "list", "tables").Output()
	if err != nil {
		t.Fatalf("nft list tables: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, "root nft "+l)
		}
	}
	return out
}

// CheckClean checks that nothing of a run's prefix is left (namespaces,
// /etc/netns folders, netns mounts, processes) and that the machine's own
// namespace is as before. Only the run's own prefix is checked: other lab
// runs may come and go on the machine meanwhile.
func CheckClean(t *testing.T, what, prefix string, before []string) {
	t.Helper()
	if prefix == "" {
		t.Fatalf("%s: no run prefix to check", what)
	}
	if left := lab.Leftovers(prefix); len(left) > 0 {
		t.Errorf("after %s, Leftovers(%q) = %v, want none", what, prefix, left)
	}
	if diff := cmp.Diff(before, MachineState(t)); diff != "" {
		t.Errorf("after %s, machine state changed (-before +after):\n%s", what, diff)
	}
}

// RunPrefix is the run prefix of a run ("ppl123abc-"), from its node's
// namespace name.
func RunPrefix(r *report.LabRun) string {
	if i := strings.IndexByte(r.Node, '-'); i > 0 {
		return r.Node[:i+1]
	}
	return ""
}

// KilledPrefix finds the prefix whose lock file names pid.
func KilledPrefix(pid int) string {
	ents, _ := os.ReadDir(lab.StateDir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), "-lock") {
			continue
		}
		b, _ := os.ReadFile(lab.StateDir + "/" + e.Name())
		if strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
			return strings.TrimSuffix(e.Name(), "lock")
		}
	}
	return ""
}
