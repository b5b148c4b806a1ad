// Package throughput measures a full, verified pull of a large image from
// labsvc's real registry stack on loopback (reference registry, token host,
// blob redirect host, DNS), with `pullpath-agent probe` (the node's probe)
// and with the ggcr peer
// (bench/cmd/ggcrpull), alternating, each run under GNU time for wall time
// and peak RSS. The machine's single-core sha256 rate is measured in the
// same run: it is the ceiling of any pull that verifies every byte on one
// core per blob.
package throughput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/report"
)

// Tool names in results.
const (
	ToolPullpath = "pullpath-agent probe (the node's binary)"
	ToolPeer     = "ggcr remote (crane's library)"
	ToolEngine   = "pull.Probe alone (bench/cmd/probeonly)"
	ToolFull     = "pullpath probe (the CLI: every client linked)"
)

// DefaultLayers is about 1 GiB in six incompressible layers.
var DefaultLayers = []int64{256 << 20, 256 << 20, 192 << 20, 160 << 20, 96 << 20, 64 << 20}

// Config says what to run.
type Config struct {
	PullpathBin string // built pullpath-agent binary (what probes on a node)
	PeerBin     string // built ggcrpull binary
	EngineBin   string // built probeonly binary; "" leaves that row out
	FullBin     string // built pullpath (the CLI with every client); "" leaves that row out
	// Startup are the binaries whose `version` is timed before the pulls.
	Startup       []Binary
	StartupRounds int     // default 20
	Layers        []int64 // layer payload sizes; nil means DefaultLayers
	Rounds        int     // runs per tool, alternating; at least 1
	Concurrency   int     // blobs at once, for both tools; 0 means 3 (containerd's and pullpath's default)
	RunTimeout    time.Duration
	Log           io.Writer // progress lines; nil discards
	// CPUProfileDir, if set, gets a CPU profile of every engine (probeonly)
	// and peer run: engine-rN.pprof and peer-rN.pprof. pullpath-agent
	// has no profiling flag; the engine is its pull, unchanged.
	CPUProfileDir string
}

// Run is one pull by one tool.
type Run struct {
	Tool       string  `json:"tool"`
	Round      int     `json:"round"`
	WallSec    float64 `json:"wallSec"`
	MBps       float64 `json:"mbps"`        // bytes / wall of the whole command
	ToolMBps   float64 `json:"toolMbps"`    // the tool's own blob-phase rate
	PeakRSSMiB float64 `json:"peakRssMiB"`  // GNU time %M
	PeakAnon   float64 `json:"peakAnonMiB"` // sampled RssAnon: heap, stacks
	PeakFile   float64 `json:"peakFileMiB"` // sampled RssFile: the mapped binary
	CPUSec     float64 `json:"cpuSec"`      // the client's user+sys
	ServerCPU  float64 `json:"serverCpuSec"`
	Bytes      int64   `json:"bytes"`
}

