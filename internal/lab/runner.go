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

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
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
	Topology *Topology
	Network  *Network
	NodeNS   string // the node's namespace
	RunDir   string // the run's private folder (removed at teardown)
	// CAFile is the lab CA the node trusts (empty when the scenario's node
	// does not trust it); DockerConfig holds the node's credentials.
	CAFile       string
	DockerConfig string
	Image        string
	// Self is the pullpath binary the lab re-executes.
	Self string

	credProvider *CredentialProviderFiles // written by CredentialProviderFiles
}

// Command returns a command that runs argv inside namespace ns with a clean
// environment; the node's /etc/netns files are bind-mounted by `ip netns
// exec`. It is killed if the lab process dies.
func (e *Env) Command(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	return nsCommand(ctx, ns, argv...)
}

func nsCommand(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, argv...)...)
	cmd.Env = cleanEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
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

// Run builds the scenario's lab, starts its services, runs the probe in the
// node's namespace, runs the hooks, checks the verdict against expect and
// tears everything down (also when ctx is cancelled). A lab that cannot be
// built or run gives a run with result "error", never a panic.
func Run(ctx context.Context, t *Topology, o Options) *report.LabRun {
	r, _ := runScenario(ctx, t, o)
	return r
}

// Up builds the scenario's lab and leaves it running (no probe unless
// probe is true). Down tears it down.
func Up(ctx context.Context, t *Topology, o Options) (*report.LabRun, *KeptRun) {
	o.Keep = true
	return runScenario(ctx, t, o)
}

func runScenario(ctx context.Context, t *Topology, o Options) (*report.LabRun, *KeptRun) {
	if t.Cluster != nil {
		return runClusterScenario(ctx, t, o)
	}
	start := time.Now()
	r := &report.LabRun{
		Scenario:   t.Name,
		Source:     t.Source(),
		Summary:    t.Summary,
		Image:      t.ProbeImage(),
		Namespaces: len(t.Hosts),
		Expect:     t.Expect,
	}
	fail := func(err error) {
		r.Result = report.LabError
		r.Error = oneLine(redact.String(err.Error()))
	}
	self, err := o.self()
	if err != nil {
		fail(err)
		return r, nil
	}
	s, err := NewSession(ctx)
	if err != nil {
		fail(err)
		return r, nil
	}
	r.Node = s.Prefix + t.Node.Host
	var kept *KeptRun
	var svcs *services
	defer func() {
		if kept != nil {
			if svcs != nil {
				svcs.detach()
			}
			if err := s.Keep(kept); err != nil && r.Error == "" {
				fail(err)
			}
			r.Timings.TotalMS = msSince(start)
			return
		}
		td := time.Now()
		if svcs != nil {
			svcs.stop()
			if o.KeepLogs {
				r.LogDir = keepLogs(s.RunDir, o.LogRoot, t.Name, s.Prefix)
			}
		}
		if err := s.Close(); err != nil && r.Error == "" {
			fail(fmt.Errorf("teardown: %v", err))
		}
		r.Timings.TeardownMS = msSince(td)
		r.Timings.TotalMS = msSince(start)
	}()

	// 1. network
	o.logf("%s: building %d namespaces (prefix %s)", t.Name, len(t.Hosts), s.Prefix)
	phase := time.Now()
	n, err := Build(ctx, t, s.Prefix)
	if err == nil {
		err = n.Verify(ctx)
	}
	r.Timings.BuildMS = msSince(phase)
	if err != nil {
		fail(err)
		return r, nil
	}
	if _, err := n.WriteNodeFiles(); err != nil {
		fail(err)
		return r, nil
	}
	// 2. services
	phase = time.Now()
	env, configs, err := prepare(ctx, t, n, s.RunDir)
	if err != nil {
		fail(err)
		return r, nil
	}
	env.Self = self
	svcs, err = startServices(ctx, n, self, s.RunDir, configs, o.Keep)
	r.Timings.ServicesMS = msSince(phase)
	if err != nil {
		fail(err)
		return r, nil
	}
	if err := n.WaitLinks(ctx); err != nil {
		fail(err)
		return r, nil
	}
	r.Timings.ServicesMS = msSince(phase)
	o.logf("%s: services up in %.0f ms", t.Name, r.Timings.ServicesMS)
	if o.Keep {
		kept = &KeptRun{Name: t.Name, Source: t.Source(), NodeNS: n.NS[t.Node.Host], Namespace: n.NS, Started: start.UTC()}
	}
	if o.NoProbe {
		return r, kept
	}
	// 3. probe in the node's namespace
	phase = time.Now()
	rep, stderr, err := probe(ctx, t, env)
	r.Timings.ProbeMS = msSince(phase)
	if stderr != "" {
		os.WriteFile(filepath.Join(s.RunDir, "logs", "probe.stderr"), []byte(stderr), 0o644)
	}
	if err != nil {
		fail(err)
		return r, kept
	}
	r.Probe = rep
	// 4. hooks (runtime cross-check, ...)
	for _, h := range o.Hooks {
		if ctx.Err() != nil {
			break
		}
		hs := time.Now()
		c := h.Check(ctx, env, rep)
		if c.Name == "" {
			c.Name = h.Name()
		}
		if c.DurationMS == 0 {
			c.DurationMS = msSince(hs)
		}
		r.Checks = append(r.Checks, c)
	}
	// 5. the verdict against expect; a hook's failed check is a mismatch too
	judge(r, t.Expect, rep)
	for _, c := range r.Checks {
		if !c.OK {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("check %s: %s", c.Name, c.Detail))
			r.Result = report.LabMismatch
		}
	}
	if ctx.Err() != nil && r.Result != report.LabPass {
		fail(fmt.Errorf("interrupted: %v", ctx.Err()))
	}
	return r, kept
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// ProbeImage is the image reference the probe pulls.
func (t *Topology) ProbeImage() string {
	if t.Probe.Image != "" {
		return t.Probe.Image
	}
	if t.Registry == nil {
		return ""
	}
	host := t.Registry.Name
	if p := t.Registry.port(); p != 443 && !(p == 80 && t.Registry.TLS == "none") {
		host = fmt.Sprintf("%s:%d", host, p)
	}
	return host + "/" + t.Registry.Image.Repository + ":" + t.Registry.Image.Tag
}

// probe runs `pullpath probe -o json` in the node's namespace and parses its
// report.
func probe(ctx context.Context, t *Topology, env *Env) (*report.ProbeReport, string, error) {
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
		msg := oneLine(stderr)
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
