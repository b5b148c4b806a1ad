package gcp

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/api/option"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

// Provider is the GCP audit in the list of providers (internal/audit/clouds).
var Provider = audit.Provider{
	Cloud:       nodeplace.GCP,
	FromFolder:  FromFolder,
	Live:        LiveOptions{},
	Permissions: Permissions,
	Outputs:     "gcloud --format=json outputs",
	Objects:     "Google Cloud",
}

// Open opens the live audit: Application Default Credentials (proven with
// one token, and who they are), the project and a node's instance from the
// nodes' gce://PROJECT/ZONE/INSTANCE providerIDs, and the cluster and its
// location from that instance's GKE labels, each unless o names it.
func (o LiveOptions) Open(ctx context.Context, nodes []audit.Node) (audit.Auditor, error) {
	var zone, instance string
	for _, n := range nodes {
		p := nodeplace.ParseProviderID(n.ProviderID)
		if p.Cloud == nodeplace.GCP && p.Project != "" && p.Zone != "" && p.Instance != "" && (o.Project == "" || o.Project == p.Project) {
			o.Project, zone, instance = p.Project, p.Zone, p.Instance
			break
		}
	}
	if o.Project == "" {
		return nil, fmt.Errorf("no node's spec.providerID is gce://PROJECT/ZONE/INSTANCE: give --gcp-project, --gcp-location and --gcp-cluster")
	}
	who := "the given credentials"
	if len(o.ClientOptions) == 0 {
		creds, id, err := DefaultCredentials(ctx)
		if err != nil {
			return nil, err
		}
		o.ClientOptions, who = []option.ClientOption{option.WithAuthCredentials(creds)}, id
	}
	if o.Cluster == "" || o.Location == "" {
		if instance == "" {
			return nil, fmt.Errorf("no node of project %s to find the cluster from: give --gcp-location and --gcp-cluster", o.Project)
		}
		cl, loc, err := ClusterOf(ctx, o, zone, instance)
		if err != nil {
			return nil, deniedTo(err, who)
		}
		if o.Cluster == "" {
			o.Cluster = cl
		}
		if o.Location == "" {
			o.Location = loc
		}
	}
	return audit.LiveAuditor(fmt.Sprintf("live as %s, cluster %s in %s, project %s", who, o.Cluster, o.Location, o.Project),
		func(ctx context.Context, f audit.Focus) (*report.AuditReport, error) {
			r, err := Live(ctx, o, f)
			return r, deniedTo(err, who)
		}), nil
}

// deniedTo names who was refused in a denied call's error.
func deniedTo(err error, who string) error {
	var de *audit.DeniedError
	if errors.As(err, &de) && de.Identity == "" {
		de.Identity = who
	}
	return err
}

// Collect is the package's Collect with these options.
func (o LiveOptions) Collect(ctx context.Context) (*audit.Collection, error) { return Collect(ctx, o) }

// Target is the image, project, location and cluster o names, the project
// else the nodes'.
func (o LiveOptions) Target(nodes []audit.Node) nodeplace.Target {
	t := nodeplace.Target{Image: o.Image, Project: o.Project, Location: o.Location, Cluster: o.Cluster}
	for _, n := range nodes {
		if p := nodeplace.ParseProviderID(n.ProviderID); t.Project == "" && p.Cloud == nodeplace.GCP && p.Zone != "" && p.Instance != "" {
			t.Project = p.Project
		}
	}
	return t
}
