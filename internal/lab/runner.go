package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/childproc"
	"github.com/pullpath/pullpath/internal/exitcode"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Hook is an extra check run after the probe, in the same lab (for example
// the real container runtime pulling the same image in the node's
// namespace). Its result is added to the run's checks.
type Hook interface {
	Name() string
	Check(ctx context.Context, env *Env, probe *report.ProbeReport) report.LabCheck
}

// Env is what a hook may use: the built lab and the node's files.
type Env struct {
	Scenario *scenario.Scenario
	Network  *Network
	NodeNS   string // the node's namespace
	RunDir   string // the run's private folder (removed at teardown)
	// CAFile is the lab CA the node trusts (empty when the scenario's node
	// does not trust it); DockerConfig holds the node's credentials.
	CAFile       string
	DockerConfig string
	// CertsDir is the node's certs.d when the scenario writes one (its
	// mirrors' hosts.toml); "" otherwise.
	CertsDir string
	Image    string
	// Self is the pullpath binary the lab re-executes.
	Self string
	// NodeRoot is a CRI-O node's filesystem (registries.conf.d and
	// certs.d under it, prepareCRIO); "" for a containerd node.
	NodeRoot string
	// ContainerdConfig is a layout node's containerd config, a node path
	// under NodeRoot (layout.go), and Containerd the binary that plays the
	// node ("1.6" Debian's, "2" test/tools'); "" for the lab's own config.
	ContainerdConfig, Containerd string
	// RuntimeEnv is the node's running containerd's proxy environment
	// (KEY=VALUE, from node.proxy): a runtime started beside the probe
	// runs with it.
	RuntimeEnv []string

	credProvider *CredentialProviderFiles // written by CredentialProviderFiles
}

// Command returns a command that runs argv inside namespace ns with a clean
// environment; the node's /etc/netns files are bind-mounted by `ip netns
// exec`. It is killed if the lab process dies.
func (e *Env) Command(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	return nsCommand(ctx, ns, argv...)
}

func nsCommand(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	return Command(ctx, "ip", append([]string{"netns", "exec", ns}, argv...)...)
}

// Command is exec.CommandContext for a lab command: a clean environment,
// its own process group, killed as a group when ctx ends or when this
// process dies.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = CleanEnv()
	cmd.SysProcAttr = childproc.SysProcAttr(false)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// Options tune a run.
type Options struct {
	// Self is the pullpath binary to re-execute for `lab serve` and `probe`
	// (default: os.Executable()).
	Self string
	// KeepLogs copies the service logs and the probe's stderr to a folder
	// under LogRoot (default os.TempDir()) that survives the teardown.
	KeepLogs bool
	LogRoot  string
	// Hooks run after the probe, in order.
	Hooks []Hook
	// Progress, when set, receives one line per phase.
	Progress io.Writer
	// Keep leaves the lab up after the probe (lab up); Kept is then filled.
	Keep bool
	// NoProbe skips the probe (lab up without a probe).
	NoProbe bool
	// Images are image tarballs (docker or OCI, os/architecture set) to
	// import into every node of a cluster scenario before its workload
	// runs: pullpath's own image, so that sweep and diagnose run on it.
	Images []string
	// Cluster runs the scenarios that have a cluster section
	// (internal/lab/cluster.Run); without it they end in an error.
	Cluster ClusterRunner
}

func (o *Options) self() (string, error) {
	if o.Self != "" {
		return o.Self, nil
	}
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("lab: cannot find the pullpath binary to re-execute: %v", err)
	}
	return p, nil
}

func (o *Options) logf(format string, a ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", a...)
	}
}

// ClusterRunner runs a scenario that has a cluster section; it is
// internal/lab/cluster's Run (the CLI passes it in Options.Cluster), kept
// apart so that this package links no Kubernetes client.
type ClusterRunner func(ctx context.Context, s *scenario.Scenario, o Options) (*report.LabRun, *KeptRun)

// Run builds the scenario's lab, starts its services, runs the probe in the
// node's namespace, runs the hooks, checks the verdict against expect and
// tears everything down (also when ctx is cancelled). A lab that cannot be
// built or run gives a run with result "error", never a panic. A scenario
// with a cluster section runs through o.Cluster.
func Run(ctx context.Context, s *scenario.Scenario, o Options) *report.LabRun {
	r, _ := runScenario(ctx, s, o)
	return r
}