// Result is the whole benchmark.
type Result struct {
	Date         time.Time       `json:"date"`
	Machine      measure.Machine `json:"machine"`
	ImageBytes   int64           `json:"imageBytes"` // config + layers
	Layers       int             `json:"layers"`
	Concurrency  int             `json:"concurrency"`
	SHA256Before float64         `json:"sha256MBpsBefore"`
	SHA256After  float64         `json:"sha256MBpsAfter"`
	Runs         []Run           `json:"runs"`
	PullpathMBps float64         `json:"pullpathMedianMBps"`
	PeerMBps     float64         `json:"peerMedianMBps"`
	Ratio        float64         `json:"ratio"`    // pullpath / peer, medians
	OfSHA256     float64         `json:"ofSha256"` // pullpath median / sha256 rate
	PullpathRSS  float64         `json:"pullpathMaxRssMiB"`
	PeerRSS      float64         `json:"peerMaxRssMiB"`
	PullpathAnon float64         `json:"pullpathMaxAnonMiB"`
	PeerAnon     float64         `json:"peerMaxAnonMiB"`
	PullpathFile float64         `json:"pullpathMaxFileMiB"`
	PeerFile     float64         `json:"peerMaxFileMiB"`
	// PullpathCPUEff and PeerCPUEff are bytes per client CPU-second
	// (MB/s of CPU), medians: what each tool would do on a core of its
	// own, with the server elsewhere.
	PullpathCPUEff float64   `json:"pullpathMedianMBPerCpuSec"`
	PeerCPUEff     float64   `json:"peerMedianMBPerCpuSec"`
	EngineMBps     float64   `json:"engineMedianMBps,omitempty"`
	EngineRSS      float64   `json:"engineMaxRssMiB,omitempty"`
	EngineAnon     float64   `json:"engineMaxAnonMiB,omitempty"`
	FullMBps       float64   `json:"fullMedianMBps,omitempty"`
	FullRSS        float64   `json:"fullMaxRssMiB,omitempty"`
	FullAnon       float64   `json:"fullMaxAnonMiB,omitempty"`
	FullFile       float64   `json:"fullMaxFileMiB,omitempty"`
	Startup        []Startup `json:"startup,omitempty"`
	SetupSec       float64   `json:"setupSec"` // writing the image and starting the stack
	PullpathToolM  float64   `json:"pullpathMedianToolMBps"`
	PeerToolM      float64   `json:"peerMedianToolMBps"`
}

// Measure runs the benchmark. It fails only if a pull fails or cannot be
// measured; slow figures are data.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.PullpathBin == "" || cfg.PeerBin == "" {
		return nil, errors.New("throughput: PullpathBin and PeerBin are required")
	}
	if cfg.Rounds < 1 {
		return nil, fmt.Errorf("throughput: Rounds %d, want at least 1", cfg.Rounds)
	}
	if cfg.Layers == nil {
		cfg.Layers = DefaultLayers
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 3
	}
	if cfg.RunTimeout == 0 {
		cfg.RunTimeout = 5 * time.Minute
	}
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "throughput: "+format+"\n", a...)
		}
	}
	res := &Result{Date: time.Now().UTC(), Machine: measure.DescribeMachine(), Layers: len(cfg.Layers), Concurrency: cfg.Concurrency}

	var err error
	if len(cfg.Startup) > 0 {
		n := cfg.StartupRounds
		if n <= 0 {
			n = 20
		}
		logf("timing `version` of %d binaries, %d rounds", len(cfg.Startup), n)
		if res.Startup, err = MeasureStartup(ctx, cfg.Startup, n); err != nil {
			return nil, err
		}
	}
	logf("hashing 256 MiB with crypto/sha256 on one core")
	if res.SHA256Before, err = measure.SHA256Rate(256<<20, 5); err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "pullbench-throughput-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	t0 := time.Now()
	logf("writing a %d-layer image of %d MiB and starting the stack in %s", len(cfg.Layers), sum(cfg.Layers)>>20, dir)
	st, err := labsvc.StartStack(ctx, labsvc.StackConfig{
		Dir:   dir,
		Image: labsvc.ImageSpec{Repository: "bench/big", Tag: "v1", LayerSizes: cfg.Layers, Seed: 42},
	})
	if err != nil {
		return nil, fmt.Errorf("throughput: start stack: %w", err)
	}
	defer st.Close()
	res.SetupSec = time.Since(t0).Seconds()
	for _, b := range st.Image.Blobs() {
		res.ImageBytes += b.Size
	}

	tools := []func(round int) (Run, error){
		func(r int) (Run, error) { return runPullpath(ctx, cfg, st, r, res.ImageBytes, ToolPullpath) },
		func(r int) (Run, error) { return runPeer(ctx, cfg, st, r, res.ImageBytes) },
	}
	if cfg.EngineBin != "" {
		tools = append(tools, func(r int) (Run, error) { return runPullpath(ctx, cfg, st, r, res.ImageBytes, ToolEngine) })
	}
	if cfg.FullBin != "" {
		tools = append(tools, func(r int) (Run, error) { return runPullpath(ctx, cfg, st, r, res.ImageBytes, ToolFull) })
	}
	for round := 1; round <= cfg.Rounds; round++ {
		// Alternate who goes first: the main pair swaps every round; the
		// others follow.
		order := []int{0, 1}
		if round%2 == 0 {
			order = []int{1, 0}
		}
		for i := 2; i < len(tools); i++ {
			order = append(order, i)
		}
		for _, i := range order {
			run, err := tools[i](round)
			if err != nil {
				return nil, err
			}
			logf("round %d %-30s %7.1f MB/s  wall %.2fs  peak RSS %.1f MiB (anon %.1f, file %.1f)  client CPU %.2fs  server CPU %.2fs",
				round, run.Tool, run.MBps, run.WallSec, run.PeakRSSMiB, run.PeakAnon, run.PeakFile, run.CPUSec, run.ServerCPU)
			res.Runs = append(res.Runs, run)
		}
	}
	if res.SHA256After, err = measure.SHA256Rate(256<<20, 5); err != nil {
		return nil, err
	}
	res.summarize()
	return res, nil
}

