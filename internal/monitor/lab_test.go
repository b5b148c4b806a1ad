package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

// labNode is one "node" of a loopback lab: a stack's node files, possibly
// changed to break this node only.
type labNode struct {
	name  string
	stack *labsvc.Stack
	hosts string // hosts file to use ("" the stack's)
}

// labOptions are the agent's options for a node of the stack: its files
// and nameserver, as a DaemonSet passes the node's mounts.
func labOptions(t *testing.T, n labNode) Options {
	var o Options
	o.Defaults()
	st := n.stack
	empty := filepath.Join(t.TempDir(), "empty.d")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	o.Images = []string{st.Ref()}
	o.Node, o.Pool, o.Zone, o.Subnet = n.name, "lab", "zone-"+n.name, "127.0.0.0/8"
	o.ResolvConf, o.HostsFile = st.Files.ResolvConf, st.Files.Hosts
	if n.hosts != "" {
		o.HostsFile = n.hosts
	}
	o.Nameservers = []string{st.Nameserver()}
	o.ExtraCAs = []string{st.Files.CAFile}
	o.CertsDir, o.DockerCertsDir = empty, empty
	o.HostRoot = empty // no containerd, no unit files: direct (not this machine's)
	o.DockerConfig = st.Files.DockerConfig
	o.Net.ConnectTimeout = 2 * time.Second
	o.Interval, o.ProbeTimeout, o.FullInterval = time.Hour, 30*time.Second, 0
	o.Jitter = 0
	o.Listen = "127.0.0.1:0"
	o.KubeAPI = ""
	return o
}

func startAgent(t *testing.T, o Options) (*Agent, *syncWriter) {
	t.Helper()
	logs := &syncWriter{b: &strings.Builder{}}
	a, err := New(o, logs)
	if err != nil {
		t.Fatalf("New(%s) = %v", o.Node, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("agent %s: Run = %v", o.Node, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("agent %s did not stop within 30s", o.Node)
		}
		a.Close()
		if t.Failed() {
			t.Logf("agent %s logs:\n%s", o.Node, logs.String())
		}
	})
	return a, logs
}

// TestAgentsScrapedByPrometheus runs three agents against the lab's
// loopback services, as three nodes: one healthy, one whose hosts file
// pins the blob host to an address nothing serves (only this node is
// broken), one on a stack whose blob host is down. A real Prometheus
// scrapes them and evaluates the shipped alert rules; its query API must
// show pullpath_probe_success 1 and 0 with the right code, and the
// "only some nodes" alert for the pinned node alone.
func TestAgentsScrapedByPrometheus(t *testing.T) {
	image := labsvc.ImageSpec{Repository: "shop/web", Tag: "1.0", LayerSizes: []int64{64 << 10, 32 << 10}, Seed: 3}
	healthy := testenv.StartStack(t, labsvc.StackConfig{Image: image,
		Addrs: labsvc.StackAddrs{DNS: "127.0.41.53", Registry: "127.0.41.10", Token: "127.0.41.11", Blob: "127.0.41.12", Blob2: "127.0.41.13"}})
	down := testenv.StartStack(t, labsvc.StackConfig{Image: image, BlobHostDown: true,
		Addrs: labsvc.StackAddrs{DNS: "127.0.42.53", Registry: "127.0.42.10", Token: "127.0.42.11", Blob: "127.0.42.12", Blob2: "127.0.42.13"}})
	pinned := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(pinned, []byte("127.0.0.1 localhost\n127.0.41.99 blob.lab.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes := []labNode{{name: "node-ok", stack: healthy}, {name: "node-pinned", stack: healthy, hosts: pinned}, {name: "node-blobdown", stack: down}}
	agents := map[string]*Agent{}
	var targets []string
	for _, n := range nodes {
		a, _ := startAgent(t, labOptions(t, n))
		agents[n.name] = a
		targets = append(targets, a.Addr())
	}
	prom := startPrometheus(t, targets, ruleFile(t, t.TempDir()))

	type want struct {
		success float64
		code    verdict.Code
	}
	wants := map[string]want{
		"node-ok":       {1, verdict.OK},
		"node-pinned":   {0, verdict.ConnectRefused},
		"node-blobdown": {0, verdict.ConnectRefused},
	}
	byInstance := map[string]string{}
	for name, a := range agents {
		byInstance[a.Addr()] = name
	}
	// Prometheus's own view: every node's success and code series.
	waitFor(t, 60*time.Second, "pullpath_probe_success of every agent in Prometheus", func() (bool, string) {
		res, err := prom.query(`pullpath_probe_success * on (instance, image_host) group_left (code) pullpath_probe_verdict_code`)
		if err != nil {
			return false, err.Error()
		}
		got := map[string]want{}
		for _, s := range res {
			v, _ := s.Value[1].(string)
			f := 0.0
			if v == "1" {
				f = 1
			}
			got[byInstance[s.Metric["instance"]]] = want{f, verdict.Code(s.Metric["code"])}
		}
		for n, w := range wants {
			if got[n] != w {
				return false, "got " + fmtWants(got)
			}
		}
		return true, ""
	})
	res, err := prom.query(`pullpath_probe_success{image_host="` + healthy.RegistryHost + `"}`)
	if err != nil || len(res) != 2 {
		t.Fatalf("pullpath_probe_success for %s: %v, %d series, want 2 (two nodes on one registry)", healthy.RegistryHost, err, len(res))
	}
	// The node info joins: pool, zone, subnet.
	res, err = prom.query(`pullpath_node_info{node="node-pinned",pool="lab",zone="zone-node-pinned"}`)
	if err != nil || len(res) != 1 {
		t.Fatalf("pullpath_node_info for node-pinned: %v, %d series, want 1", err, len(res))
	}
	// The shipped rule "only some nodes" is pending for node-pinned only:
	// node-ok pulls from the same host; node-blobdown's host has no healthy
	// node, so it is the "every node" alert's.
	waitFor(t, 30*time.Second, "alerts from the shipped rules", func() (bool, string) {
		al, err := prom.alerts()
		if err != nil {
			return false, err.Error()
		}
		var some, all []string
		for _, a := range al {
			switch a.Labels["alertname"] {
			case "PullPathSomeNodesBroken":
				some = append(some, a.Labels["node"]+"/"+a.Labels["code"])
			case "PullPathAllNodesFailing":
				all = append(all, a.Labels["image_host"]+"/"+a.Labels["code"])
			}
		}
		ok := len(some) == 1 && some[0] == "node-pinned/CONNECT_REFUSED" && len(all) == 1 && all[0] == down.RegistryHost+"/CONNECT_REFUSED"
		return ok, "some=" + strings.Join(some, ",") + " all=" + strings.Join(all, ",")
	})
	// One walk per interval, failing or not: never retried.
	for name, a := range agents {
		img := nodes[0].stack.Ref()
		if name == "node-blobdown" {
			img = down.Ref()
		}
		if n := a.WalkCount(img); n != 1 {
			t.Errorf("%s walked %s %d times in one interval, want 1", name, img, n)
		}
	}
}

func fmtWants[T any](m map[string]T) string {
	var b strings.Builder
	for k, v := range m {
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(fmtAny(v), "\n", " "), "  ", " ")))
		b.WriteString(" ")
	}
	return b.String()
}
