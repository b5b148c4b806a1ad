package diagnose

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/clouds"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

// Live says how diagnose reaches the clouds' APIs when no folder was given
// for the cloud the nodes run on. Nil: no live audit (--no-cloud).
type Live struct {
	// Options are a cloud's live options where the caller names some (the
	// CLI's flags: the AWS profile and region, the GCP project; tests'
	// endpoints and credentials). A cloud not here is read with its
	// provider's defaults: its default credential chain, the target found
	// from the nodes.
	Options map[nodeplace.Cloud]audit.Live
}

// of is the cloud's live options, and its provider.
func (l *Live) of(c nodeplace.Cloud) (audit.Live, audit.Provider, bool) {
	p, ok := clouds.Of(c)
	if !ok {
		return nil, p, false
	}
	if o := l.options(c); o != nil {
		return o, p, true
	}
	return p.Live, p, true
}

func (l *Live) options(c nodeplace.Cloud) audit.Live {
	if l == nil {
		return nil
	}
	return l.Options[c]
}

// openLive opens the live audit of cloud, found from the nodes: the
// credentials of the default chain (checked, and who they are), the region
// and the cluster. A cloud it cannot open returns the error that says why:
// *audit.NoCredentialsError, *audit.DeniedError (the permission), or
// another one-line error.
func (d *diagnosis) openLive(ctx context.Context, cloud nodeplace.Cloud, nodes []NodeRef) (Auditor, error) {
	live, _, ok := d.o.Live.of(cloud)
	if !ok {
		return nil, fmt.Errorf("no live %s audit in this build", cloud.Title())
	}
	return live.Open(ctx, auditNodes(nodes))
}

// liveNext is how to audit a cloud by hand when the live audit could not
// read it: the collect command, as an identity allowed what was missing.
func (d *diagnosis) liveNext(cloud nodeplace.Cloud, err error, nodes []NodeRef) string {
	live, p, ok := d.o.Live.of(cloud)
	if !ok {
		return byHand(cloud)
	}
	return fmt.Sprintf("%s as an identity allowed %s, then pullpath diagnose ... %s DIR",
		cloud.CollectCommand(live.Target(auditNodes(nodes))), allowed(err, p.Permissions), cloud.FromFlag())
}

// auditNodes are the nodes as a cloud audit reads them.
func auditNodes(nodes []NodeRef) []audit.Node {
	out := make([]audit.Node, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, audit.Node{Name: n.Name, ProviderID: n.ProviderID, Pool: n.Pool})
	}
	return out
}

// allowed is what the identity of a collect by hand needs: the permission
// that was denied (and to whom), else all of them (and why none worked).
func allowed(err error, all []string) string {
	var de *audit.DeniedError
	var ne *audit.NoCredentialsError
	perms := strings.Join(all, ", ")
	switch {
	case errors.As(err, &de):
		perms = de.Permission + " (denied to " + cmp.Or(de.Identity, "these credentials") + ")"
	case errors.As(err, &ne):
		perms += " (" + ne.Error() + ")"
	}
	return perms
}

// deniedPermissions are the permissions a live audit was refused for the
// calls it could go without (their checks warn), as its warnings carry them.
func deniedPermissions(ar *report.AuditReport) []string {
	var out []string
	for _, w := range ar.Warnings {
		if w.Permission != "" && !slices.Contains(out, w.Permission) {
			out = append(out, w.Permission)
		}
	}
	return out
}
