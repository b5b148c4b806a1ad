// Package sweepscale measures the control side of `pullpath sweep` at
// cluster scale: the real kube-apiserver and etcd
// (internal/testenv/controlplane) hold 5,000 Nodes in 300 pool x zone x
// subnet groups; a simulated kubelet (internal/sweep/simkubelet) answers
// every probe Pod with the status a kubelet would write (its termination
// message: a verdict, failing for one subnet). Nothing runs on a node:
// the figures are the CLI's plan, creates, one watch, aggregation and
// deletes, and the API requests they cost.
package sweepscale

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/probesummary"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep"
	"github.com/pullpath/pullpath/internal/sweep/simkubelet"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Shape is the cluster.
type Shape struct {
	Nodes, Pools, Zones, Subnets int
}

// DefaultShape: 5,000 nodes, 20 pools x 3 zones x 5 subnets = 300 groups.
var DefaultShape = Shape{Nodes: 5000, Pools: 20, Zones: 3, Subnets: 5}

// Groups is the number of pool x zone x subnet groups.
func (s Shape) Groups() int { return s.Pools * s.Zones * s.Subnets }

func (s Shape) group(i int) (pool, zone, subnet string) {
	g := i % s.Groups()
	return fmt.Sprintf("pool-%02d", g/(s.Zones*s.Subnets)),
		fmt.Sprintf("ap-northeast-2%c", 'a'+rune((g/s.Subnets)%s.Zones)),
		fmt.Sprintf("subnet-%02d-%d", g/(s.Zones*s.Subnets), g%s.Subnets)
}

// failing is the subnet whose nodes fail (seed 003's new subnet).
const failingSuffix = "-4"

func (s Shape) node(i int) *corev1.Node {
	pool, zone, subnet := s.group(i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ip-10-%d-%d-%d.ap-northeast-2.compute.internal", (i/62500)%256, (i/250)%250, i%250+1),
			Labels: map[string]string{
				"eks.amazonaws.com/nodegroup": pool, "topology.kubernetes.io/zone": zone, "pullpath.io/subnet": subnet,
				"kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "m6i.large",
			}},
		Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-%017x", zone, i)},
	}
}

// Config says what to run.
type Config struct {
	PullpathBin string
	Shape       Shape
	Log         io.Writer
	Modes       []string // "default", "all"
}

// Run is one timed sweep.
type Run struct {
	Mode            string  `json:"mode"`
	Nodes           int     `json:"nodes"`
	Chosen          int     `json:"chosen"`
	WallSec         float64 `json:"wallSec"`
	PeakRSSMiB      float64 `json:"peakRssMiB"`
	CPUSec          float64 `json:"cpuSec"`
	Requests        int64   `json:"requests"` // the CLI's API requests (apiserver count minus the simulator's)
	RequestsPerNode float64 `json:"requestsPerNode"`
	Pattern         string  `json:"pattern"`
	Failed          int     `json:"failed"`
	OK              int     `json:"ok"`
	ExitCode        int     `json:"exitCode"`
	Leftovers       int     `json:"leftovers"`
}

// Result is the whole benchmark.
type Result struct {
	Shape     Shape   `json:"shape"`
	LoadSec   float64 `json:"loadSec"`
	Runs      []Run   `json:"runs"`
	Simulated string  `json:"simulated"`
}

// Measure starts the control plane, loads the nodes and times each mode.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	logf := func(f string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, f+"\n", a...)
		}
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		return nil, err
	}
	defer cp.Stop()
	c, err := cp.Client()
	if err != nil {
		return nil, err
	}
	res := &Result{Shape: cfg.Shape, Simulated: "Pod statuses written by internal/sweep/simkubelet (no kubelet runs); the apiserver and etcd are real"}
	began := time.Now()
	if err := load(ctx, c, cfg.Shape); err != nil {
		return nil, err
	}
	res.LoadSec = time.Since(began).Seconds()
	logf("loaded %d nodes in %.1fs", cfg.Shape.Nodes, res.LoadSec)
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pullpath-sweep"}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	okMsg := summary(verdict.StatusOK, verdict.OK, "", "")
	failMsg := summary(verdict.StatusFail, "CONNECT_TIMEOUT", verdict.ConditionEndpointSet, "prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com")
	sim, err := simkubelet.Start(ctx, c, "pullpath-sweep", sweep.CleanupSelector, 16, func(p *corev1.Pod) simkubelet.Action {
		if strings.HasSuffix(nodeSubnet(p.Spec.NodeName, cfg.Shape), failingSuffix) {
			return simkubelet.Action{Terminated: true, ExitCode: 5, Message: failMsg}
		}
		return simkubelet.Action{Terminated: true, Message: okMsg}
	})
	if err != nil {
		return nil, err
	}
	defer sim.Stop()
	for _, mode := range cfg.Modes {
		run, err := timeOne(ctx, cfg, cp, c, sim, mode)
		if err != nil {
			return res, err
		}
		logf("%s: %d nodes in %.1fs, %.2f requests/node, peak RSS %.1f MiB, %s", mode, run.Chosen, run.WallSec, run.RequestsPerNode, run.PeakRSSMiB, run.Pattern)
		res.Runs = append(res.Runs, *run)
	}
	return res, nil
}

