// Command agentbench measures the monitor agent's footprint (BENCHMARKS.md,
// section 5) against the goals and beside peers that run here:
//
//   - RSS of the pullpath-agent binary idle and during quick walks, and CPU
//     per quick walk of a 5-host pull (a hosts.toml mirror that refuses, the
//     registry, its token service, a blob host and the blob host's second
//     hop), all on the lab's loopback services;
//
//   - the same agent code inside the full pullpath binary (`pullpath
//     monitor`), the footprint the agent binary exists to avoid;
//
//   - Debian's prometheus-node-exporter, a node agent every cluster runs,
//     idle and while scraped;
//
//   - the agent's image size (what each node downloads) beside pullpath's.
//
//     go run ./bench/cmd/agentbench [-rounds 20] [-out DIR]
//
// Processes are sampled from /proc every 5 ms (VmRSS, RssAnon, RssFile,
// utime+stime); every wait has a deadline.
package main

import (
	"bytes"
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
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/monitor/agentimage"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/selfimage"
)

func main() {
	rounds := flag.Int("rounds", 20, "quick walks measured per agent")
	out := flag.String("out", "", "also write the table and JSON here")
	flag.Parse()
	if err := run(*rounds, *out); err != nil {
		fmt.Fprintf(os.Stderr, "agentbench: %v\n", err)
		os.Exit(1)
	}
}

// sample is one reading of a process.
type sample struct {
	rssKB, anonKB, fileKB int64
	cpuTicks              int64
}

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
		case "RssAnon:":
			s.anonKB = v
		case "RssFile:":
			s.fileKB = v
		}
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// fields after the ")" of comm: utime is field 14, stime 15 (1-based)
	rest := string(st[bytes.LastIndexByte(st, ')')+2:])
	f := strings.Fields(rest)
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	s.cpuTicks = u + k
	return s, nil
}

// sampler keeps the peak of each figure between marks.
type sampler struct {
	pid  int
	mu   sync.Mutex
	peak sample
	last sample
	stop chan struct{}
	done chan struct{}
}

