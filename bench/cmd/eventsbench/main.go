// Command eventsbench measures `pullpath monitor events` at cluster scale
// (BENCHMARKS.md, section 4b): a real kube-apiserver and etcd
// (internal/testenv/controlplane) with 5,000 Nodes (bench/clusterscale's
// shape: 10 pools, 3 zones), the exporter and its peer started and
// synced, then a burst of 50,000 Warning Events of pull failures (four
// real runtime messages: an ECR blob timeout, an ACR unknown authority,
// Docker Hub's rate limit, a DNS NXDOMAIN), created by 48 concurrent
// clients. It measures how long each process takes to have seen every
// Event, its peak RSS and its CPU, and checks the exporter's counts by
// cause.
//
// The peer is bench/cmd/eventwatch: a client-go SharedInformer on the same
// Events (same field selector, protobuf) that only counts: what any tool
// that follows these Events pays, with the informer's cache of every
// Event.
//
//	go run ./bench/cmd/eventsbench -pullpath BIN [-nodes 5000 -events 50000] [-out DIR]
//
// Processes are sampled from /proc (VmHWM, VmRSS, utime+stime); every wait
// has a deadline.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/bench/clusterscale"
	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
)

func main() {
	pullpath := flag.String("pullpath", "", "the pullpath binary (required)")
	watcher := flag.String("eventwatch", "", "the peer binary (default: built from bench/cmd/eventwatch)")
	nodes := flag.Int("nodes", 5000, "Nodes to load")
	events := flag.Int("events", 50000, "Events in the burst")
	workers := flag.Int("workers", 48, "concurrent creates")
	out := flag.String("out", "", "directory for eventsbench.json and .md (default: stdout only)")
	flag.Parse()
	if *pullpath == "" {
		fmt.Fprintln(os.Stderr, "eventsbench: -pullpath BIN is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	res, err := run(ctx, *pullpath, *watcher, *nodes, *events, *workers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventsbench:", err)
		os.Exit(1)
	}
	md := res.markdown()
	fmt.Print(md)
	if *out != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.MkdirAll(*out, 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(*out, "eventsbench.json"), b, 0o644)
			_ = os.WriteFile(filepath.Join(*out, "eventsbench.md"), []byte(md), 0o644)
		}
	}
}

// Proc is one measured process.
type Proc struct {
	What       string  `json:"what"`
	SeenAllSec float64 `json:"seenAllSec"` // from the burst's start until it had seen every Event
	PeakRSSMiB float64 `json:"peakRssMiB"`
	RSSMiB     float64 `json:"rssAfterMiB"` // when it had seen every Event
	IdleRSSMiB float64 `json:"idleRssMiB"`  // synced, before the burst
	CPUSec     float64 `json:"cpuSec"`      // during the burst
	Seen       int64   `json:"seen"`
}

// Result is the whole run.
type Result struct {
	Date     time.Time        `json:"date"`
	Machine  measure.Machine  `json:"machine"`
	Nodes    int              `json:"nodes"`
	Events   int              `json:"events"`
	LoadSec  float64          `json:"nodesLoadSec"`
	BurstSec float64          `json:"burstCreateSec"`
	Procs    []Proc           `json:"procs"`
	ByCause  map[string]int64 `json:"exporterByCause"`
	Series   int              `json:"exporterFailureSeries"`
}

