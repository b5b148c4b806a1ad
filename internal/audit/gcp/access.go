package gcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/compute/metadata"
	compute "google.golang.org/api/compute/v1"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/units"
)

// ADCChain is where Application Default Credentials look, in order.
const ADCChain = "Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud auth application-default login, the metadata server)"

// labelLocation is the label GKE puts on its VMs naming the cluster's
// region or zone.
const labelLocation = "goog-k8s-cluster-location"

// Permissions are what a live audit calls, as IAM names them (docs/gcp.md
// has the read-only role that holds them).
var Permissions = []string{
	"container.clusters.get", "compute.instances.get", "compute.instances.list",
	"compute.networks.get", "compute.subnetworks.get", "compute.routes.list", "compute.firewalls.list", "compute.routers.list",
	"dns.managedZones.list", "dns.resourceRecordSets.list", "dns.policies.list",
	"artifactregistry.repositories.getIamPolicy", "resourcemanager.projects.get", "resourcemanager.projects.getIamPolicy",
	"accesscontextmanager.policies.list", "accesscontextmanager.servicePerimeters.list",
}

// DefaultCredentials finds Application Default Credentials and proves them
// with one token, so that missing or refused credentials are said before
// any API call (*audit.NoCredentialsError); it names who they are: the
// service account's email (key file, impersonation, the metadata server's
// default account), else the kind of credentials.
func DefaultCredentials(ctx context.Context) (*auth.Credentials, string, error) {
	creds, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
	if err != nil {
		return nil, "", &audit.NoCredentialsError{Cloud: nodeplace.GCP, Chain: ADCChain, Reason: units.Clip(err.Error(), 200)}
	}
	if _, err := creds.Token(ctx); err != nil {
		return nil, "", &audit.NoCredentialsError{Cloud: nodeplace.GCP, Chain: ADCChain, Reason: units.Clip(err.Error(), 200)}
	}
	return creds, identity(ctx, creds), nil
}

func identity(ctx context.Context, creds *auth.Credentials) string {
	if j := creds.JSON(); len(j) > 0 {
		var f struct {
			Type        string `json:"type"`
			ClientEmail string `json:"client_email"`
			Imp         string `json:"service_account_impersonation_url"`
		}
		_ = json.Unmarshal(j, &f)
		switch {
		case f.ClientEmail != "":
			return f.ClientEmail
		case f.Imp != "":
			return strings.TrimSuffix(lastSeg(f.Imp), ":generateAccessToken")
		case f.Type == "authorized_user":
			return "the gcloud user of application-default login"
		case f.Type != "":
			return f.Type + " credentials"
		}
	}
	if e, err := metadata.EmailWithContext(ctx, "default"); err == nil && e != "" {
		return e
	}
	return "Application Default Credentials"
}

// ClusterOf reads a GKE node's instance for its cluster and the cluster's
// location: the labels GKE puts on its VMs (goog-k8s-cluster-name,
// goog-k8s-cluster-location). A refused call is an *audit.DeniedError.
func ClusterOf(ctx context.Context, o LiveOptions, zone, instance string) (cluster, location string, err error) {
	c := &collector{o: o}
	call := fmt.Sprintf("gcloud compute instances describe %s --zone %s --project %s", instance, zone, o.Project)
	svc, err := compute.NewService(ctx, c.opts("compute/v1/")...)
	if err != nil {
		return "", "", fmt.Errorf("google credentials: %s", units.Clip(err.Error(), 200))
	}
	in, err := svc.Instances.Get(o.Project, zone, instance).Context(ctx).Do()
	if err != nil {
		return "", "", callError(err, call, "compute.instances.get")
	}
	cluster, location = in.Labels[labelCluster], in.Labels[labelLocation]
	if cluster == "" || location == "" {
		return "", "", fmt.Errorf("%s: no %s and %s labels: not a GKE node? give the cluster and its location", call, labelCluster, labelLocation)
	}
	return cluster, location, nil
}

// callError is a failed required call: refused (403) is an
// *audit.DeniedError naming the permission, unauthenticated (401) an
// *audit.NoCredentialsError, else the call and the API's words.
func callError(err error, call, permission string) error {
	switch {
	case isStatus(err, http.StatusForbidden):
		return &audit.DeniedError{Cloud: nodeplace.GCP, Call: call, Permission: permission, Reason: apiError(err)}
	case isStatus(err, http.StatusUnauthorized):
		return &audit.NoCredentialsError{Cloud: nodeplace.GCP, Chain: ADCChain, Reason: call + ": " + apiError(err)}
	}
	return fmt.Errorf("%s: %s", call, apiError(err))
}