func (r *Result) summarize() {
	var pp, peer, ppTool, peerTool, eng, full, ppEff, peerEff []float64
	for _, run := range r.Runs {
		eff := 0.0
		if run.CPUSec > 0 {
			eff = float64(run.Bytes) / 1e6 / run.CPUSec
		}
		switch run.Tool {
		case ToolEngine:
			eng = append(eng, run.MBps)
			r.EngineRSS = max(r.EngineRSS, run.PeakRSSMiB)
			r.EngineAnon = max(r.EngineAnon, run.PeakAnon)
		case ToolFull:
			full = append(full, run.MBps)
			r.FullRSS = max(r.FullRSS, run.PeakRSSMiB)
			r.FullAnon = max(r.FullAnon, run.PeakAnon)
			r.FullFile = max(r.FullFile, run.PeakFile)
		case ToolPullpath:
			pp = append(pp, run.MBps)
			ppEff = append(ppEff, eff)
			ppTool = append(ppTool, run.ToolMBps)
			r.PullpathRSS = max(r.PullpathRSS, run.PeakRSSMiB)
			r.PullpathAnon = max(r.PullpathAnon, run.PeakAnon)
			r.PullpathFile = max(r.PullpathFile, run.PeakFile)
		case ToolPeer:
			peer = append(peer, run.MBps)
			peerEff = append(peerEff, eff)
			peerTool = append(peerTool, run.ToolMBps)
			r.PeerRSS = max(r.PeerRSS, run.PeakRSSMiB)
			r.PeerAnon = max(r.PeerAnon, run.PeakAnon)
			r.PeerFile = max(r.PeerFile, run.PeakFile)
		}
	}
	r.PullpathMBps, r.PeerMBps = measure.Median(pp), measure.Median(peer)
	r.PullpathToolM, r.PeerToolM = measure.Median(ppTool), measure.Median(peerTool)
	r.EngineMBps = measure.Median(eng)
	r.FullMBps = measure.Median(full)
	r.PullpathCPUEff, r.PeerCPUEff = measure.Median(ppEff), measure.Median(peerEff)
	if r.PeerMBps > 0 {
		r.Ratio = r.PullpathMBps / r.PeerMBps
	}
	if sha := max(r.SHA256Before, r.SHA256After); sha > 0 {
		r.OfSHA256 = r.PullpathMBps / sha
	}
}

