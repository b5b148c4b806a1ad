package diagnose

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep"
	"github.com/pullpath/pullpath/internal/units"
)

// auditReserve is kept from the budget for the audit and the answer.
const auditReserve = 5 * time.Second

// walk sweeps the image from every failing group's node and one node per
// other group. It is skipped when there is no image, when asked, or when
// the budget is spent; a refusal of the API (no right to create Pods) is a
// failed step with the probe command to run by hand.
func (d *diagnosis) walk(ctx context.Context) {
	start := time.Now()
	image := d.r.Image
	switch {
	case image == "":
		s := d.step("walk", report.DiagnoseSkipped, "nothing to walk", 0)
		s.Reason = "no pull failure was read and no --image was given"
		s.Next = "pullpath sweep IMAGE --per pool"
		return
	case d.o.NoWalk:
		s := d.step("walk", report.DiagnoseSkipped, "the walk was not asked for", 0)
		s.Reason = "--no-walk"
		s.Next = d.sweepCommand(image)
		return
	}
	left := time.Until(d.deadline) - auditReserve
	if left < 10*time.Second {
		s := d.step("walk", report.DiagnoseSkipped, "no budget left for the walk", 0)
		s.Reason = fmt.Sprintf("%s of the budget left after reading", time.Until(d.deadline).Round(time.Second))
		s.Next = d.sweepCommand(image)
		return
	}

	so := d.o.Sweep
	so.Image = image
	so.Canary = d.o.Canary
	so.Timeout = left
	// A probe Pod that cannot start (its image unpullable, the node
	// stalled) must not eat the budget: half of it at most.
	if so.StartTimeout <= 0 || so.StartTimeout > left/2 {
		so.StartTimeout = left / 2
	}
	so.Plan.Image = image
	so.Plan.Prefer = d.failingNodes()
	if so.Progress == nil && d.o.Progress != nil {
		so.Progress = func(done, total int) { d.progress("walk: %d/%d nodes answered", done, total) }
	}
	d.progress("walk: sweeping %s from %s and one node per other group (budget %s)", image, plural(len(so.Plan.Prefer), "failing node", "failing nodes"), left.Round(time.Second))

	// The walk with the workload's own pull identity runs beside it, in
	// the workload's namespace (--use-pull-secrets).
	idWalk := d.startIdentityWalk(ctx, so)
	sw, err := sweep.Run(ctx, d.o.Client, so)
	idWords := d.finishIdentityWalk(idWalk)
	took := time.Since(start)
	if err != nil {
		s := d.step("walk", report.DiagnoseFailed, "the walk could not run"+idWords, took)
		s.Reason = units.OneLine(err.Error())
		s.Next = d.probeByHand(image)
		if missingNamespace(err, d.o.Sweep.Namespace) {
			s.Next = "kubectl apply -f deploy/sweep/ (the namespace, with the Pod Security label hostNetwork needs, and the RBAC), or --sweep-namespace; by hand: " + s.Next
		}
		return
	}
	d.r.Sweep = sw
	for _, n := range sw.Nodes {
		if _, ok := d.nodes[n.Name]; !ok {
			d.nodes[n.Name] = NodeRef{Name: n.Name, ProviderID: n.ProviderID, InternalIP: n.InternalIP, Pool: n.Pool, Zone: n.Zone, Subnet: n.Subnet}
		} else if ref := d.nodes[n.Name]; ref.ProviderID == "" {
			ref.ProviderID = n.ProviderID
			d.nodes[n.Name] = ref
		}
	}
	v := sw.Verdict
	s := fmt.Sprintf("%s walked in %s: %d ok, %d failing, %d no answer", plural(len(sw.Nodes), "node", "nodes"), plural(len(sw.Groups), "group", "groups"), v.OK, v.Failed, v.NoAnswer)
	if d.o.Canary {
		s += ", with the kubelet's canary"
	}
	d.step("walk", report.DiagnoseRan, s+idWords, took)
}

// failingNodes are the nodes explain saw failing, sorted.
func (d *diagnosis) failingNodes() []string {
	if d.group == nil {
		return nil
	}
	var out []string
	for _, n := range d.group.Nodes {
		if n.Status == report.NodeStatusFailed {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out
}

func (d *diagnosis) sweepCommand(image string) string {
	c := "pullpath sweep " + image + " --per pool"
	if d.o.Canary {
		c += " --canary"
	}
	return c
}

// probeByHand is the probe to run on a failing node when Pods cannot be made.
func (d *diagnosis) probeByHand(image string) string {
	node := "NODE"
	if f := d.failingNodes(); len(f) > 0 {
		node = f[0]
	}
	return fmt.Sprintf("kubectl debug node/%s -it --profile=sysadmin --image=IMAGE-WITH-PULLPATH -- pullpath probe %s --resolv-conf /host/etc/resolv.conf --hosts-file /host/etc/hosts --certs-dir /host/etc/containerd/certs.d --docker-certs-dir /host/etc/docker/certs.d", node, image)
}

// missingNamespace reports whether err is the API's NotFound for the
// namespace ns (the walk's Pods have nowhere to run).
func missingNamespace(err error, ns string) bool {
	var st apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &st) {
		return false
	}
	d := st.Status().Details
	return d != nil && d.Kind == "namespaces" && d.Name == ns
}
