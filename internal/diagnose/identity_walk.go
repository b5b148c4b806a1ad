package diagnose

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep"
	"github.com/pullpath/pullpath/internal/units"
)

// identityWalk is the walk with the failing Pods' own pull identity,
// running beside the main walk.
type identityWalk struct {
	ns   string
	done chan struct{}
	rep  *report.SweepReport
	err  error
}

// startIdentityWalk starts, with UsePullSecrets, a walk whose Pods run in
// the failing Pods' namespace with their imagePullSecrets (the probe reads
// each as a Secret volume, the canary names them) and their
// ServiceAccount: the kubelet then builds the very identity it builds for
// the workload, and no Secret leaves its namespace. Without
// UsePullSecrets, or when the main walk already runs with that identity,
// it starts nothing and notes what the walk used instead.
func (d *diagnosis) startIdentityWalk(ctx context.Context, so sweep.Options) *identityWalk {
	id := d.r.Identity
	if id == nil {
		return nil
	}
	names := secretNames(id)
	id.WalkUsed = walkCredsWords(so)
	if id.Namespace == so.Namespace && slices.Equal(names, so.PullSecrets) {
		id.Walked = true
		return nil // the walk is the workload's identity already
	}
	if !d.o.UsePullSecrets {
		id.WalkNote = fmt.Sprintf("the walk used %s, not the Pods' own; --use-pull-secrets walks in namespace %s with theirs", walkCredsWords(so), id.Namespace)
		d.noteStep("identity", id.WalkNote)
		return nil
	}
	io := so
	io.Namespace = id.Namespace
	io.PullSecrets = names
	io.ServiceAccount = id.ServiceAccount
	io.RunID = sweep.NewRunID()
	io.Progress = nil
	w := &identityWalk{ns: id.Namespace, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.rep, w.err = sweep.Run(ctx, d.o.Client, io)
	}()
	return w
}

// finishIdentityWalk waits for the identity walk and keeps its report; it
// returns the words the walk step adds about it. A refusal (no right to
// create Pods in the workload's namespace, its Pod Security level) is not
// a failure of the diagnosis: the identity says which secret the kubelet
// would use and that the walk used another.
func (d *diagnosis) finishIdentityWalk(w *identityWalk) string {
	if w == nil {
		return ""
	}
	<-w.done
	id := d.r.Identity
	if w.err != nil {
		id.WalkNote = fmt.Sprintf("the walk with the Pods' own identity could not run in namespace %s: %s; the walk used %s", w.ns, units.OneLine(w.err.Error()), walkCredsWords(d.o.Sweep))
		d.noteStep("identity", id.WalkNote)
		return fmt.Sprintf("; not with the Pods' own identity in %s (%s)", w.ns, units.OneLine(w.err.Error()))
	}
	id.Walked = true
	d.r.IdentityWalk = w.rep
	v := w.rep.Verdict
	return fmt.Sprintf("; with the Pods' own identity in %s: %s, %d ok, %d failing, %d no answer", w.ns, plural(len(w.rep.Nodes), "node", "nodes"), v.OK, v.Failed, v.NoAnswer)
}

func secretNames(id *report.PullIdentity) []string {
	var out []string
	for _, s := range id.Secrets {
		out = append(out, s.Name)
	}
	return out
}

// walkCredsWords names the credentials the main walk used.
func walkCredsWords(so sweep.Options) string {
	if len(so.PullSecrets) == 0 {
		return "no pull secret (namespace " + so.Namespace + ")"
	}
	var names []string
	for _, s := range so.PullSecrets {
		names = append(names, "secret "+so.Namespace+"/"+s)
	}
	return strings.Join(names, ", ")
}

// noteStep adds a sentence to a step already recorded.
func (d *diagnosis) noteStep(name, note string) {
	for i := range d.r.Steps {
		if d.r.Steps[i].Name == name {
			d.r.Steps[i].Summary += "; " + note
			return
		}
	}
}
