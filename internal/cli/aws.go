package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/audit"
	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

var awsLong = `Audit the EKS node path to ECR and S3, subnet by subnet, from the account's
configuration, and name the object to change.

An ECR pull uses three hosts: the auth token from ecr.api, manifests from
ACCOUNT.dkr.ecr.REGION.amazonaws.com (ecr.dkr), and the layers from S3
(prod-REGION-starport-layer-bucket). For every subnet with nodes (nodegroups,
self-managed and Karpenter instances) the audit checks, as AWS evaluates them:
the route table (explicit or main), VPC DNS attributes, the DHCP option set's
name servers, the ECR interface endpoints (available, private DNS, an ENI in
the subnet or its AZ, their policies), the endpoint and node security groups
(443), the S3 gateway endpoint's prefix-list route (longest prefix) or an S3
interface endpoint and its policy on the layer bucket, the NAT or internet
gateway path (blackholes, state, AZ), the network ACLs in rule order on the
node and far-side subnets, and the node role's simulated ECR actions. For an
IMAGE under an ECR pull-through cache rule: the node role's
ecr:BatchImportUpstreamImage and ecr:CreateRepository (repository creation
templates considered), the rule's ecr-pullthroughcache/ secret
(describe-secret, never its value), and a cache miss's path to the
upstream's storage. A
failing subnet is shown beside a healthy one, check by check; a fault that
fails every subnet alike is called one cause (identity, not network).
docs/aws.md lists the files --from reads and the read-only policy live mode
needs.

Exit codes (audit): the dominant condition of the failing subnets
` + exitHelp(exitRows(0, 1, 2, 3, 4, 6, 11)...)

const awsAuditExample = `  # live, with the default credential chain (env, profile/SSO, IMDS, IRSA)
  pullpath aws audit --cluster prod --region us-east-1
  pullpath aws audit --cluster prod --profile ops -o json

  # offline, from a folder of AWS CLI JSON (docs/aws.md lists the files)
  pullpath aws audit --from ./prod-bundle

  # the image's registry (another account's) and one subnet that a sweep found failing
  pullpath aws audit 444455556666.dkr.ecr.us-east-1.amazonaws.com/shop/api:1.4 --cluster prod --subnet subnet-0c3c3c3c3c3c3c3c3

  # focus on the node and host a probe found failing
  pullpath probe 111122223333.dkr.ecr.us-east-1.amazonaws.com/app:1 -o json > probe.json
  pullpath aws audit --cluster prod --probe-report probe.json

  # what do the layers cost through NAT against endpoints?
  pullpath aws audit --from ./prod-bundle --image-size 1.2GiB --pulls-per-day 400`

const awsCollectExample = `  # write the files --from reads, to replay offline or attach to a ticket
  pullpath aws collect --cluster prod --region us-east-1 --out ./prod-bundle
  pullpath aws audit --from ./prod-bundle

  # with the image: its pull-through cache rule too
  pullpath aws collect 111122223333.dkr.ecr.us-east-1.amazonaws.com/docker-hub/library/nginx:1.27 --cluster prod --out ./prod-bundle`

func newAWSCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   string(nodeplace.AWS),
		Short: "Audit the EKS node path to ECR and S3, subnet by subnet",
		Long:  awsLong,
	}
	cmd.AddCommand(newAWSAuditCommand(s), newAWSCollectCommand(s))
	return cmd
}

// awsConn are the live-mode flags shared by audit and collect.
type awsConn struct {
	cluster, region, profile, endpointURL string
}

func (c *awsConn) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.cluster, "cluster", "", "the EKS cluster's name")
	cmd.Flags().StringVar(&c.region, "region", "", "AWS region (default: the profile's, $AWS_REGION)")
	cmd.Flags().StringVar(&c.profile, "profile", "", "shared config profile (default: $AWS_PROFILE, then default)")
	cmd.Flags().StringVar(&c.endpointURL, "endpoint-url", "", "send every AWS API call to this URL (an emulator or a test server), as the AWS CLI's --endpoint-url")
}

func (c *awsConn) live() awsaudit.LiveOptions {
	return awsaudit.LiveOptions{Cluster: c.cluster, Region: c.region, Profile: c.profile, EndpointURL: c.endpointURL}
}

type awsAuditOptions struct {
	out         output
	conn        awsConn
	from        string
	probeReport string
	imageSize   string
	imageBytes  int64
	pullsPerDay int
	subnets     []string
	image       string
	stdout      io.Writer
}

