package cli

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"
	"google.golang.org/api/option"

	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

var gcpLong = `Audit the GKE node path to Artifact Registry and Container Registry, subnet
by subnet, from the project's configuration, and name the object to change.

An Artifact Registry pull uses one host, LOCATION-docker.pkg.dev (registry,
token at /v2/token, layers at /artifacts-downloads/); a gcr.io pull uses gcr.io
and Cloud Storage (storage.googleapis.com) for the layers. The node asks Cloud
DNS, and a node without an external IP reaches Google only through Private
Google Access or Cloud NAT. For every node subnet (the node pools' and the
nodes' own) the audit checks, as Google Cloud evaluates them:

  dns-policy             a server policy with alternative name servers
  dns-zone               private zones for pkg.dev, gcr.io, googleapis.com bound
                         to the network answer the private (199.36.153.8/30) or
                         restricted (199.36.153.4/30) VIP: a missing wildcard is
                         NXDOMAIN, another address is not Private Google Access
  private-google-access  Private Google Access on the subnet for nodes without
                         an external IP (or Cloud NAT for Google's public
                         addresses; the VIPs need Private Google Access)
  route                  the route the VPC picks (most specific, then priority,
                         matching the nodes' tags) goes to the default internet
                         gateway
  firewall-egress-443    VPC firewall egress rules in priority order (a deny wins
                         at equal priority), by target tag or service account,
                         then the implied allow-egress
  cloud-nat              a Cloud NAT of the region translates the subnet's
                         primary range, with source ports for its nodes
  access-scopes          the node pools' scopes include devstorage.read_only or
                         cloud-platform (else the pull goes out anonymously)
  identity-reader        the node service account holds Artifact Registry Reader
                         (or above) on the repository or project
  vpc-sc                 VPC Service Controls perimeters hold the nodes' project
                         beside the registry's

A failing subnet is shown beside a healthy one, check by check; a fault that
fails every subnet alike (an identity, a perimeter) is called one cause.
docs/gcp.md lists the files --from reads and the read-only role live mode
needs.

Exit codes (audit): the dominant condition of the failing subnets
` + exitHelp(exitRows(0, 1, 2, 3, 4, 5, 6, 11)...)

const gcpAuditExample = `  # live, with Application Default Credentials (gcloud auth application-default login,
  # GOOGLE_APPLICATION_CREDENTIALS, the metadata server, workload identity)
  pullpath gcp audit us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2 --project shop-prod --location us-central1 --cluster prod
  pullpath gcp audit gcr.io/shop-prod/web:1.4.2 --project shop-prod --location us-central1-a --cluster prod -o json

  # offline, from a folder of gcloud --format=json outputs (docs/gcp.md lists the files)
  pullpath gcp audit us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2 --from ./prod-bundle

  # one subnet a sweep found failing; or the node and host a probe found failing
  pullpath gcp audit IMAGE --from ./prod-bundle --subnet nodes-b
  pullpath probe us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2 -o json > probe.json
  pullpath gcp audit IMAGE --from ./prod-bundle --probe-report probe.json`

const gcpCollectExample = `  # write the files --from reads, to replay offline or attach to a ticket
  pullpath gcp collect us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2 --project shop-prod --location us-central1 --cluster prod --out ./prod-bundle
  pullpath gcp audit us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2 --from ./prod-bundle`

func newGCPCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   string(nodeplace.GCP),
		Short: "Audit the GKE node path to Artifact Registry and GCR, subnet by subnet",
		Long:  gcpLong,
	}
	cmd.AddCommand(newGCPAuditCommand(s), newGCPCollectCommand(s))
	return cmd
}

// gcpConn are the live-mode flags shared by audit and collect.
type gcpConn struct {
	project, location, cluster string
}

func (c *gcpConn) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.project, "project", "", "the GKE cluster's project (default: $CLOUDSDK_CORE_PROJECT, $GOOGLE_CLOUD_PROJECT)")
	cmd.Flags().StringVar(&c.location, "location", "", "the cluster's region or zone")
	cmd.Flags().StringVar(&c.cluster, "cluster", "", "the GKE cluster's name")
}

func (c *gcpConn) complete() {
	for _, env := range []string{"CLOUDSDK_CORE_PROJECT", "GOOGLE_CLOUD_PROJECT"} {
		if c.project == "" {
			c.project = os.Getenv(env)
		}
	}
}

func (c *gcpConn) set() bool { return c.cluster != "" || c.location != "" }

