package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/testenv"
)

// promServer is Debian's real Prometheus, started by a test on loopback
// with a temporary data directory.
type promServer struct {
	URL  string
	logs *strings.Builder
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startPrometheus scrapes targets every second and evaluates ruleFile (if
// any) every second.
func startPrometheus(t *testing.T, targets []string, ruleFile string) *promServer {
	t.Helper()
	return startPrometheusJobs(t, map[string][]string{"pullpath-monitor": targets}, ruleFile)
}

// startPrometheusJobs scrapes each job's targets every second.
func startPrometheusJobs(t *testing.T, jobs map[string][]string, ruleFile string) *promServer {
	t.Helper()
	bin := testenv.RequireTool(t, "prometheus")
	dir := t.TempDir()
	cfg := "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
	names := make([]string, 0, len(jobs))
	for j := range jobs {
		names = append(names, j)
	}
	sort.Strings(names)
	for _, j := range names {
		var tg []string
		for _, a := range jobs[j] {
			tg = append(tg, fmt.Sprintf("%q", a))
		}
		cfg += fmt.Sprintf("- job_name: %s\n  static_configs:\n  - targets: [%s]\n", j, strings.Join(tg, ", "))
	}
	if ruleFile != "" {
		cfg += fmt.Sprintf("rule_files: [%q]\n", ruleFile)
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = &syncWriter{b: logs}, &syncWriter{b: logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("prometheus logs:\n%s", logs.String())
		}
	})
	p := &promServer{URL: "http://" + addr, logs: logs}
	waitFor(t, 30*time.Second, "prometheus /-/ready", func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("prometheus exited: %s", logs.String())
		default:
		}
		resp, err := http.Get(p.URL + "/-/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
	return p
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query runs an instant query through Prometheus's HTTP API.
func (p *promServer) query(q string) ([]promSample, error) {
	resp, err := http.Get(p.URL + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, body.Error)
	}
	return body.Data.Result, nil
}

type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

func (p *promServer) alerts() ([]promAlert, error) {
	resp, err := http.Get(p.URL + "/api/v1/alerts")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	return body.Data.Alerts, err
}

// waitFor polls cond until it holds or the budget runs out (a bounded
// wait on an observable state, not a sleep).
func waitFor(t *testing.T, budget time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		ok, why := cond()
		if ok {
			return
		}
		last = why
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: not within %s (last: %s)", what, budget, last)
		case <-tick.C:
		}
	}
}
