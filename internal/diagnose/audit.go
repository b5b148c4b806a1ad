package diagnose

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// cloudNeed is a cloud the diagnosed nodes run on.
type cloudNeed struct {
	Cloud   nodeplace.Cloud
	Nodes   int
	Audited bool
	Next    string // how to audit it by hand
}

// byHand says how to collect a cloud's folder and feed it back.
func byHand(c nodeplace.Cloud) string {
	return fmt.Sprintf("%s, then pullpath diagnose ... %s DIR (or %s)", c.CollectCommand(nodeplace.Target{}), c.FromFlag(), c.FromCommand())
}

// audit runs the audit of the cloud the failing nodes run on, focused on
// them and on the failing host.
func (d *diagnosis) audit(ctx context.Context) {
	start := time.Now()
	failing, healthy := d.focusNodes()
	counts := map[nodeplace.Cloud]int{}
	for _, n := range failing {
		if c := nodeplace.CloudOf(n.ProviderID); c != "" {
			counts[c]++
		}
	}
	if len(counts) == 0 {
		for _, n := range healthy {
			if c := nodeplace.CloudOf(n.ProviderID); c != "" {
				counts[c]++
			}
		}
	}
	var clouds []nodeplace.Cloud
	for c := range counts {
		clouds = append(clouds, c)
	}
	sort.Slice(clouds, func(i, j int) bool {
		return counts[clouds[i]] > counts[clouds[j]] || (counts[clouds[i]] == counts[clouds[j]] && clouds[i] < clouds[j])
	})
	if len(clouds) == 0 {
		// No providerID names a cloud; an auditor given anyway still runs.
		for c := range d.o.Auditors {
			clouds = append(clouds, c)
		}
		slices.Sort(clouds)
	}
	if len(clouds) == 0 {
		s := d.step("audit", report.DiagnoseSkipped, "no cloud to audit", 0)
		s.Reason = "no node's spec.providerID names AWS, Azure or GCP, and no --from-aws, --from-azure or --from-gcp folder was given"
		return
	}
	cloud := clouds[0]
	need := cloudNeed{Cloud: cloud, Nodes: counts[cloud], Next: byHand(cloud)}
	au := d.o.Auditors[cloud]
	// Inside the budget, whatever the source.
	ctx, cancel := context.WithDeadline(ctx, d.deadline)
	defer cancel()
	if n := d.auditWait(); (au != nil || d.o.Live != nil) && n > 0 && time.Until(d.deadline) < n {
		d.clouds = append(d.clouds, need)
		s := d.step("audit", report.DiagnoseSkipped, "no budget left for the audit", 0)
		s.Reason = "the walk used the budget"
		s.Next = need.Next
		return
	}
	opened := false
	if au == nil && d.o.Live != nil {
		// No folder for this cloud: read it live, with its default
		// credential chain, found from the nodes.
		d.progress("audit: %s live: credentials, identity, cluster", cloud.Title())
		var err error
		if au, err = d.openLive(ctx, cloud, append(append([]NodeRef(nil), failing...), healthy...)); err != nil {
			need.Next = d.liveNext(cloud, err, append(failing, healthy...))
			d.clouds = append(d.clouds, need)
			status := report.DiagnoseFailed
			var ne *audit.NoCredentialsError
			if errors.As(err, &ne) {
				status = report.DiagnoseSkipped
			}
			s := d.step("audit", status, fmt.Sprintf("the nodes run on %s; the live audit could not read it", cloud.Title()), time.Since(start))
			s.Reason = units.OneLine(err.Error())
			s.Next = need.Next
			return
		}
		opened = true
	}
	if au == nil {
		d.clouds = append(d.clouds, need)
		s := d.step("audit", report.DiagnoseSkipped, fmt.Sprintf("the nodes run on %s; no %s configuration at hand", cloud.Title(), cloud.Title()), 0)
		s.Reason = fmt.Sprintf("no %s folder and no live %s access was given", cloud.FromFlag(), cloud.Title())
		s.Next = need.Next
		return
	}
	host, role, code := d.failingHost()
	f := auditFocus(failing, host, role, code)
	if d.group != nil {
		f.Image = d.group.Image // the registry a cloud audit reads (GCP: its project and repository)
	}
	d.progress("audit: %s configuration from %s, focused on %s", cloud.Title(), au.Source(), plural(len(failing), "failing node", "failing nodes"))
	ar, err := au.Audit(ctx, f)
	took := time.Since(start)
	if err != nil {
		if opened {
			need.Next = d.liveNext(cloud, err, failing)
		}
		d.clouds = append(d.clouds, need)
		s := d.step("audit", report.DiagnoseFailed, fmt.Sprintf("the %s audit could not run", cloud.Title()), took)
		s.Reason = units.OneLine(err.Error())
		s.Next = need.Next
		return
	}
	need.Audited = true
	d.clouds = append(d.clouds, need)
	d.r.Audit = ar
	var fails int
	for _, sn := range ar.Subnets {
		if sn.Verdict == report.StepFail {
			fails++
		}
	}
	sum := fmt.Sprintf("%s audit (%s): %s, %d failing; %s", cloud.Title(), au.Source(), plural(len(ar.Subnets), "subnet", "subnets"), fails, ar.Verdict.Summary)
	if denied := deniedPermissions(ar); len(denied) > 0 {
		sum += fmt.Sprintf("; %s denied, the checks that read them warn: %s", plural(len(denied), "call", "calls"), strings.Join(denied, ", "))
	}
	d.step("audit", report.DiagnoseRan, sum, took)
}

// auditWait is the least budget an audit needs.
func (d *diagnosis) auditWait() time.Duration { return time.Second }

// focusNodes are the nodes seen failing (walked or read) and the healthy ones.
func (d *diagnosis) focusNodes() (failing, healthy []NodeRef) {
	seen := map[string]bool{}
	add := func(name string, fail bool) {
		if seen[name] {
			return
		}
		seen[name] = true
		ref, ok := d.nodes[name]
		if !ok {
			ref = NodeRef{Name: name}
		}
		if fail {
			failing = append(failing, ref)
		} else {
			healthy = append(healthy, ref)
		}
	}
	if sw := d.r.Sweep; sw != nil {
		for _, n := range sw.Nodes {
			if n.Status == report.SweepFail {
				add(n.Name, true)
			}
		}
		for _, n := range sw.Nodes {
			if n.Status == report.SweepOK {
				add(n.Name, false)
			}
		}
	}
	if g := d.group; g != nil {
		for _, n := range g.Nodes {
			add(n.Name, n.Status == report.NodeStatusFailed)
		}
	}
	return failing, healthy
}

// failingHost is the failing host of the pull: the walk's, else the events'.
func (d *diagnosis) failingHost() (host, role, code string) {
	if sw := d.r.Sweep; sw != nil && sw.Verdict.Endpoint != "" {
		return sw.Verdict.Endpoint, string(sw.Verdict.Role), string(sw.Verdict.Code)
	}
	if g := d.group; g != nil {
		return g.Endpoint, "", string(g.Code)
	}
	return "", "", ""
}
