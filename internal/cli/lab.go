package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/cluster"
	"github.com/pullpath/pullpath/internal/lab/labhook"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

const labLong = `Reproduce pull-path faults for real and watch pullpath name them.

A scenario is a file of hosts (one Linux network namespace each),
subnets, routes (one-way ones too), firewall rules (security groups, NACLs, a
NAT that drops), DNS servers and their answers, the registry (the reference
registry, with Basic or Bearer auth), its token service and the blob host it
redirects layers to, TLS from a lab CA (or an untrusted one, a wrong name, an
expired certificate), and the verdict to expect. See docs/lab.md.

Everything but "demo" needs root: the lab builds network namespaces joined
by veth pairs, never touching the machine's own namespace and giving no
namespace a default route; it runs the services and "pullpath probe" inside
them and tears everything down afterwards, also on Ctrl-C.`

const labExample = `  # No root, a few seconds: a healthy pull and a broken one side by side
  pullpath lab demo

  # The built-in scenarios, and one of them for real
  pullpath lab list
  sudo pullpath lab run ecr-sg-drops-443

  # Every built-in scenario, checked against its expect block
  sudo pullpath lab test --parallel 3

  # Your own network, kept up so you can step into the node
  sudo pullpath lab up my-network.yaml
  sudo pullpath lab down`

func newLabCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "lab",
		Short:   "Reproduce every pull-path fault for real, in network namespaces",
		Long:    labLong,
		Example: labExample,
		Args:    cobra.NoArgs,
		// Labs are network namespaces: off Linux every lab command says so
		// in one line instead of failing half-way.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return lab.Supported()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(
		newLabListCommand(s),
		newLabRunCommand(s),
		newLabTestCommand(s),
		newLabUpCommand(s),
		newLabDownCommand(s),
		newLabDemoCommand(s),
		newLabServeCommand(s),
		newLabForwardCommand(s),
		newLabCredentialProviderCommand(s),
	)
	return cmd
}

// labContext makes Ctrl-C and SIGTERM cancel the run, so the teardown runs
// even when main's own signal context is not in place (tests).
func labContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func needRoot(what string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s needs root (it creates network namespaces); try `pullpath lab demo`, which does not", what)
	}
	return nil
}

type labListOptions struct{ streams Streams }

func newLabListCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios",
		Args:  cobra.NoArgs,
		RunE:  runE(&labListOptions{streams: s}),
	}
}

func (o *labListOptions) Complete(*cobra.Command, []string) error { return nil }
func (o *labListOptions) Validate() error                         { return nil }

func (o *labListOptions) Run(context.Context) error {
	tw := tabwriter.NewWriter(o.streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tEXPECT\tSUMMARY")
	for _, name := range scenario.Builtins() {
		t, err := scenario.LoadBuiltin(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, expectShort(t.Expect)+clusterExpectShort(t), t.Summary)
	}
	return tw.Flush()
}

func expectShort(e *scenario.Expect) string {
	if e == nil {
		return "-"
	}
	if e.Status == verdict.StatusOK {
		if len(e.Warnings) > 0 {
			var ws []string
			for _, w := range e.Warnings {
				ws = append(ws, string(w))
			}
			return "ok+" + strings.Join(ws, ",")
		}
		return "ok"
	}
	parts := []string{}
	for _, p := range []string{string(e.Condition), string(e.Code)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// addRuntimeFlag adds --runtime: the real container runtime's pull as an
// extra check of each run (internal/lab/labhook).
func addRuntimeFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "runtime", "", "also pull with this real container runtime in the node's namespace and check what it says ("+strings.Join(labhook.Runtimes, ", ")+")")
}

type labRunOptions struct {
	output
	streams  Streams
	keepLogs bool
	runtime  string
	topo     *scenario.Scenario
}

func newLabRunCommand(s Streams) *cobra.Command {
	o := &labRunOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "run SCENARIO|FILE",
		Short: "Build a scenario, probe from its node, print the report, tear it down",
		Long: `Build the scenario's namespaces and services, run "pullpath probe" inside the
node's namespace (with the node's resolv.conf, hosts file, CA and docker
config), print its report and check it against the scenario's expect block,
then tear everything down (also on failure and Ctrl-C).

The exit code is the probe's (` + fmt.Sprint(exitOK) + ` ok, else the verdict's condition:
` + exitConditions() + `); ` + fmt.Sprint(exitError) + ` when the lab itself could not run; ` + fmt.Sprint(exitMismatch) + ` when the verdict differs from expect.`,
		Example: `  sudo pullpath lab run ecr-healthy
  sudo pullpath lab run ./my-network.yaml -o json
  sudo pullpath lab run acr-token-host-unreachable --keep-logs`,
		Args: exactArgs("SCENARIO|FILE"),
		RunE: runE(o),
	}
	o.addFlag(cmd)
	cmd.Flags().BoolVar(&o.keepLogs, "keep-logs", false, "keep the services' logs and the probe's stderr in a folder under $TMPDIR")
	addRuntimeFlag(cmd, &o.runtime)
	return cmd
}

