// Package diagnose joins pullpath's steps into one answer, in the order of
// the diagnosis method: read the failure (explain), walk the pull from a
// failing node and a healthy-looking node of every other group (sweep),
// find the cloud object that differs (the cloud's audit: AWS, Azure or GCP,
// from internal/audit's list of providers), and say the
// broken link, the objects to change and the command that proves the fix.
//
// Every step that cannot run is skipped with its reason and the command
// that would do it by hand, and the answer says what it rests on: a
// diagnosis without Pod permissions falls back to the events and the
// audit, one without cloud access names the audit to run.
package diagnose

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep"
	"github.com/pullpath/pullpath/internal/units"
)

// DefaultBudget bounds a diagnosis: the walk gets what the read left.
const DefaultBudget = 2 * time.Minute

// Options configure a diagnosis.
type Options struct {
	Client kubernetes.Interface
	Target cluster.Target
	// Image picks the image to diagnose when several fail, or the image to
	// walk when nothing fails.
	Image string
	// Budget bounds the whole diagnosis (default DefaultBudget).
	Budget time.Duration
	Canary bool
	// NoWalk skips the walk (--no-walk): the answer rests on the events
	// and the audit.
	NoWalk bool
	// UsePullSecrets also walks with the failing Pods' own pull identity
	// (--use-pull-secrets): Pods in the workload's namespace with its
	// imagePullSecrets and ServiceAccount, beside the walk in
	// Sweep.Namespace. No Secret leaves its namespace.
	UsePullSecrets bool
	// Sweep is the walk's configuration: the probe image, namespace and
	// the probe's node paths. Image, Canary, Timeout and Prefer are set by
	// diagnose.
	Sweep sweep.Options
	// Auditors are the cloud audits at hand, by cloud: offline from a
	// collected folder (a provider's Folder) or live. A cloud without one
	// is read live when Live is set, else named in the answer with the
	// command that collects its folder.
	Auditors map[nodeplace.Cloud]Auditor
	// Live reads the cloud the nodes run on through its API with its
	// default credential chain when no folder was given for it (nil:
	// --no-cloud).
	Live *Live
	// Progress, when set, is told what each step is doing (stderr on a TTY).
	Progress func(format string, args ...any)
	PageSize int64
}

// Auditor is one cloud's audit with its configuration at hand (a folder
// or the live API), called with the failing nodes and host as its focus.
type Auditor = audit.Auditor

// NodeRef is a node as a cloud audit finds it.
type NodeRef struct {
	Name       string `json:"name"`
	ProviderID string `json:"providerID,omitempty"`
	InternalIP string `json:"internalIP,omitempty"`
	Pool       string `json:"pool,omitempty"`
	Zone       string `json:"zone,omitempty"`
	Subnet     string `json:"subnet,omitempty"`
}

// Run diagnoses the target.
//
//  1. Read: explain's findings and node correlation for the target, and
//     the failing Pods' pull identity as the kubelet builds it.
//  2. Walk: sweep the failing image from every failing group's node and one
//     node per other group, with the probe (and the real kubelet with
//     Canary), within what is left of the budget; with UsePullSecrets,
//     also as the failing Pods' own identity, in their namespace.
//  3. Audit: the cloud the nodes' providerID names, focused on the failing
//     nodes and host, when an auditor is at hand.
//  4. Answer: the broken link, the repair direction, the objects to
//     change, and the command that proves the fix.
func Run(ctx context.Context, o Options) (*report.DiagnoseReport, error) {
	if o.Client == nil {
		return nil, errors.New("diagnose: no cluster client")
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	start := time.Now()
	deadline := start.Add(o.Budget)
	r := &report.DiagnoseReport{APIVersion: report.APIVersion, Kind: report.DiagnoseKind, StartedAt: start.UTC(), BudgetMS: units.MS(o.Budget)}
	d := &diagnosis{o: o, r: r, deadline: deadline}

	// 1. Read, and the failing Pods' pull identity.
	if err := d.read(ctx); err != nil {
		return nil, err
	}
	d.identity(ctx)
	// 2. Walk.
	d.walk(ctx)
	// 3. Audit.
	d.audit(ctx)
	// 4. Answer.
	r.Answer = Answer(r, d.clouds)
	r.DurationMS = units.MS(time.Since(start))
	return r, nil
}

type diagnosis struct {
	o        Options
	r        *report.DiagnoseReport
	deadline time.Time
	group    *report.ExplainGroup // the image diagnosed, as explain read it
	nodes    map[string]NodeRef   // nodes seen, by name
	clouds   []cloudNeed          // clouds the nodes run on, and whether an audit ran
}

func (d *diagnosis) progress(format string, args ...any) {
	if d.o.Progress != nil {
		d.o.Progress(format, args...)
	}
}

func (d *diagnosis) step(name string, status report.DiagnoseStepStatus, summary string, took time.Duration) *report.DiagnoseStep {
	d.r.Steps = append(d.r.Steps, report.DiagnoseStep{Name: name, Status: status, Summary: summary, DurationMS: units.MS(took)})
	return &d.r.Steps[len(d.r.Steps)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