func startSampler(pid int) *sampler {
	s := &sampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if r, err := read(pid); err == nil {
				s.mu.Lock()
				s.last = r
				if r.rssKB > s.peak.rssKB {
					s.peak.rssKB = r.rssKB
				}
				if r.anonKB > s.peak.anonKB {
					s.peak.anonKB = r.anonKB
				}
				if r.fileKB > s.peak.fileKB {
					s.peak.fileKB = r.fileKB
				}
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// reset returns the peak since the last reset and starts a new window.
func (s *sampler) reset() (peak, last sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	peak, last = s.peak, s.last
	s.peak = sample{}
	return
}

func (s *sampler) close() { close(s.stop); <-s.done }

// Row is one line of the table.
type Row struct {
	What          string  `json:"what"`
	IdleRSSMiB    float64 `json:"idleRssMiB"`
	PeakRSSMiB    float64 `json:"peakRssMiB"` // during the walks (or scrapes)
	PeakAnonMiB   float64 `json:"peakAnonMiB"`
	PeakFileMiB   float64 `json:"peakFileMiB"` // the binary's mapped pages
	CPUPerWalkMS  float64 `json:"cpuPerWalkMs,omitempty"`
	WallPerWalkMS float64 `json:"wallPerWalkMs,omitempty"`
	Walks         int     `json:"walks,omitempty"`
	BinaryMB      float64 `json:"binaryMB"`
	Note          string  `json:"note,omitempty"`
}

func mib(kb int64) float64 { return float64(kb) / 1024 }

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func getStatus(addr string) (*report.MonitorStatus, error) {
	resp, err := http.Get("http://" + addr + "/status")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var s report.MonitorStatus
	return &s, json.NewDecoder(resp.Body).Decode(&s)
}

// waitRounds waits until the agent at addr finished n rounds.
func waitRounds(ctx context.Context, addr string, n int) (*report.MonitorStatus, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if s, err := getStatus(addr); err == nil && s.Rounds >= n {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("agent at %s: %d rounds not reached: %v", addr, n, ctx.Err())
		case <-t.C:
		}
	}
}

// measureAgent runs argv (an agent with --interval and --listen addr),
// waits for the first walk, then measures the idle RSS, and rounds more
// walks for the peak and CPU.
func measureAgent(ctx context.Context, what string, argv []string, addr string, interval time.Duration, rounds int, binary string) (Row, error) {
	r := Row{What: what}
	if fi, err := os.Stat(binary); err == nil {
		r.BinaryMB = float64(fi.Size()) / 1e6
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	s := startSampler(cmd.Process.Pid)
	defer s.close()
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	st, err := waitRounds(wctx, addr, 1)
	if err != nil {
		return r, fmt.Errorf("%v\n%s", err, logs.String())
	}
	if len(st.Targets) == 0 || st.Targets[0].Verdict == nil || st.Targets[0].Verdict.Status != "ok" {
		return r, fmt.Errorf("%s: the walk did not pass: %+v\n%s", what, st.Targets, logs.String())
	}
	// idle: the middle of an interval, after the first round
	idleCtx, c2 := context.WithTimeout(ctx, interval/2)
	<-idleCtx.Done()
	c2()
	_, idle := s.reset()
	r.IdleRSSMiB = mib(idle.rssKB)
	start := time.Now()
	startCPU := idle.cpuTicks
	wctx2, cancel2 := context.WithTimeout(ctx, time.Duration(rounds+5)*interval*2)
	defer cancel2()
	st, err = waitRounds(wctx2, addr, 1+rounds)
	if err != nil {
		return r, err
	}
	peak, last := s.reset()
	r.Walks = st.Rounds - 1
	r.PeakRSSMiB, r.PeakAnonMiB, r.PeakFileMiB = mib(peak.rssKB), mib(peak.anonKB), mib(peak.fileKB)
	// CPU per walk: all the process's CPU over the rounds (walks, the
	// scheduler, the /status polls) divided by the walks; ticks are 10 ms.
	r.CPUPerWalkMS = float64(last.cpuTicks-startCPU) * 10 / float64(r.Walks)
	var wall float64
	for _, tg := range st.Targets {
		wall += tg.DurationMS
	}
	r.WallPerWalkMS = wall / float64(len(st.Targets))
	_ = start
	return r, nil
}

func run(rounds int, outDir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "agentbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// 1. Binaries: the agent as the image ships it, and the full CLI.
	agentBin, err := agentimage.BuildBinary(ctx, root, tmp, selfimage.HostPlatform())
	if err != nil {
		return err
	}
	fullBin, err := selfimage.BuildBinary(ctx, root, tmp, selfimage.HostPlatform())
	if err != nil {
		return err
	}

	// 2. A 5-host pull on loopback: mirror (refuses), registry, token
	// service, blob host, second blob hop.
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	st, err := labsvc.StartStack(sctx, labsvc.StackConfig{Dir: filepath.Join(tmp, "stack"), SecondHop: true,
		Image:      labsvc.ImageSpec{Repository: "shop/web", Tag: "1.0", LayerSizes: []int64{4 << 20, 2 << 20, 1 << 20}, Seed: 11},
		Addrs:      labsvc.StackAddrs{DNS: "127.0.51.53", Registry: "127.0.51.10", Token: "127.0.51.11", Blob: "127.0.51.12", Blob2: "127.0.51.13"},
		DNSRecords: map[string][]labsvc.DNSRecord{"mirror.lab.test": {{Type: "A", Value: "127.0.51.14"}}}})
	if err != nil {
		return err
	}
	defer st.Close()
	certs := filepath.Join(tmp, "certs.d")
	hostDir := filepath.Join(certs, st.RegistryHost)
	if err := os.MkdirAll(hostDir, 0o755); err != nil {
		return err
	}
	toml := fmt.Sprintf("server = \"https://%s\"\n[host.\"https://mirror.lab.test:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n", st.RegistryHost)
	if err := os.WriteFile(filepath.Join(hostDir, "hosts.toml"), []byte(toml), 0o644); err != nil {
		return err
	}
	interval := 500 * time.Millisecond
	agentArgs := func(addr string) []string {
		return []string{"--image", st.Ref(), "--node", "bench", "--listen", addr, "--interval", interval.String(), "--probe-timeout", interval.String(),
			"--full-interval", "0", "--jitter", "0", "--kube-api", "",
			"--resolv-conf", st.Files.ResolvConf, "--hosts-file", st.Files.Hosts, "--nameserver", st.Nameserver(),
			"--registry-ca", st.Files.CAFile, "--certs-dir", certs, "--docker-certs-dir", filepath.Join(tmp, "none"),
			"--docker-config", st.Files.DockerConfig, "--connect-timeout", "2s"}
	}
	var rows []Row
	for _, a := range []struct {
		what string
		bin  string
		pre  []string
	}{{"pullpath-agent (the DaemonSet's binary)", agentBin, nil}, {"pullpath monitor (the same agent in the full CLI)", fullBin, []string{"monitor"}}} {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		argv := append(append([]string{a.bin}, a.pre...), agentArgs(addr)...)
		r, err := measureAgent(ctx, a.what, argv, addr, interval, rounds, a.bin)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	// hosts walked, from the agent's own report
	hosts, err := walkHosts(ctx, fullBin, agentArgs("127.0.0.1:0"))
	if err != nil {
		return err
	}

	// 3. node_exporter, idle and under 1 scrape every 50 ms.
	if ne, err := exec.LookPath("prometheus-node-exporter"); err == nil {
		r, err := measureNodeExporter(ctx, ne, rounds)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}

	// 4. Image sizes.
	agentImg, err := agentimage.Image(agentBin, selfimage.HostPlatform())
	if err != nil {
		return err
	}
	agentSize, err := agentimage.Size(agentImg)
	if err != nil {
		return err
	}
	fullImg, err := selfimage.Image(fullBin, selfimage.HostPlatform())
	if err != nil {
		return err
	}
	fullSize, err := agentimage.Size(fullImg)
	if err != nil {
		return err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Quick walk: %d hosts (%s); %d walks per agent, one every %s.\n\n", len(hosts), strings.Join(hosts, ", "), rounds, interval)
	fmt.Fprintf(&b, "| process | idle RSS | peak RSS during walks | peak anon / file | CPU per walk | wall per walk | binary |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		cpu, wall := "-", "-"
		if r.Walks > 0 {
			cpu, wall = fmt.Sprintf("%.1f ms", r.CPUPerWalkMS), fmt.Sprintf("%.1f ms", r.WallPerWalkMS)
		}
		fmt.Fprintf(&b, "| %s | %.1f MiB | %.1f MiB | %.1f / %.1f MiB | %s | %s | %.1f MB |\n", r.What, r.IdleRSSMiB, r.PeakRSSMiB, r.PeakAnonMiB, r.PeakFileMiB, cpu, wall, r.BinaryMB)
	}
	fmt.Fprintf(&b, "\n| image | download size |\n|---|---|\n| pullpath-agent (%s) | %.1f MB |\n| pullpath (the full CLI, selfimage) | %.1f MB |\n", agentimage.Ref, float64(agentSize)/1e6, float64(fullSize)/1e6)
	fmt.Print(b.String())
	if outDir != "" {
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			return err
		}
		js, _ := json.MarshalIndent(map[string]any{"rows": rows, "agentImageBytes": agentSize, "fullImageBytes": fullSize, "hosts": hosts}, "", "  ")
		_ = os.WriteFile(filepath.Join(outDir, "agent.json"), js, 0o644)
		_ = os.WriteFile(filepath.Join(outDir, "agent.md"), []byte(b.String()), 0o644)
	}
	return nil
}

// walkHosts runs `pullpath probe --quick -o json` with the agent's flags
// and lists the endpoints the walk reached: the hosts of the quick walk.
func walkHosts(ctx context.Context, fullBin string, args []string) ([]string, error) {
	var probeArgs []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--image":
			i++
			continue
		case "--listen", "--interval", "--probe-timeout", "--full-interval", "--jitter", "--kube-api":
			i++
			continue
		}
		probeArgs = append(probeArgs, args[i])
	}
	img := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--image" {
			img = args[i+1]
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(pctx, fullBin, append([]string{"probe", img, "--quick", "-o", "json", "--no-progress"}, probeArgs...)...).Output()
	var rep report.ProbeReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("probe --quick: %v: %s", err, out)
	}
	var hosts []string
	for _, e := range rep.Endpoints {
		hosts = append(hosts, fmt.Sprintf("%s (%s, %s)", e.Host, e.Role, e.Status))
	}
	if rep.Verdict.Status != "ok" {
		return nil, fmt.Errorf("probe --quick: %s %s", rep.Verdict.Code, rep.Verdict.Summary)
	}
	return hosts, nil
}