func (o *labRunOptions) Complete(_ *cobra.Command, args []string) error {
	t, err := scenario.Load(args[0])
	o.topo = t
	return err
}

func (o *labRunOptions) Validate() error {
	if err := o.output.validate(); err != nil {
		return err
	}
	return needRoot("lab run")
}

func (o *labRunOptions) Run(ctx context.Context) error {
	ctx, cancel := labContext(ctx)
	defer cancel()
	hooks, err := labhook.ForRuntime(ctx, o.runtime)
	if err != nil {
		return err
	}
	rep := report.NewLabReport(report.LabModeRun)
	rep.Runs = append(rep.Runs, lab.Run(ctx, o.topo, lab.Options{KeepLogs: o.keepLogs, Hooks: hooks, Cluster: cluster.Run}))
	rep.Finish(1)
	return o.finish(o.streams.Out, rep)
}

type labTestOptions struct {
	output
	streams  Streams
	parallel int
	keepLogs bool
	runtime  string
	topos    []*scenario.Scenario
}

func newLabTestCommand(s Streams) *cobra.Command {
	o := &labTestOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "test [SCENARIO|FILE...]",
		Short: "Run scenarios (all built-in ones by default) and check each against its expect block",
		Long: `Run every built-in scenario (or the ones named), several at a time, each in its
own namespaces, and check the probe's verdict against the scenario's expect
block (status, condition, cause, stage, code, endpoint role, warnings).

One line per scenario with its duration and verdict, then a summary. Exit ` + fmt.Sprint(exitOK) + `
when every verdict matched, ` + fmt.Sprint(exitMismatch) + ` when one differed, ` + fmt.Sprint(exitError) + ` when a scenario could not
run.`,
		Example: `  sudo pullpath lab test
  sudo pullpath lab test --parallel 4 -o json
  sudo pullpath lab test ecr-healthy ecr-one-way-route`,
		RunE: runE(o),
	}
	o.addFlag(cmd)
	cmd.Flags().IntVar(&o.parallel, "parallel", 3, "scenarios run at once (1-8)")
	cmd.Flags().BoolVar(&o.keepLogs, "keep-logs", false, "keep each scenario's service logs in a folder under $TMPDIR")
	addRuntimeFlag(cmd, &o.runtime)
	return cmd
}

func (o *labTestOptions) Complete(_ *cobra.Command, args []string) error {
	topos, err := scenario.LoadAll(args)
	o.topos = topos
	return err
}

func (o *labTestOptions) Validate() error {
	if err := o.output.validate(); err != nil {
		return err
	}
	if o.parallel < 1 || o.parallel > 8 {
		return fmt.Errorf("--parallel %d: want 1 to 8", o.parallel)
	}
	return needRoot("lab test")
}

