package lab

import (
	"os"
	"os/exec"
	"testing"
)

// needRoot skips (or, with CI=true, fails) a test that needs network
// namespaces when they cannot be created here.
func needRoot(t *testing.T) {
	t.Helper()
	reason := ""
	switch {
	case os.Geteuid() != 0:
		reason = "needs root to create network namespaces"
	default:
		for _, tool := range []string{"ip", "nft"} {
			if _, err := exec.LookPath(tool); err != nil {
				reason = "needs " + tool + " (apt-get install iproute2 nftables)"
			}
		}
	}
	if reason == "" {
		if out, err := exec.Command("ip", "netns", "add", "pplprobe0-x").CombinedOutput(); err != nil {
			reason = "cannot create network namespaces: " + string(out)
		} else {
			exec.Command("ip", "netns", "del", "pplprobe0-x").Run()
		}
	}
	if reason == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", reason)
	}
	t.Skip(reason)
}