// messages are real runtime messages (explain's corpus), one per cause.
var messages = []struct{ cause, msg string }{
	{"timeout", `Failed to pull image "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/checkout:1.4.2": rpc error: code = DeadlineExceeded desc = failed to pull and unpack image "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/checkout:1.4.2": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com/docker/registry/v2/blobs/sha256/4f/4f1c/data": dial tcp 10.0.20.10:443: i/o timeout`},
	{"tls", `Failed to pull image "myacr.azurecr.io/team/app:2.0": rpc error: code = Unknown desc = failed to pull and unpack image "myacr.azurecr.io/team/app:2.0": failed to resolve reference "myacr.azurecr.io/team/app:2.0": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/2.0": tls: failed to verify certificate: x509: certificate signed by unknown authority`},
	{"ratelimit", `Failed to pull image "nginx:1.27": rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/nginx:1.27": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/nginx/manifests/sha256:0a399eb16751829e1af26fea27b20c3ec28d7ab1fb72182879dcae1cca21206a: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit`},
	{"dns", `Failed to pull image "myacr.azurecr.io/team/api:3.1": rpc error: code = Unknown desc = failed to pull and unpack image "myacr.azurecr.io/team/api:3.1": failed to resolve reference "myacr.azurecr.io/team/api:3.1": failed to do request: Head "https://myacr.azurecr.io/v2/team/api/manifests/3.1": dial tcp: lookup myacr.azurecr.io on 168.63.129.16:53: no such host`},
}