func runPullpath(ctx context.Context, cfg Config, st *labsvc.Stack, round int, want int64, tool string) (Run, error) {
	engine := tool == ToolEngine
	argv := []string{cfg.PullpathBin, "probe", st.Ref()}
	switch tool {
	case ToolEngine:
		argv = []string{cfg.EngineBin} // Go's flag package wants IMAGE last
	case ToolFull:
		argv[0] = cfg.FullBin
	}
	argv = append(argv,
		"--nameserver", st.Nameserver(),
		"--resolv-conf", st.Files.ResolvConf,
		"--hosts-file", st.Files.Hosts,
		"--certs-dir", st.Files.CertsDir,
		"--docker-certs-dir", filepath.Join(st.Files.NodeDir, "no-docker-certs"),
		"--docker-config", st.Files.DockerConfig,
		"--platform", "linux/amd64",
		"--concurrency", fmt.Sprint(cfg.Concurrency))
	if engine {
		if cfg.CPUProfileDir != "" {
			argv = append(argv, "--cpuprofile", filepath.Join(cfg.CPUProfileDir, fmt.Sprintf("engine-r%d.pprof", round)))
		}
		argv = append(argv, st.Ref())
	} else {
		argv = append(argv, "--node", "bench-node", "--no-progress", "-o", "json")
	}
	srv := measure.SelfCPU()
	res, err := measure.Run(ctx, measure.Cmd{Argv: argv, Timeout: cfg.RunTimeout})
	srv = measure.SelfCPU() - srv
	if err != nil {
		return Run{}, fmt.Errorf("throughput: %s round %d: %w", tool, round, err)
	}
	var rep report.ProbeReport
	if err := json.Unmarshal(res.Stdout, &rep); err != nil {
		return Run{}, fmt.Errorf("throughput: %s round %d: exit %d, report is not JSON (%v); stderr: %s", tool, round, res.ExitCode, err, strings.TrimSpace(string(res.Stderr)))
	}
	if res.ExitCode != 0 || rep.Transfer == nil || !rep.Transfer.Verified || rep.Transfer.Bytes != want {
		return Run{}, fmt.Errorf("throughput: %s round %d did not pull the whole image verified: exit %d, verdict %s %s: %s", tool, round, res.ExitCode, rep.Verdict.Status, rep.Verdict.Code, rep.Verdict.Summary)
	}
	return Run{
		Tool: tool, Round: round, WallSec: res.Wall.Seconds(),
		MBps: float64(want) / 1e6 / res.Wall.Seconds(), ToolMBps: rep.Transfer.MBps,
		PeakRSSMiB: res.PeakRSSMiB(), PeakAnon: kib(res.PeakAnonKB), PeakFile: kib(res.PeakFileKB), CPUSec: res.CPUSec(), ServerCPU: srv, Bytes: rep.Transfer.Bytes,
	}, nil
}

// peerResult mirrors bench/cmd/ggcrpull's output.
type peerResult struct {
	Bytes int64   `json:"bytes"`
	MBps  float64 `json:"mbps"`
}

func runPeer(ctx context.Context, cfg Config, st *labsvc.Stack, round int, want int64) (Run, error) {
	argv := []string{cfg.PeerBin,
		"--nameserver", st.Nameserver(),
		"--ca-file", st.Files.CAFile,
		"--docker-config", st.Files.DockerConfig,
		"--jobs", fmt.Sprint(cfg.Concurrency)}
	if cfg.CPUProfileDir != "" {
		argv = append(argv, "--cpuprofile", filepath.Join(cfg.CPUProfileDir, fmt.Sprintf("peer-r%d.pprof", round)))
	}
	argv = append(argv, st.Ref())
	srv := measure.SelfCPU()
	res, err := measure.Run(ctx, measure.Cmd{Argv: argv, Timeout: cfg.RunTimeout})
	srv = measure.SelfCPU() - srv
	if err != nil {
		return Run{}, fmt.Errorf("throughput: peer round %d: %w", round, err)
	}
	var pr peerResult
	if res.ExitCode != 0 || json.Unmarshal(res.Stdout, &pr) != nil || pr.Bytes != want {
		return Run{}, fmt.Errorf("throughput: peer round %d did not pull the whole image: exit %d, %d of %d bytes; stderr: %s", round, res.ExitCode, pr.Bytes, want, strings.TrimSpace(string(res.Stderr)))
	}
	return Run{
		Tool: ToolPeer, Round: round, WallSec: res.Wall.Seconds(),
		MBps: float64(want) / 1e6 / res.Wall.Seconds(), ToolMBps: pr.MBps,
		PeakRSSMiB: res.PeakRSSMiB(), PeakAnon: kib(res.PeakAnonKB), PeakFile: kib(res.PeakFileKB), CPUSec: res.CPUSec(), ServerCPU: srv, Bytes: pr.Bytes,
	}, nil
}

func kib(n int64) float64 { return float64(n) / 1024 }

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}