func (o *labTestOptions) Run(ctx context.Context) error {
	s := o.streams
	ctx, cancel := labContext(ctx)
	defer cancel()
	var progress func(*report.LabRun)
	if (o.format == "text" || o.format == "wide") && isTerminal(s.ErrOut) {
		// a line per scenario as it ends, on stderr when stdout is a file
		start := time.Now()
		progress = func(r *report.LabRun) {
			fmt.Fprintf(s.ErrOut, "  [%5.1fs] %-5s %s\n", time.Since(start).Seconds(), r.Result, r.Scenario)
		}
	}
	hooks, err := labhook.ForRuntime(ctx, o.runtime)
	if err != nil {
		return err
	}
	rep := lab.Test(ctx, o.topos, o.parallel, lab.Options{KeepLogs: o.keepLogs, Hooks: hooks, Cluster: cluster.Run}, progress)
	return o.finish(s.Out, rep)
}

type labUpOptions struct {
	streams Streams
	probe   bool
	images  []string
	topo    *scenario.Scenario
}

func newLabUpCommand(s Streams) *cobra.Command {
	o := &labUpOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "up SCENARIO|FILE",
		Short: "Build a scenario and leave it running; step into its node with ip netns exec",
		Args:  exactArgs("SCENARIO|FILE"),
		RunE:  runE(o),
	}
	cmd.Flags().BoolVar(&o.probe, "probe", false, "also run the probe once and print its verdict")
	cmd.Flags().StringArrayVar(&o.images, "import-image", nil, "an image tarball to import into every node of a cluster scenario (e.g. pullpath's own, from go run ./hack/image --tarball FILE), so sweep and diagnose run there; repeatable")
	return cmd
}

func (o *labUpOptions) Complete(_ *cobra.Command, args []string) error {
	t, err := scenario.Load(args[0])
	o.topo = t
	return err
}

func (o *labUpOptions) Validate() error {
	for _, img := range o.images {
		if o.topo != nil && o.topo.Cluster == nil {
			return fmt.Errorf("--import-image %s: scenario %s has no cluster to import it into", img, o.topo.Name)
		}
		if st, err := os.Stat(img); err != nil || st.IsDir() {
			return fmt.Errorf("--import-image %s: want an image tarball file (go run ./hack/image --tarball FILE)", img)
		}
	}
	return needRoot("lab up")
}

func (o *labUpOptions) Run(ctx context.Context) error {
	out, t := o.streams.Out, o.topo
	ctx, cancel := labContext(ctx)
	defer cancel()
	r, kept := lab.Up(ctx, t, lab.Options{NoProbe: !o.probe, Images: o.images, Cluster: cluster.Run})
	if r.Result == report.LabError && kept == nil {
		return errors.New(r.Error)
	}
	fmt.Fprintf(out, "lab %s is up: %d namespaces, prefix %s\n", t.Name, len(kept.Namespace), kept.Prefix)
	for _, h := range sortedHosts(kept.Namespace) {
		fmt.Fprintf(out, "  %-12s %s\n", h, kept.Namespace[h])
	}
	self, _ := os.Executable()
	fmt.Fprintf(out, "\nStep into the node (its resolv.conf and hosts come from /etc/netns/%s):\n", kept.NodeNS)
	fmt.Fprintf(out, "  sudo ip netns exec %s bash\n", kept.NodeNS)
	fmt.Fprintf(out, "  sudo ip netns exec %s %s probe %s --registry-ca %s/node/ca.crt --docker-config %s/node/config.json\n",
		kept.NodeNS, self, t.ProbeImage(), kept.RunDir, kept.RunDir)
	if kept.Kubeconfig != "" {
		printLabCluster(out, t, kept, r)
	}
	fmt.Fprintf(out, "Service logs: %s/logs\nTear it down: sudo pullpath lab down %s\n", kept.RunDir, t.Name)
	if r.Verdict != nil {
		fmt.Fprintf(out, "\nprobe verdict: %s %s %s\n", r.Verdict.Status, r.Verdict.Condition, r.Verdict.Code)
	}
	return nil
}