func run(ctx context.Context, pullpathBin, watchBin string, nodes, events, workers int) (*Result, error) {
	res := &Result{Date: time.Now().UTC(), Machine: measure.DescribeMachine(), Nodes: nodes, Events: events}
	dir, err := os.MkdirTemp("", "eventsbench-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if watchBin == "" {
		watchBin = filepath.Join(dir, "eventwatch")
		b := exec.CommandContext(ctx, "go", "build", "-o", watchBin, "./bench/cmd/eventwatch")
		if out, err := b.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build eventwatch: %v\n%s", err, out)
		}
	}
	logf("starting etcd and kube-apiserver")
	cp, err := controlplane.Start(ctx, controlplane.Options{WorkDir: dir, APIServerArgs: []string{"--max-requests-inflight=800", "--max-mutating-requests-inflight=400"}})
	if err != nil {
		return nil, err
	}
	defer cp.Stop()
	rc := *cp.Config
	rc.QPS, rc.Burst = -1, 0
	c, err := kubernetes.NewForConfig(&rc)
	if err != nil {
		return nil, err
	}
	shape := clusterscale.Shape{Nodes: nodes, Pools: 10}
	t0 := time.Now()
	if err := parallel(ctx, nodes, workers, func(ctx context.Context, i int) error {
		_, err := c.CoreV1().Nodes().Create(ctx, shape.Node(i), metav1.CreateOptions{})
		return err
	}); err != nil {
		return nil, fmt.Errorf("load nodes: %w", err)
	}
	res.LoadSec = time.Since(t0).Seconds()
	logf("loaded %d nodes in %.0fs", nodes, res.LoadSec)

	// Both processes, synced before the burst.
	xAddr, wAddr2, err := freeAddr()
	if err != nil {
		return nil, err
	}
	exporter, err := start(ctx, "pullpath monitor events", []string{pullpathBin, "monitor", "events", "--kubeconfig", cp.Kubeconfig, "--listen", xAddr})
	if err != nil {
		return nil, err
	}
	defer exporter.stop()
	peer, err := start(ctx, "client-go informer (eventwatch)", []string{watchBin, "--kubeconfig", cp.Kubeconfig, "--listen", wAddr2})
	if err != nil {
		return nil, err
	}
	defer peer.stop()
	for _, u := range []string{"http://" + xAddr + "/readyz", "http://" + wAddr2 + "/readyz"} {
		if err := waitHTTP(ctx, u, 3*time.Minute); err != nil {
			return nil, fmt.Errorf("%s: %w (exporter log: %s)", u, err, exporter.logs())
		}
	}
	for _, p := range []*proc{exporter, peer} {
		s, _ := read(p.cmd.Process.Pid)
		p.idle, p.cpu0 = s.rssKB, s.cpuSec
	}

	// The burst.
	logf("burst of %d events", events)
	burst := time.Now()
	var created atomic.Int64
	burstDone := make(chan error, 1)
	go func() {
		burstDone <- parallel(ctx, events, workers, func(ctx context.Context, j int) error {
			m := messages[j%len(messages)]
			node := shape.Node(j % nodes).Name
			now := metav1.Now()
			e := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("app-%06d.%x", j, j), Namespace: "default"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: fmt.Sprintf("app-%06d", j), APIVersion: "v1", FieldPath: "spec.containers{app}"},
				Reason:         "Failed", Type: corev1.EventTypeWarning, Message: m.msg, Count: 1,
				Source:         corev1.EventSource{Component: "kubelet", Host: node},
				FirstTimestamp: now, LastTimestamp: now,
			}
			_, err := c.CoreV1().Events("default").Create(ctx, e, metav1.CreateOptions{})
			if err == nil {
				created.Add(1)
			}
			return err
		})
	}()
	seen := map[*proc]time.Duration{}
	var burstErr error
	burstOver := false
	deadline := time.Now().Add(20 * time.Minute)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for len(seen) < 2 {
		if !burstOver {
			select {
			case burstErr = <-burstDone:
				burstOver = true
				res.BurstSec = time.Since(burst).Seconds()
				logf("created %d events in %.1fs", created.Load(), res.BurstSec)
				if burstErr != nil {
					return nil, fmt.Errorf("burst: %w", burstErr)
				}
			default:
			}
		}
		for _, p := range []*proc{exporter, peer} {
			if _, ok := seen[p]; ok {
				continue
			}
			n, err := p.count(xAddr, wAddr2)
			if err == nil && n >= int64(events) {
				seen[p] = time.Since(burst)
				s, _ := read(p.cmd.Process.Pid)
				p.after, p.cpu1, p.seen = s.rssKB, s.cpuSec, n
				logf("%s saw all %d events after %.1fs", p.what, n, seen[p].Seconds())
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("not every process saw the %d events within 20 minutes (exporter log: %s)", events, exporter.logs())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
	if !burstOver {
		if err := <-burstDone; err != nil {
			return nil, err
		}
		res.BurstSec = time.Since(burst).Seconds()
	}
	// The exporter's counts by cause.
	fams, err := scrape(xAddr)
	if err != nil {
		return nil, err
	}
	res.ByCause = map[string]int64{}
	for k, v := range fams {
		if strings.HasPrefix(k, "pullpath_pull_failures_total{") {
			res.Series++
			for _, m := range messages {
				if strings.Contains(k, `cause="`+m.cause+`"`) {
					res.ByCause[m.cause] += int64(v)
				}
			}
		}
	}
	for _, m := range messages {
		if want := int64(events / len(messages)); res.ByCause[m.cause] < want {
			return nil, fmt.Errorf("the exporter counted %d %s failures, want %d: %v", res.ByCause[m.cause], m.cause, want, res.ByCause)
		}
	}
	for _, p := range []*proc{exporter, peer} {
		s, _ := read(p.cmd.Process.Pid)
		res.Procs = append(res.Procs, Proc{What: p.what, SeenAllSec: seen[p].Seconds(), PeakRSSMiB: mib(s.hwmKB), RSSMiB: mib(p.after),
			IdleRSSMiB: mib(p.idle), CPUSec: p.cpu1 - p.cpu0, Seen: p.seen})
	}
	return res, nil
}

func logf(format string, a ...any) { fmt.Fprintf(os.Stderr, "eventsbench: "+format+"\n", a...) }

func mib(kb int64) float64 { return float64(kb) / 1024 }

// parallel runs f(0..n-1) on workers goroutines; the first error stops it.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = fmt.Errorf("%d: %w", i, err); cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

type proc struct {
	what        string
	cmd         *exec.Cmd
	log         *syncBuf
	idle, after int64
	cpu0, cpu1  float64
	seen        int64
	isExporter  bool
	exited      chan struct{}
	stopOnce    sync.Once
}

type syncBuf struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.b) < 64<<10 {
		s.b = append(s.b, p...)
	}
	return len(p), nil
}