func (c *gcpConn) validate() error {
	switch {
	case c.cluster == "" || c.location == "":
		return errors.New("want --cluster NAME and --location REGION|ZONE (live) or --from DIR (offline)")
	case c.project == "":
		return errors.New("want --project PROJECT (or $CLOUDSDK_CORE_PROJECT)")
	}
	return nil
}

// gcpAPI points live mode elsewhere (tests: a loopback server speaking the
// REST JSON, with a static token); empty means Google's APIs with
// Application Default Credentials.
var gcpAPI struct {
	endpoint string
	options  []option.ClientOption
}

func (c *gcpConn) live(image string) gcpaudit.LiveOptions {
	return gcpaudit.LiveOptions{Project: c.project, Location: c.location, Cluster: c.cluster, Image: image,
		Endpoint: gcpAPI.endpoint, ClientOptions: gcpAPI.options}
}

type gcpAuditOptions struct {
	out         output
	conn        gcpConn
	from        string
	probeReport string
	subnets     []string
	image       string
	stdout      io.Writer
}

func newGCPAuditCommand(s Streams) *cobra.Command {
	o := &gcpAuditOptions{stdout: s.Out}
	cmd := &cobra.Command{
		Use:     "audit [IMAGE]",
		Short:   "Check every node subnet's path to Artifact Registry or GCR and name the object to change",
		Long:    gcpLong,
		Example: gcpAuditExample,
		Args:    cobra.MaximumNArgs(1),
		RunE:    runE(o),
	}
	o.out.addFlag(cmd)
	o.conn.addFlags(cmd)
	cmd.Flags().StringVar(&o.from, "from", "", "audit offline from a folder (`DIR`) of gcloud --format=json outputs (docs/gcp.md)")
	cmd.Flags().StringVar(&o.probeReport, "probe-report", "", "a probe report (`FILE` written by pullpath probe -o json): put the probed node's subnet first and explain the failing host")
	cmd.Flags().StringSliceVar(&o.subnets, "subnet", nil, "audit only these node subnets (names; repeat or comma-separate)")
	return cmd
}

func (o *gcpAuditOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.image = args[0]
	}
	if o.from == "" {
		o.conn.complete()
	}
	return nil
}

func (o *gcpAuditOptions) Validate() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	if o.image != "" {
		if _, err := gcpaudit.ParseImage(o.image); err != nil {
			return err
		}
	}
	if o.from != "" {
		if o.conn.set() {
			return errors.New("--from audits a saved folder: it takes no --cluster or --location")
		}
		return nil
	}
	return o.conn.validate()
}

func (o *gcpAuditOptions) Run(ctx context.Context) error {
	f, err := probeFocus(o.probeReport, audit.Focus{Subnets: o.subnets, Image: o.image})
	if err != nil {
		return err
	}
	var r *report.AuditReport
	if o.from != "" {
		r, err = gcpaudit.FromFolder(o.from, f)
	} else {
		r, err = gcpaudit.Live(ctx, o.conn.live(o.image), f)
	}
	if err != nil {
		return err
	}
	return o.out.finish(o.stdout, r)
}

type gcpCollectOptions struct {
	conn   gcpConn
	out    string
	image  string
	stdout io.Writer
}

func newGCPCollectCommand(s Streams) *cobra.Command {
	o := &gcpCollectOptions{stdout: s.Out}
	cmd := &cobra.Command{
		Use:     "collect [IMAGE]",
		Short:   "Write the gcloud JSON files that `gcp audit --from` reads",
		Long:    "Call the audit's read-only Google Cloud APIs once and write each answer as `gcloud ... --format=json` prints it (one file per command, named as docs/gcp.md lists them, 2-space indent, sorted keys), so a live run can be replayed offline with `pullpath gcp audit IMAGE --from DIR`. IMAGE names the registry whose IAM policies and project are read.",
		Example: gcpCollectExample,
		Args:    cobra.MaximumNArgs(1),
		RunE:    runE(o),
	}
	o.conn.addFlags(cmd)
	cmd.Flags().StringVar(&o.out, "out", "", "folder to write (created if missing)")
	return cmd
}

func (o *gcpCollectOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.image = args[0]
	}
	o.conn.complete()
	return nil
}

func (o *gcpCollectOptions) Validate() error {
	if o.out == "" {
		return errors.New("want --out DIR")
	}
	if o.image != "" {
		if _, err := gcpaudit.ParseImage(o.image); err != nil {
			return err
		}
	}
	return o.conn.validate()
}

func (o *gcpCollectOptions) Run(ctx context.Context) error {
	return collect(ctx, o.stdout, nodeplace.GCP, o.conn.live(o.image), o.out, o.image)
}