func sortedHosts(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type labDownOptions struct {
	streams Streams
	names   map[string]bool
}

func newLabDownCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "down [SCENARIO...]",
		Short: "Tear down labs left up by lab up (all, or the named ones), and sweep leftovers of killed runs",
		RunE:  runE(&labDownOptions{streams: s}),
	}
}

func (o *labDownOptions) Complete(_ *cobra.Command, args []string) error {
	o.names = map[string]bool{}
	for _, a := range args {
		o.names[a] = true
	}
	return nil
}

func (o *labDownOptions) Validate() error { return needRoot("lab down") }

func (o *labDownOptions) Run(ctx context.Context) error {
	out := o.streams.Out
	kept, err := lab.KeptRuns()
	if err != nil {
		return err
	}
	var errs []string
	n := 0
	for _, k := range kept {
		if len(o.names) > 0 && !o.names[k.Name] && !o.names[k.Prefix] {
			continue
		}
		if err := lab.Down(k); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		n++
		fmt.Fprintf(out, "lab %s (%s) is down\n", k.Name, k.Prefix)
	}
	swept, err := lab.Sweep(ctx)
	if err != nil {
		errs = append(errs, err.Error())
	}
	for _, p := range swept {
		fmt.Fprintf(out, "swept leftovers of a killed run (%s)\n", p)
	}
	if n == 0 && len(swept) == 0 && len(errs) == 0 {
		fmt.Fprintln(out, "no lab is up")
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

type labDemoOptions struct {
	output
	streams Streams
}

func newLabDemoCommand(s Streams) *cobra.Command {
	o := &labDemoOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "No root, a few seconds: a healthy pull and a broken one side by side, on loopback",
		Long: `Start the lab's services on loopback addresses (127.0.0.0/8 only): a DNS
server, a registry with Bearer auth, its token service and the blob host it
redirects layers to. Then probe two paths with the very same probe a node
runs: a healthy pull, and one where the blob host is down while the registry
answers. Needs no root and no setup.`,
		Args: cobra.NoArgs,
		RunE: runE(o),
	}
	o.addFlag(cmd)
	return cmd
}

func (o *labDemoOptions) Complete(*cobra.Command, []string) error { return nil }
func (o *labDemoOptions) Validate() error                         { return o.output.validate() }

func (o *labDemoOptions) Run(ctx context.Context) error {
	ctx, cancel := labContext(ctx)
	defer cancel()
	rep, err := lab.Demo(ctx, lab.DemoOptions{})
	if err != nil {
		return err
	}
	return o.finish(o.streams.Out, rep)
}

type labServeOptions struct {
	streams       Streams
	config, ready string
	serve         *lab.ServeConfig
}

func newLabServeCommand(s Streams) *cobra.Command {
	o := &labServeOptions{streams: s}
	cmd := &cobra.Command{
		Use:    "serve --config FILE",
		Short:  "Run one lab host's services (started by the lab inside a namespace)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   runE(o),
	}
	cmd.Flags().StringVar(&o.config, "config", "", "serve config (JSON) written by the lab")
	cmd.Flags().StringVar(&o.ready, "ready", "", "file to write once every service listens")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func (o *labServeOptions) Complete(*cobra.Command, []string) error {
	c, err := lab.ReadServeConfig(o.config)
	o.serve = c
	return err
}

func (o *labServeOptions) Validate() error { return nil }

func (o *labServeOptions) Run(ctx context.Context) error {
	ctx, cancel := labContext(ctx)
	defer cancel()
	return lab.Serve(ctx, o.serve, o.ready, o.streams.ErrOut)
}