// nodeSubnet reverses the node name to its subnet (the simulator knows
// only the Pod's nodeName).
var subnetOf sync.Map

func nodeSubnet(name string, s Shape) string {
	if v, ok := subnetOf.Load(name); ok {
		return v.(string)
	}
	return ""
}

func load(ctx context.Context, c kubernetes.Interface, s Shape) error {
	work := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				n := s.node(i)
				_, _, subnet := s.group(i)
				subnetOf.Store(n.Name, subnet)
				created, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
				if err == nil {
					created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
					created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.%d", (i/62500)%256, (i/250)%250, i%250+1)}}
					created.Status.Images = []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 1 << 10}}
					_, err = c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
				}
				if err != nil {
					select {
					case errs <- fmt.Errorf("load node %d: %v", i, err):
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < s.Nodes; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func summary(st verdict.Status, code verdict.Code, cond verdict.Condition, failHost string) string {
	r := &report.ProbeReport{Image: "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/api:1.4.2"}
	r.Verdict = verdict.Verdict{Status: st, Code: code, Condition: cond, Endpoint: failHost, Role: verdict.RoleBlob, Cause: verdict.CauseTimeout}
	for _, h := range []string{"123456789012.dkr.ecr.ap-northeast-2.amazonaws.com", "prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com"} {
		e := &report.Endpoint{Host: h, Role: verdict.RoleRegistry, Status: report.StepPass}
		if strings.Contains(h, "s3") {
			e.Role = verdict.RoleBlob
		}
		if h == failHost {
			e.Status, e.Code = report.StepFail, code
		}
		r.Endpoints = append(r.Endpoints, e)
	}
	return string(probesummary.Of(r).Marshal())
}

func timeOne(ctx context.Context, cfg Config, cp *controlplane.ControlPlane, c kubernetes.Interface, sim *simkubelet.Sim, mode string) (*Run, error) {
	before, err := requestCount(ctx, c)
	if err != nil {
		return nil, err
	}
	simBefore := sim.Requests.Load()
	argv := []string{cfg.PullpathBin, "sweep", "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/api:1.4.2",
		"--kubeconfig", cp.Kubeconfig, "--image-for-probe", "ghcr.io/pullpath/pullpath:bench", "-o", "json", "--timeout", "15m"}
	if mode == "all" {
		argv = append(argv, "--all")
	}
	m, err := measure.Run(ctx, measure.Cmd{Argv: argv, Timeout: 20 * time.Minute})
	if err != nil {
		return nil, err
	}
	after, err := requestCount(ctx, c)
	if err != nil {
		return nil, err
	}
	var r report.SweepReport
	if err := json.Unmarshal(m.Stdout, &r); err != nil {
		return nil, fmt.Errorf("%s: output is not a SweepReport: %v; stderr: %s", mode, err, m.Stderr)
	}
	pods, owners, err := sweep.Leftovers(ctx, c, "pullpath-sweep")
	if err != nil {
		return nil, err
	}
	run := &Run{Mode: mode, Nodes: cfg.Shape.Nodes, Chosen: len(r.Nodes), WallSec: m.Wall.Seconds(), PeakRSSMiB: m.PeakRSSMiB(), CPUSec: m.CPUSec(),
		Pattern: r.Verdict.Pattern, Failed: r.Verdict.Failed, OK: r.Verdict.OK, ExitCode: m.ExitCode, Leftovers: pods + owners}
	// The CLI's requests: the apiserver's count between the two reads,
	// less the simulator's and the first read itself.
	run.Requests = after - before - (sim.Requests.Load() - simBefore) - 1
	if run.Chosen > 0 {
		run.RequestsPerNode = float64(run.Requests) / float64(run.Chosen)
	}
	return run, nil
}

// requestCount sums apiserver_request_total over every label set.
func requestCount(ctx context.Context, c kubernetes.Interface) (int64, error) {
	b, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("apiserver /metrics: %v", err)
	}
	var total float64
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "apiserver_request_total{") {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			total += v
		}
	}
	return int64(total), nil
}