// Up builds the scenario's lab and leaves it running (no probe unless
// probe is true). Down tears it down.
func Up(ctx context.Context, s *scenario.Scenario, o Options) (*report.LabRun, *KeptRun) {
	o.Keep = true
	return runScenario(ctx, s, o)
}

// NewRun is a run of s that has not started yet.
func NewRun(s *scenario.Scenario) *report.LabRun {
	return &report.LabRun{Scenario: s.Name, Source: s.Source(), Summary: s.Summary, Image: s.ProbeImage(),
		Namespaces: len(s.Hosts), Expect: s.Expect}
}

// Fail marks a run as an error, on one line, with secrets redacted.
func Fail(r *report.LabRun, err error) {
	r.Result = report.LabError
	r.Error = units.OneLine(redact.String(err.Error()))
}

func runScenario(ctx context.Context, t *scenario.Scenario, o Options) (*report.LabRun, *KeptRun) {
	if t.Cluster != nil {
		if o.Cluster == nil {
			r := NewRun(t)
			Fail(r, fmt.Errorf("scenario %s has a cluster section: it needs a cluster runner (internal/lab/cluster.Run)", t.Name))
			return r, nil
		}
		return o.Cluster(ctx, t, o)
	}
	start := time.Now()
	r := NewRun(t)
	self, err := o.self()
	if err != nil {
		Fail(r, err)
		return r, nil
	}
	// 1. network and 2. services
	l, err := Start(ctx, t, StartOptions{Self: self, Keep: o.Keep, Progress: o.Progress})
	var kept *KeptRun
	defer func() {
		if l == nil {
			return
		}
		if kept != nil {
			if err := l.Keep(kept); err != nil && r.Error == "" {
				Fail(r, err)
			}
			r.Timings.TotalMS = msSince(start)
			return
		}
		td := time.Now()
		l.StopServices()
		if o.KeepLogs {
			r.LogDir = l.SaveLogs(o.LogRoot)
		}
		if err := l.Close(); err != nil && r.Error == "" {
			Fail(r, fmt.Errorf("teardown: %v", err))
		}
		r.Timings.TeardownMS = msSince(td)
		r.Timings.TotalMS = msSince(start)
	}()
	if l != nil {
		r.Node = l.Session.Prefix + t.Node.Host
		r.Timings.BuildMS, r.Timings.ServicesMS = l.BuildMS, l.ServicesMS
	}
	if err != nil {
		Fail(r, err)
		return r, nil
	}
	o.logf("%s: services up in %.0f ms", t.Name, r.Timings.ServicesMS)
	if o.Keep {
		kept = &KeptRun{Name: t.Name, Source: t.Source(), NodeNS: l.Network.NS[t.Node.Host], Namespace: l.Network.NS, Started: start.UTC()}
	}
	if o.NoProbe {
		return r, kept
	}
	// 3. probe in the node's namespace
	phase := time.Now()
	rep, err := l.Probe(ctx)
	r.Timings.ProbeMS = msSince(phase)
	if err != nil {
		Fail(r, err)
		return r, kept
	}
	r.Probe = rep
	// 4. hooks (runtime cross-check, ...)
	for _, h := range o.Hooks {
		if ctx.Err() != nil {
			break
		}
		hs := time.Now()
		c := h.Check(ctx, l.Env, rep)
		if c.Name == "" {
			c.Name = h.Name()
		}
		if c.DurationMS == 0 {
			c.DurationMS = msSince(hs)
		}
		r.Checks = append(r.Checks, c)
	}
	// 5. the verdict against expect; a hook's failed check is a mismatch too
	Judge(r, t.Expect, rep)
	for _, c := range r.Checks {
		if !c.OK {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("check %s: %s", c.Name, c.Detail))
			r.Result = report.LabMismatch
		}
	}
	if ctx.Err() != nil && r.Result != report.LabPass {
		Fail(r, fmt.Errorf("interrupted: %v", ctx.Err()))
	}
	return r, kept
}

func msSince(t time.Time) float64 { return units.MS(time.Since(t)) }

