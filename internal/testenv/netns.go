package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// NetnsDir is where `ip netns` keeps its named namespaces.
const NetnsDir = "/run/netns"

// packages names the Debian package that brings each tool the tests use.
var packages = map[string]string{
	"ip": "iproute2", "nft": "nftables", "sysctl": "procps",
	"containerd": "containerd", "ctr": "containerd",
	"prometheus": "prometheus", "promtool": "prometheus",
}

// toolReason says why tool cannot be run here ("needs TOOL (apt-get
// install PACKAGE)"), or "" when it is on PATH.
func toolReason(tool string) string {
	if _, err := exec.LookPath(tool); err == nil {
		return ""
	}
	if p := packages[tool]; p != "" {
		return "needs " + tool + " (apt-get install " + p + "; hack/test.sh installs it)"
	}
	return "needs " + tool
}

// RequireTool returns tool's path, or skips t (fails it under CI=true)
// when it is not installed, naming the Debian package that brings it.
func RequireTool(t testing.TB, tool string) string {
	t.Helper()
	Unavailable(t, toolReason(tool))
	p, _ := exec.LookPath(tool)
	return p
}

// NetnsReason says why network-namespace tests cannot run here, or "" when
// they can: it needs root, each of tools on PATH, and a namespace that
// `ip netns add` can really create (a container without CAP_SYS_ADMIN
// cannot).
func NetnsReason(tools ...string) string {
	if os.Geteuid() != 0 {
		return "needs root to create network namespaces"
	}
	for _, tool := range append([]string{"ip"}, tools...) {
		if r := toolReason(tool); r != "" {
			return r
		}
	}
	// One name per call: parallel tests of one binary ask at once.
	name := fmt.Sprintf("pptestenv%d-%d", os.Getpid(), probes.Add(1))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return "cannot create network namespaces: " + strings.TrimSpace(string(out))
	}
	_ = exec.Command("ip", "netns", "del", name).Run()
	return ""
}

var probes atomic.Int64

// RequireNetns skips t (fails it under CI=true) unless network namespaces
// can be created here and each of tools is installed.
func RequireNetns(t testing.TB, tools ...string) {
	t.Helper()
	Unavailable(t, NetnsReason(tools...))
}