func newAWSAuditCommand(s Streams) *cobra.Command {
	o := &awsAuditOptions{stdout: s.Out}
	cmd := &cobra.Command{
		Use:     "audit [IMAGE]",
		Short:   "Check every node subnet's path to ECR and S3 and name the object to change",
		Long:    awsLong,
		Example: awsAuditExample,
		Args:    cobra.MaximumNArgs(1),
		RunE:    runE(o),
	}
	o.out.addFlag(cmd)
	o.conn.addFlags(cmd)
	cmd.Flags().StringVar(&o.from, "from", "", "audit offline from a folder (`DIR`) of AWS CLI v2 JSON outputs (docs/aws.md)")
	cmd.Flags().StringVar(&o.probeReport, "probe-report", "", "a probe report (`FILE` written by pullpath probe -o json): the probed node's subnet first, beside the others, and the check that explains what the probe saw")
	cmd.Flags().StringVar(&o.imageSize, "image-size", "", "image size for the NAT cost note (bytes, or 800MiB, 1.2GiB; default: the size --probe-report measured)")
	cmd.Flags().IntVar(&o.pullsPerDay, "pulls-per-day", 100, "pulls per day for the NAT cost note")
	cmd.Flags().StringSliceVar(&o.subnets, "subnet", nil, "audit only these node subnets (repeat or comma-separate)")
	return cmd
}

func (o *awsAuditOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.image = args[0]
	}
	if o.imageSize != "" {
		n, err := parseSize(o.imageSize)
		if err != nil {
			return fmt.Errorf("--image-size %q: %v", o.imageSize, err)
		}
		o.imageBytes = n
	}
	return nil
}

func (o *awsAuditOptions) Validate() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	switch {
	case o.from != "" && (o.conn.cluster != "" || o.conn.profile != "" || o.conn.endpointURL != ""):
		return errors.New("--from audits a saved folder: it takes no --cluster, --profile or --endpoint-url")
	case o.from == "" && o.conn.cluster == "":
		return errors.New("want --cluster NAME (live) or --from DIR (offline)")
	case o.pullsPerDay <= 0:
		return fmt.Errorf("--pulls-per-day %d: want a positive number", o.pullsPerDay)
	}
	return nil
}

func (o *awsAuditOptions) Run(ctx context.Context) error {
	f, err := probeFocus(o.probeReport, audit.Focus{Subnets: o.subnets, Image: o.image, ImageBytes: o.imageBytes, PullsPerDay: o.pullsPerDay})
	if err != nil {
		return err
	}
	var r *report.AuditReport
	if o.from != "" {
		r, err = awsaudit.FromFolder(o.from, f)
	} else {
		r, err = awsaudit.Live(ctx, o.conn.live(), f)
	}
	if err != nil {
		return err
	}
	return o.out.finish(o.stdout, r)
}

type awsCollectOptions struct {
	conn   awsConn
	out    string
	image  string
	stdout io.Writer
}

func newAWSCollectCommand(s Streams) *cobra.Command {
	o := &awsCollectOptions{stdout: s.Out}
	cmd := &cobra.Command{
		Use:     "collect [IMAGE]",
		Short:   "Write the AWS CLI JSON files that `aws audit --from` reads",
		Long:    "Call the audit's read-only APIs once and write each output as the AWS CLI v2 prints it (one file per command, 4-space indent), so a live run can be replayed offline with `pullpath aws audit IMAGE --from DIR`. With IMAGE, the pull-through cache rule that serves its repository is read too (the rule, the repository creation templates, whether the repository exists, the registry policy, the rule's secret's metadata).",
		Example: awsCollectExample,
		Args:    cobra.MaximumNArgs(1),
		RunE:    runE(o),
	}
	o.conn.addFlags(cmd)
	cmd.Flags().StringVar(&o.out, "out", "", "folder to write (created if missing)")
	return cmd
}

func (o *awsCollectOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.image = args[0]
	}
	return nil
}

func (o *awsCollectOptions) Validate() error {
	switch {
	case o.conn.cluster == "":
		return errors.New("want --cluster NAME")
	case o.out == "":
		return errors.New("want --out DIR")
	}
	return nil
}

func (o *awsCollectOptions) Run(ctx context.Context) error {
	live := o.conn.live()
	live.Image = o.image
	return collect(ctx, o.stdout, nodeplace.AWS, live, o.out, o.image)
}

// parseSize reads 1234, 800MiB, 1.2GiB, 500MB, 2GB.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := float64(1)
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return 0, errors.New("want a positive size such as 734003200, 700MiB or 1.2GiB")
	}
	return int64(f * mult), nil
}
