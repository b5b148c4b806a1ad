//go:build !fuzzonly

package netcheck

import (
	"encoding/json"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/testenv"
)

// ipRunner runs `ip ARGS...` for the namespace tests, failing t on error.
func ipRunner(t *testing.T) func(args ...string) {
	return func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
}

// helperReport runs cmd, a helper test in another namespace, and decodes
// the first line of its output (JSON) into v.
func helperReport(t *testing.T, cmd *exec.Cmd, v any) {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v: %s", err, out)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), v); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
}

// listenIn opens a listener inside namespace ns (listen runs there),
// closed when t ends.
func listenIn(t *testing.T, ns string, listen func() (net.Listener, error)) net.Listener {
	t.Helper()
	var ln net.Listener
	if err := testenv.InNetns(ns, func() (err error) {
		ln, err = listen()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}
