package diagnose

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	azureaudit "github.com/pullpath/pullpath/internal/audit/azure"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/report"
)

// Live says how diagnose reaches the clouds' APIs when no folder was given
// for the cloud the nodes run on: each cloud's default credential chain,
// and what narrows it (the AWS profile and region). Nil: no live audit
// (--no-cloud).
type Live struct {
	// AWS: Profile, Region and Cluster narrow the default chain and the
	// target; EndpointURL and Config are for emulators and tests.
	AWS awsaudit.LiveOptions
	// GCP: Project, Location and Cluster narrow the target (default: the
	// project of the nodes' gce:// providerIDs, the cluster and location
	// their instance's GKE labels name); Endpoint is for tests.
	// Credentials: Application Default Credentials.
	GCP gcpaudit.LiveOptions
	// Azure: Subscription, ResourceGroup and Cluster narrow the target
	// (found from the nodes' providerID otherwise); Credential and
	// ClientOptions are for other clouds and tests (nil:
	// DefaultAzureCredential, public Azure).
	Azure azureaudit.LiveOptions
}

// maxLiveInstances bounds the instances a live AWS audit asks about to
// find its cluster.
const maxLiveInstances = 50

// openLive opens the live audit of cloud, found from the nodes: the
// credentials of the default chain (checked, and who they are), the region
// and the cluster. A cloud it cannot open returns the error that says why:
// *audit.NoCredentialsError, *audit.DeniedError (the permission), or
// another one-line error.
func (d *diagnosis) openLive(ctx context.Context, cloud string, nodes []NodeRef) (Auditor, error) {
	switch cloud {
	case "aws":
		return d.openAWS(ctx, nodes)
	case "gcp":
		return d.openGCP(ctx, nodes)
	case "azure":
		return d.openAzure(ctx, nodes)
	}
	return nil, fmt.Errorf("no live %s audit in this build", cloudName(cloud))
}

func (d *diagnosis) openAWS(ctx context.Context, nodes []NodeRef) (Auditor, error) {
	o := d.o.Live.AWS
	var ids []string
	zone := ""
	for _, n := range nodes {
		z, id, ok := awsaudit.InstanceOf(n.ProviderID)
		if !ok || len(ids) >= maxLiveInstances || contains(ids, id) {
			continue
		}
		ids = append(ids, id)
		if zone == "" {
			zone = z
		}
	}
	if o.Region == "" {
		o.Region = awsaudit.RegionOfZone(zone)
	}
	t, err := awsaudit.FindTarget(ctx, o, ids)
	if err != nil {
		return nil, err
	}
	o.Cluster, o.Region, o.Config = t.Cluster, t.Region, &t.Config
	return liveAuditor{
		source: fmt.Sprintf("live as %s, cluster %s in %s", t.Identity, t.Cluster, t.Region),
		run:    func(ctx context.Context, f audit.Focus) (*report.AuditReport, error) { return awsaudit.Live(ctx, o, f) },
	}, nil
}

func (d *diagnosis) openAzure(ctx context.Context, nodes []NodeRef) (Auditor, error) {
	o := d.o.Live.Azure
	sub, nodeRG := azureNodes(nodes, o.Subscription)
	if o.Subscription == "" {
		o.Subscription = sub
	}
	t, err := azureaudit.FindTarget(ctx, o, nodeRG)
	if err != nil {
		return nil, err
	}
	o.Subscription, o.ResourceGroup, o.Cluster, o.Credential = t.Subscription, t.ResourceGroup, t.Cluster, t.Credential
	return liveAuditor{
		source: fmt.Sprintf("live as %s, cluster %s in resource group %s", t.Identity, t.Cluster, t.ResourceGroup),
		run: func(ctx context.Context, f audit.Focus) (*report.AuditReport, error) {
			return azureaudit.Live(ctx, o, f)
		},
	}, nil
}

// azureNodes is the subscription and node resource group the nodes'
// providerIDs name (the first node's in sub, when sub is given).
func azureNodes(nodes []NodeRef, sub string) (subscription, nodeRG string) {
	for _, n := range nodes {
		s, rg, ok := azureaudit.NodeOf(n.ProviderID)
		if ok && (sub == "" || strings.EqualFold(s, sub)) {
			return s, rg
		}
	}
	return sub, ""
}

// liveAuditor is a cloud's live entry point with its target bound.
type liveAuditor struct {
	source string
	run    func(context.Context, audit.Focus) (*report.AuditReport, error)
}

func (l liveAuditor) Source() string { return l.source }

func (l liveAuditor) Audit(ctx context.Context, f audit.Focus) (*report.AuditReport, error) {
	return l.run(ctx, f)
}

// liveNext is how to audit a cloud by hand when the live audit could not
// read it: the collect command, as an identity allowed what was missing.
func liveNext(cloud string, err error, o *Live, nodes []NodeRef) string {
	switch cloud {
	case "aws":
		region := "REGION"
		if o != nil && o.AWS.Region != "" {
			region = o.AWS.Region
		}
		for _, n := range nodes {
			if z, _, ok := awsaudit.InstanceOf(n.ProviderID); ok && region == "REGION" {
				if r := awsaudit.RegionOfZone(z); r != "" {
					region = r
				}
			}
		}
		return fmt.Sprintf("pullpath aws collect --cluster CLUSTER --region %s --out DIR as an identity allowed %s, then pullpath diagnose ... --from-aws DIR", region, allowed(err, awsaudit.Permissions))
	case "gcp":
		var g gcpaudit.LiveOptions
		if o != nil {
			g = o.GCP
		}
		for _, n := range nodes {
			if p, _, _, ok := gcpaudit.InstanceOf(n.ProviderID); ok && g.Project == "" {
				g.Project = p
			}
		}
		return fmt.Sprintf("pullpath gcp collect IMAGE --project %s --location %s --cluster %s --out DIR as an identity allowed %s, then pullpath diagnose ... --from-gcp DIR",
			orWord(g.Project, "PROJECT"), orWord(g.Location, "LOCATION"), orWord(g.Cluster, "CLUSTER"), allowed(err, gcpaudit.Permissions))
	case "azure":
		var az azureaudit.LiveOptions
		if o != nil {
			az = o.Azure
		}
		sub, _ := azureNodes(nodes, az.Subscription)
		return fmt.Sprintf("pullpath azure collect --subscription %s --resource-group %s --name %s --out DIR as an identity allowed %s, then pullpath diagnose ... --from-azure DIR",
			orWord(sub, "SUBSCRIPTION"), orWord(az.ResourceGroup, "RG"), orWord(az.Cluster, "CLUSTER"), allowed(err, []string{azureaudit.Permissions}))
	}
	return auditCommands[cloud]
}

// allowed is what the identity of a collect by hand needs: the permission
// that was denied (and to whom), else all of them (and why none worked).
func allowed(err error, all []string) string {
	var de *audit.DeniedError
	var ne *audit.NoCredentialsError
	perms := strings.Join(all, ", ")
	switch {
	case errors.As(err, &de):
		perms = de.Permission + " (denied to " + orWord(de.Identity, "these credentials") + ")"
	case errors.As(err, &ne):
		perms += " (" + ne.Error() + ")"
	}
	return perms
}

func orWord(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// deniedPermissions are the permissions a live audit was refused for the
// calls it could go without (their checks warn), as its warnings carry them.
func deniedPermissions(ar *report.AuditReport) []string {
	var out []string
	for _, w := range ar.Warnings {
		if w.Permission != "" && !contains(out, w.Permission) {
			out = append(out, w.Permission)
		}
	}
	return out
}