// probe runs `pullpath probe -o json` in the node's namespace and parses its
// report.
func probe(ctx context.Context, t *scenario.Scenario, env *Env) (*report.ProbeReport, string, error) {
	budget := t.Probe.Timeout.Duration
	if budget == 0 {
		budget = 60 * time.Second
	}
	empty := filepath.Join(env.RunDir, "node", "empty.d")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return nil, "", err
	}
	argv := []string{env.Self, "probe", env.Image, "-o", "json", "--no-progress",
		"--node", t.Node.Host,
		"--resolv-conf", "/etc/resolv.conf", "--hosts-file", "/etc/hosts",
		"--certs-dir", empty, "--docker-certs-dir", empty,
		"--docker-config", env.DockerConfig,
		"--timeout", budget.String(),
	}
	if env.CertsDir != "" {
		argv = withoutFlag(argv, "--certs-dir")
		argv = append(argv, "--certs-dir", env.CertsDir)
	}
	if env.CAFile != "" {
		argv = append(argv, "--registry-ca", env.CAFile)
	}
	if t.Probe.Platform != "" {
		argv = append(argv, "--platform", t.Probe.Platform)
	}
	if t.Probe.ExpectPrivate {
		argv = append(argv, "--expect-private")
	}
	if cp, err := env.CredentialProviderFiles(); err != nil {
		return nil, "", err
	} else if cp != nil {
		// The kubelet's identity replaces the docker config.
		argv = withoutFlag(argv, "--docker-config")
		argv = append(argv, "--image-credential-provider-config", cp.Config, "--image-credential-provider-bin-dir", cp.BinDir)
	}
	if env.NodeRoot != "" {
		argv = crioProbeArgs(argv, env)
	}
	if d := t.Probe.ConnectTimeout.Duration; d > 0 {
		argv = append(argv, "--connect-timeout", d.String())
	}
	argv = append(argv, t.Probe.Args...)
	pctx, cancel := context.WithTimeout(ctx, budget+10*time.Second)
	defer cancel()
	cmd := nsCommand(pctx, env.NodeNS, argv...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	stderr := errb.String()
	if ctx.Err() != nil {
		return nil, stderr, fmt.Errorf("probe interrupted: %v", ctx.Err())
	}
	var rep report.ProbeReport
	if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil || rep.Kind == "" {
		msg := units.OneLine(stderr)
		if msg == "" && err != nil {
			msg = err.Error()
		}
		if msg == "" {
			msg = "no report on standard output"
		}
		return nil, stderr, fmt.Errorf("probe in %s: %s", env.NodeNS, msg)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return &rep, stderr, fmt.Errorf("probe in %s: %v", env.NodeNS, err)
	}
	return &rep, stderr, nil
}

// keepLogs copies the run's logs folder out of the run folder before the
// teardown removes it, and returns where.
func keepLogs(runDir, root, name, prefix string) string {
	if root == "" {
		root = os.TempDir()
	}
	dst := filepath.Join(root, "pullpath-lab-"+name+"-"+strings.TrimSuffix(prefix, "-"))
	src := filepath.Join(runDir, "logs")
	ents, err := os.ReadDir(src)
	if err != nil {
		return ""
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return ""
	}
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join(src, e.Name())); err == nil {
			os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
		}
	}
	return dst
}

// warningCodes lists the codes of a probe report's warnings.
func warningCodes(rep *report.ProbeReport) []verdict.Code {
	var out []verdict.Code
	for _, w := range rep.Warnings {
		out = append(out, w.Code)
	}
	return out
}

// Judge fills a run's verdict, exit code, result and mismatches from a
// probe report. The run's exit code is the probe's verdict's alone
// (internal/exitcode): what `pullpath probe` would exit with on that node,
// whatever the expect block says (a run that did not probe keeps 0).
func Judge(run *report.LabRun, e *scenario.Expect, rep *report.ProbeReport) {
	v := rep.Verdict
	run.Verdict = &v
	run.ExitCode = exitcode.ForVerdict(v)
	run.Warnings = warningCodes(rep)
	run.Expect = e
	if e == nil {
		run.Result = report.LabUnchecked
		return
	}
	run.Mismatches = scenario.Check(e, v, run.Warnings)
	if len(run.Mismatches) == 0 {
		run.Result = report.LabPass
	} else {
		run.Result = report.LabMismatch
	}
}