func measureNodeExporter(ctx context.Context, bin string, scrapes int) (Row, error) {
	r := Row{What: "prometheus-node-exporter 1.5 (Debian; peer node agent)"}
	if fi, err := os.Stat(bin); err == nil {
		r.BinaryMB = float64(fi.Size()) / 1e6
	}
	addr, err := freeAddr()
	if err != nil {
		return r, err
	}
	cmd := exec.CommandContext(ctx, bin, "--web.listen-address="+addr)
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	s := startSampler(cmd.Process.Pid)
	defer s.close()
	get := func() error {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	deadline := time.Now().Add(20 * time.Second)
	for get() != nil {
		if time.Now().After(deadline) {
			return r, errors.New("node_exporter did not answer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	idleCtx, c := context.WithTimeout(ctx, 300*time.Millisecond)
	<-idleCtx.Done()
	c()
	_, idle := s.reset()
	r.IdleRSSMiB = mib(idle.rssKB)
	for i := 0; i < scrapes; i++ {
		if err := get(); err != nil {
			return r, err
		}
	}
	peak, last := s.reset()
	r.PeakRSSMiB, r.PeakAnonMiB, r.PeakFileMiB = mib(peak.rssKB), mib(peak.anonKB), mib(peak.fileKB)
	r.Note = fmt.Sprintf("%d scrapes; CPU %.1f ms per scrape", scrapes, float64(last.cpuTicks-idle.cpuTicks)*10/float64(scrapes))
	return r, nil
}
