package diagnose

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/api/option"

	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/report"
)

// openGCP opens the live GCP audit: Application Default Credentials
// (proven with one token, and who they are), the project and a node's
// instance from the nodes' gce://PROJECT/ZONE/INSTANCE providerIDs, and
// the cluster and its location from that instance's GKE labels.
func (d *diagnosis) openGCP(ctx context.Context, nodes []NodeRef) (Auditor, error) {
	o := d.o.Live.GCP
	var zone, instance string
	for _, n := range nodes {
		if p, z, i, ok := gcpaudit.InstanceOf(n.ProviderID); ok && (o.Project == "" || o.Project == p) {
			o.Project, zone, instance = p, z, i
			break
		}
	}
	if o.Project == "" {
		return nil, fmt.Errorf("no node's spec.providerID is gce://PROJECT/ZONE/INSTANCE: give --gcp-project, --gcp-location and --gcp-cluster")
	}
	who := "the given credentials"
	if len(o.ClientOptions) == 0 {
		creds, id, err := gcpaudit.DefaultCredentials(ctx)
		if err != nil {
			return nil, err
		}
		o.ClientOptions, who = []option.ClientOption{option.WithAuthCredentials(creds)}, id
	}
	if o.Cluster == "" || o.Location == "" {
		if instance == "" {
			return nil, fmt.Errorf("no node of project %s to find the cluster from: give --gcp-location and --gcp-cluster", o.Project)
		}
		cl, loc, err := gcpaudit.ClusterOf(ctx, o, zone, instance)
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
	return liveAuditor{
		source: fmt.Sprintf("live as %s, cluster %s in %s, project %s", who, o.Cluster, o.Location, o.Project),
		run: func(ctx context.Context, f audit.Focus) (*report.AuditReport, error) {
			r, err := gcpaudit.Live(ctx, o, f)
			return r, deniedTo(err, who)
		},
	}, nil
}

// deniedTo names who was refused in a denied call's error.
func deniedTo(err error, who string) error {
	var de *audit.DeniedError
	if errors.As(err, &de) && de.Identity == "" {
		de.Identity = who
	}
	return err
}