func (p *proc) logs() string {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return strings.TrimSpace(string(p.log.b))
}

func start(ctx context.Context, what string, argv []string) (*proc, error) {
	p := &proc{what: what, log: &syncBuf{}, exited: make(chan struct{}), isExporter: strings.HasPrefix(what, "pullpath")}
	p.cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *proc) stop() {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// count is how many burst Events the process has seen: the exporter's
// failure counter, summed; the peer's /count.
func (p *proc) count(xAddr, wAddr string) (int64, error) {
	if p.isExporter {
		fams, err := scrape(xAddr)
		if err != nil {
			return 0, err
		}
		var n float64
		for k, v := range fams {
			if strings.HasPrefix(k, "pullpath_pull_failures_total{") {
				n += v
			}
		}
		return int64(n), nil
	}
	resp, err := http.Get("http://" + wAddr + "/count")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// scrape reads /metrics as "name{labels}" -> value (the text format).
func scrape(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err == nil {
			out[l[:i]] = v
		}
	}
	return out, sc.Err()
}

func waitHTTP(ctx context.Context, url string, budget time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s", budget)
		case <-tick.C:
		}
	}
}

func freeAddr() (string, string, error) {
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", "", err
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs[0], addrs[1], nil
}

type sample struct {
	rssKB, hwmKB int64
	cpuSec       float64
}

// read samples a process from /proc: VmRSS, VmHWM (its peak RSS), and
// utime+stime.
func read(pid int) (sample, error) {
	var s sample
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			s.rssKB = v
		case "VmHWM:":
			s.hwmKB = v
		}
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	i := strings.LastIndexByte(string(st), ')')
	if i < 0 {
		return s, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(st[i+2:]))
	if len(f) > 12 {
		ut, _ := strconv.ParseFloat(f[11], 64)
		stm, _ := strconv.ParseFloat(f[12], 64)
		s.cpuSec = (ut + stm) / 100 // USER_HZ
	}
	return s, nil
}

func (r *Result) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Date: %s. Machine: %d cores, %s, %d MiB memory, load average %s at the start.\n", r.Date.Format("2006-01-02 15:04 UTC"), r.Machine.Cores, r.Machine.CPUModel, r.Machine.MemMiB, r.Machine.LoadAvg)
	fmt.Fprintf(&b, "%d Nodes loaded in %.0f s; a burst of %d Warning Events of pull failures created in %.1f s by 48 clients.\n\n", r.Nodes, r.LoadSec, r.Events, r.BurstSec)
	b.WriteString("| process | saw every Event after s | CPU s in the burst | RSS MiB synced, before | RSS MiB after | peak RSS MiB |\n|---|---|---|---|---|---|\n")
	for _, p := range r.Procs {
		fmt.Fprintf(&b, "| %s | %.1f | %.2f | %.1f | %.1f | %.1f |\n", p.What, p.SeenAllSec, p.CPUSec, p.IdleRSSMiB, p.RSSMiB, p.PeakRSSMiB)
	}
	if len(r.Procs) == 2 && r.Procs[1].PeakRSSMiB > 0 && r.Procs[1].CPUSec > 0 && r.Procs[1].SeenAllSec > 0 {
		x, w := r.Procs[0], r.Procs[1]
		fmt.Fprintf(&b, "\n| figure | exporter / informer |\n|---|---|\n| time to see every Event | %.2fx |\n| CPU | %.2fx |\n| peak RSS | %.2fx |\n",
			x.SeenAllSec/w.SeenAllSec, x.CPUSec/w.CPUSec, x.PeakRSSMiB/w.PeakRSSMiB)
	}
	fmt.Fprintf(&b, "\nThe exporter's counts by cause: %v (%d failure series).\n", r.ByCause, r.Series)
	return b.String()
}