// Markdown renders the throughput and memory tables.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Date: %s. Machine: %d cores, %s, %d MiB memory, kernel %s, %s; load average %s at the start (a shared machine).\n", r.Date.Format("2006-01-02 15:04 UTC"), r.Machine.Cores, r.Machine.CPUModel, r.Machine.MemMiB, r.Machine.Kernel, r.Machine.Go, r.Machine.LoadAvg)
	fmt.Fprintf(&b, "Image: %d layers + config, %d bytes (%.0f MiB); %d blobs at once for both tools.\n\n", r.Layers, r.ImageBytes, float64(r.ImageBytes)/(1<<20), r.Concurrency)
	b.WriteString("| round | tool | wall s | MB/s (whole command) | MB/s (tool's blob phase) | peak RSS MiB | peak anon MiB | peak file MiB | client CPU s | server CPU s |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %d | %s | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", run.Round, run.Tool, run.WallSec, run.MBps, run.ToolMBps, run.PeakRSSMiB, run.PeakAnon, run.PeakFile, run.CPUSec, run.ServerCPU)
	}
	sha := max(r.SHA256Before, r.SHA256After)
	fmt.Fprintf(&b, "\n| figure | pullpath | ggcr peer | ratio |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| median MB/s, whole command | %.1f | %.1f | %.2fx |\n", r.PullpathMBps, r.PeerMBps, r.Ratio)
	fmt.Fprintf(&b, "| median MB/s, blob phase | %.1f | %.1f | %.2fx |\n", r.PullpathToolM, r.PeerToolM, safeDiv(r.PullpathToolM, r.PeerToolM))
	fmt.Fprintf(&b, "| single-core sha256 MB/s (before / after) | %.0f / %.0f | | |\n", r.SHA256Before, r.SHA256After)
	fmt.Fprintf(&b, "| median MB/s / sha256 MB/s (wall) | %.0f%% | %.0f%% | |\n", 100*r.OfSHA256, 100*safeDiv(r.PeerMBps, sha))
	fmt.Fprintf(&b, "| MB per client CPU-second, median | %.0f | %.0f | %.2fx |\n", r.PullpathCPUEff, r.PeerCPUEff, safeDiv(r.PullpathCPUEff, r.PeerCPUEff))
	fmt.Fprintf(&b, "| MB per client CPU-second / sha256 MB/s | %.0f%% | %.0f%% | |\n", 100*safeDiv(r.PullpathCPUEff, sha), 100*safeDiv(r.PeerCPUEff, sha))
	fmt.Fprintf(&b, "| peak RSS MiB (GNU time, max over rounds) | %.1f | %.1f | %.2fx |\n", r.PullpathRSS, r.PeerRSS, safeDiv(r.PullpathRSS, r.PeerRSS))
	fmt.Fprintf(&b, "| of which anonymous (heap, stacks; sampled) | %.1f | %.1f | %.2fx |\n", r.PullpathAnon, r.PeerAnon, safeDiv(r.PullpathAnon, r.PeerAnon))
	fmt.Fprintf(&b, "| of which file-backed (the mapped binary; sampled) | %.1f | %.1f | %.2fx |\n", r.PullpathFile, r.PeerFile, safeDiv(r.PullpathFile, r.PeerFile))
	if r.EngineRSS > 0 {
		fmt.Fprintf(&b, "| pull.Probe alone (probeonly): median MB/s, peak RSS MiB, anon MiB | %.1f, %.1f, %.1f | | |\n", r.EngineMBps, r.EngineRSS, r.EngineAnon)
	}
	if r.FullRSS > 0 {
		fmt.Fprintf(&b, "| pullpath probe (the CLI: every client linked): median MB/s, peak RSS MiB (anon, file) | %.1f, %.1f (%.1f, %.1f) | | |\n", r.FullMBps, r.FullRSS, r.FullAnon, r.FullFile)
	}
	if len(r.Startup) > 0 {
		fmt.Fprintf(&b, "\nStart-up, the same run (`BINARY version`, %d rounds each, interleaved):\n\n%s", r.Startup[0].Runs, StartupMarkdown(r.Startup))
	}
	return b.String()
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
